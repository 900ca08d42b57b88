package queuetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queue/queuetest"
	"github.com/notifykit/notify/record"
)

// A queue's conformance_test.go: a fresh queue, ledger and funded
// account per subtest, on the real clock.
func Example() {
	var t *testing.T // the test function's
	queuetest.Run(t, func(t *testing.T) queuetest.Setup {
		w := memstore.NewWallet()
		if err := w.Open("acct", record.Money{Minor: 100000, Currency: record.Currency{Code: "INR", Exponent: 2}}); err != nil {
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
