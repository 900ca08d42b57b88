-- 0017: records a queue opens (package queue): queued and scheduled.
--
-- A queued or scheduled record is written, and charged, in one step with
-- the job that sends it (pgstore/pgqueue); nothing has gone to a vendor.
-- send_at is when a scheduled record is due (store.Record.SendAt), NULL
-- for every other record. payload is the encoded request the job's worker
-- sends (store.Record.Payload): it may hold a one-time code, so a move
-- out of the live states (pending, attempting, queued, scheduled) sets it
-- NULL in the same statement, and a settled record never keeps one.
ALTER TABLE {{s}}{{p}}messages ADD COLUMN send_at timestamptz;
ALTER TABLE {{s}}{{p}}messages ADD COLUMN payload bytea;

-- A timed fallback (store.Record.Fallback, Follows, Confirm): the first
-- message names its fallback, the fallback the message it follows and the
-- state of it (delivered, read) that makes it unneeded. Empty otherwise;
-- none changes after the opening.
ALTER TABLE {{s}}{{p}}messages ADD COLUMN fallback text NOT NULL DEFAULT '';
ALTER TABLE {{s}}{{p}}messages ADD COLUMN follows text NOT NULL DEFAULT '';
ALTER TABLE {{s}}{{p}}messages ADD COLUMN confirm text NOT NULL DEFAULT '';

-- What Cleanup scans: only settled records. A waiting record is live (a
-- job will take it, however long it waits), so it leaves the index that
-- Cleanup's retention reads; the index of migration 0003 held every
-- record not pending or attempting.
DROP INDEX {{s}}{{p}}messages_settled;
CREATE INDEX {{p}}messages_settled ON {{s}}{{p}}messages (updated_at)
    WHERE state NOT IN ('pending', 'attempting', 'queued', 'scheduled');

-- The waiting records by when they are due (a queued one by its
-- opening): few, and what an operator asks for ("what is overdue?").
-- The reconciler's index (messages_inflight, migration 0013) leaves them
-- out: a job, not the reconciler, settles them.
CREATE INDEX {{p}}messages_waiting ON {{s}}{{p}}messages (COALESCE(send_at, created_at))
    WHERE state IN ('queued', 'scheduled');
