// Package group gathers concurrent requests into groups that one runner
// handles together, without a timer: pgstore's group commit of moves and
// pgqueue's of queued openings. A request that finds no group under way
// is run at once, in a group of its own; those that arrive while one is
// under way wait for the next, so a request waits at most for the group
// under way and then its own.
package group

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Gatherer gathers requests of type T for its run function, at most max
// a group, one group at a time, on a goroutine of its own that lives as
// long as requests wait. It is safe for concurrent use.
type Gatherer[T comparable] struct {
	max int
	run func(group []T)

	mu      sync.Mutex
	pending []T
	running bool // a flush goroutine is running
}

// New returns a Gatherer that hands groups of at most limit requests
// (one at least) to run, which answers each of them.
func New[T comparable](limit int, run func(group []T)) *Gatherer[T] {
	return &Gatherer[T]{max: max(limit, 1), run: run}
}

// Add queues r for the next group, and starts the goroutine that runs
// the groups when none runs.
func (g *Gatherer[T]) Add(r T) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = append(g.pending, r)
	if !g.running {
		g.running = true
		go g.flush()
	}
}

// Withdraw takes r out of the queue, reporting whether it still waited
// there: false once a group took it.
func (g *Gatherer[T]) Withdraw(r T) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.pending, r)
	if i < 0 {
		return false
	}
	g.pending = slices.Delete(g.pending, i, i+1)
	return true
}

// Waiting reports how many requests wait for a group, and whether a
// group is under way or about to be.
func (g *Gatherer[T]) Waiting() (n int, running bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending), g.running
}

// flush runs the waiting requests, at most g.max at a time, until none
// is left.
func (g *Gatherer[T]) flush() {
	for {
		g.mu.Lock()
		n := min(len(g.pending), g.max)
		if n == 0 {
			g.running = false
			g.pending = nil
			g.mu.Unlock()
			return
		}
		batch := slices.Clone(g.pending[:n])
		g.pending = slices.Delete(g.pending, 0, n)
		g.mu.Unlock()
		g.run(batch)
	}
}

// Live answers through ended each request of group whose context (ctxOf)
// has ended, with that context's error: it was never run. It returns the
// others, in order, in group's own array.
func Live[T any](group []T, ctxOf func(T) context.Context, ended func(r T, err error)) []T {
	live := group[:0]
	for _, r := range group {
		if err := ctxOf(r).Err(); err != nil {
			ended(r, err)
			continue
		}
		live = append(live, r)
	}
	return live
}

// Context is the context a group of requests runs under, each made under
// its own context (ctxOf): none of their cancellations (one caller giving
// up must not cancel its neighbours' work), the values of the first, and
// the latest of their deadlines when each has one, so that the group runs
// no longer than some caller waits for it. group must not be empty.
func Context[T any](group []T, ctxOf func(T) context.Context) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctxOf(group[0]))
	var latest time.Time
	for _, r := range group {
		d, ok := ctxOf(r).Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(base, latest)
}
