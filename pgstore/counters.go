package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// counterQueries are the statements of Counters; see buildCounterQueries.
type counterQueries struct {
	lock, add, sums, cleanup string
}

func buildCounterQueries(x func(string) string) counterQueries {
	return counterQueries{
		// lock serialises the limited Adds of a key: it comes first in
		// their batch, so the add after it, a statement of its own, takes
		// its snapshot once the Add before it has committed.
		lock: `SELECT pg_advisory_xact_lock($1)`,

		// add sums the key's buckets in the window (from $4 on: a bucket
		// after the bucket of now, $3, which an instance whose clock is
		// ahead wrote, counts too, so that instances whose clocks differ
		// do not exceed a limit together), and adds $2 to the bucket $3 unless the limit $6 is
		// positive and would be exceeded; $5 is when the bucket leaves
		// every window. It answers the sum after the call (with the
		// bucket as the upsert left it, when it added) and whether it
		// added. It deletes a few of the key's buckets that left the
		// window, skipping any locked: they count nothing, and Cleanup
		// gets the rest.
		add: x(`WITH cur AS (
	SELECT COALESCE(sum(n) FILTER (WHERE bucket <> $3), 0)::bigint AS others,
		COALESCE(sum(n) FILTER (WHERE bucket = $3), 0)::bigint AS here
	FROM {{s}}{{p}}counters WHERE key_hash = $1 AND bucket >= $4
), ins AS (
	INSERT INTO {{s}}{{p}}counters AS c (key_hash, bucket, n, expires_at)
	SELECT $1, $3, $2::bigint, $5 FROM cur
	WHERE $6::bigint <= 0 OR others + here + $2::bigint <= $6::bigint
	ON CONFLICT (key_hash, bucket) DO UPDATE SET n = c.n + EXCLUDED.n
	RETURNING n
), old AS (
	DELETE FROM {{s}}{{p}}counters WHERE (key_hash, bucket) IN (
		SELECT key_hash, bucket FROM {{s}}{{p}}counters WHERE key_hash = $1 AND bucket < $4
		LIMIT 16 FOR UPDATE SKIP LOCKED)
)
SELECT others + COALESCE((SELECT n FROM ins), here), EXISTS (SELECT 1 FROM ins) FROM cur`),

		sums: x(`SELECT key_hash, COALESCE(sum(n), 0)::bigint FROM {{s}}{{p}}counters
WHERE key_hash = ANY($1) AND bucket >= $2
GROUP BY key_hash`),

		// cleanup deletes buckets that have left every window, re-checking
		// on the row it deletes.
		cleanup: x(`DELETE FROM {{s}}{{p}}counters
WHERE (key_hash, bucket) IN (
	SELECT key_hash, bucket FROM {{s}}{{p}}counters WHERE expires_at <= $1 LIMIT $2)
  AND expires_at <= $1`),
	}
}

// Counters is a verifystore.Counters kept in PostgreSQL: sums of amounts
// added per key over a sliding window, shared by every instance that
// uses the database (the fraud guard of package verify: its velocity
// limits, conversion tracking and spend caps). Make one with
// Store.Counters.
//
// A key's window is cut into verifystore.CounterBuckets buckets
// (verifystore.CounterBucket), one row each, holding the sum added within it;
// a sum reads the rows of the buckets from verifystore.CounterSince on (a
// bucket after now's, which an instance whose clock runs ahead added to,
// counts too: instances whose clocks differ a little do not exceed a
// limit together). Keys are kept as their SHA-256, so a key may hold any
// bytes and be of any length, and no recipient number is kept in the
// clear. Times are only what the callers pass in, never the database's
// clock, at the microsecond.
//
// An Add with a limit decides and adds under a transaction-scoped
// advisory lock of the key, taken in the same round trip (a batch: the
// lock, then one statement that sums, adds when the limit allows and
// answers), so limited Adds of one key from any number of instances are
// serialised and never exceed the limit together. An Add without a limit
// is one statement, an upsert of the bucket, which needs no lock. Adds
// are not repeated after a lost connection (a repeat could add twice):
// store.ErrUnavailable leaves unknown whether the amount was added. An
// Add also deletes a few of the key's buckets that have left the window;
// Store.Cleanup deletes those of keys no longer added to. Methods are
// safe for concurrent use; errors are as Store documents.
type Counters struct {
	s *Store
}

