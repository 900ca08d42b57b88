package vendorhttptest

import "sync"

// Log is a list a fake vendor keeps of what it took, such as the requests
// it received or the messages it accepted, for tests to look at through
// the fake's own getters. The zero value is empty; it is safe for
// concurrent use.
type Log[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add appends items to the log.
func (l *Log[T]) Add(items ...T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, items...)
}

// All returns a copy of the log, oldest first.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}

// Len returns how many items the log holds.
func (l *Log[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

// Find returns the latest item that match accepts, and whether there is
// one. match must not use the log.
func (l *Log[T]) Find(match func(T) bool) (item T, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.items) - 1; i >= 0; i-- {
		if match(l.items[i]) {
			return l.items[i], true
		}
	}
	return item, false
}

// oldest returns the oldest item, and whether there is one.
func (l *Log[T]) oldest() (item T, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == 0 {
		return item, false
	}
	return l.items[0], true
}

// drop removes the oldest item.
func (l *Log[T]) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = l.items[1:]
}
