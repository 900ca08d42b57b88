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
	// sweepAt is the map size at which stale entries are next dropped, so
	// that the map stays bounded by the keys active within one burst time.
	sweepAt int
}

func newLimiter(perSecond float64, burst int) *limiter {
	if perSecond <= 0 || burst <= 0 {
		return nil
	}
	iv := time.Duration(float64(time.Second) / perSecond)
	if iv <= 0 {
		iv = 1
	}
	return &limiter{
		interval:  iv,
		tolerance: iv * time.Duration(burst-1),
		tat:       make(map[string]int64),
		sweepAt:   1024,
	}
}

// allow takes one token of key at now. When none is left it reports how
// long until one is.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	t := now.UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	tat, ok := l.tat[key]
	if !ok || tat < t {
		tat = t
	}
	if ahead := time.Duration(tat - t); ahead > l.tolerance {
		return false, ahead - l.tolerance
	}
	if !ok && len(l.tat) >= l.sweepAt {
		for k, v := range l.tat {
			if v <= t {
				delete(l.tat, k)
			}
		}
		l.sweepAt = max(1024, 2*len(l.tat))
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

	mu      sync.Mutex
	hits    map[string][]int64 // ascending unix nanoseconds, at most max
	sweepAt int
}

func newThrottle(max int, window time.Duration) *throttle {
	if max <= 0 || window <= 0 {
		return nil
	}
	return &throttle{max: max, window: window, hits: make(map[string][]int64), sweepAt: 1024}
}

// take records an event of key at now, unless max events already happened
// within the window; then it reports how long until the oldest expires.
func (t *throttle) take(key string, now time.Time) (bool, time.Duration) {
	n := now.UnixNano()
	cut := n - int64(t.window)
	t.mu.Lock()
	defer t.mu.Unlock()
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
	if len(h) == 0 && len(t.hits) >= t.sweepAt {
		for k, v := range t.hits {
			if len(v) == 0 || v[len(v)-1] <= cut {
				delete(t.hits, k)
			}
		}
		t.sweepAt = max(1024, 2*len(t.hits))
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
