package group

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestGatherer: a request alone runs at once; those added while a group
// runs wait and go together, at most max a group; a waiting request can
// be withdrawn, a taken one cannot.
func TestGatherer(t *testing.T) {
	var mu sync.Mutex
	var groups [][]int
	first := make(chan struct{})
	hold := make(chan struct{})
	done := make(chan struct{}, 16)
	g := New(3, func(group []int) {
		mu.Lock()
		groups = append(groups, slices.Clone(group))
		n := len(groups)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-hold // the first group is under way until the test lets it go
		}
		for range group {
			done <- struct{}{}
		}
	})
	g.Add(1)
	<-first
	if n, running := g.Waiting(); n != 0 || !running {
		t.Fatalf("Waiting = %d, %v with one group under way; want 0, true", n, running)
	}
	for r := 2; r <= 6; r++ {
		g.Add(r)
	}
	if !g.Withdraw(6) || g.Withdraw(6) || g.Withdraw(1) {
		t.Fatal("Withdraw: want true for a waiting request once, false for one withdrawn or taken")
	}
	close(hold)
	for range 5 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the groups did not run in 10 s")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][]int{{1}, {2, 3, 4}, {5}}
	if len(groups) != len(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	for i := range want {
		if !slices.Equal(groups[i], want[i]) {
			t.Fatalf("groups %v, want %v", groups, want)
		}
	}
}

// TestContext: a group's context has none of its callers' cancellations
// and the latest of their deadlines, or none when one has none.
func TestContext(t *testing.T) {
	type key struct{}
	now := time.Now()
	early, cancelEarly := context.WithDeadline(context.WithValue(context.Background(), key{}, "first"), now.Add(time.Minute))
	defer cancelEarly()
	late, cancelLate := context.WithDeadline(context.Background(), now.Add(time.Hour))
	defer cancelLate()
	ctx, cancel := Context([]context.Context{early, late}, itself)
	defer cancel()
	cancelEarly()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(now.Add(time.Hour)) || ctx.Err() != nil || ctx.Value(key{}) != "first" {
		t.Fatalf("a group's context: deadline %v %v, err %v, value %v; want the latest deadline, live, the first's values", d, ok, ctx.Err(), ctx.Value(key{}))
	}
	ctx2, cancel2 := Context([]context.Context{late, context.Background()}, itself)
	defer cancel2()
	if _, ok := ctx2.Deadline(); ok {
		t.Fatal("a group with a caller without a deadline has one")
	}
}

// itself is the context of a request that is its context.
func itself(ctx context.Context) context.Context { return ctx }

// TestLive: the requests whose context has ended are answered with its
// error and dropped; the others stay, in order.
func TestLive(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	type key struct{}
	a, b := context.WithValue(context.Background(), key{}, 1), context.WithValue(context.Background(), key{}, 2)
	var answered []error
	live := Live([]context.Context{a, ended, b, ended}, itself, func(_ context.Context, err error) { answered = append(answered, err) })
	if len(live) != 2 || live[0] != a || live[1] != b {
		t.Fatalf("live %v, want the two whose context has not ended, in order", live)
	}
	if len(answered) != 2 || answered[0] != context.Canceled || answered[1] != context.Canceled {
		t.Fatalf("answered %v, want context.Canceled twice", answered)
	}
}
