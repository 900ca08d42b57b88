-- 0008: request records (notify.MessageStore.OpenRequest).
--
-- A Composite or Bulk request sent with an idempotency key records its
-- parts' message IDs, in order, before its first part is opened, so that
-- a repeat of the key after the process died answers the whole request's
-- receipt. Kept, and cleaned up, as message records are.
CREATE TABLE {{s}}{{p}}requests (
    id              text PRIMARY KEY,
    account         text NOT NULL,
    kind            text NOT NULL,
    bulk            boolean NOT NULL,
    idempotency_key text NOT NULL,
    parts           text[] NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX {{p}}requests_key ON {{s}}{{p}}requests (account, idempotency_key, created_at);
