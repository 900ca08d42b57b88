package pgqueue_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

func queuedRecord(account string, charge int64) *record.Message {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &record.Message{ID: pgstoretest.RandomName("msg_"), Account: account, Kind: "sms", Request: "sms",
		To: "+919876543210", Units: 1, Metered: true, Charge: record.Money{Minor: charge, Currency: inr},
		State: record.StateQueued, Payload: []byte(`{"to":"9876543210","message":"your code is 123456"}`),
		CreatedAt: now, UpdatedAt: now}
}

// jobs counts River's jobs of message id, and fails t if one carries more
// than the account and ID.
func jobs(t *testing.T, pool *pgxpool.Pool, id string) int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT kind, args::text FROM river_job WHERE args->>'message' = $1`, id)
	if err != nil {
		t.Fatalf("read river_job: %v", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var kind, args string
		if err := rows.Scan(&kind, &args); err != nil {
			t.Fatal(err)
		}
		if kind != pgqueue.SendKind || strings.Contains(args, "123456") || strings.Contains(args, "payload") {
			t.Fatalf("job of %s: kind %s, args %s; want a send naming the record only", id, kind, args)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func balanceOf(t *testing.T, st *pgstore.Store, account string) int64 {
	t.Helper()
	b, err := st.Balance(context.Background(), account)
	if err != nil {
		t.Fatalf("Balance: %v", err)
	}
	return b.Available.Minor
}

func TestOpenTxRollbackAndCommit(t *testing.T) {
	q, st, pool, account := newQueue(t)
	ctx := context.Background()

	// Rolled back: no record, no debit, no job.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := queuedRecord(account, 500)
	id := m.ID
	b, err := q.OpenTx(ctx, tx, m)
	if err != nil || b.Available.Minor != 99500 {
		t.Fatalf("OpenTx = %+v, %v; want 99500 left", b, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Message(ctx, account, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Message after a rollback: %v, want ErrNotFound", err)
	}
	if got := balanceOf(t, st, account); got != 100000 {
		t.Fatalf("balance after a rollback = %d, want 100000", got)
	}
	if n := jobs(t, pool, id); n != 0 {
		t.Fatalf("%d jobs after a rollback, want none", n)
	}

	// Committed: all three.
	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m = queuedRecord(account, 500)
	m.State, m.SendAt = record.StateScheduled, time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	id, sendAt := m.ID, m.SendAt
	if _, err := q.OpenTx(ctx, tx, m); err != nil {
		t.Fatalf("OpenTx: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Message(ctx, account, id)
	if err != nil || rec.State != record.StateScheduled || !rec.SendAt.Equal(sendAt) {
		t.Fatalf("Message after a commit = %+v, %v", rec, err)
	}
	if got := balanceOf(t, st, account); got != 99500 {
		t.Fatalf("balance after a commit = %d, want 99500", got)
	}
	if n := jobs(t, pool, id); n != 1 {
		t.Fatalf("%d jobs after a commit, want 1", n)
	}
	var scheduled time.Time
	var state string
	if err := pool.QueryRow(ctx, `SELECT scheduled_at, state FROM river_job WHERE args->>'message' = $1`, id).Scan(&scheduled, &state); err != nil {
		t.Fatal(err)
	}
	if !scheduled.Equal(sendAt) {
		t.Fatalf("the job is scheduled at %v, want the record's SendAt %v", scheduled, sendAt)
	}
	// Available with its time, which a fetch takes once due, rather than
	// scheduled, which waits for River's 5-second scheduler.
	if state != "available" {
		t.Fatalf("the job of a scheduled send is %s, want available", state)
	}
}

func TestOpenErrors(t *testing.T) {
	q, st, pool, account := newQueue(t)
	ctx := context.Background()
	m := queuedRecord(account, 200000)
	id := m.ID
	if _, err := q.Open(ctx, m); !errors.Is(err, store.ErrInsufficientFunds) {
		t.Fatalf("Open from a short wallet: %v, want ErrInsufficientFunds", err)
	}
	if n := jobs(t, pool, id); n != 0 {
		t.Fatalf("%d jobs after a refused Open, want none", n)
	}
	m = queuedRecord(account, 100)
	m.State = record.StatePending
	if _, err := q.Open(ctx, m); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Open of a pending record: %v, want ErrInvalid", err)
	}
	m = queuedRecord(account, 100)
	dup := *m
	if _, err := q.Open(ctx, m); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := q.Open(ctx, &dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second Open of the ID: %v, want ErrConflict", err)
	}
	if n := jobs(t, pool, dup.ID); n != 1 {
		t.Fatalf("%d jobs of a record opened twice, want 1", n)
	}
	if _, err := q.OpenTx(ctx, "not a tx", queuedRecord(account, 100)); !errors.Is(err, queue.ErrUnsupportedTx) {
		t.Fatalf("OpenTx of a string: %v, want ErrUnsupportedTx", err)
	}
	if got := balanceOf(t, st, account); got != 99900 {
		t.Fatalf("balance = %d, want 99900", got)
	}
}

// TestMigrateConcurrently runs Migrate from several Queues at once, then
// again: each succeeds.
func TestMigrateConcurrently(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		pool := pgstoretest.Pool(t, schema, 4)
		st, err := pgstore.New(pool)
		if err != nil {
			t.Fatal(err)
		}
		q, err := pgqueue.New(st, pool, pgqueue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- q.Migrate(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
}

// TestWithSchema puts the store's and River's tables in the schema of
// pgstore.WithSchema, with a pool whose search_path is elsewhere.
func TestWithSchema(t *testing.T) {
	schema := pgstoretest.Schema(t)
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 4)
	st, err := pgstore.New(pool, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := pgqueue.New(st, pool, pgqueue.Config{Queue: "other_queue", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	account := pgstoretest.RandomName("acct_")
	if err := st.OpenWallet(ctx, account, record.Money{Minor: 1000, Currency: inr}); err != nil {
		t.Fatal(err)
	}
	m := queuedRecord(account, 100)
	id := m.ID
	if _, err := q.Open(ctx, m); err != nil {
		t.Fatalf("Open: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM "`+schema+`".river_job WHERE args->>'message' = $1 AND queue = 'other_queue'`, id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("jobs in %s.river_job = %d, %v; want 1", schema, n, err)
	}
}

