package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/store"
)

// reserveRetries bounds Reserve's re-reads when the entry that holds a key
// committed after its statement began (see queries.reserve).
const reserveRetries = 5

// Reserve claims key for one send of the account, as store.Keys
// documents: no Receipt when the caller now holds the key (with Abandoned
// set when it took over a reservation of the same fingerprint whose
// lease, WithIdempotencyLease, ran out); the bytes Complete stored when a
// send with the key and the same fingerprint completed within the
// idempotency TTL; store.ErrConflict when the fingerprint differs or a
// send with the key is within its lease. Keys are stored as their
// SHA-256, so any length is accepted. An empty account or key is
// store.ErrInvalid.
func (s *Store) Reserve(ctx context.Context, account, key, fingerprint string) (store.Reservation, error) {
	var res store.Reservation
	if account == "" || key == "" {
		return res, fmt.Errorf("pgstore: reserve: %w: the account and the key are required", store.ErrInvalid)
	}
	sum := sha256.Sum256([]byte(key))
	for try := 0; try < reserveRetries; try++ {
		now := s.now()
		var mine bool
		var fp *string
		var body []byte
		var abandoned *time.Time
		err := s.do(ctx, onceOnly, func() error {
			return s.pool.QueryRow(ctx, s.q.reserve, account, sum[:], fingerprint, now,
				now.Add(s.idemTTL), now.Add(s.idemLease)).
				Scan(&mine, &fp, &body, &abandoned)
		})
		if errors.Is(err, pgx.ErrNoRows) || pgCode(err) == stateUniqueViolation {
			if ctx.Err() != nil {
				return res, s.fail(ctx, "reserve", ctx.Err())
			}
			continue // the holder committed after our snapshot; look again
		}
		if err != nil {
			return res, s.fail(ctx, "reserve", err)
		}
		switch {
		case mine:
			if abandoned != nil {
				res.Abandoned = *abandoned
			}
			return res, nil
		case fp == nil || *fp != fingerprint:
			return res, fmt.Errorf("the idempotency key was used with another request: %w", store.ErrConflict)
		case body == nil:
			return res, fmt.Errorf("a send with this idempotency key is in flight: %w", store.ErrConflict)
		}
		res.Receipt = body
		return res, nil
	}
	return res, fmt.Errorf("pgstore: reserve: %w: the idempotency key changed hands %d times; try again", store.ErrUnavailable, reserveRetries)
}

// Complete stores receipt, the bytes as they are, under the key that the
// caller reserved, for the idempotency TTL from now, even after the
// reservation's lease ran out (the Notifier's reconciler completes the
// keys of sends whose holder died). A key with no entry, or one whose TTL
// passed, is store.ErrNotFound; a key completed already is
// store.ErrConflict; an empty receipt is store.ErrInvalid. Complete does
// not retain receipt.
func (s *Store) Complete(ctx context.Context, account, key string, receipt []byte) error {
	if len(receipt) == 0 {
		return fmt.Errorf("pgstore: complete: %w: empty receipt", store.ErrInvalid)
	}
	sum := sha256.Sum256([]byte(key))
	now := s.now()
	var stored, completed bool
	// A repeat after a lost answer finds its own receipt and says
	// ErrConflict: the caller cannot tell that from a completion by another
	// holder, so only a run that surely did not reach the server repeats.
	err := s.do(ctx, onceOnly, func() error {
		return s.pool.QueryRow(ctx, s.q.complete, account, sum[:], receipt, now.Add(s.idemTTL), now).
			Scan(&stored, &completed)
	})
	switch {
	case err != nil:
		return s.fail(ctx, "complete", err)
	case stored:
		return nil
	case completed:
		return fmt.Errorf("pgstore: complete: %w: the key is completed already", store.ErrConflict)
	}
	return fmt.Errorf("pgstore: complete: reservation of the key: %w", store.ErrNotFound)
}

// Release frees a key reserved by a send that failed. Releasing a key that
// is not reserved, or whose send completed, does nothing.
func (s *Store) Release(ctx context.Context, account, key string) error {
	sum := sha256.Sum256([]byte(key))
	err := s.do(ctx, repeatable, func() error {
		_, err := s.pool.Exec(ctx, s.q.release, account, sum[:])
		return err
	})
	return s.fail(ctx, "release", err)
}

// cleanupBatch is how many rows one DELETE of Cleanup removes, so that a
// large backlog is removed in short transactions.
const cleanupBatch = 5000

// Cleanup deletes idempotency entries whose TTL has passed, message
// records settled longer than the record TTL ago (live ones are kept:
// open ones for the reconciler, queued and scheduled ones for their
// jobs) and request records as old, the limiters' rows
// that count nothing any more (full buckets, windows whose units have all
// left) and the Counters' buckets that have left their key's window, and
// returns how many rows it removed. Expired rows are already ignored by every read, so Cleanup only
// reclaims space; run it periodically from one or several instances
// (concurrent runs are safe). It works in batches and stops early, with
// the count so far, when ctx ends.
func (s *Store) Cleanup(ctx context.Context) (removed int64, err error) {
	now := s.now()
	for _, c := range []struct {
		query string
		now   any
	}{
		{s.q.cleanupIdem, now},
		{s.q.cleanupMessages, now.Add(-s.recordTTL)},
		{s.q.cleanupRequests, now.Add(-s.recordTTL)},
		// The limiters keep unix nanoseconds.
		{s.q.limits.rateCleanup, now.UnixNano()},
		{s.q.limits.windowCleanup, now.UnixNano()},
		{s.q.counters.cleanup, now},
	} {
		for {
			var tag pgconn.CommandTag
			err := s.do(ctx, repeatable, func() (err error) {
				tag, err = s.pool.Exec(ctx, c.query, c.now, cleanupBatch)
				return err
			})
			if err != nil {
				return removed, s.fail(ctx, "cleanup", err)
			}
			removed += tag.RowsAffected()
			if tag.RowsAffected() < cleanupBatch {
				break
			}
		}
	}
	return removed, nil
}

// CleanupTask returns Cleanup as a periodic task for a queue's Run
// (queue.Periodic, named "pgstore_cleanup"), every every (10 minutes when
// zero or less): the expiry of idempotency keys, settled records, limit
// rows and counters, run by one of the processes sharing the queue.
func (s *Store) CleanupTask(every time.Duration) queue.Periodic {
	if every <= 0 {
		every = 10 * time.Minute
	}
	return queue.Periodic{Name: "pgstore_cleanup", Every: every, Run: func(ctx context.Context) error {
		_, err := s.Cleanup(ctx)
		return err
	}}
}
