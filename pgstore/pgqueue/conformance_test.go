package pgqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/queue/queuetest"
	"github.com/notifykit/notify/record"
)

// inr is the currency of the tests' wallets: 100000 minor units is
// 1000.00 INR.
var inr = record.Currency{Code: "INR", Symbol: "₹", Exponent: 2}

// newQueue returns a migrated Queue over a migrated Store, in a fresh
// schema of the test server found through the pool's search_path, with an
// account whose wallet holds 100000 minor INR.
func newQueue(t *testing.T) (*pgqueue.Queue, *pgstore.Store, *pgxpool.Pool, string) {
	t.Helper()
	return newQueueWith(t)
}

// newQueueWith is newQueue on a pool that tweak changes.
func newQueueWith(t *testing.T, tweak ...func(*pgxpool.Config)) (*pgqueue.Queue, *pgstore.Store, *pgxpool.Pool, string) {
	t.Helper()
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 16, tweak...)
	st, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("Store.Migrate: %v", err)
	}
	q, err := pgqueue.New(st, pool, pgqueue.Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := q.Migrate(ctx); err != nil {
		t.Fatalf("Queue.Migrate: %v", err)
	}
	account := pgstoretest.RandomName("acct_")
	if err := st.OpenWallet(ctx, account, record.Money{Minor: 100000, Currency: inr}); err != nil {
		t.Fatalf("OpenWallet: %v", err)
	}
	return q, st, pool, account
}

func TestConformance(t *testing.T) {
	pgstoretest.URL(t) // skip the whole suite, not each subtest, without a server
	queuetest.Run(t, func(t *testing.T) queuetest.Setup {
		q, st, pool, account := newQueue(t)
		return queuetest.Setup{
			Queue:   q,
			Ledger:  st,
			Account: account,
			Begin: func(ctx context.Context) (any, func(context.Context) error, func(context.Context) error, error) {
				tx, err := pool.Begin(ctx)
				if err != nil {
					return nil, nil, nil, err
				}
				return tx, tx.Commit, tx.Rollback, nil
			},
			// The database keeps microseconds: a SendAt the suite
			// compares with what it gave must be whole ones.
			Now: func() time.Time { return time.Now().Truncate(time.Microsecond) },
		}
	})
}
