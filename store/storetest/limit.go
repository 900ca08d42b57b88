package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/store"
)

// RateLimitHarness connects RunRateLimit to a token-bucket store.Limiter.
type RateLimitHarness struct {
	// New returns a limiter that lets each key take burst units at once
	// and earns one back every 1/perSecond seconds, up to burst; a key it
	// has never seen has its whole burst. It releases the limiter with
	// t.Cleanup. Required.
	New func(t *testing.T, perSecond float64, burst int) store.Limiter

	// Resolution is how finely the limiter keeps time: RetryAfter may be
	// off by up to it, and the suite steps at least that far on either
	// side of the instant a unit frees up. Zero means to the nanosecond.
	Resolution time.Duration
}

// WindowLimitHarness connects RunWindowLimit to a sliding-window
// store.Limiter.
type WindowLimitHarness struct {
	// New returns a limiter that lets each key take at most max units
	// within any window: a unit taken at t counts for Takes at times in
	// [t, t+window). It releases the limiter with t.Cleanup. Required.
	New func(t *testing.T, max int, window time.Duration) store.Limiter

	// Resolution is as for RateLimitHarness.
	Resolution time.Duration
}

// RunRateLimit checks a token-bucket store.Limiter:
//
//   - a key takes exactly burst units at one instant; the next Take is
//     refused with a *store.LimitError (matching no sentinel) whose Rule
//     states the limit and whose RetryAfter is the time until a unit is
//     earned back, and spends nothing;
//   - units are earned back at the rate, with time only as passed in (no
//     clock, no sleeps), never beyond the burst;
//   - Undo gives a unit back, never beyond the burst; Undo of a key never
//     used, or of a unit taken before the key's bucket was full again,
//     changes nothing;
//   - keys are independent, also keys that share a prefix or hold a NUL
//     byte;
//   - of 16 goroutines taking at one instant, exactly burst succeed, and
//     concurrent Undos each give back exactly one unit.
func RunRateLimit(t *testing.T, h RateLimitHarness) {
	t.Helper()
	needs(t, h.New != nil, "RateLimitHarness needs New")
	l := limitSuite{res: h.Resolution}
	runAll(t, []subtest{
		{"Budget", func(t *testing.T) { l.rateBudget(t, h) }},
		{"Refill", func(t *testing.T) { l.rateRefill(t, h) }},
		{"SlowRate", func(t *testing.T) { l.rateSlow(t, h) }},
		{"Undo", func(t *testing.T) { l.rateUndo(t, h) }},
		{"UndoUnknownOrExpired", func(t *testing.T) { l.rateUndoExpired(t, h) }},
		{"KeysIndependent", func(t *testing.T) {
			l.keysIndependent(t, h.New(t, 1, 3), 3, 3*time.Second)
		}},
		{"Concurrent", func(t *testing.T) { l.concurrent(t, h.New(t, 1, 20), 20) }},
		{"ConcurrentUndo", func(t *testing.T) { l.concurrentUndo(t, h.New(t, 1, 20), 20) }},
	})
}

// RunWindowLimit checks a sliding-window store.Limiter:
//
//   - a key takes exactly max units within a window; the next Take is
//     refused with a *store.LimitError (matching no sentinel) whose Rule
//     states the limit (it holds max) and whose RetryAfter is the time
//     until the oldest unit leaves the window, and spends nothing;
//   - the window slides with the times passed in (no clock, no sleeps): a
//     unit taken at t counts until t+window, exclusive, also when Takes
//     come with times slightly out of order;
//   - Undo gives back exactly the unit taken at its time; Undo of a time
//     never taken, undone already, of a unit out of the window, or of a
//     key never used, changes nothing;
//   - keys are independent, also keys that share a prefix or hold a NUL
//     byte;
//   - of 16 goroutines taking at one instant, exactly max succeed, and
//     concurrent Undos each give back exactly one unit.
func RunWindowLimit(t *testing.T, h WindowLimitHarness) {
	t.Helper()
	needs(t, h.New != nil, "WindowLimitHarness needs New")
	l := limitSuite{res: h.Resolution}
	runAll(t, []subtest{
		{"Budget", func(t *testing.T) { l.windowBudget(t, h) }},
		{"Slides", func(t *testing.T) { l.windowSlides(t, h) }},
		{"OutOfOrder", func(t *testing.T) { l.windowOutOfOrder(t, h) }},
		{"Undo", func(t *testing.T) { l.windowUndo(t, h) }},
		{"UndoUnknownOrExpired", func(t *testing.T) { l.windowUndoExpired(t, h) }},
		{"KeysIndependent", func(t *testing.T) {
			l.keysIndependent(t, h.New(t, 3, time.Hour), 3, time.Hour)
		}},
		{"Concurrent", func(t *testing.T) { l.concurrent(t, h.New(t, 20, time.Minute), 20) }},
		{"ConcurrentUndo", func(t *testing.T) { l.concurrentUndo(t, h.New(t, 20, time.Minute), 20) }},
	})
}

