package queue

import (
	"context"
	"fmt"
)

// Slots bounds the sends a queue has in flight to vendors. A worker takes
// a slot right before it claims a job's record and calls the vendor, and
// gives it back as soon as the vendor has answered, before it writes the
// outcome. A queue that runs more jobs at once than it lets send hands
// its Slots with each Job (pgqueue runs twice Config.Workers jobs for
// Workers slots), so that the reads before one send and the write after
// it overlap other sends' vendor calls instead of holding a sender's
// place: with a vendor that answers in 50 ms, the vendor calls stay
// Workers deep while the database work runs beside them.
//
// A nil *Slots bounds nothing: Take returns at once. Slots is safe for
// concurrent use.
type Slots struct {
	free chan struct{}
}

// NewSlots returns Slots of n slots (n >= 1; a smaller n is one).
func NewSlots(n int) *Slots {
	return &Slots{free: make(chan struct{}, max(n, 1))}
}

// Take waits for a free slot and takes it, or returns ctx's error,
// having taken none. Each Take that returns nil needs one Give.
func (s *Slots) Take(ctx context.Context) error {
	if s == nil {
		return nil
	}
	select {
	case s.free <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.free <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("queue: waiting for a send slot: %w", context.Cause(ctx))
	}
}

// Give frees a slot Take took. A Give without its Take panics, as
// sync.Mutex's Unlock does, since the count would no longer bound
// anything.
func (s *Slots) Give() {
	if s == nil {
		return
	}
	select {
	case <-s.free:
	default:
		panic("queue: Slots.Give without a Take")
	}
}

// Len reports how many slots are taken now.
func (s *Slots) Len() int {
	if s == nil {
		return 0
	}
	return len(s.free)
}
