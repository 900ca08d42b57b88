-- 0013: one index of the records in flight, where there were two.
--
-- Every send's record opens attempting (store.OpenStates), so it entered
-- both messages_open (what the reconciler scans) and messages_attempting
-- (what an early report's probe reads), and every send paid for both.
-- One partial index of the open records by provider and time serves
-- both: the probe is a range scan of one provider; the reconciler reads
-- the whole index, which holds only the records in flight, and sorts
-- them.
CREATE INDEX {{p}}messages_inflight ON {{s}}{{p}}messages (provider, updated_at)
    WHERE state IN ('pending', 'attempting');
DROP INDEX {{s}}{{p}}messages_open;
DROP INDEX {{s}}{{p}}messages_attempting;