// limitGoroutines is how many goroutines the concurrent subtests of the
// limiter suites run, each taking limitTakes times.
const (
	limitGoroutines = 16
	limitTakes      = 5
)

// limitSuite holds the checks shared by both limiter suites.
type limitSuite struct {
	res time.Duration // the harness's Resolution
}

// limitEpoch is the suite's first instant: any fixed time works, since
// limiters read none but the ones passed in.
var limitEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// limitKey returns a fresh key shaped like the Notifier's OTP keys.
func limitKey() string { return newName("acct") + "\x00" + "9876543210" }

// take fails t unless Take allows.
func take(t *testing.T, l store.Limiter, key string, now time.Time, what string) {
	t.Helper()
	if err := l.Take(context.Background(), key, now); err != nil {
		t.Fatalf("%s: Take at +%v: %v, want allowed", what, now.Sub(limitEpoch), err)
	}
}

// takeN fails t unless n Takes at now are all allowed.
func takeN(t *testing.T, l store.Limiter, key string, now time.Time, n int, what string) {
	t.Helper()
	for i := range n {
		take(t, l, key, now, what+" #"+strconv.Itoa(i+1))
	}
}

// refused fails t unless Take is refused as the contract says, and
// returns the refusal.
func refused(t *testing.T, l store.Limiter, key string, now time.Time, what string) *store.LimitError {
	t.Helper()
	err := l.Take(context.Background(), key, now)
	if err == nil {
		t.Fatalf("%s: Take at +%v allowed, want a *store.LimitError", what, now.Sub(limitEpoch))
	}
	var e *store.LimitError
	if !errors.As(err, &e) || !isLimit(err) {
		t.Fatalf("%s: Take at +%v: %v (%T, matching %v), want a *store.LimitError and no sentinel",
			what, now.Sub(limitEpoch), err, err, kindsOf(err))
	}
	if e.RetryAfter <= 0 {
		t.Fatalf("%s: refusal %v has RetryAfter %v, want > 0", what, err, e.RetryAfter)
	}
	if e.Rule == "" {
		t.Fatalf("%s: refusal %v does not state the limit (Rule is empty)", what, err)
	}
	return e
}

// refusedFor fails t unless Take is refused with RetryAfter want (within
// the resolution).
func (s limitSuite) refusedFor(t *testing.T, l store.Limiter, key string, now time.Time, want time.Duration, what string) *store.LimitError {
	t.Helper()
	e := refused(t, l, key, now, what)
	if d := e.RetryAfter - want; d > s.res || d < -s.res {
		t.Fatalf("%s: Take at +%v refused with RetryAfter %v, want %v", what, now.Sub(limitEpoch), e.RetryAfter, want)
	}
	return e
}

// freesAt checks that a unit of key frees up at exactly when: refused
// just before (with a RetryAfter up to it), allowed at it.
func (s limitSuite) freesAt(t *testing.T, l store.Limiter, key string, when time.Time, what string) {
	t.Helper()
	before := when.Add(-s.res - 1)
	s.refusedFor(t, l, key, before, when.Sub(before), what+", just before")
	take(t, l, key, when.Add(s.res), what)
}

// undo fails t unless Undo succeeds.
func undo(t *testing.T, l store.Limiter, key string, at time.Time, what string) {
	t.Helper()
	if err := l.Undo(context.Background(), key, at); err != nil {
		t.Fatalf("%s: Undo at +%v: %v", what, at.Sub(limitEpoch), err)
	}
}

func (s limitSuite) rateBudget(t *testing.T, h RateLimitHarness) {
	l := h.New(t, 10, 3) // one per 100ms
	key := limitKey()
	t0 := limitEpoch
	takeN(t, l, key, t0, 3, "burst")
	for i := range 3 { // refusals spend nothing: the wait does not grow
		s.refusedFor(t, l, key, t0, 100*time.Millisecond, "over the burst, try "+strconv.Itoa(i+1))
	}
	s.refusedFor(t, l, key, t0.Add(40*time.Millisecond), 60*time.Millisecond, "40ms later")
	s.freesAt(t, l, key, t0.Add(100*time.Millisecond), "first refill")
}

