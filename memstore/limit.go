package memstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/store"
)

// maxSpan bounds the time a limit remembers: a RateLimit's time to refill
// its whole burst (burst/perSecond) and a WindowLimit's window. Longer
// spans are refused, so that no arithmetic on nanosecond times overflows.
const maxSpan = 10 * 365 * 24 * time.Hour

// RateLimit is an in-memory token bucket, a store.Limiter for the
// per-account rate limit of one process (notify.WithRateLimit); use
// pgstore's RateLimit to share one budget between processes.
//
// Each key may take burst units at once, and earns one back every
// 1/perSecond seconds, up to burst again; a key never seen has its whole
// burst. It is kept as the generic cell rate algorithm: one time per key
// (the theoretical arrival time of the next unit) instead of a token count
// and a refill time, so Take and Undo are O(1). Time is only what the
// callers pass in; the limiter reads no clock.
//
// A refused Take spends nothing and says, in Error.RetryAfter, exactly how
// long until a unit is earned back; its message states the limit ("at
// most 20 at once, then 1 per 100ms"). Undo moves the key's arrival time
// back by one interval, never below the time of the Take it undoes; it
// does nothing when the key has had its whole burst back since that time
// (the unit has expired) or is unknown. Units are interchangeable, so an
// Undo for a time at which nothing was taken gives back a unit that a
// later Take of the same key spent.
//
// Memory follows the keys active within one burst time (burst/perSecond):
// a key whose bucket is full again is dropped by a sweep that runs once
// per burst time, or sooner when the number of keys has doubled.
//
// There are no defaults: both parameters are required. Methods are safe
// for concurrent use; one mutex guards the keys.
type RateLimit struct {
	interval  int64  // nanoseconds to earn one unit
	tolerance int64  // interval * (burst-1): how far ahead the arrival time may run
	limit     string // the rule a refusal states

	mu      sync.Mutex
	buckets map[string]bucket
	// A key whose arrival time has passed has its full burst again and is
	// dropped by the sweep.
	sweep sweeper
}

// bucket is one key's state, in unix nanoseconds.
type bucket struct {
	// tat is the theoretical arrival time: the bucket is full from tat
	// on, and a Take at now is allowed while tat - now <= tolerance.
	tat int64
	// since is the earliest Take of the current busy period, the period
	// since the bucket was last seen full. A unit taken before it has
	// expired, so Undo ignores it.
	since int64
}

// NewRateLimit returns an empty RateLimit that lets each key take burst
// units at once and earns one back every 1/perSecond seconds. perSecond
// must be positive, finite and at most 1e9 (one unit per nanosecond);
// burst must be at least 1; and a whole burst must refill within 10
// years. Other values are refused with an ErrInvalid error
// that names the parameter.
func NewRateLimit(perSecond float64, burst int) (*RateLimit, error) {
	switch {
	case math.IsNaN(perSecond) || math.IsInf(perSecond, 0) || perSecond <= 0:
		return nil, fmt.Errorf("memstore: NewRateLimit: perSecond %g: must be positive and finite: %w", perSecond, store.ErrInvalid)
	case perSecond > 1e9:
		return nil, fmt.Errorf("memstore: NewRateLimit: perSecond %g: must be at most 1e9 (one per nanosecond): %w", perSecond, store.ErrInvalid)
	case burst < 1:
		return nil, fmt.Errorf("memstore: NewRateLimit: burst %d: must be at least 1: %w", burst, store.ErrInvalid)
	case float64(burst)/perSecond > maxSpan.Seconds():
		return nil, fmt.Errorf("memstore: NewRateLimit: burst %d at perSecond %g: refilling the burst must take at most 10 years: %w", burst, perSecond, store.ErrInvalid)
	}
	iv := max(int64(math.Round(float64(time.Second)/perSecond)), 1)
	tolerance := iv * int64(burst-1)
	return &RateLimit{
		interval:  iv,
		tolerance: tolerance,
		limit:     rateMessage(burst, time.Duration(iv)),
		buckets:   make(map[string]bucket),
		sweep:     sweeper{every: tolerance + iv},
	}, nil
}

