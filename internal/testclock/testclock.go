// Package testclock is the settable clock the tests of this module share:
// a time that moves only when a test moves it.
package testclock

import (
	"sync"
	"time"
)

// Clock is a time that stands still until Advance moves it. It is
// safe for concurrent use: the code under test reads it from its own
// goroutines while the test moves it.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time; its method value is what the options
// that take a clock (func() time.Time) want.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
