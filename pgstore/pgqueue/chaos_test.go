package pgqueue_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/chaos"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestChaosPostgres runs internal/chaos (the library's TestChaosMemstore
// runs it on memstore) on pgstore, with pgqueue's workers.
func TestChaosPostgres(t *testing.T) {
	schema := pgstoretest.Schema(t) // skips without a server, unless CI requires one
	st := pgstoretest.Store(t, schema)
	ctx := context.Background()
	if err := st.PutAccount(ctx, &notify.Account{ID: "chaos", Name: "Chaos", Settings: sms.Settings{SenderID: "CHAOS"}.Map(), Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL round trips make each send slower; a smaller default
	// keeps CI quick, NOTIFY_CHAOS_SENDS still sets the size.
	sends := chaos.Sizes(2000)
	opening := notify.Money{Minor: int64(sends) * 20, Currency: record.INR()}
	if err := st.OpenWallet(ctx, "chaos", opening); err != nil {
		t.Fatal(err)
	}
	// The queue keeps its jobs on a pool of its own in the same schema,
	// and opens its records through st (pgstore's OpenTx, which the
	// run's Ledger does not see: the run notes their debits from what
	// the queue's Open answered).
	q, err := pgqueue.New(st, pgstoretest.Pool(t, schema, 8), pgqueue.Config{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	chaos.Run(t, chaos.Stores{
		Ledger: st, Accounts: st, Idempotency: st,
		Account: "chaos", Opening: opening,
		NewQueue: func(store.Ledger) (queue.Queue, error) { return q, nil },
	}, chaos.Config{Sends: sends})
	if err := st.CheckLedger(ctx, "chaos"); err != nil {
		t.Errorf("ledger check: %v", err)
	}
}
