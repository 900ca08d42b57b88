package memstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
)

// The behaviour both limiters promise is checked by storetest's suites
// (conformance_test.go); these tests check what is particular to memstore:
// the refusal of bad parameters, the wording of refusals, and that the
// per-key maps drop keys gone quiet, so memory follows the keys active
// within a window, also once the traffic has stopped.

var limitT0 = time.Unix(1_700_000_000, 0)

func mustRate(t testing.TB, perSecond float64, burst int) *RateLimit {
	t.Helper()
	l, err := NewRateLimit(perSecond, burst)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustWindow(t testing.TB, max int, window time.Duration) *WindowLimit {
	t.Helper()
	l, err := NewWindowLimit(max, window)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// allowed reports whether a Take succeeds, failing t on any error other
// than a refusal, and returns the refusal's RetryAfter.
func allowed(t testing.TB, l limiter, key string, now time.Time) (bool, time.Duration) {
	t.Helper()
	err := l.Take(context.Background(), key, now)
	if err == nil {
		return true, 0
	}
	var e *store.LimitError
	if !errors.As(err, &e) {
		t.Fatalf("Take(%q): %v", key, err)
	}
	return false, e.RetryAfter
}

func TestLimitConstructorsRefuse(t *testing.T) {
	for _, tc := range []struct {
		perSecond float64
		burst     int
		param     string
	}{
		{0, 5, "perSecond"},
		{-1, 5, "perSecond"},
		{math.NaN(), 5, "perSecond"},
		{math.Inf(1), 5, "perSecond"},
		{2e9, 5, "perSecond"},
		{10, 0, "burst"},
		{10, -3, "burst"},
		{1e-9, 1, "burst"}, // one unit per 31 years
	} {
		l, err := NewRateLimit(tc.perSecond, tc.burst)
		if l != nil || notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), tc.param) {
			t.Errorf("NewRateLimit(%g, %d) = %v, %v; want InvalidArgument naming %s", tc.perSecond, tc.burst, l, err, tc.param)
		}
	}
	for _, tc := range []struct {
		max    int
		window time.Duration
		param  string
	}{
		{0, time.Minute, "max"},
		{-1, time.Minute, "max"},
		{5, 0, "window"},
		{5, -time.Second, "window"},
		{5, 11 * 365 * 24 * time.Hour, "window"},
	} {
		l, err := NewWindowLimit(tc.max, tc.window)
		if l != nil || notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), tc.param) {
			t.Errorf("NewWindowLimit(%d, %v) = %v, %v; want InvalidArgument naming %s", tc.max, tc.window, l, err, tc.param)
		}
	}
	// The extremes that are allowed work.
	if _, err := NewRateLimit(1e9, 1); err != nil {
		t.Errorf("NewRateLimit(1e9, 1): %v", err)
	}
	if _, err := NewWindowLimit(1<<30, time.Second); err != nil {
		t.Errorf("NewWindowLimit(1<<30, 1s): %v", err)
	}
}

func TestLimitRefusalsStateTheLimit(t *testing.T) {
	ctx := context.Background()
	w := mustWindow(t, 5, 15*time.Minute)
	r := mustRate(t, 10, 20)
	for i := range 20 {
		_ = w.Take(ctx, "k", limitT0)
		if err := r.Take(ctx, "k", limitT0); err != nil {
			t.Fatalf("rate take %d: %v", i, err)
		}
	}
	for _, tc := range []struct {
		l    store.Limiter
		want string
	}{
		{w, "at most 5 per 15m0s"},
		{r, "at most 20 at once, then 1 per 100ms"},
	} {
		err := tc.l.Take(ctx, "k", limitT0)
		var e *store.LimitError
		if !errors.As(err, &e) || e.Rule != tc.want {
			t.Errorf("refusal %v, want the message %q", err, tc.want)
		}
	}
}

func TestRateLimitRoundsTheInterval(t *testing.T) {
	l := mustRate(t, 3, 1)
	if l.interval != 333_333_333 {
		t.Errorf("interval at 3 per second = %dns, want 333333333", l.interval)
	}
	l = mustRate(t, 1.5, 1)
	if l.interval != 666_666_667 {
		t.Errorf("interval at 1.5 per second = %dns, want 666666667", l.interval)
	}
}

func TestLimitsHonourContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := mustRate(t, 1, 1)
	w := mustWindow(t, 1, time.Minute)
	for name, err := range map[string]error{
		"RateLimit.Take":   r.Take(ctx, "k", limitT0),
		"RateLimit.Undo":   r.Undo(ctx, "k", limitT0),
		"WindowLimit.Take": w.Take(ctx, "k", limitT0),
		"WindowLimit.Undo": w.Undo(ctx, "k", limitT0),
	} {
		if notify.CodeOf(err) != notify.CodeCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context = %v, want Canceled", name, err)
		}
	}
	// Nothing was spent.
	if ok, _ := allowed(t, r, "k", limitT0); !ok {
		t.Error("a canceled RateLimit.Take spent the unit")
	}
	if ok, _ := allowed(t, w, "k", limitT0); !ok {
		t.Error("a canceled WindowLimit.Take spent the unit")
	}
}

