package accountcache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/accountcache"
)

// counting is a memstore.Accounts that counts the reads it answers.
type counting struct {
	*memstore.Accounts
	reads, keyReads atomic.Int64
}

func (c *counting) Account(ctx context.Context, id string) (*record.Account, error) {
	c.reads.Add(1)
	return c.Accounts.Account(ctx, id)
}

func (c *counting) AccountByKey(ctx context.Context, key string) (*record.Account, error) {
	c.keyReads.Add(1)
	return c.Accounts.AccountByKey(ctx, key)
}

func newCache(t *testing.T, opts ...accountcache.Option) (*accountcache.Cache, *counting, *testclock.Clock) {
	t.Helper()
	next := &counting{Accounts: memstore.NewAccounts()}
	if err := next.Add(&record.Account{ID: "acme", Name: "Acme"}, "key-acme"); err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	c, err := accountcache.New(next, append([]accountcache.Option{accountcache.WithClock(clk.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, next, clk
}

func account(t *testing.T, c *accountcache.Cache, id string) *record.Account {
	t.Helper()
	a, err := c.Account(context.Background(), id)
	if err != nil {
		t.Fatalf("Account(%s): %v", id, err)
	}
	return a
}

func TestAnsweredFromTheCacheWithinTheTTL(t *testing.T) {
	c, next, clk := newCache(t, accountcache.WithTTL(2*time.Second))
	if a := account(t, c, "acme"); a.Name != "Acme" {
		t.Fatalf("account = %+v", a)
	}
	clk.Advance(2*time.Second - time.Nanosecond)
	account(t, c, "acme")
	if got := next.reads.Load(); got != 1 {
		t.Fatalf("the store was read %d times within the TTL, want 1", got)
	}
	// A change reaches reads once the entry expires.
	if err := next.Update(&record.Account{ID: "acme", Name: "Acme Ltd", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	if a := account(t, c, "acme"); a.Name != "Acme" {
		t.Fatalf("within the TTL the cached account is answered, got %+v", a)
	}
	clk.Advance(time.Nanosecond)
	if a := account(t, c, "acme"); a.Name != "Acme Ltd" || !a.Disabled {
		t.Fatalf("after the TTL the store's account is answered, got %+v", a)
	}
	if got := next.reads.Load(); got != 2 {
		t.Fatalf("the store was read %d times, want 2", got)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	c, next, _ := newCache(t)
	_, err := c.Account(context.Background(), "new")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Account of a missing account: %v, want ErrNotFound", err)
	}
	if err := next.Add(&record.Account{ID: "new"}); err != nil {
		t.Fatal(err)
	}
	if a := account(t, c, "new"); a.ID != "new" {
		t.Fatalf("an account added after a miss: %+v", a)
	}
}

func TestForget(t *testing.T) {
	c, next, _ := newCache(t)
	account(t, c, "acme")
	if err := next.Update(&record.Account{ID: "acme", Name: "Renamed"}); err != nil {
		t.Fatal(err)
	}
	c.Forget("acme")
	if a := account(t, c, "acme"); a.Name != "Renamed" {
		t.Fatalf("after Forget = %+v, want the store's", a)
	}
}

func TestKeysAreNotCached(t *testing.T) {
	c, next, _ := newCache(t)
	for range 3 {
		if a, err := c.AccountByKey(context.Background(), "key-acme"); err != nil || a.ID != "acme" {
			t.Fatalf("AccountByKey = %+v, %v", a, err)
		}
	}
	if got := next.keyReads.Load(); got != 3 {
		t.Fatalf("the store answered %d key reads, want every one (3)", got)
	}
	if _, err := c.AccountByKey(context.Background(), "wrong"); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("a wrong key: %v", err)
	}
}

func TestCapacityBound(t *testing.T) {
	c, next, clk := newCache(t, accountcache.WithCapacity(4), accountcache.WithTTL(time.Minute))
	for i := range 10 {
		id := fmt.Sprintf("a%d", i)
		if err := next.Add(&record.Account{ID: id}); err != nil {
			t.Fatal(err)
		}
		account(t, c, id)
		if c.Len() > 4 {
			t.Fatalf("after %d accounts the cache holds %d, capacity 4", i+1, c.Len())
		}
		clk.Advance(time.Second)
	}
	// The newest is held.
	before := next.reads.Load()
	account(t, c, "a9")
	if next.reads.Load() != before {
		t.Fatal("the newest account was not held")
	}
	// A refresh of a held, expired entry drops nothing else.
	clk.Advance(time.Hour)
	n := c.Len()
	account(t, c, "a9")
	if c.Len() > n {
		t.Fatalf("a refresh grew the cache from %d to %d", n, c.Len())
	}
}

func TestEndedContext(t *testing.T) {
	c, next, _ := newCache(t)
	account(t, c, "acme")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Account(ctx, "acme"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Account with an ended context: %v", err)
	}
	if next.reads.Load() != 1 {
		t.Fatal("the store was asked with an ended context")
	}
}

func TestNewNeedsAStore(t *testing.T) {
	if c, err := accountcache.New(nil); err == nil || c != nil {
		t.Fatalf("New(nil) = %v, %v; want an error", c, err)
	}
}

func TestConcurrentReads(t *testing.T) {
	c, next, clk := newCache(t, accountcache.WithCapacity(8))
	for i := range 16 {
		if err := next.Add(&record.Account{ID: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("c%d", (g+i)%16)
				a, err := c.Account(context.Background(), id)
				if err != nil || a.ID != id {
					t.Errorf("Account(%s) = %+v, %v", id, a, err)
					return
				}
				if i%50 == 0 {
					clk.Advance(time.Second)
					c.Forget(id)
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 8 {
		t.Fatalf("the cache holds %d, capacity 8", c.Len())
	}
}
