package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/store"
)

// Bounds of the limiters' parameters.
const (
	// maxLimitSpan bounds a RateLimit's time to refill its burst and a
	// WindowLimit's window, so that no sum of nanosecond times overflows.
	maxLimitSpan = 10 * 365 * 24 * time.Hour
	// MaxWindowLimit is the largest max of a WindowLimit: each Take
	// rewrites the key's row with the times of up to max units.
	MaxWindowLimit = 10000
	// maxLimitName bounds the name of a limiter.
	maxLimitName = 64
)

// limitQueries are the limiters' statements; see buildLimitQueries.
type limitQueries struct {
	rateTake, rateRead, rateUndo, rateCleanup         string
	windowTake, windowRead, windowUndo, windowCleanup string
}

func buildLimitQueries(x func(string) string) limitQueries {
	return limitQueries{
		// rateTake spends a unit of a token bucket in one statement:
		// insert the key's row, or update it under its row lock when the
		// bucket has a unit left at $3 (its arrival time, or $3 when that
		// has passed, is at most the tolerance $5 ahead). A refusal updates
		// nothing but keeps the row locked for the rest of the transaction
		// (as ON CONFLICT DO UPDATE ... WHERE does), so rateRead, sent in
		// the same batch, reads the very arrival time that refused it.
		// since restarts when the bucket was full.
		rateTake: x(`INSERT INTO {{s}}{{p}}rate_limits AS r (name, key_hash, tat, since)
VALUES ($1, $2, $3::bigint + $4::bigint, $3::bigint)
ON CONFLICT (name, key_hash) DO UPDATE SET
	tat = GREATEST(r.tat, $3::bigint) + $4::bigint,
	since = CASE WHEN r.tat <= $3::bigint THEN $3::bigint ELSE LEAST(r.since, $3::bigint) END
WHERE GREATEST(r.tat, $3::bigint) - $3::bigint <= $5::bigint`),

		rateRead: x(`SELECT tat FROM {{s}}{{p}}rate_limits WHERE name = $1 AND key_hash = $2`),

		// rateUndo moves the arrival time back by one interval $4, not
		// below the Take's time $3, unless the bucket has been full since
		// then.
		rateUndo: x(`UPDATE {{s}}{{p}}rate_limits SET tat = GREATEST(tat - $4::bigint, $3::bigint)
WHERE name = $1 AND key_hash = $2 AND since <= $3::bigint AND tat > $3::bigint`),

		// windowTake records a unit at $3 unless max $6 units lie after
		// the window's start $4, dropping the units at or before it; $5 is
		// $3 plus the window. Like rateTake it locks the row either way,
		// and windowRead reads what refused it.
		windowTake: x(`INSERT INTO {{s}}{{p}}window_limits AS w (name, key_hash, hits, expires)
VALUES ($1, $2, ARRAY[$3::bigint], $5::bigint)
ON CONFLICT (name, key_hash) DO UPDATE SET
	hits = ARRAY(SELECT h FROM unnest(w.hits) AS u(h) WHERE h > $4::bigint
		UNION ALL SELECT $3::bigint ORDER BY 1),
	expires = GREATEST(w.expires, $5::bigint)
WHERE (SELECT count(*) FROM unnest(w.hits) AS u(h) WHERE h > $4::bigint) < $6::integer`),

		windowRead: x(`SELECT hits FROM {{s}}{{p}}window_limits WHERE name = $1 AND key_hash = $2`),

		// windowUndo removes one unit taken at exactly $3.
		windowUndo: x(`UPDATE {{s}}{{p}}window_limits
SET hits = hits[:array_position(hits, $3::bigint) - 1] || hits[array_position(hits, $3::bigint) + 1:]
WHERE name = $1 AND key_hash = $2 AND $3::bigint = ANY (hits)`),

		// The cleanups delete full buckets and expired windows, re-checking
		// on the row they delete (a Take may have renewed it meanwhile).
		rateCleanup: x(`DELETE FROM {{s}}{{p}}rate_limits
WHERE (name, key_hash) IN (
	SELECT name, key_hash FROM {{s}}{{p}}rate_limits WHERE tat <= $1 LIMIT $2)
  AND tat <= $1`),

		windowCleanup: x(`DELETE FROM {{s}}{{p}}window_limits
WHERE (name, key_hash) IN (
	SELECT name, key_hash FROM {{s}}{{p}}window_limits WHERE expires <= $1 LIMIT $2)
  AND expires <= $1`),
	}
}

