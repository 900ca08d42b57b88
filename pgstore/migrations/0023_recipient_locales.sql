-- 0023: the locale each recipient wants an account's messages in
-- (store.Preferences.SetLocale), a canonical BCP 47 tag, keyed by the
-- recipient in its channel's canonical form whatever the channel, so that
-- a number's locale serves SMS and chat alike. A send of a template with
-- variants whose request names no locale reads its recipients' rows by
-- the primary key (Locales).
CREATE TABLE {{s}}{{p}}recipient_locales (
    account    text NOT NULL,
    recipient  text COLLATE "C" NOT NULL,
    locale     text NOT NULL CHECK (locale <> ''),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (account, recipient)
);
