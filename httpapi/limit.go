package httpapi

import (
	"sync"
	"time"
)

// limiter is a per-key token bucket, kept as the generic cell rate
// algorithm: one timestamp per key (the theoretical arrival time of the
// next request) instead of a token count and a refill time. A key may take
// burst requests at once and then one per interval.
type limiter struct {
	interval  time.Duration // time to earn one token
	tolerance time.Duration // interval * (burst-1): how far ahead tat may run

	mu  sync.Mutex
	tat map[string]int64 // unix nanoseconds
	// A key whose tat has passed has its full burst again and is dropped
	// by the sweep, which runs once per burst time.
	sweep sweeper
}

func newLimiter(perSecond float64, burst int) *limiter {
	if perSecond <= 0 || burst <= 0 {
		return nil
	}
	iv := time.Duration(float64(time.Second) / perSecond)
	if iv <= 0 {
		iv = 1
	}
	tolerance := iv * time.Duration(burst-1)
	return &limiter{
		interval:  iv,
		tolerance: tolerance,
		tat:       make(map[string]int64),
		sweep:     sweeper{every: int64(tolerance + iv)},
	}
}

// allow takes one token of key at now. When none is left it reports how
// long until one is.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sweep.due(t, len(l.tat)) {
		l.tat = sweepMap(&l.sweep, l.tat, func(tat int64) bool { return tat <= t })
	}
	tat, ok := l.tat[key]
	if !ok || tat < t {
		tat = t
	}
	if ahead := time.Duration(tat - t); ahead > l.tolerance {
		return false, ahead - l.tolerance
	}
	l.tat[key] = tat + int64(l.interval)
	return true, 0
}

// throttle allows at most max events per key within any sliding window:
// the OTP throttle, "5 per 15 minutes per number". It keeps the times of
// the last max events of each key.
type throttle struct {
	max    int
	window time.Duration

	mu    sync.Mutex
	hits  map[string][]int64 // ascending unix nanoseconds, at most max
	sweep sweeper
}

func newThrottle(max int, window time.Duration) *throttle {
	if max <= 0 || window <= 0 {
		return nil
	}
	return &throttle{max: max, window: window, hits: make(map[string][]int64), sweep: sweeper{every: int64(window)}}
}

// take records an event of key at now, unless max events already happened
// within the window; then it reports how long until the oldest expires.
func (t *throttle) take(key string, now time.Time) (bool, time.Duration) {
	n := now.UnixNano()
	cut := n - int64(t.window)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sweep.due(n, len(t.hits)) {
		t.hits = sweepMap(&t.sweep, t.hits, func(h []int64) bool { return len(h) == 0 || h[len(h)-1] <= cut })
	}
	h := t.hits[key]
	i := 0
	for i < len(h) && h[i] <= cut {
		i++
	}
	h = h[i:]
	if len(h) >= t.max {
		t.hits[key] = h
		return false, time.Duration(h[0] - cut)
	}
	t.hits[key] = append(h, n)
	return true, 0
}

// undo forgets the event that take recorded for key at now: the send it
// allowed delivered nothing, so it should not count against the recipient.
func (t *throttle) undo(key string, now time.Time) {
	n := now.UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hits[key]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i] == n {
			t.hits[key] = append(h[:i:i], h[i+1:]...)
			return
		}
	}
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
