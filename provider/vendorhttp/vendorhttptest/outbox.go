package vendorhttptest

import "sync"

// An Outbox holds the reports a fake vendor owes a receiver, oldest
// first, until a test flushes them: a vendor reports after its answer,
// and a test decides when the reports arrive. The zero value is empty;
// an Outbox is safe for concurrent use.
type Outbox[T any] struct {
	mu      sync.Mutex
	flushMu sync.Mutex // one Flush at a time
	pending []T
}

// Add queues reps after those already queued.
func (o *Outbox[T]) Add(reps ...T) {
	WithLock(&o.mu, func() { o.pending = append(o.pending, reps...) })
}

// Len returns how many reports are queued.
func (o *Outbox[T]) Len() int { return Locked(&o.mu, func() int { return len(o.pending) }) }

// Flush posts the queued reports with post, oldest first, each as its own
// request. It stops at the first that fails and returns post's error; that
// report stays queued with those after it, as a vendor keeps a report the
// receiver did not take. posted counts the reports taken. Calls of Flush
// run one at a time; reports added meanwhile are posted by it too.
func (o *Outbox[T]) Flush(post func(T) error) (posted int, err error) {
	o.flushMu.Lock()
	defer o.flushMu.Unlock()
	for {
		o.mu.Lock()
		if len(o.pending) == 0 {
			o.mu.Unlock()
			return posted, nil
		}
		rep := o.pending[0]
		o.mu.Unlock()
		if err := post(rep); err != nil {
			return posted, err
		}
		o.mu.Lock()
		o.pending = o.pending[1:]
		o.mu.Unlock()
		posted++
	}
}