// Counters returns the Store's verifystore.Counters. It holds no state of its
// own and costs nothing to make; the table comes with Migrate.
func (s *Store) Counters() *Counters {
	return &Counters{s: s}
}

// checkWindow refuses a window no sum can span.
func checkWindow(op string, window time.Duration) error {
	if window <= 0 || window > maxLimitSpan {
		return fmt.Errorf("pgstore: %s: %w", op, store.InvalidField("window", "must be positive and at most 10 years"))
	}
	return nil
}

// Add adds n (negative to give back) to key at now, unless limit > 0 and
// the sum over the window ending at now plus n would exceed limit, as
// verifystore.Counters documents, and answers the sum over the window after
// the call and whether it added. With a limit, deciding and adding are
// one atomic step under the key's advisory lock; without one, the sum
// answered may miss an Add of another bucket that commits at the same
// moment. A window that is not positive, or longer than 10 years, is
// store.ErrInvalid; so is a sum beyond the range of int64.
func (c *Counters) Add(ctx context.Context, key string, n int64, window time.Duration, limit int64, now time.Time) (int64, bool, error) {
	const op = "counter add"
	if err := checkWindow(op, window); err != nil {
		return 0, false, err
	}
	s := c.s
	hash := sha256.Sum256([]byte(key))
	bucket := microUTC(verifystore.CounterBucket(now, window))
	since := microUTC(verifystore.CounterSince(now, window))
	expires := bucket.Add(window)
	args := []any{hash[:], n, bucket, since, expires, limit}
	var sum int64
	var added bool
	err := s.do(ctx, onceOnly, func() error {
		if limit <= 0 {
			return s.pool.QueryRow(ctx, s.q.counters.add, args...).Scan(&sum, &added)
		}
		b := &pgx.Batch{}
		b.Queue(s.q.counters.lock, s.counterLock(hash))
		b.Queue(s.q.counters.add, args...)
		return s.batch(ctx, b, func(br pgx.BatchResults) error {
			if _, err := br.Exec(); err != nil {
				return err
			}
			return br.QueryRow().Scan(&sum, &added)
		})
	})
	if err != nil {
		return 0, false, s.fail(ctx, op, err)
	}
	return sum, added, nil
}

// counterLock is the advisory lock of a key's counter: its hash, salted
// with the store's schema and prefix so that stores sharing a database
// do not wait for each other's keys. (The single bigint key space of
// advisory locks is apart from the two-integer one Migrate uses.)
func (s *Store) counterLock(hash [sha256.Size]byte) int64 {
	salt := sha256.Sum256([]byte("notify counters\x00" + s.schema + "\x00" + s.prefix))
	return int64(binary.BigEndian.Uint64(hash[:8]) ^ binary.BigEndian.Uint64(salt[:8]))
}

// Sums answers the sum of each key over the window ending at now, in the
// order of keys, zero for a key never added to (or whose amounts have
// all left the window), as verifystore.Counters documents: one query, whatever
// the number of keys. No keys is an empty answer without a query. A
// window that is not positive, or longer than 10 years, is
// store.ErrInvalid.
func (c *Counters) Sums(ctx context.Context, keys []string, window time.Duration, now time.Time) ([]int64, error) {
	const op = "counter sums"
	if err := checkWindow(op, window); err != nil {
		return nil, err
	}
	out := make([]int64, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	s := c.s
	hashes := make([][]byte, len(keys))
	for i, k := range keys {
		h := sha256.Sum256([]byte(k))
		hashes[i] = h[:]
	}
	since := microUTC(verifystore.CounterSince(now, window))
	sums := make(map[string]int64, len(keys))
	err := s.do(ctx, repeatable, func() error {
		clear(sums)
		rows, err := s.pool.Query(ctx, s.q.counters.sums, hashes, since)
		if err != nil {
			return err
		}
		var hash []byte
		var sum int64
		_, err = pgx.ForEachRow(rows, []any{&hash, &sum}, func() error {
			sums[string(hash)] = sum
			return nil
		})
		return err
	})
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	for i, h := range hashes {
		out[i] = sums[string(h)]
	}
	return out, nil
}

// Interface guards
var _ verifystore.Counters = (*Counters)(nil)