// checkLimitName refuses a name that cannot label a budget.
func checkLimitName(op, name string) error {
	if name == "" || len(name) > maxLimitName || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("pgstore: %s: %w: name %q: must be 1 to %d bytes of UTF-8 without NUL",
			op, store.ErrInvalid, name, maxLimitName)
	}
	return nil
}

// RateLimit is a token bucket kept in PostgreSQL: a store.Limiter for
// the per-account rate limit (notify.WithRateLimit) shared by every
// instance that uses the database. Make one with Store.RateLimit.
//
// Each key may take burst units at once, and earns one back every
// 1/perSecond seconds, up to burst again; a key never seen has its whole
// burst. The algorithm is the generic cell rate algorithm, as in
// memstore.RateLimit, with the same answers: one row per key and name
// holds the theoretical arrival time of the next unit, in nanoseconds.
// Time is only what the callers pass in; the database clock is not read,
// so instances should keep their clocks in sync (skew shifts the budget
// by as much).
//
// A Take is one round trip: a batch of one conditional UPSERT (INSERT ...
// ON CONFLICT DO UPDATE ... WHERE the bucket has a unit), which
// serialises the Takes of one key on its row from any number of pools
// and processes, and one read of the row, which the UPSERT keeps locked,
// for the RetryAfter of a refusal. A refused Take writes nothing. Undo is
// one UPDATE. Neither is repeated after a connection was lost: repeating
// would spend or give back a second unit. Errors are as Store documents.
//
// A key whose bucket is full again keeps its row until Store.Cleanup
// deletes it; the row is then as good as none. Methods are safe for
// concurrent use.
type RateLimit struct {
	s         *Store
	name      string
	interval  int64  // nanoseconds to earn one unit
	tolerance int64  // interval * (burst-1)
	rule      string // the limit, as a refusal states it
}

// RateLimit returns the token bucket called name: each key may take burst
// units at once and earns one back every 1/perSecond seconds. Limiters of
// stores sharing the database share the budget of each key when they
// have the same name, so every instance must give a name the same
// parameters; different names (and a WindowLimit of the same name) are
// separate budgets. A limiter holds no state of its own and costs nothing
// to make.
//
// name must be 1 to 64 bytes of UTF-8 without NUL; perSecond positive,
// finite and at most 1e9 (one unit per nanosecond); burst at least 1; and
// a whole burst must refill within 10 years. Other values are refused with
// a store.ErrInvalid error that names the parameter. There are no
// defaults. The tables come with Migrate.
func (s *Store) RateLimit(name string, perSecond float64, burst int) (*RateLimit, error) {
	const op = "rate limit"
	if err := checkLimitName(op, name); err != nil {
		return nil, err
	}
	switch {
	case math.IsNaN(perSecond) || math.IsInf(perSecond, 0) || perSecond <= 0:
		return nil, fmt.Errorf("pgstore: %s %q: %w: perSecond %g: must be positive and finite", op, name, store.ErrInvalid, perSecond)
	case perSecond > 1e9:
		return nil, fmt.Errorf("pgstore: %s %q: %w: perSecond %g: must be at most 1e9 (one per nanosecond)", op, name, store.ErrInvalid, perSecond)
	case burst < 1:
		return nil, fmt.Errorf("pgstore: %s %q: %w: burst %d: must be at least 1", op, name, store.ErrInvalid, burst)
	case float64(burst)/perSecond > maxLimitSpan.Seconds():
		return nil, fmt.Errorf("pgstore: %s %q: %w: burst %d at perSecond %g: refilling the burst must take at most 10 years",
			op, name, store.ErrInvalid, burst, perSecond)
	}
	iv := max(int64(math.Round(float64(time.Second)/perSecond)), 1)
	return &RateLimit{
		s:         s,
		name:      name,
		interval:  iv,
		tolerance: iv * int64(burst-1),
		rule:      fmt.Sprintf("at most %d at once, then 1 per %v", burst, time.Duration(iv)),
	}, nil
}

