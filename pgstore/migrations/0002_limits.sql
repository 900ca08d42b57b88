-- 0002: the budgets of the limiters, Store.RateLimit and Store.WindowLimit.
--
-- name separates the budgets of one store (the rate limit and the OTP
-- throttle, say); key_hash is the SHA-256 of the key, which may hold any
-- bytes (the OTP throttle's hold a NUL). Times are unix nanoseconds: the
-- very times the callers pass in, which a timestamptz would round to
-- microseconds. Every Take of a key locks and rewrites that key's row, so
-- instances sharing the database share each key's budget.

-- A token bucket kept as the generic cell rate algorithm: tat is the
-- theoretical arrival time (the bucket is full from tat on), since the
-- earliest Take of the current busy period. A row with tat in the past is
-- a full bucket, as good as no row; Cleanup deletes it.
CREATE TABLE {{s}}{{p}}rate_limits (
    name     text NOT NULL,
    key_hash bytea NOT NULL,
    tat      bigint NOT NULL,
    since    bigint NOT NULL,
    PRIMARY KEY (name, key_hash)
);
CREATE INDEX {{p}}rate_limits_tat ON {{s}}{{p}}rate_limits (tat);

-- A sliding window: hits holds the times of the key's recent units in
-- ascending order, at most the limit's max of them; expires is the last
-- of them plus the window. A row that has expired counts nothing; Cleanup
-- deletes it.
CREATE TABLE {{s}}{{p}}window_limits (
    name     text NOT NULL,
    key_hash bytea NOT NULL,
    hits     bigint[] NOT NULL,
    expires  bigint NOT NULL,
    PRIMARY KEY (name, key_hash)
);
CREATE INDEX {{p}}window_limits_expires ON {{s}}{{p}}window_limits (expires);
