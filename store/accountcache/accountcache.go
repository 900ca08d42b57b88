package accountcache

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Defaults of New.
const (
	// DefaultTTL is how long an account found is answered from the cache.
	DefaultTTL = time.Second
	// DefaultCapacity is how many accounts the cache holds at most.
	DefaultCapacity = 10_000
)

// Cache is a store.Accounts that answers Account from the accounts its
// store found in the last TTL. It is safe for concurrent use.
//
// Only accounts found are kept: an error (ErrNotFound included) is
// answered by the store each time, so an account created a moment ago is
// found at once. Concurrent misses of one account each ask the store.
// Accounts are shared between callers, as store.Accounts allows: callers
// must not modify them.
type Cache struct {
	next     store.Accounts
	ttl      time.Duration
	capacity int
	now      func() time.Time

	mu   sync.RWMutex
	byID map[string]entry
}

type entry struct {
	acct    *record.Account
	expires time.Time
}

// Option configures a Cache in New.
type Option func(*Cache)

// WithTTL sets how long an account found is answered from the cache
// (d <= 0: DefaultTTL). It bounds how late a change to an account reaches
// sends.
func WithTTL(d time.Duration) Option {
	return func(c *Cache) {
		if d > 0 {
			c.ttl = d
		}
	}
}

// WithCapacity bounds the accounts held (n <= 0: DefaultCapacity). When
// the cache is full, expired accounts are dropped first, then others.
func WithCapacity(n int) Option {
	return func(c *Cache) {
		if n > 0 {
			c.capacity = n
		}
	}
}

// WithClock sets the clock that ages entries (nil: time.Now); for tests.
func WithClock(now func() time.Time) Option {
	return func(c *Cache) {
		if now != nil {
			c.now = now
		}
	}
}

// New returns a Cache in front of next. A nil next is an error.
func New(next store.Accounts, opts ...Option) (*Cache, error) {
	if next == nil {
		return nil, errors.New("accountcache: New needs a store.Accounts")
	}
	c := &Cache{next: next, ttl: DefaultTTL, capacity: DefaultCapacity, now: time.Now, byID: make(map[string]entry)}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c, nil
}

// Account returns the account id: from the cache when the store found it
// within the TTL, else from the store, whose answer it keeps if it found
// one. An ended context is its error, as the store would answer.
func (c *Cache) Account(ctx context.Context, id string) (*record.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := c.now()
	c.mu.RLock()
	e, ok := c.byID[id]
	c.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.acct, nil
	}
	acct, err := c.next.Account(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if _, held := c.byID[id]; !held {
		c.makeRoom(now)
	}
	c.byID[id] = entry{acct: acct, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return acct, nil
}

// makeRoom drops entries until one more fits: the expired ones, then, if
// the cache is still full, any (Go's map order picks them). Called with
// c.mu held.
func (c *Cache) makeRoom(now time.Time) {
	if len(c.byID) < c.capacity {
		return
	}
	for id, e := range c.byID {
		if !now.Before(e.expires) {
			delete(c.byID, id)
		}
	}
	for id := range c.byID {
		if len(c.byID) < c.capacity {
			return
		}
		delete(c.byID, id)
	}
}

// AccountByKey asks the store every time: a key revoked must stop working
// at once, and the cache keeps no keys.
func (c *Cache) AccountByKey(ctx context.Context, apiKey string) (*record.Account, error) {
	return c.next.AccountByKey(ctx, apiKey)
}

// Forget drops the account id from the cache, so that the next send reads
// it from the store: for a program that changes an account and wants its
// own sends to see the change at once.
func (c *Cache) Forget(id string) {
	c.mu.Lock()
	delete(c.byID, id)
	c.mu.Unlock()
}

// Len returns how many accounts the cache holds, expired ones included.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byID)
}

var _ store.Accounts = (*Cache)(nil)
