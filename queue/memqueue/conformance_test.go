package memqueue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queue/queuetest"
	"github.com/notifykit/notify/record"
)

// clock is a test clock the suite moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) queuetest.Setup {
		c := &clock{now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
		w := memstore.NewWallet()
		inr := record.Currency{Code: "INR", Symbol: "₹", Exponent: 2}
		if err := w.Open("acct", record.Money{Minor: 100000, Currency: inr}); err != nil {
			t.Fatal(err)
		}
		ledger := memstore.NewLedger(w)
		q, err := memqueue.New(memqueue.Config{Ledger: ledger, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		return queuetest.Setup{
			Queue: q, Ledger: ledger, Account: "acct", Now: c.Now,
			Advance: func(d time.Duration) { c.add(d); q.Tick() },
			Begin: func(context.Context) (any, func(context.Context) error, func(context.Context) error, error) {
				tx := q.Begin()
				return tx, tx.Commit, tx.Rollback, nil
			},
		}
	})
}

// The suite on the real clock: Run's own timer, not Tick, wakes it.
func TestConformanceRealClock(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) queuetest.Setup {
		w := memstore.NewWallet()
		inr := record.Currency{Code: "INR", Symbol: "₹", Exponent: 2}
		if err := w.Open("acct", record.Money{Minor: 100000, Currency: inr}); err != nil {
			t.Fatal(err)
		}
		ledger := memstore.NewLedger(w)
		q, err := memqueue.New(memqueue.Config{Ledger: ledger})
		if err != nil {
			t.Fatal(err)
		}
		return queuetest.Setup{Queue: q, Ledger: ledger, Account: "acct", Now: time.Now,
			Begin: func(context.Context) (any, func(context.Context) error, func(context.Context) error, error) {
				tx := q.Begin()
				return tx, tx.Commit, tx.Rollback, nil
			}}
	})
}
