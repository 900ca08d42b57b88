-- 0016: verifications (store.Verifications) and the fraud guard's
-- windowed sums (store.Counters).
--
-- A verification is kept without its code: code_hash is the HMAC of it
-- (package verify), kept as its bytes. status is the status a call last
-- wrote; "max_attempts_reached" is read off checks and max_checks, and
-- "expired" off expires_at until the sweep writes it. last_sent_at is
-- NULL before the first send. The counting statements (a check, a send)
-- change only columns no index holds, so they can update a row in place
-- (HOT); the fill factor leaves each page room for that.
CREATE TABLE {{s}}{{p}}verifications (
    id           text PRIMARY KEY,
    account      text NOT NULL,
    recipient    text NOT NULL,
    purpose      text NOT NULL,
    channels     text[] NOT NULL,
    code_hash    bytea NOT NULL,
    length       integer NOT NULL,
    status       text NOT NULL
        CHECK (status IN ('pending', 'approved', 'canceled', 'expired')),
    checks       integer NOT NULL,
    max_checks   integer NOT NULL,
    sends        integer NOT NULL,
    max_sends    integer NOT NULL,
    prefix       text NOT NULL,
    country      text NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    last_sent_at timestamptz,
    updated_at   timestamptz NOT NULL
) WITH (fillfactor = 80);

-- PendingVerification: the newest pending verification of a recipient
-- and purpose.
CREATE INDEX {{p}}verifications_pending ON {{s}}{{p}}verifications
    (account, recipient, purpose, created_at DESC, id DESC) WHERE status = 'pending';
-- ExpireVerifications: the pending ones by expiry, to mark expired...
CREATE INDEX {{p}}verifications_expiry ON {{s}}{{p}}verifications (expires_at)
    WHERE status = 'pending';
-- ... and the ended ones, to delete once they are old.
CREATE INDEX {{p}}verifications_ended ON {{s}}{{p}}verifications (expires_at)
    WHERE status <> 'pending';

-- A counter's window is cut into buckets (store.CounterBucket): one row
-- per key and bucket holds the sum added within it. key_hash is the
-- SHA-256 of the key, which may hold any bytes (a recipient's number
-- among them). expires_at is when the bucket has left every window of
-- its key (its start plus the window), when Cleanup may delete it.
-- An Add rewrites only n, in place when the page has room.
CREATE TABLE {{s}}{{p}}counters (
    key_hash   bytea NOT NULL,
    bucket     timestamptz NOT NULL,
    n          bigint NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (key_hash, bucket)
) WITH (fillfactor = 80);
CREATE INDEX {{p}}counters_expires ON {{s}}{{p}}counters (expires_at);
