-- 0009: the delivery log goes.
--
-- notify.DeliveryLog is gone: every send keeps its message record in the
-- ledger (notify.Ledger, the messages table of 0003), which
-- Notifier.Message reads, so nothing writes or reads the deliveries table
-- of 0001 any more. It held the delivery log's receipts and nothing else
-- (the idempotency receipts live in the idempotency table), so it is
-- dropped, and its index with it.
DROP TABLE IF EXISTS {{s}}{{p}}deliveries;
