-- 0004: delivery reports (notify.Notifier.Report).
--
-- A failure reported after the vendor accepted a message may keep its
-- charge (notify.RefundPolicy), so a record says whether it was refunded
-- rather than leaving it to its state; every failed record before this
-- migration was refunded when it had a charge. vendor_code is the
-- vendor's own error code from a report. resend is the request a
-- report's failover sends again (notify.Message.Resend), NULL for most.
ALTER TABLE {{s}}{{p}}messages
    ADD COLUMN vendor_code text NOT NULL DEFAULT '',
    ADD COLUMN refunded boolean NOT NULL DEFAULT false,
    ADD COLUMN resend bytea;
UPDATE {{s}}{{p}}messages SET refunded = true WHERE state = 'failed' AND charge > 0;

-- Reports name a message by its provider's ID.
CREATE INDEX {{p}}messages_provider_id ON {{s}}{{p}}messages (provider_message_id, provider)
    WHERE provider_message_id <> '';
