-- 0018: each account's suppression list (store.Suppressions): one row per
-- account, channel and recipient, the recipient normalised by
-- store.NormalizeRecipient. A row changes only when a stronger reason
-- replaces its reason (hard_bounce over the rest), and goes when an
-- operator removes it; nothing deletes rows on a timer, because a list
-- that forgot an opt-out would send to someone who asked for none.
CREATE TABLE {{s}}{{p}}suppressions (
    account   text NOT NULL,
    -- Any channel's name (store.SuppressibleKind checks its form).
    kind      text COLLATE "C" NOT NULL CHECK (kind <> ''),
    recipient text COLLATE "C" NOT NULL,
    reason    text NOT NULL
        CHECK (reason IN ('unsubscribed', 'hard_bounce', 'complaint', 'manual')),
    at        timestamptz NOT NULL,
    -- The primary key is the lookup every send makes and the order
    -- ListSuppressions pages in: kind, then recipient, in byte order
    -- (collation "C") whatever the database's collation.
    PRIMARY KEY (account, kind, recipient)
);
