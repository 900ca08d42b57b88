package httpapi

import (
	"fmt"
	"testing"
	"time"
)

// The OTP throttle and the rate limiter keep one entry per key; these tests
// check that the entries of keys gone quiet are dropped, so memory follows
// the keys active within a window, also once the traffic has stopped.

func TestThrottleForgetsQuietKeys(t *testing.T) {
	th := newThrottle(5, time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	const keys = 5000
	for i := range keys {
		if ok, _ := th.take(fmt.Sprintf("acct\x00%010d", i), t0); !ok {
			t.Fatalf("key %d throttled on its first OTP", i)
		}
	}
	if len(th.hits) != keys {
		t.Fatalf("%d keys inside the window, map holds %d", keys, len(th.hits))
	}
	// One window later every key is stale: the next take sweeps them all.
	if ok, _ := th.take("acct\x009876543210", t0.Add(time.Minute+time.Second)); !ok {
		t.Fatal("a fresh key was throttled")
	}
	if len(th.hits) != 1 {
		t.Errorf("after a quiet window the map holds %d keys, want 1", len(th.hits))
	}
}

func TestThrottleSweepKeepsLiveCounts(t *testing.T) {
	th := newThrottle(2, time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	th.take("busy", t0)
	th.take("busy", t0.Add(time.Second))
	// Many new keys inside the window force burst sweeps; none may reset
	// the live count of "busy".
	for i := range 3 * minSweepSize {
		th.take(fmt.Sprint("k", i), t0.Add(2*time.Second))
	}
	if ok, wait := th.take("busy", t0.Add(3*time.Second)); ok || wait != 57*time.Second {
		t.Errorf("third OTP within the window: allowed %v, retry after %v; want refused, 57s", ok, wait)
	}
	if len(th.hits) != 3*minSweepSize+1 {
		t.Errorf("live keys dropped: map holds %d, want %d", len(th.hits), 3*minSweepSize+1)
	}
}

func TestLimiterForgetsQuietKeys(t *testing.T) {
	l := newLimiter(10, 5) // a burst lasts 0.5s
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 3000 {
		l.allow(fmt.Sprint("acct-", i), t0)
	}
	l.allow("acct-x", t0.Add(2*time.Second))
	if len(l.tat) != 1 {
		t.Errorf("after a quiet burst time the map holds %d keys, want 1", len(l.tat))
	}
	// The limit itself still holds after sweeps: a burst of 5, then refusal.
	t1 := t0.Add(time.Hour)
	for i := range 5 {
		if ok, _ := l.allow("acct-y", t1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if ok, wait := l.allow("acct-y", t1); ok || wait != 100*time.Millisecond {
		t.Errorf("sixth request: allowed %v, retry after %v; want refused, 100ms", ok, wait)
	}
}