func (s limitSuite) rateRefill(t *testing.T, h RateLimitHarness) {
	l := h.New(t, 10, 3)
	key := limitKey()
	t0 := limitEpoch
	takeN(t, l, key, t0, 3, "burst")
	// One unit every 100ms, whatever the burst.
	for i := 1; i <= 5; i++ {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		s.freesAt(t, l, key, at, "refill "+strconv.Itoa(i))
		s.refusedFor(t, l, key, at.Add(s.res), 100*time.Millisecond-s.res, "after refill "+strconv.Itoa(i))
	}
	// 250ms earn two units and a half.
	t1 := t0.Add(750 * time.Millisecond)
	takeN(t, l, key, t1, 2, "after 250ms")
	s.refusedFor(t, l, key, t1, 50*time.Millisecond, "third after 250ms")
	// A long quiet refills the burst and no more.
	t2 := t0.Add(time.Hour)
	takeN(t, l, key, t2, 3, "after an hour")
	s.refusedFor(t, l, key, t2, 100*time.Millisecond, "over the burst after an hour")
}

func (s limitSuite) rateSlow(t *testing.T, h RateLimitHarness) {
	l := h.New(t, 0.5, 1) // one per 2s, no burst
	key := limitKey()
	t0 := limitEpoch
	take(t, l, key, t0, "first")
	s.refusedFor(t, l, key, t0.Add(time.Second), time.Second, "one second later")
	s.freesAt(t, l, key, t0.Add(2*time.Second), "two seconds later")
	// The unit was taken at 2s plus the resolution.
	s.refusedFor(t, l, key, t0.Add(3*time.Second), time.Second+s.res, "three seconds later")
}

func (s limitSuite) rateUndo(t *testing.T, h RateLimitHarness) {
	l := h.New(t, 10, 3)
	key := limitKey()
	t0 := limitEpoch
	takeN(t, l, key, t0, 3, "burst")
	refused(t, l, key, t0, "over the burst")
	undo(t, l, key, t0, "one")
	take(t, l, key, t0, "after an Undo")
	s.refusedFor(t, l, key, t0, 100*time.Millisecond, "after an Undo, again")
	// Undos of more units than were taken do not raise the burst.
	for i := range 5 {
		undo(t, l, key, t0, "many, #"+strconv.Itoa(i+1))
	}
	takeN(t, l, key, t0, 3, "after many Undos")
	s.refusedFor(t, l, key, t0, 100*time.Millisecond, "after many Undos, over the burst")
	// A unit taken later, after a partial refill, comes back too.
	t1 := t0.Add(150 * time.Millisecond)
	take(t, l, key, t1, "after 150ms")
	s.refusedFor(t, l, key, t1, 50*time.Millisecond, "after 150ms, again")
	undo(t, l, key, t1, "the one after 150ms")
	take(t, l, key, t1, "after its Undo")
	s.refusedFor(t, l, key, t1, 50*time.Millisecond, "after its Undo, again")
}

func (s limitSuite) rateUndoExpired(t *testing.T, h RateLimitHarness) {
	l := h.New(t, 10, 3)
	t0 := limitEpoch
	fresh := limitKey()
	undo(t, l, fresh, t0, "a key never used")
	takeN(t, l, fresh, t0, 3, "after an Undo of nothing")
	s.refusedFor(t, l, fresh, t0, 100*time.Millisecond, "after an Undo of nothing, over the burst")

	// Units taken an hour ago were earned back long since: undoing them
	// must not give a unit of the new burst.
	key := limitKey()
	takeN(t, l, key, t0, 3, "an hour ago")
	t1 := t0.Add(time.Hour)
	takeN(t, l, key, t1, 3, "now")
	undo(t, l, key, t0, "a unit of an hour ago")
	s.refusedFor(t, l, key, t1, 100*time.Millisecond, "after the Undo of an expired unit")
	// Another key's Undo gives nothing to this one.
	undo(t, l, fresh, t1, "another key")
	refused(t, l, key, t1, "after another key's Undo")
}

func (s limitSuite) windowBudget(t *testing.T, h WindowLimitHarness) {
	l := h.New(t, 3, 10*time.Minute)
	key := limitKey()
	t0 := limitEpoch
	takeN(t, l, key, t0, 3, "budget")
	for i := range 3 {
		e := s.refusedFor(t, l, key, t0, 10*time.Minute, "over the budget, try "+strconv.Itoa(i+1))
		if rule := e.Rule; !containsWord(rule, "3") {
			t.Fatalf("refusal's Rule %q does not state the limit of 3", rule)
		}
	}
	s.refusedFor(t, l, key, t0.Add(4*time.Minute), 6*time.Minute, "4 minutes later")
	s.freesAt(t, l, key, t0.Add(10*time.Minute), "a window later")
	// All three taken at t0 left at once; one was taken again.
	takeN(t, l, key, t0.Add(10*time.Minute+s.res), 2, "a window later")
	s.refusedFor(t, l, key, t0.Add(10*time.Minute+s.res), 10*time.Minute, "a window later, over the budget")
}

