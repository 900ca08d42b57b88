-- 0006: what the admin API (package adminapi) reads.
--
-- An account's message records, newest first, a page at a time
-- (Store.AccountMessages); IDs compare in byte order, as in every store.
CREATE INDEX {{p}}messages_account ON {{s}}{{p}}messages
    (account, created_at DESC, id COLLATE "C" DESC);
-- The accounts by ID in byte order (Store.Accounts), whatever the
-- database's collation.
CREATE INDEX {{p}}accounts_id_c ON {{s}}{{p}}accounts (id COLLATE "C");
