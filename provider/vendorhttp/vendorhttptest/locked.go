package vendorhttptest

import "sync"

// Locked returns f's result, called with mu held: the body of a fake's
// getter, which reads state its handler writes, such as
//
//	func (s *Server) Requests() int {
//		return vendorhttptest.Locked(&s.mu, func() int { return s.requests })
//	}
func Locked[T any](mu *sync.Mutex, f func() T) T {
	mu.Lock()
	defer mu.Unlock()
	return f()
}

// WithLock calls f with mu held: the body of a fake's setter, such as
//
//	func (s *Server) SetBalance(paise int64) {
//		vendorhttptest.WithLock(&s.mu, func() { s.balance = paise })
//	}
func WithLock(mu *sync.Mutex, f func()) {
	mu.Lock()
	defer mu.Unlock()
	f()
}