// rateMessage states a token bucket's limit.
func rateMessage(burst int, interval time.Duration) string {
	return fmt.Sprintf("at most %d at once, then 1 per %v", burst, interval)
}

// Take spends one unit of key's budget at now, as store.Limiter
// documents: nil when one was left; else a *store.LimitError whose
// RetryAfter is the time until one is earned back. A ctx that has ended is
// Canceled or DeadlineExceeded, and spends nothing.
func (l *RateLimit) Take(ctx context.Context, key string, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return ctxError("rate limit", err)
	}
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sweep.due(t, len(l.buckets)) {
		l.buckets = sweepMap(&l.sweep, l.buckets, func(b bucket) bool { return b.tat <= t })
	}
	b, ok := l.buckets[key]
	switch {
	case !ok || b.tat <= t:
		b = bucket{tat: t, since: t} // full: a new busy period
	case t < b.since:
		b.since = t // a Take dated before the period's first (callers race)
	}
	if ahead := b.tat - t; ahead > l.tolerance {
		return &store.LimitError{Rule: l.limit, RetryAfter: time.Duration(ahead - l.tolerance)}
	}
	b.tat += l.interval
	l.buckets[key] = b
	return nil
}

// Undo gives back the unit that Take spent for key at the same time at:
// the key's arrival time moves back by one interval, but not below at.
// It does nothing for an unknown key, or one whose bucket has been full
// since at. A ctx that has ended is Canceled or DeadlineExceeded.
func (l *RateLimit) Undo(ctx context.Context, key string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return ctxError("rate limit undo", err)
	}
	a := at.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok || a < b.since || b.tat <= a {
		return nil
	}
	b.tat = max(b.tat-l.interval, a)
	l.buckets[key] = b
	return nil
}

// WindowLimit is an in-memory sliding window, a store.Limiter for the
// OTP throttle of one process (notify.WithOTPThrottle; "5 per 15 minutes
// per number" is NewWindowLimit(5, 15*time.Minute)); use pgstore's
// WindowLimit to share one budget between processes.
//
// Each key may take at most max units within any window: a Take at now
// counts the units taken in (now-window, now], so a unit taken at t counts
// until t+window, exclusive. It keeps the times of each key's recent
// units, at most max of them, in order even when callers pass their times
// slightly out of order. Time is only what the callers pass in; the
// limiter reads no clock.
//
// A refused Take spends nothing and says, in Error.RetryAfter, exactly how
// long until the oldest counted unit leaves the window; its message states
// the limit ("at most 5 per 15m0s"). Undo forgets one unit taken for the
// key at exactly the given time; with none (never taken, undone already,
// or dropped after it left the window) it does nothing.
//
// Memory follows the keys active within one window: a key whose units
// have all left the window is dropped by a sweep that runs once per
// window, or sooner when the number of keys has doubled.
//
// There are no defaults: both parameters are required. Methods are safe
// for concurrent use; one mutex guards the keys.
type WindowLimit struct {
	max    int
	window int64  // nanoseconds
	limit  string // the rule a refusal states

	mu    sync.Mutex
	hits  map[string][]int64 // ascending unix nanoseconds
	sweep sweeper
}

// NewWindowLimit returns an empty WindowLimit of at most max units per key
// within any window. max must be at least 1, and window positive and at
// most 10 years; other values are refused with an ErrInvalid
// error that names the parameter.
func NewWindowLimit(max int, window time.Duration) (*WindowLimit, error) {
	switch {
	case max < 1:
		return nil, fmt.Errorf("memstore: NewWindowLimit: max %d: must be at least 1: %w", max, store.ErrInvalid)
	case window <= 0 || window > maxSpan:
		return nil, fmt.Errorf("memstore: NewWindowLimit: window %v: must be positive and at most 10 years: %w", window, store.ErrInvalid)
	}
	return &WindowLimit{
		max:    max,
		window: int64(window),
		limit:  windowMessage(max, window),
		hits:   make(map[string][]int64),
		sweep:  sweeper{every: int64(window)},
	}, nil
}

