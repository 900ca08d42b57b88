package pgqueue_test

import (
	"context"
	"log"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// Example opens a scheduled message inside the host's own transaction,
// then runs the queue. In a host the worker is the notify.Notifier.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	st, err := pgstore.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	q, err := pgqueue.New(st, pool, pgqueue.Config{Workers: 8, Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	// The host's write and the message commit together, or neither does.
	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO orders (id) VALUES ($1)`, "order-1"); err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	_, err = q.OpenTx(ctx, tx, &record.Message{
		ID: "msg-order-1", Account: "acme", Kind: "sms", Request: "sms", To: "+919876543210",
		State: record.StateScheduled, SendAt: now.Add(time.Hour),
		Payload:   []byte(`{"to":"+919876543210","body":"Your order has shipped"}`),
		CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	// Run works the jobs until ctx ends.
	var worker queue.Worker // the notify.Notifier
	reconcile := queue.Periodic{Name: "reconcile", Every: time.Minute,
		Run: func(ctx context.Context) error { return nil }}
	if err := q.Run(ctx, worker, reconcile); err != nil {
		log.Fatal(err)
	}
}