// Take spends one unit of key's budget at now, as store.Limiter
// documents: nil when one was left; else a *store.LimitError whose
// RetryAfter is the time until one is earned back. Any other error is the
// store failing, as Store documents; whether the unit was spent is then
// unknown.
func (l *RateLimit) Take(ctx context.Context, key string, now time.Time) error {
	sum := sha256.Sum256([]byte(key))
	t := now.UnixNano()
	var taken bool
	var tat int64
	err := l.s.do(ctx, onceOnly, func() error {
		b := &pgx.Batch{}
		b.Queue(l.s.q.limits.rateTake, l.name, sum[:], t, l.interval, l.tolerance)
		b.Queue(l.s.q.limits.rateRead, l.name, sum[:])
		return l.s.batch(ctx, b, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			taken = tag.RowsAffected() == 1
			return br.QueryRow().Scan(&tat)
		})
	})
	if err != nil {
		return l.s.fail(ctx, "rate limit", err)
	}
	if taken {
		return nil
	}
	// The read saw the row the UPSERT locked, so this is positive; max
	// guards the contract should it not be.
	retry := max(max(tat, t)-t-l.tolerance, 1)
	return &store.LimitError{Rule: l.rule, RetryAfter: time.Duration(retry)}
}

// Undo gives back the unit that Take spent for key at the same time at:
// the key's arrival time moves back by one interval, but not below at. It
// does nothing for an unknown key, or one whose bucket has been full
// since at. Units are interchangeable, so an Undo for a time at which
// nothing was taken gives back a unit that a later Take of the same key
// spent.
func (l *RateLimit) Undo(ctx context.Context, key string, at time.Time) error {
	sum := sha256.Sum256([]byte(key))
	err := l.s.do(ctx, onceOnly, func() error {
		_, err := l.s.pool.Exec(ctx, l.s.q.limits.rateUndo, l.name, sum[:], at.UnixNano(), l.interval)
		return err
	})
	return l.s.fail(ctx, "rate limit undo", err)
}

// WindowLimit is a sliding window kept in PostgreSQL: a store.Limiter for
// the OTP throttle (notify.WithOTPThrottle) shared by every instance that
// uses the database. Make one with Store.WindowLimit.
//
// Each key may take at most max units within any window: a Take at now
// counts the units taken in (now-window, now], as memstore.WindowLimit
// does, with the same answers. One row per key and name holds the times
// of the key's recent units, at most max of them, in nanoseconds and in
// order even when instances pass their times slightly out of order. Time
// is only what the callers pass in; the database clock is not read.
//
// A Take is one round trip: a batch of one conditional UPSERT, which
// serialises the Takes of one key on its row lock from any number of
// pools and processes, drops the units that left the window and appends
// the new one, and one read of the row it keeps locked, for the
// RetryAfter of a refusal. A refused Take writes nothing. Undo is one
// UPDATE that removes one unit of the given time. Neither is repeated
// after a connection was lost. Errors are as Store documents.
//
// A key whose units have all left the window keeps its row until
// Store.Cleanup deletes it. Methods are safe for concurrent use.
type WindowLimit struct {
	s      *Store
	name   string
	max    int
	window int64  // nanoseconds
	rule   string // the limit, as a refusal states it
}