// windowMessage states a sliding window's limit.
func windowMessage(max int, window time.Duration) string {
	return fmt.Sprintf("at most %d per %v", max, window)
}

// Take spends one unit of key's budget at now, as store.Limiter
// documents: nil when fewer than max units were taken within the window
// ending at now; else a *store.LimitError whose RetryAfter is the
// time until one of them leaves it. A ctx that has ended is Canceled or
// DeadlineExceeded, and spends nothing.
func (l *WindowLimit) Take(ctx context.Context, key string, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return ctxError("window limit", err)
	}
	n := now.UnixNano()
	cut := n - l.window // units at or before cut have left the window
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sweep.due(n, len(l.hits)) {
		l.hits = sweepMap(&l.sweep, l.hits, func(h []int64) bool { return len(h) == 0 || h[len(h)-1] <= cut })
	}
	h := l.hits[key]
	live, _ := slices.BinarySearch(h, cut+1) // the first unit after cut
	h = h[live:]
	if len(h) >= l.max {
		l.hits[key] = h
		// The count drops below max once the oldest len(h)-max+1 have left.
		return &store.LimitError{Rule: l.limit, RetryAfter: time.Duration(h[len(h)-l.max] - cut)}
	}
	i := len(h)
	for i > 0 && h[i-1] > n { // usually none: times mostly arrive in order
		i--
	}
	l.hits[key] = slices.Insert(h, i, n)
	return nil
}

// Undo forgets one unit that Take spent for key at exactly at. Without one
// it does nothing. A ctx that has ended is Canceled or DeadlineExceeded.
func (l *WindowLimit) Undo(ctx context.Context, key string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return ctxError("window limit undo", err)
	}
	a := at.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hits[key]
	if i, ok := slices.BinarySearch(h, a); ok {
		l.hits[key] = slices.Delete(h, i, i+1)
	}
	return nil
}

// sweeper decides when a per-key map drops its stale keys, so that its
// memory follows the keys active within about one period, also after the
// traffic falls: once per period, and sooner when the map has doubled
// since the last sweep (a burst of new keys).
type sweeper struct {
	every int64 // the period, in nanoseconds
	next  int64 // unix nanoseconds of the next timed sweep; 0: unset
	at    int   // map size that forces a sweep
}

// minSweepSize is the map size below which a burst does not force a sweep:
// small maps are swept by time alone.
const minSweepSize = 1024

// due reports whether the map, of size keys at now, is to be swept now;
// when it is, the next timed sweep is one period away.
func (s *sweeper) due(now int64, size int) bool {
	if s.next == 0 {
		s.next = now + s.every
	}
	if now < s.next && size < max(s.at, minSweepSize) {
		return false
	}
	s.next = now + s.every
	return true
}

// sweepMap returns a fresh map of the entries of m that stale does not
// report. A fresh map rather than deletes in place: a Go map keeps the
// memory of its largest size, and under steady churn its tombstones make
// it grow beyond that (golang/go#70886). A sweep copies only the live
// keys, and runs at most once per period or per doubling of the map, so
// the copy costs O(1) per key added.
func sweepMap[V any](s *sweeper, m map[string]V, stale func(V) bool) map[string]V {
	live := 0
	for _, v := range m {
		if !stale(v) {
			live++
		}
	}
	fresh := make(map[string]V, live)
	for k, v := range m {
		if !stale(v) {
			fresh[k] = v
		}
	}
	s.at = 2 * live
	return fresh
}

// Interface guards
var (
	_ store.Limiter = (*RateLimit)(nil)
	_ store.Limiter = (*WindowLimit)(nil)
)
