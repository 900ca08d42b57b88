package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// TestPool checks Pool's contract: the pool given to New, which Close
// leaves open, and the pool Open made, which Close closes.
func TestPool(t *testing.T) {
	ctx := context.Background()
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 2)
	s, err := pgstore.New(pool)
	must(t, err)
	if s.Pool() != pool {
		t.Fatal("Pool of a Store made by New is not the pool New was given")
	}
	s.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("the pool given to New, after Close: %v", err)
	}

	s, err = pgstore.Open(ctx, pgstoretest.URL(t))
	must(t, err)
	p := s.Pool()
	if p == nil {
		t.Fatal("Pool of a Store made by Open is nil")
	}
	if p != s.Pool() {
		t.Fatal("Pool answers different pools")
	}
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("the pool Open made: %v", err)
	}
	s.Close()
	if err := p.Ping(ctx); err == nil {
		t.Fatal("the pool Open made still answers after Close")
	}
}

// TestEnqueueTxOnPool runs what ExampleStore_Pool and docs/queue.md show:
// a pgqueue on the Store's pool, and queued.Sender.EnqueueTx in the
// caller's transaction begun on that pool, beside the caller's own row. A
// rollback leaves neither the row nor the message, its charge or its job;
// a commit leaves all of them, and a worker sends the message once.
func TestEnqueueTxOnPool(t *testing.T) {
	ctx := context.Background()
	schema := pgstoretest.Schema(t)
	st, err := pgstore.New(pgstoretest.Pool(t, schema, 8))
	must(t, err)
	must(t, st.Migrate(ctx))
	q, err := pgqueue.New(st, st.Pool(), pgqueue.Config{Workers: 2})
	must(t, err)
	must(t, q.Migrate(ctx))
	_, err = st.Pool().Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`)
	must(t, err)

	acct := &record.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	must(t, sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN"}))
	must(t, st.PutAccount(ctx, acct))
	openWallet(t, st, "acme", 10_000)

	vendor := memprovider.New("sms")
	ch, err := sms.New(sms.Config{Provider: vendor})
	must(t, err)
	n, err := notify.New(st, st, notify.WithPrices(wallet.DefaultINR()), notify.WithChannel(ch), notify.WithQueue(q))
	must(t, err)
	s := queued.New(n)

	placeOrder := func(id string, commit bool) *notify.Receipt {
		t.Helper()
		tx, err := st.Pool().Begin(ctx)
		must(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, `INSERT INTO orders (id) VALUES ($1)`, id)
		must(t, err)
		r, err := s.EnqueueTx(ctx, tx, &sms.Request{Account: "acme", To: "9876543210", Message: "Order " + id + " confirmed."})
		if err != nil {
			t.Fatalf("EnqueueTx(%s): %v", id, err)
		}
		if r.Status != record.StateQueued {
			t.Fatalf("EnqueueTx(%s) answered %s, want queued", id, r.Status)
		}
		if commit {
			must(t, tx.Commit(ctx))
		} else {
			must(t, tx.Rollback(ctx))
		}
		return r
	}
	orders := func(id string) int {
		t.Helper()
		var c int
		must(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM orders WHERE id = $1`, id).Scan(&c))
		return c
	}
	jobsOf := func(id string) int {
		t.Helper()
		var c int
		must(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'message' = $1`, id).Scan(&c))
		return c
	}

	r := placeOrder("rolled-back", false)
	if _, err := st.Message(ctx, "acme", r.MessageID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the message of a rolled-back transaction: %v, want ErrNotFound", err)
	}
	if orders("rolled-back") != 0 || jobsOf(r.MessageID) != 0 {
		t.Fatal("a rolled-back transaction left its order or the message's job")
	}
	wantBalance(t, st, "acme", 10_000)

	r = placeOrder("committed", true)
	m, err := st.Message(ctx, "acme", r.MessageID)
	must(t, err)
	if m.State != record.StateQueued || orders("committed") != 1 || jobsOf(r.MessageID) != 1 {
		t.Fatalf("after the commit: message %s, %d orders, %d jobs; want queued, 1, 1", m.State, orders("committed"), jobsOf(r.MessageID))
	}
	wantBalance(t, st, "acme", 10_000-r.Cost.Minor)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.Run(runCtx, s) }()
	waitFor(t, 30*time.Second, "the worker to send the committed message", func() (bool, error) {
		m, err := st.Message(ctx, "acme", r.MessageID)
		return err == nil && m.State == record.StateSent, err
	})
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if vendor.Len() != 1 {
		t.Fatalf("the vendor got %d messages, want 1", vendor.Len())
	}
	wantBalance(t, st, "acme", 10_000-r.Cost.Minor)
}
