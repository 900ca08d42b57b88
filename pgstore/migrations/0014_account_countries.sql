-- 0014: where an account may send (store.Account.Region, Countries), and
-- the country of each message's recipient (store.Record.Country).
--
-- An empty region is India's (phone.DefaultRegion) and an empty list
-- allows the region only, so every account keeps sending where it did.
ALTER TABLE {{s}}{{p}}accounts
    ADD COLUMN region text NOT NULL DEFAULT '',
    ADD COLUMN countries text[] NOT NULL DEFAULT '{}';
ALTER TABLE {{s}}{{p}}messages
    ADD COLUMN country text NOT NULL DEFAULT '';
