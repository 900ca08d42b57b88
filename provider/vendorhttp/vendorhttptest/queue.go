package vendorhttptest

import "sync"

// Queue holds what a fake vendor will post later, such as the delivery
// reports of the messages it accepted, until the test flushes it: the
// test decides when they arrive, and needs no sleeps. The zero value is
// empty; it is safe for concurrent use.
type Queue[T any] struct {
	flush sync.Mutex // one Flush at a time
	items Log[T]
}

// Add queues items.
func (q *Queue[T]) Add(items ...T) { q.items.Add(items...) }

// Len returns how many items are queued.
func (q *Queue[T]) Len() int { return q.items.Len() }

// Flush posts the queued items with post, oldest first, each as its own
// call, including those queued meanwhile. It stops at the first post that
// fails, which stays queued with those after it; posted counts the items
// taken. Calls of Flush run one at a time.
func (q *Queue[T]) Flush(post func(T) error) (posted int, err error) {
	q.flush.Lock()
	defer q.flush.Unlock()
	for {
		next, ok := q.items.oldest()
		if !ok {
			return posted, nil
		}
		if err := post(next); err != nil {
			return posted, err
		}
		q.items.drop()
		posted++
	}
}