// containsWord reports whether s holds w with no digit on either side.
func containsWord(s, w string) bool {
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w && !isDigit(i-1) && !isDigit(i+len(w)) {
			return true
		}
	}
	return false
}

func (s limitSuite) windowSlides(t *testing.T, h WindowLimitHarness) {
	l := h.New(t, 3, 10*time.Minute)
	key := limitKey()
	t0 := limitEpoch
	mins := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	take(t, l, key, mins(0), "at 0m")
	take(t, l, key, mins(1), "at 1m")
	take(t, l, key, mins(2), "at 2m")
	// Refusals between 3m and 9m record nothing.
	for m := 3; m < 10; m++ {
		s.refusedFor(t, l, key, mins(m), time.Duration(10-m)*time.Minute, "at "+strconv.Itoa(m)+"m")
	}
	s.freesAt(t, l, key, mins(10), "the unit of 0m leaves at 10m")
	s.refusedFor(t, l, key, mins(10).Add(s.res), time.Minute-s.res, "at 10m, again")
	s.freesAt(t, l, key, mins(11), "the unit of 1m leaves at 11m")
	s.freesAt(t, l, key, mins(12), "the unit of 2m leaves at 12m")
	s.refusedFor(t, l, key, mins(12).Add(s.res), 8*time.Minute, "at 12m, again")
	// After a quiet hour the whole budget is back.
	takeN(t, l, key, mins(60), 3, "an hour later")
	s.refusedFor(t, l, key, mins(60), 10*time.Minute, "an hour later, over the budget")
}

func (s limitSuite) windowOutOfOrder(t *testing.T, h WindowLimitHarness) {
	// Callers race: a Take dated earlier may arrive later.
	l := h.New(t, 2, time.Minute)
	key := limitKey()
	t0 := limitEpoch
	take(t, l, key, t0.Add(10*time.Second), "at 10s")
	take(t, l, key, t0, "at 0s, arriving second")
	s.refusedFor(t, l, key, t0.Add(20*time.Second), 40*time.Second, "at 20s (the oldest is 0s)")
	s.freesAt(t, l, key, t0.Add(time.Minute), "at 60s")
	s.refusedFor(t, l, key, t0.Add(time.Minute+s.res), 10*time.Second-s.res, "at 60s, again (the oldest is 10s)")
}

func (s limitSuite) windowUndo(t *testing.T, h WindowLimitHarness) {
	l := h.New(t, 3, 10*time.Minute)
	key := limitKey()
	t0 := limitEpoch
	mins := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	take(t, l, key, mins(0), "at 0m")
	take(t, l, key, mins(1), "at 1m")
	take(t, l, key, mins(2), "at 2m")
	refused(t, l, key, mins(3), "at 3m")
	// Undo forgets exactly the unit of 1m: the oldest is still 0m.
	undo(t, l, key, mins(1), "the unit of 1m")
	take(t, l, key, mins(3), "at 3m, after the Undo")
	s.refusedFor(t, l, key, mins(3), 7*time.Minute, "at 3m, again (the oldest is 0m)")
	// A second Undo of 1m finds nothing to give back.
	undo(t, l, key, mins(1), "the unit of 1m, again")
	refused(t, l, key, mins(3), "at 3m, after a second Undo of 1m")
	// Undo of 0m: the oldest is now 2m.
	undo(t, l, key, mins(0), "the unit of 0m")
	take(t, l, key, mins(4), "at 4m")
	s.refusedFor(t, l, key, mins(4), 8*time.Minute, "at 4m, again (the oldest is 2m)")
	// Two units at one instant: each Undo gives back one.
	k2 := limitKey()
	takeN(t, l, k2, mins(0), 3, "three at 0m")
	undo(t, l, k2, mins(0), "one of three at 0m")
	undo(t, l, k2, mins(0), "two of three at 0m")
	takeN(t, l, k2, mins(1), 2, "after two Undos")
	s.refusedFor(t, l, k2, mins(1), 9*time.Minute, "after two Undos, over the budget")
}

