package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// Example wires a Notifier to PostgreSQL: the Store is its accounts and
// its ledger, so every instance started this way shares the wallets, the
// message records and the idempotency keys. (It needs a server, so it has
// no checked output.)
func Example() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil { // safe from every instance at once
		log.Fatal(err)
	}

	// Seed an account, its API key and its wallet. Another instance may
	// have opened the wallet already: that is a Conflict, and fine.
	acct := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	if err := sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN"}); err != nil { // its SMS sender ID
		log.Fatal(err)
	}
	if err := store.PutAccount(ctx, acct, os.Getenv("ACME_API_KEY")); err != nil {
		log.Fatal(err)
	}
	opening := notify.Money{Minor: 100_000, Currency: record.INR()} // ₹1,000.00
	if err := store.OpenWallet(ctx, "acme", opening); err != nil && notify.CodeOf(err) != notify.CodeConflict {
		log.Fatal(err)
	}

	ch, err := sms.New(sms.Config{Provider: logprovider.New(nil, "log")})
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(store, store, // the accounts, the ledger
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(store),
		notify.WithChannel(ch))
	if err != nil {
		log.Fatal(err)
	}
	r, err := n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Hello"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Cost, r.Balance)

	// Expired idempotency keys are ignored by reads; Cleanup reclaims
	// their space, and that of records settled longer ago than the
	// record TTL. Run it now and then from any instance.
	if _, err := store.Cleanup(ctx); err != nil {
		log.Print(err)
	}
}

// ExampleNew uses a pool the host already has, with tables prefixed so
// they sit beside the host's own.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool,
		pgstore.WithTablePrefix("sms_"),
		pgstore.WithIdempotencyTTL(48*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // leaves the host's pool open
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
}

// ExampleStore_Pool queues an order's confirmation SMS in the
// application's own transaction (queued.Sender.EnqueueTx): the order row,
// the message's record, its charge and its job commit together, so the
// SMS is queued if and only if the order is saved. The queue runs on the
// Store's pool (Store.Pool), and so does the application's transaction.
// (It needs a server, so it has no checked output.)
func ExampleStore_Pool() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	q, err := pgqueue.New(store, store.Pool(), pgqueue.Config{}) // River's tables beside the store's
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	ch, err := sms.New(sms.Config{Provider: logprovider.New(nil, "log")})
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(store, store, // the accounts, the ledger
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithChannel(ch),
		notify.WithQueue(q))
	if err != nil {
		log.Fatal(err)
	}
	s := queued.New(n)
	go func() { _ = q.Run(ctx, s, s.ReconcileTask()) }() // the worker, in every process that should send

	// The application's write and the SMS: both or neither. (Account
	// acme, its wallet and its SMS sender ID exist: see Example.)
	placeOrder := func(ctx context.Context, id string) (*notify.Receipt, error) {
		tx, err := pool.Begin(ctx) // store.Pool() is pool
		if err != nil {
			return nil, err
		}
		defer tx.Rollback(ctx) // on any error, the order goes with the SMS; a no-op once committed
		if _, err := tx.Exec(ctx, `INSERT INTO orders (id, account) VALUES ($1, $2)`, id, "acme"); err != nil {
			return nil, err
		}
		r, err := s.EnqueueTx(ctx, tx, &sms.Request{Account: "acme", To: "9876543210",
			Message: "Order #" + id + " confirmed."})
		if err != nil {
			return nil, err
		}
		return r, tx.Commit(ctx)
	}
	r, err := placeOrder(ctx, "4411")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.MessageID) // queued; a worker sends it
}

// ExampleStore_CheckLedger proves an account's ledger identity, as an
// operator's periodic check might.
func ExampleStore_CheckLedger() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.CheckLedger(ctx, "acme"); err != nil {
		log.Printf("ledger of acme does not add up: %v", err)
	}
}

// ExampleStore_RateLimit shares the per-account rate limit and the OTP
// throttle between every instance that uses the database.
func ExampleStore_RateLimit() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	// Every instance must give a name the same parameters.
	rate, err := store.RateLimit("rate", 10, 20) // bursts of 20, then 10 a second
	if err != nil {
		log.Fatal(err)
	}
	otp, err := store.WindowLimit("otp", 5, 15*time.Minute) // 5 codes per number per 15 minutes
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(store, store,
		notify.WithRateLimit(rate),
		notify.WithOTPThrottle(otp))
	if err != nil {
		log.Fatal(err)
	}
	_ = n
}

// WithGroupCommit bounds how many concurrent moves one commit carries.
// The default (64) suits most; 1 turns grouping off, each move its own
// statement and commit, as before issue 47.
func ExampleWithGroupCommit() {
	ctx := context.Background()
	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"), pgstore.WithGroupCommit(16))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