// WindowLimit returns the sliding window called name: each key may take
// at most max units within any window. Limiters of stores sharing the
// database share the budget of each key when they have the same name, so
// every instance must give a name the same parameters; different names
// (and a RateLimit of the same name) are separate budgets. A limiter holds
// no state of its own and costs nothing to make.
//
// name must be 1 to 64 bytes of UTF-8 without NUL; max from 1 to
// MaxWindowLimit (each Take rewrites the times of up to max units; for
// larger budgets use a RateLimit); window positive and at most 10 years.
// Other values are refused with a store.ErrInvalid error that names the
// parameter. There are no defaults. The tables come with Migrate.
func (s *Store) WindowLimit(name string, max int, window time.Duration) (*WindowLimit, error) {
	const op = "window limit"
	if err := checkLimitName(op, name); err != nil {
		return nil, err
	}
	switch {
	case max < 1 || max > MaxWindowLimit:
		return nil, fmt.Errorf("pgstore: %s %q: %w: max %d: must be from 1 to %d", op, name, store.ErrInvalid, max, MaxWindowLimit)
	case window <= 0 || window > maxLimitSpan:
		return nil, fmt.Errorf("pgstore: %s %q: %w: window %v: must be positive and at most 10 years", op, name, store.ErrInvalid, window)
	}
	return &WindowLimit{
		s:      s,
		name:   name,
		max:    max,
		window: int64(window),
		rule:   fmt.Sprintf("at most %d per %v", max, window),
	}, nil
}

// Take spends one unit of key's budget at now, as store.Limiter
// documents: nil when fewer than max units were taken within the window
// ending at now; else a *store.LimitError whose RetryAfter is the
// time until one of them leaves it. Any other error is the store failing,
// as Store documents; whether the unit was spent is then unknown.
func (l *WindowLimit) Take(ctx context.Context, key string, now time.Time) error {
	sum := sha256.Sum256([]byte(key))
	n := now.UnixNano()
	cut := n - l.window
	var taken bool
	var hits []int64
	err := l.s.do(ctx, onceOnly, func() error {
		b := &pgx.Batch{}
		b.Queue(l.s.q.limits.windowTake, l.name, sum[:], n, cut, n+l.window, l.max)
		b.Queue(l.s.q.limits.windowRead, l.name, sum[:])
		return l.s.batch(ctx, b, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			taken = tag.RowsAffected() == 1
			return br.QueryRow().Scan(&hits)
		})
	})
	if err != nil {
		return l.s.fail(ctx, "window limit", err)
	}
	if taken {
		return nil
	}
	// The count falls below max once the oldest live-max+1 units have
	// left the window. The read saw the row the UPSERT locked, so at least
	// max are live; the guards keep the contract should they not be.
	live := hits[sort.Search(len(hits), func(i int) bool { return hits[i] > cut }):]
	retry := int64(1)
	if len(live) >= l.max {
		retry = max(live[len(live)-l.max]-cut, 1)
	}
	return &store.LimitError{Rule: l.rule, RetryAfter: time.Duration(retry)}
}

// Undo forgets one unit that Take spent for key at exactly at. Without
// one (never taken, undone already, or dropped after it left the window)
// it does nothing.
func (l *WindowLimit) Undo(ctx context.Context, key string, at time.Time) error {
	sum := sha256.Sum256([]byte(key))
	err := l.s.do(ctx, onceOnly, func() error {
		_, err := l.s.pool.Exec(ctx, l.s.q.limits.windowUndo, l.name, sum[:], at.UnixNano())
		return err
	})
	return l.s.fail(ctx, "window limit undo", err)
}

// batch sends b in one round trip, where its statements run in one
// implicit transaction, and hands the results to read.
func (s *Store) batch(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := s.pool.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// The row the first statement wrote or locked is gone, so no
		// transaction held it: something split the batch.
		return errors.New("the limiter's row vanished within its batch")
	}
	return err
}

// Interface guards
var (
	_ store.Limiter = (*RateLimit)(nil)
	_ store.Limiter = (*WindowLimit)(nil)
)
