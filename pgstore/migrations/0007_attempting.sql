-- 0007: reports that outrun the move to sent (notify.Notifier.Report).
--
-- A report named by a vendor ID that no record has yet is asked for again
-- while its provider has a send in flight: a record still attempting
-- that moved within the settle threshold (Store.Attempting). The index
-- holds only attempting records (the sends in flight, and dead ones until
-- the reconciler settles them), so it stays small, and a probe is one
-- index lookup whatever the provider's traffic.
CREATE INDEX {{p}}messages_attempting ON {{s}}{{p}}messages (provider, updated_at)
    WHERE state = 'attempting';
