package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestBreakerStates walks one breaker through closed, open, half open
// (one probe at a time) and closed again.
func TestBreakerStates(t *testing.T) {
	b := &breakers{policy: BreakerPolicy{Failures: 3, Cooldown: time.Minute}, by: map[string]*breaker{}}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(t time.Time) func() time.Time { return func() time.Time { return t } }
	if changed, _ := b.done("v", false, at(now)); changed || len(b.by) != 0 {
		t.Fatal("a healthy call kept state or changed the breaker")
	}
	for i := range 2 {
		if changed, _ := b.done("v", true, at(now)); changed {
			t.Fatalf("failure %d opened the breaker", i+1)
		}
	}
	if changed, _ := b.done("v", false, at(now)); changed {
		t.Fatal("an acceptance of a closed breaker reported a change")
	}
	for i := range 3 {
		changed, open := b.done("v", true, at(now))
		if want := i == 2; changed != want || open != want {
			t.Fatalf("failure %d after the reset: changed %v, open %v", i+1, changed, open)
		}
	}
	if b.allow("v", at(now.Add(59*time.Second))) {
		t.Fatal("an open breaker let a call through before the cooldown ended")
	}
	if !b.allow("other", at(now)) {
		t.Fatal("one provider's breaker held back another")
	}
	later := now.Add(time.Minute)
	if !b.allow("v", at(later)) {
		t.Fatal("no probe after the cooldown")
	}
	if b.allow("v", at(later)) {
		t.Fatal("two probes at once")
	}
	b.release("v") // the probe's caller left before calling
	if !b.allow("v", at(later)) {
		t.Fatal("a released probe's turn did not pass on")
	}
	if changed, open := b.done("v", true, at(later)); changed || !open {
		t.Fatalf("a failed probe: changed %v, open %v; want it open again, unchanged", changed, open)
	}
	if b.allow("v", at(later.Add(59*time.Second))) {
		t.Fatal("a failed probe did not start another cooldown")
	}
	if !b.allow("v", at(later.Add(time.Minute))) {
		t.Fatal("no probe after the second cooldown")
	}
	if changed, open := b.done("v", false, at(later.Add(time.Minute))); !changed || open {
		t.Fatalf("a good probe: changed %v, open %v; want closed", changed, open)
	}
	if len(b.by) != 0 || b.tracked.Load() != 0 {
		t.Fatalf("a healthy provider keeps state: %d breakers, %d tracked", len(b.by), b.tracked.Load())
	}
	for i := range 2 {
		if !b.allow("v", at(later.Add(time.Minute))) {
			t.Fatalf("a closed breaker held call %d back", i+1)
		}
	}
	var none *breakers
	if !none.allow("v", at(now)) {
		t.Fatal("no breakers must let every call through")
	}
	none.release("v")
	if changed, _ := none.done("v", true, at(now)); changed {
		t.Fatal("no breakers changed")
	}
}

func TestWithBreakerDefaults(t *testing.T) {
	n := &Notifier{}
	if err := WithBreaker(BreakerPolicy{})(n); err != nil {
		t.Fatal(err)
	}
	if p := n.breakers.policy; p.Failures != 5 || p.Cooldown != 30*time.Second {
		t.Fatalf("defaults %+v", p)
	}
	if err := WithBreaker(BreakerPolicy{Failures: -1})(n); err == nil {
		t.Fatal("a negative policy was taken")
	}
}

// TestBreakerOnChange: the policy's OnChange hears each change, and a
// panic in it does not reach the send that changed the breaker.
func TestBreakerOnChange(t *testing.T) {
	var heard []string
	n := &Notifier{}
	p := BreakerPolicy{OnChange: func(_ context.Context, provider string, open bool, cause error) {
		heard = append(heard, fmt.Sprintf("%s %v %v", provider, open, cause))
		if !open {
			panic("a listener's bug")
		}
	}}
	if err := WithBreaker(p)(n); err != nil {
		t.Fatal(err)
	}
	n.breakerChanged(context.Background(), "v", true, errors.New("down"))
	n.breakerChanged(context.Background(), "v", false, nil) // must not panic
	if want := []string{"v true down", "v false <nil>"}; !slices.Equal(heard, want) {
		t.Fatalf("OnChange heard %q, want %q", heard, want)
	}
	quiet := &Notifier{}
	if err := WithBreaker(BreakerPolicy{})(quiet); err != nil {
		t.Fatal(err)
	}
	quiet.breakerChanged(context.Background(), "v", true, nil) // no OnChange: nothing to tell
}