func (s limitSuite) windowUndoExpired(t *testing.T, h WindowLimitHarness) {
	l := h.New(t, 3, 10*time.Minute)
	t0 := limitEpoch
	fresh := limitKey()
	undo(t, l, fresh, t0, "a key never used")
	takeN(t, l, fresh, t0, 3, "after an Undo of nothing")
	refused(t, l, fresh, t0, "after an Undo of nothing, over the budget")
	// A time at which nothing was taken.
	undo(t, l, fresh, t0.Add(30*time.Second), "a time never taken")
	s.refusedFor(t, l, fresh, t0.Add(time.Minute), 9*time.Minute, "after the Undo of a time never taken")

	// A unit that left the window an hour ago.
	key := limitKey()
	take(t, l, key, t0, "an hour ago")
	t1 := t0.Add(time.Hour)
	takeN(t, l, key, t1, 3, "now")
	undo(t, l, key, t0, "the unit of an hour ago")
	s.refusedFor(t, l, key, t1, 10*time.Minute, "after the Undo of an expired unit")
	// Another key's Undo gives nothing to this one.
	undo(t, l, fresh, t1, "another key")
	refused(t, l, key, t1, "after another key's Undo")
}

// keysIndependent: spending one key's whole budget leaves others whole,
// also keys that share a prefix or differ after a NUL byte.
func (s limitSuite) keysIndependent(t *testing.T, l store.Limiter, budget int, period time.Duration) {
	acct := newName("acct")
	keys := []string{
		acct,
		acct + "\x00" + "9876543210",
		acct + "\x00" + "9876543211",
		acct + "\x00" + "98765432",
		acct + "x",
		acct[:len(acct)-1],
		acct + "\x00" + "नमस्ते",
	}
	t0 := limitEpoch
	for i, k := range keys {
		takeN(t, l, k, t0, budget, "key "+strconv.Itoa(i))
		refused(t, l, k, t0, "key "+strconv.Itoa(i)+", over the budget")
	}
	// Undo on one key gives back to that key only.
	undo(t, l, keys[1], t0, "key 1")
	for i, k := range keys {
		if i != 1 {
			refused(t, l, k, t0, "key "+strconv.Itoa(i)+" after key 1's Undo")
		}
	}
	take(t, l, keys[1], t0, "key 1 after its Undo")
	// Budgets come back for every key.
	t1 := t0.Add(2 * period)
	for i, k := range keys {
		takeN(t, l, k, t1, budget, "key "+strconv.Itoa(i)+" later")
	}
}

// concurrent: of limitGoroutines taking limitTakes times each at one
// instant, exactly budget Takes succeed.
func (s limitSuite) concurrent(t *testing.T, l store.Limiter, budget int) {
	key := limitKey()
	t0 := limitEpoch
	var allowed int
	hammer(t, func(g, i int) (int, error) {
		err := l.Take(context.Background(), key, t0)
		if err == nil {
			return 1, nil
		}
		if isLimit(err) {
			return 0, nil
		}
		return 0, err
	}, &allowed)
	if allowed != budget {
		t.Fatalf("%d goroutines x %d Takes at one instant: %d allowed, want exactly %d",
			limitGoroutines, limitTakes, allowed, budget)
	}
	refused(t, l, key, t0, "after the concurrent Takes")
}

// concurrentUndo: goroutines take, and undo every other unit they got;
// afterwards exactly the units still spent are missing from the budget.
func (s limitSuite) concurrentUndo(t *testing.T, l store.Limiter, budget int) {
	key := limitKey()
	t0 := limitEpoch
	var net int // units taken and not given back
	hammer(t, func(g, i int) (int, error) {
		err := l.Take(context.Background(), key, t0)
		if isLimit(err) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if (g+i)%2 == 1 {
			return 1, nil
		}
		return 0, l.Undo(context.Background(), key, t0)
	}, &net)
	if net > budget {
		t.Fatalf("concurrent Takes and Undos kept %d units, over the budget of %d", net, budget)
	}
	left := 0
	for range budget + 1 {
		err := l.Take(context.Background(), key, t0)
		if err != nil {
			refused(t, l, key, t0, "after the concurrent Takes and Undos")
			break
		}
		left++
	}
	if net+left != budget {
		t.Fatalf("concurrent Takes and Undos kept %d units and %d are left, want %d in all", net, left, budget)
	}
}

// hammer runs op from limitGoroutines goroutines, limitTakes times each,
// started together, and adds up what op counts. An error of op fails t.
func hammer(t *testing.T, op func(g, i int) (int, error), total *int) {
	t.Helper()
	var mu sync.Mutex
	together(t, limitGoroutines, limitTakes, func(g, i int) error {
		n, err := op(g, i)
		mu.Lock()
		*total += n
		mu.Unlock()
		return err
	})
}