func TestWindowLimitForgetsQuietKeys(t *testing.T) {
	l := mustWindow(t, 5, time.Minute)
	const keys = 5000
	for i := range keys {
		if ok, _ := allowed(t, l, fmt.Sprintf("acct\x00%010d", i), limitT0); !ok {
			t.Fatalf("key %d throttled on its first OTP", i)
		}
	}
	if len(l.hits) != keys {
		t.Fatalf("%d keys inside the window, map holds %d", keys, len(l.hits))
	}
	// One window later every key is stale: the next take sweeps them all.
	if ok, _ := allowed(t, l, "acct\x009876543210", limitT0.Add(time.Minute+time.Second)); !ok {
		t.Fatal("a fresh key was throttled")
	}
	if len(l.hits) != 1 {
		t.Errorf("after a quiet window the map holds %d keys, want 1", len(l.hits))
	}
}

// limiter is what these tests take of either limiter.
type limiter interface {
	Take(context.Context, string, time.Time) error
}

// TestSweepKeepsLiveCounts: many new keys inside the window (or the
// burst time) force sweeps; none may reset the live count of "busy",
// which took its budget of two.
func TestSweepKeepsLiveCounts(t *testing.T) {
	w, r := mustWindow(t, 2, time.Minute), mustRate(t, 1, 2) // a burst lasts 2s
	for _, c := range []struct {
		name                 string
		l                    limiter
		size                 func() int
		second, crowd, third time.Duration // when busy takes its second unit, the new keys come, busy asks again
		wait                 time.Duration // what its third take waits
	}{
		{"window", w, func() int { return len(w.hits) }, time.Second, 2 * time.Second, 3 * time.Second, 57 * time.Second},
		{"rate", r, func() int { return len(r.buckets) }, 0, 100 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			allowed(t, c.l, "busy", limitT0)
			allowed(t, c.l, "busy", limitT0.Add(c.second))
			for i := range 3 * minSweepSize {
				allowed(t, c.l, fmt.Sprint("k", i), limitT0.Add(c.crowd))
			}
			if ok, wait := allowed(t, c.l, "busy", limitT0.Add(c.third)); ok || wait != c.wait {
				t.Errorf("third take within the window: allowed %v, retry after %v; want refused, %v", ok, wait, c.wait)
			}
			if c.size() != 3*minSweepSize+1 {
				t.Errorf("live keys dropped: map holds %d, want %d", c.size(), 3*minSweepSize+1)
			}
		})
	}
}

// TestSweepsUnderChurn: keys that each come once, each after the last
// one's window (or burst time), do not grow the map without end.
func TestSweepsUnderChurn(t *testing.T) {
	w, r := mustWindow(t, 2, time.Minute), mustRate(t, 1000, 1)
	for _, c := range []struct {
		name string
		l    limiter
		size func() int
		step time.Duration
	}{
		{"window", w, func() int { return len(w.hits) }, time.Hour},
		{"rate", r, func() int { return len(r.buckets) }, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < 5000; i++ {
				allowed(t, c.l, strconv.Itoa(i), limitT0.Add(time.Duration(i)*c.step))
			}
			if n := c.size(); n > 2*minSweepSize {
				t.Fatalf("map grew to %d entries", n)
			}
		})
	}
}

func TestRateLimitForgetsQuietKeys(t *testing.T) {
	l := mustRate(t, 10, 5) // a burst lasts 0.5s
	for i := range 3000 {
		allowed(t, l, fmt.Sprint("acct-", i), limitT0)
	}
	allowed(t, l, "acct-x", limitT0.Add(2*time.Second))
	if len(l.buckets) != 1 {
		t.Errorf("after a quiet burst time the map holds %d keys, want 1", len(l.buckets))
	}
	// The limit itself still holds after sweeps: a burst of 5, then refusal.
	t1 := limitT0.Add(time.Hour)
	for i := range 5 {
		if ok, _ := allowed(t, l, "acct-y", t1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if ok, wait := allowed(t, l, "acct-y", t1); ok || wait != 100*time.Millisecond {
		t.Errorf("sixth request: allowed %v, retry after %v; want refused, 100ms", ok, wait)
	}
}

// TestLimitsMemoryFlat runs a million keys (200,000 under the race
// detector) through each limiter, a new key every millisecond and each
// key live for a second, so about a thousand are live at a time, and
// checks that the heap did not grow with the count: quiet keys leave, and
// the maps of live ones do not swell under the churn.
func TestLimitsMemoryFlat(t *testing.T) {
	const live = 1000
	total := 1_000_000
	if raceEnabled {
		total = 200_000
	}
	rate := mustRate(t, 1, 1)
	window := mustWindow(t, 3, live*time.Millisecond)
	for _, tc := range []struct {
		name string
		l    store.Limiter
		size func() int
	}{
		{"RateLimit", rate, func() int { return len(rate.buckets) }},
		{"WindowLimit", window, func() int { return len(window.hits) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			now := limitT0
			var base uint64
			for i := range total {
				now = now.Add(time.Millisecond)
				if err := tc.l.Take(ctx, strconv.Itoa(i), now); err != nil {
					t.Fatal(err)
				}
				if i == 4*live {
					base = liveHeap()
				}
			}
			grown := int64(liveHeap()) - int64(base)
			t.Logf("%d keys kept; the heap grew by %d bytes", tc.size(), grown)
			// Sweeps run once per second or per doubling: between them
			// the map holds up to about twice the live keys.
			if n := tc.size(); n > 2*live+minSweepSize {
				t.Fatalf("%d keys kept, want about %d", n, live)
			}
			// Two thousand keys take some 200 KB; a map that kept every key
			// would take a hundred times that.
			if grown > 256<<10 {
				t.Errorf("the heap grew by %d bytes between %d and %d keys", grown, 4*live, total)
			}
		})
	}
}
