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
