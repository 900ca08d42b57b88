package notify

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// attemptCtx bounds one delivery attempt by a deadline, like
// context.WithDeadline, but pays for a timer and a done channel only when
// somebody waits on Done. Providers that make network calls wait on Done
// (and then the cost is noise beside the call); in-process providers only
// ask Err, and for them context.WithDeadline's four allocations and timer
// were a third of the cost of a whole send.
type attemptCtx struct {
	context.Context // the caller's context
	deadline        time.Time
	// detached: the parent's values without its cancellation, as
	// context.WithoutCancel gives, without that allocation (see detached).
	// Its deadline is set, settleTimeout on, only when a store first asks
	// for it (Deadline, Done): a store that only asks Err (memstore) runs
	// in microseconds, and a send would otherwise read the clock twice
	// more for each store call.
	detached bool
	armed    atomic.Bool // a detached context's deadline is set

	// state is why the attempt ended: running (0), deadline, parentDone or
	// released. Err reads it without the lock, as most attempts only ask Err.
	state atomic.Int32

	mu         sync.Mutex
	done       chan struct{} // made on the first call to Done
	stopTimer  func() bool
	stopParent func() bool
}

const (
	running int32 = iota
	deadlinePassed
	parentDone
	released
)

func newAttemptCtx(parent context.Context, deadline time.Time) *attemptCtx {
	return &attemptCtx{Context: parent, deadline: deadline}
}

// Deadline returns the attempt's deadline, which is never later than the
// parent's (newAttemptCtx is used only when it is earlier).
func (c *attemptCtx) Deadline() (time.Time, bool) {
	if c.detached {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.setDeadline()
	}
	return c.deadline, true
}

// setDeadline sets a detached context's deadline, once. Called with c.mu
// held.
func (c *attemptCtx) setDeadline() {
	if !c.armed.Load() {
		c.deadline = time.Now().Add(settleTimeout)
		c.armed.Store(true) // after the write: check reads armed, then deadline
	}
}

// Done returns a channel closed when the attempt ends: at the deadline,
// when the parent is done, or at release.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.detached {
		c.setDeadline()
	}
	if c.state.Load() == running {
		if why := c.check(); why != running {
			c.state.Store(why)
		}
	}
	if c.state.Load() != running {
		close(c.done)
		return c.done
	}
	t := time.AfterFunc(time.Until(c.deadline), func() { c.end(deadlinePassed) })
	c.stopTimer = t.Stop
	c.stopParent = func() bool { return false }
	if !c.detached {
		c.stopParent = context.AfterFunc(c.Context, func() { c.end(parentDone) })
	}
	return c.done
}

// Err returns nil while the attempt runs, then the reason it ended. It
// checks the clock and the parent itself, so a caller that never waits on
// Done still sees the deadline.
func (c *attemptCtx) Err() error {
	if c.state.Load() == running {
		if why := c.check(); why != running {
			c.end(why)
		}
	}
	switch c.state.Load() {
	case deadlinePassed:
		return context.DeadlineExceeded
	case parentDone:
		return c.Context.Err()
	case released:
		return context.Canceled
	}
	return nil
}

func (c *attemptCtx) check() int32 {
	if c.detached {
		if !c.armed.Load() {
			return running // no deadline yet: see detached
		}
	} else if c.Context.Err() != nil {
		return parentDone
	}
	if !time.Now().Before(c.deadline) {
		return deadlinePassed
	}
	return running
}

// end records why the attempt ended, once, and wakes those waiting on Done.
func (c *attemptCtx) end(why int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.state.CompareAndSwap(running, why) {
		return
	}
	if c.done != nil {
		close(c.done)
	}
	if c.stopTimer != nil {
		c.stopTimer()
		c.stopParent()
	}
}

// release ends the attempt (as a CancelFunc would) and frees its timer.
func (c *attemptCtx) release() { c.end(released) }
