package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/store"
)

// DefaultIdempotencyTTL is the retention window NewIdempotency uses when
// given none.
const DefaultIdempotencyTTL = 24 * time.Hour

// purgeBatch bounds the expired entries one call removes, so no single
// call pays for a whole window's worth of expiries.
const purgeBatch = 64

// DefaultIdempotencyLease is how long NewIdempotency lets a reservation
// hold its key unless told otherwise; it matches the Notifier's default
// settle threshold (notify.WithSettleAfter, 2 minutes by default).
const DefaultIdempotencyLease = 2 * time.Minute

// Idempotency is an in-memory store.Keys. It is safe for
// concurrent use.
//
// A reservation holds its key for the lease (WithLease): after that a
// Reserve takes the key over and reports the reservation as abandoned
// (store.Reservation), so a send whose goroutine died frees its key
// soon and the Notifier settles what it left. Every entry is kept for the
// TTL: a completed key for TTL after Complete, a reservation for TTL
// after Reserve (so its abandonment is still known when it is taken
// over). Expired entries are ignored at once and removed lazily: each call
// removes at most 64 of them, oldest first, so memory follows the number
// of keys used within one TTL.
type Idempotency struct {
	ttl   time.Duration
	lease time.Duration
	now   func() time.Time

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
	receipt     []byte // nil while the send is in flight
	reserved    time.Time
	leaseEnd    time.Time // a reservation holds the key until then
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

// WithLease sets how long a reservation holds its key before another
// Reserve may take it over: a bound on one send's duration. d <= 0 keeps
// DefaultIdempotencyLease.
func WithLease(d time.Duration) IdempotencyOption {
	return func(s *Idempotency) {
		if d > 0 {
			s.lease = d
		}
	}
}

// NewIdempotency returns an empty store whose entries live for ttl; ttl <=
// 0 means DefaultIdempotencyTTL.
func NewIdempotency(ttl time.Duration, opts ...IdempotencyOption) *Idempotency {
	if ttl <= 0 {
		ttl = DefaultIdempotencyTTL
	}
	s := &Idempotency{ttl: ttl, lease: DefaultIdempotencyLease, now: time.Now, entries: make(map[idemKey]*idemEntry)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Reserve claims key for one send, as store.Keys documents:
// the caller holds the key when the answer has no Receipt (with Abandoned
// set when it took over a reservation of the same fingerprint whose lease
// ran out); the first receipt when a send with the key completed with the
// same fingerprint; ErrConflict when the fingerprint differs or the key is
// reserved within its lease. An empty account or key is ErrInvalid.
func (s *Idempotency) Reserve(ctx context.Context, account, key, fingerprint string) (store.Reservation, error) {
	if err := s.check(ctx, "reserve", account, key); err != nil {
		return store.Reservation{}, err
	}
	now := s.now()
	k := idemKey{account, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	var res store.Reservation
	if e, ok := s.entries[k]; ok && e.expires.After(now) {
		switch {
		case e.fingerprint != fingerprint:
			return res, fmt.Errorf("idempotency key %q was used with another request: %w", key, store.ErrConflict)
		case e.receipt == nil && !e.leaseEnd.After(now):
			res.Abandoned = e.reserved // taken over below
		case e.receipt == nil:
			return res, fmt.Errorf("a send with idempotency key %q is in flight: %w", key, store.ErrConflict)
		default:
			res.Receipt = slices.Clone(e.receipt)
			return res, nil
		}
	}
	e := &idemEntry{fingerprint: fingerprint, reserved: now, leaseEnd: now.Add(s.lease), expires: now.Add(s.ttl)}
	s.entries[k] = e
	s.queue = append(s.queue, queuedEntry{k, e, e.expires})
	return res, nil
}

// Complete stores r as the receipt of key, which a send reserved, even
// after the reservation's lease ran out. The entry then lives for the TTL
// from now. A key with no entry is ErrNotFound; one already completed is
// ErrConflict; an empty receipt is ErrInvalid. It keeps a copy of r.
func (s *Idempotency) Complete(ctx context.Context, account, key string, r []byte) error {
	if err := s.check(ctx, "complete", account, key); err != nil {
		return err
	}
	if len(r) == 0 {
		return fmt.Errorf("memstore: complete idempotency key %q: empty receipt: %w", key, store.ErrInvalid)
	}
	now := s.now()
	k := idemKey{account, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	switch {
	case !ok || !e.expires.After(now):
		return fmt.Errorf("memstore: complete idempotency key %q: not reserved: %w", key, store.ErrNotFound)
	case e.receipt != nil:
		return fmt.Errorf("memstore: complete idempotency key %q: already completed: %w", key, store.ErrConflict)
	}
	e.receipt = slices.Clone(r)
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
		return fmt.Errorf("memstore: %s: empty account or idempotency key: %w", op, store.ErrInvalid)
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
var _ store.Keys = (*Idempotency)(nil)
