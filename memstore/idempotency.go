package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/notifykit/notify"
)

// DefaultIdempotencyTTL is the retention window NewIdempotency uses when
// given none.
const DefaultIdempotencyTTL = 24 * time.Hour

// purgeBatch bounds the expired entries one call removes, so no single
// call pays for a whole window's worth of expiries.
const purgeBatch = 64

// Idempotency is an in-memory notify.IdempotencyStore. It is safe for
// concurrent use.
//
// Every entry lives for the TTL: a completed key for TTL after Complete, a
// reservation for TTL after Reserve, so a reservation whose send never
// finished (a crashed goroutine, a lost Release) frees its key in the end.
// Expired entries are ignored at once and removed lazily: each call
// removes at most 64 of them, oldest first, so memory follows the number
// of keys used within one TTL.
type Idempotency struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[idemKey]*idemEntry
	// queue lists entries by expiry. An entry whose expiry moved (on
	// Complete) is queued again; its older item is skipped when popped.
	queue []queuedEntry
	head  int
}

type idemKey struct{ account, key string }

type idemEntry struct {
	fingerprint string
	receipt     *notify.Receipt // nil while the send is in flight
	expires     time.Time
}

type queuedEntry struct {
	key     idemKey
	entry   *idemEntry
	expires time.Time
}

// IdempotencyOption configures an Idempotency in NewIdempotency.
type IdempotencyOption func(*Idempotency)

// WithClock sets the clock that dates entries. Default time.Now.
func WithClock(now func() time.Time) IdempotencyOption {
	return func(s *Idempotency) {
		if now != nil {
			s.now = now
		}
	}
}

// NewIdempotency returns an empty store whose entries live for ttl; ttl <=
// 0 means DefaultIdempotencyTTL.
func NewIdempotency(ttl time.Duration, opts ...IdempotencyOption) *Idempotency {
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	s := &Idempotency{ttl: ttl, now: time.Now, entries: make(map[idemKey]*idemEntry)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Reserve claims key for one send, as notify.IdempotencyStore documents:
// (nil, nil) when the caller now holds the key; the first receipt when a
// send with the key completed with the same fingerprint; Conflict when
// the fingerprint differs or the key is still reserved. An empty account
// or key is InvalidArgument.
func (s *Idempotency) Reserve(ctx context.Context, account, key, fingerprint string) (*notify.Receipt, error) {
	if err := s.check(ctx, "reserve", account, key); err != nil {
		return nil, err
	}
	now := s.now()
	k := idemKey{account, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	if e, ok := s.entries[k]; ok && e.expires.After(now) {
		switch {
		case e.fingerprint != fingerprint:
			return nil, notify.Errorf(notify.CodeConflict, "idempotency key %q was used with another request", key)
		case e.receipt == nil:
			return nil, notify.Errorf(notify.CodeConflict, "a send with idempotency key %q is in flight", key)
		}
		return e.receipt, nil
	}
	e := &idemEntry{fingerprint: fingerprint, expires: now.Add(s.ttl)}
	s.entries[k] = e
	s.queue = append(s.queue, queuedEntry{k, e, e.expires})
	return nil, nil
}

// Complete stores r as the receipt of key, which the caller reserved. The
// entry then lives for the TTL from now. A key that is not reserved
// (never, or its reservation expired) is NotFound; one already completed
// is Conflict; a nil receipt is InvalidArgument.
func (s *Idempotency) Complete(ctx context.Context, account, key string, r *notify.Receipt) error {
	if err := s.check(ctx, "complete", account, key); err != nil {
		return err
	}
	if r == nil {
		return notify.Errorf(notify.CodeInvalidArgument, "memstore: complete idempotency key %q: nil receipt", key)
	}
	now := s.now()
	k := idemKey{account, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	switch {
	case !ok || !e.expires.After(now):
		return notify.Errorf(notify.CodeNotFound, "memstore: complete idempotency key %q: not reserved", key)
	case e.receipt != nil:
		return notify.Errorf(notify.CodeConflict, "memstore: complete idempotency key %q: already completed", key)
	}
	e.receipt = r
	e.expires = now.Add(s.ttl)
	s.queue = append(s.queue, queuedEntry{k, e, e.expires})
	return nil
}

// Release frees a reserved key after a failed send. Releasing a key that
// is not reserved, or whose send completed, does nothing.
func (s *Idempotency) Release(ctx context.Context, account, key string) error {
	if err := s.check(ctx, "release", account, key); err != nil {
		return err
	}
	k := idemKey{account, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[k]; ok && e.receipt == nil {
		delete(s.entries, k)
	}
	return nil
}

func (s *Idempotency) check(ctx context.Context, op, account, key string) error {
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	if account == "" || key == "" {
		return notify.Errorf(notify.CodeInvalidArgument, "memstore: %s: empty account or idempotency key", op)
	}
	return nil
}

// purge removes up to purgeBatch expired entries, oldest first. All
// entries share one TTL, so the queue is in expiry order.
func (s *Idempotency) purge(now time.Time) {
	for n := 0; n < purgeBatch && s.head < len(s.queue); n++ {
		q := &s.queue[s.head]
		if q.expires.After(now) {
			break
		}
		if e, ok := s.entries[q.key]; ok && e == q.entry && !e.expires.After(now) {
			delete(s.entries, q.key)
		}
		*q = queuedEntry{} // drop the references
		s.head++
	}
	// Compact once the popped part dominates, so the queue's memory
	// follows the live entries. The map is copied afresh at the same
	// time: its deletes leave tombstones that would let it grow under
	// steady churn to several times what its keys need
	// (golang/go#70886). Both copies cost O(live) after at least as many
	// pops, so O(1) per key.
	if s.head > 1024 && s.head*2 > len(s.queue) {
		entries := make(map[idemKey]*idemEntry, len(s.entries))
		for k, e := range s.entries {
			entries[k] = e
		}
		s.entries = entries
		live := s.queue[s.head:]
		if cap(s.queue) > 4*len(live) {
			s.queue = append(make([]queuedEntry, 0, 2*len(live)), live...)
		} else {
			n := copy(s.queue, live)
			clear(s.queue[n:])
			s.queue = s.queue[:n]
		}
		s.head = 0
	}
}

// Interface guards
var _ notify.IdempotencyStore = (*Idempotency)(nil)
