-- 0010: idempotency receipts are bytes.
--
-- The Notifier encodes a send's receipt itself and hands the store its
-- bytes (store.Keys), which a store keeps as they are and gives back
-- unchanged. jsonb did not: it re-rendered them (its own key order and
-- spacing) and refused bytes that are not JSON. Receipts stored before
-- keep their JSON, as PostgreSQL renders it, which the Notifier reads as
-- it read them from jsonb. The rewrite locks the table for as long as it
-- takes; the table holds only the idempotency TTL's keys (24h by default).
ALTER TABLE {{s}}{{p}}idempotency
    ALTER COLUMN receipt TYPE bytea USING convert_to(receipt::text, 'UTF8');