func TestNewInvalid(t *testing.T) {
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 2)
	st, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	// 5,001 send slots would need 10,002 jobs at once, beyond River's
	// 10,000 a queue: refused by New, not first by Run.
	for _, cfg := range []pgqueue.Config{{Workers: -1}, {Workers: 5001}, {Queue: "bad queue name!"}} {
		if _, err := pgqueue.New(st, pool, cfg); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("New(%+v): %v, want ErrInvalid", cfg, err)
		}
	}
	if _, err := pgqueue.New(st, pool, pgqueue.Config{Workers: 5000}); err != nil {
		t.Errorf("New with 5,000 workers: %v", err)
	}
	if _, err := pgqueue.New(nil, pool, pgqueue.Config{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("New without a store: %v, want ErrInvalid", err)
	}
}

func TestOpenTxMany(t *testing.T) {
	q, st, pool, account := newQueue(t)
	ctx := context.Background()
	ms := make([]*record.Message, 50)
	ids := make([]string, len(ms))
	for i := range ms {
		ms[i] = queuedRecord(account, 100)
		ids[i] = ms[i].ID
	}
	ms[7].State, ms[7].SendAt = record.StateScheduled, time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.OpenTxMany(ctx, tx, ms); err != nil {
		t.Fatalf("OpenTxMany: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := balanceOf(t, st, account); got != 100000-50*100 {
		t.Fatalf("balance %d, want %d", got, 100000-50*100)
	}
	if err := st.CheckLedger(ctx, account); err != nil {
		t.Fatalf("the ledger rows of the batch: %v", err)
	}
	for i, id := range ids {
		rec, err := st.Message(ctx, account, id)
		if err != nil || (i == 7) != (rec.State == record.StateScheduled) || len(rec.Payload) == 0 {
			t.Fatalf("record %d: %+v, %v", i, rec, err)
		}
		if n := jobs(t, pool, id); n != 1 {
			t.Fatalf("record %d has %d jobs, want 1", i, n)
		}
		want := ms[i]
		if len(rec.History) != 1 || rec.History[0].State != want.State || !rec.History[0].At.Equal(want.CreatedAt) ||
			!rec.CreatedAt.Equal(want.CreatedAt) || !rec.UpdatedAt.Equal(want.CreatedAt) || rec.To != want.To ||
			string(rec.Payload) != string(want.Payload) || rec.Charge != want.Charge || !rec.SendAt.Equal(want.SendAt) {
			t.Fatalf("record %d as written: %+v; want %+v, with its one step", i, rec, want)
		}
	}
	// The scheduled one's job waits available until its time, as one
	// inserted alone does (dueAvailable), not for River's scheduler.
	var due time.Time
	var state string
	if err := pool.QueryRow(ctx, `SELECT scheduled_at, state FROM river_job WHERE args->>'message' = $1`, ids[7]).Scan(&due, &state); err != nil {
		t.Fatal(err)
	}
	if !due.Equal(ms[7].SendAt) || state != "available" {
		t.Fatalf("the scheduled record's job is %s at %v; want available at %v", state, due, ms[7].SendAt)
	}
	// The ledger's rows are the batch's, in its order, each with its
	// running balance.
	entries, err := st.Statement(ctx, account, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(ms) {
		t.Fatalf("%d ledger entries, want the %d debits", len(entries), len(ms))
	}
	for i, e := range entries {
		if e.Ref != ids[i] || e.Amount.Minor != -100 || e.Balance.Minor != 100000-int64(i+1)*100 {
			t.Fatalf("ledger entry %d: %+v; want %s debited 1.00 to %d", i, e, ids[i], 100000-(i+1)*100)
		}
	}

	// A batch the wallet cannot pay for writes nothing, and says so.
	short := []*record.Message{queuedRecord(account, 100), queuedRecord(account, 1_000_000), queuedRecord(account, 100)}
	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = q.OpenTxMany(ctx, tx, short)
	if !errors.Is(err, store.ErrInsufficientFunds) || !strings.Contains(err.Error(), account) {
		t.Fatalf("OpenTxMany beyond the balance: %v, want ErrInsufficientFunds naming the account", err)
	}
	for _, m := range short {
		if _, err := st.Message(ctx, account, m.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused batch wrote record %s: %v", m.ID, err)
		}
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := balanceOf(t, st, account); got != 100000-50*100 {
		t.Fatalf("balance %d after the rollback, want %d", got, 100000-50*100)
	}
	if err := q.OpenTxMany(ctx, "not a tx", short); !errors.Is(err, queue.ErrUnsupportedTx) {
		t.Fatalf("a foreign tx: %v", err)
	}
}

// jobWorker reports each job it runs on jobs.
type jobWorker struct{ jobs chan queue.Job }

func (w jobWorker) Work(_ context.Context, j queue.Job) (time.Time, error) {
	w.jobs <- j
	return time.Time{}, nil
}

// TestRescueTakenJob: a job that a killed process took (River's running
// state, its worker gone) runs again once it has been taken longer than
// RescueAfter. With no job timeout River's rescuer would leave it taken
// forever, its record queued and charged.
func TestRescueTakenJob(t *testing.T) {
	_, st, pool, account := newQueue(t)
	q, err := pgqueue.New(st, pool, pgqueue.Config{RescueAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := queuedRecord(account, 500)
	if _, err := q.Open(ctx, m); err != nil {
		t.Fatalf("Open: %v", err)
	}
	// As River leaves a job whose process died after the fetch.
	tag, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - interval '1 minute', attempted_by = ARRAY['killed-process']
		WHERE args->>'message' = $1`, m.ID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("take the job: %v, %d rows", err, tag.RowsAffected())
	}
	w := jobWorker{jobs: make(chan queue.Job, 1)}
	defer running(t, ctx, q, w)()
	select {
	case j := <-w.jobs:
		if j.Message != m.ID || j.Account != account {
			t.Fatalf("ran %+v, want the job of %s", j, m.ID)
		}
	case <-ctx.Done():
		t.Fatal("a job taken by a dead process was not run again within a minute")
	}
}

// TestRunOnACancelRequestPool: Run starts, works a job and stops at once
// on a pool whose connections ask the server to cancel a statement when
// its context ends (as pgstore.Open's and the gateway's do). River
// interrupts its LISTEN connection by canceling its wait, which such a
// connection ignores until its deadline fallback: twice as River starts
// and again as it stops. The fallback here is 30 s, so Run taking its own
// pool with pgx's deadline handling is what keeps this under 15 s (it
// took 4 s a start and stop with the gateway's 2 s fallback).
func TestRunOnACancelRequestPool(t *testing.T) {
	q, _, _, account := newQueueWith(t, func(c *pgxpool.Config) {
		c.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 30 * time.Second}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := queuedRecord(account, 500)
	if _, err := q.Open(ctx, m); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w := jobWorker{jobs: make(chan queue.Job, 1)}
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- q.Run(runCtx, w) }()
	select {
	case <-w.jobs:
	case <-ctx.Done():
		stop()
		t.Fatal("the queued job did not run within a minute")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("Run took %v to start, run a job and stop: River's LISTEN waited for the deadline fallback", took.Round(time.Millisecond))
	}
}

// TestOpenMany: records opened in one transaction of the queue's own,
// each with its debit and one job; a batch the wallet cannot pay for
// writes nothing, no record, debit or job.
func TestOpenMany(t *testing.T) {
	q, st, pool, account := newQueue(t)
	ctx := context.Background()
	ms := []*record.Message{queuedRecord(account, 100), queuedRecord(account, 200), queuedRecord(account, 300)}
	ids := []string{ms[0].ID, ms[1].ID, ms[2].ID}
	if err := q.OpenMany(ctx, ms); err != nil {
		t.Fatalf("OpenMany: %v", err)
	}
	if got := balanceOf(t, st, account); got != 100000-600 {
		t.Fatalf("balance %d, want %d", got, 100000-600)
	}
	for _, id := range ids {
		if rec, err := st.Message(ctx, account, id); err != nil || rec.State != record.StateQueued {
			t.Fatalf("record %s: %+v, %v", id, rec, err)
		}
		if n := jobs(t, pool, id); n != 1 {
			t.Fatalf("record %s has %d jobs, want 1", id, n)
		}
	}
	short := []*record.Message{queuedRecord(account, 100), queuedRecord(account, 1_000_000)}
	if err := q.OpenMany(ctx, short); !errors.Is(err, store.ErrInsufficientFunds) {
		t.Fatalf("OpenMany beyond the balance: %v, want ErrInsufficientFunds", err)
	}
	for _, m := range short {
		if _, err := st.Message(ctx, account, m.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused batch wrote record %s: %v", m.ID, err)
		}
		if n := jobs(t, pool, m.ID); n != 0 {
			t.Fatalf("a refused batch wrote %d jobs for %s", n, m.ID)
		}
	}
	if got := balanceOf(t, st, account); got != 100000-600 {
		t.Fatalf("balance %d after a refused batch, want %d", got, 100000-600)
	}
}

// running runs q with w until the returned stop is called, which waits
// for Run to return and fails t on its error.
func running(t *testing.T, ctx context.Context, q *pgqueue.Queue, w queue.Worker) (stop func()) {
	done := make(chan error, 1)
	runCtx, cancel := context.WithCancel(ctx)
	go func() { done <- q.Run(runCtx, w) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// heldWorker notes each job it runs and holds it until release closes.
type heldWorker struct {
	started chan queue.Job
	release chan struct{}
}

func (w heldWorker) Work(ctx context.Context, j queue.Job) (time.Time, error) {
	w.started <- j
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return time.Time{}, nil
}

// TestRunTakesTwiceWorkersJobsForWorkersSendSlots: Run runs up to twice
// Config.Workers jobs at once, each handed the same queue.Slots of
// Workers slots, so that the reads before a send and the write after it
// run beside Workers vendor calls.
func TestRunTakesTwiceWorkersJobsForWorkersSendSlots(t *testing.T) {
	_, st, pool, account := newQueue(t)
	q, err := pgqueue.New(st, pool, pgqueue.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 4 {
		if _, err := q.Open(ctx, queuedRecord(account, 500)); err != nil {
			t.Fatal(err)
		}
	}
	w := heldWorker{started: make(chan queue.Job, 4), release: make(chan struct{})}
	defer running(t, ctx, q, w)()
	defer close(w.release)
	var slots *queue.Slots
	for i := range 4 {
		select {
		case j := <-w.started:
			if j.Slots == nil || (slots != nil && j.Slots != slots) {
				t.Fatalf("job %d ran with Slots %p, want the Run's one (%p)", i, j.Slots, slots)
			}
			slots = j.Slots
		case <-ctx.Done():
			t.Fatalf("%d of 4 jobs ran at once with Workers 2, want 4", i)
		}
	}
	for range 2 {
		if err := slots.Take(ctx); err != nil {
			t.Fatal(err)
		}
	}
	full, cancelFull := context.WithCancel(ctx)
	cancelFull()
	if err := slots.Take(full); err == nil {
		t.Fatal("a third send slot was free with Workers 2")
	}
	slots.Give()
	slots.Give()
}
