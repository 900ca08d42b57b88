-- 0022: an account's default locale (record.Account.Locale), the BCP 47
-- tag whose template variants a send renders when its request names no
-- locale of its own. Empty: the templates' base, as before.
ALTER TABLE {{s}}{{p}}accounts
    ADD COLUMN locale text NOT NULL DEFAULT '';
