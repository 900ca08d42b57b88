package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// batchCounter is a pgx tracer that counts the batches sent and the
// statements in the largest.
type batchCounter struct {
	batches, largest atomic.Int64
}

func (c *batchCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	if n := int64(d.Batch.Len()); n > c.largest.Load() {
		c.largest.Store(n)
	}
	return ctx
}
func (c *batchCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *batchCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *batchCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (c *batchCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestGroupCommit holds one move on a row lock, so that the moves made
// meanwhile gather behind it, and checks what they answer once it lands:
// together in one batch, each its own answer (a conflict among them
// changes nothing of its neighbours'); a batch with a move the server
// refuses is split, the others applied; a move whose context ended while
// it waited answers the context's error and is never applied.
func TestGroupCommit(t *testing.T) {
	counter := &batchCounter{}
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 8, func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	openWallet(t, s, "acme", 1000)
	at := time.Now().UTC().Truncate(time.Microsecond)
	for i := range 14 {
		_, err := s.Open(ctx, &record.Message{ID: fmt.Sprintf("m%d", i), Account: "acme", Kind: "sms", Request: "sms",
			To: "+919876543210", Provider: "mem", Metered: true, Charge: inr(10), State: record.StateAttempting, CreatedAt: at})
		must(t, err)
	}
	sent := func(i int) store.Update {
		return store.Update{State: record.StateSent, At: at.Add(time.Duration(i) * time.Millisecond), ProviderMessageID: fmt.Sprintf("p%d", i)}
	}

	type answer struct {
		moved store.Moved
		err   error
	}
	// behind locks holder's row and moves it, runs moves meanwhile, each
	// under ctxOf's context, waits until they have gathered behind it,
	// calls then, lets the lock go, and returns every answer.
	behind := func(t *testing.T, holder string, moves map[string]store.Update, ctxOf func(id string) context.Context, then func(answered func(string) bool)) map[string]answer {
		t.Helper()
		lock, err := pool.Begin(ctx)
		must(t, err)
		defer func() { _ = lock.Rollback(ctx) }()
		_, err = lock.Exec(ctx, `SELECT 1 FROM notify_messages WHERE id = $1 FOR UPDATE`, holder)
		must(t, err)
		var wg sync.WaitGroup
		answers := make(map[string]answer)
		var mu sync.Mutex
		run := func(id string, u store.Update, c context.Context) {
			defer wg.Done()
			m, err := s.Move(c, "acme", id, u)
			mu.Lock()
			answers[id] = answer{m, err}
			mu.Unlock()
		}
		wg.Add(1)
		go run(holder, sent(0), ctx)
		waitFor(t, 30*time.Second, "the first move to be under way", func() (bool, error) { return pgstore.PendingMoves(s) == 0 && blocked(t, pool), nil })
		for id, u := range moves {
			wg.Add(1)
			go run(id, u, ctxOf(id))
		}
		waitFor(t, 30*time.Second, "the moves to gather", func() (bool, error) { return pgstore.PendingMoves(s) == len(moves), nil })
		then(func(id string) bool {
			mu.Lock()
			defer mu.Unlock()
			_, ok := answers[id]
			return ok
		})
		must(t, lock.Rollback(ctx))
		wg.Wait()
		return answers
	}
	background := func(string) context.Context { return ctx }
	nothing := func(func(string) bool) {}
	state := func(id string) record.State {
		m, err := s.Message(ctx, "acme", id)
		must(t, err)
		return m.State
	}

	t.Run("together", func(t *testing.T) {
		before := counter.batches.Load()
		moves := map[string]store.Update{"m1": sent(1), "m2": sent(2), "m3": sent(3),
			// m4 cannot go back from attempting to queued: a conflict.
			"m4": {State: record.StateQueued, From: record.StateScheduled, At: at}}
		got := behind(t, "m0", moves, background, nothing)
		if counter.batches.Load() != before+1 || counter.largest.Load() != 4 {
			t.Fatalf("%d batches of at most %d moves; want the 4 moves in one", counter.batches.Load()-before, counter.largest.Load())
		}
		for _, id := range []string{"m0", "m1", "m2", "m3"} {
			if a := got[id]; a.err != nil || a.moved.State != record.StateSent || state(id) != record.StateSent {
				t.Errorf("move of %s = %+v, %v; stands %s; want sent", id, a.moved, a.err, state(id))
			}
		}
		if a := got["m4"]; !errors.Is(a.err, store.ErrConflict) || a.moved.State != record.StateAttempting {
			t.Errorf("the conflicting move = %+v, %v; want ErrConflict, attempting", a.moved, a.err)
		}
	})

	t.Run("split", func(t *testing.T) {
		// PostgreSQL's text holds no NUL: the server refuses m6's move,
		// which rolls the whole batch back; each then runs on its own.
		bad := sent(6)
		bad.Note = "a\x00b"
		got := behind(t, "m4", map[string]store.Update{"m5": sent(5), "m6": bad, "m7": sent(7)}, background, nothing)
		for _, id := range []string{"m4", "m5", "m7"} {
			if a := got[id]; a.err != nil || state(id) != record.StateSent {
				t.Errorf("move of %s beside a refused one = %v; stands %s; want sent", id, a.err, state(id))
			}
		}
		if a := got["m6"]; a.err == nil || state("m6") != record.StateAttempting {
			t.Errorf("the refused move = %+v, %v; stands %s; want an error, attempting", a.moved, a.err, state("m6"))
		}
	})

	t.Run("canceled while waiting", func(t *testing.T) {
		gone, cancel := context.WithCancel(ctx)
		ctxOf := func(id string) context.Context {
			if id == "m9" {
				return gone
			}
			return ctx
		}
		got := behind(t, "m8", map[string]store.Update{"m9": sent(9), "m10": sent(10)}, ctxOf, func(answered func(string) bool) {
			cancel()
			waitFor(t, 30*time.Second, "the canceled move to answer", func() (bool, error) { return answered("m9"), nil })
		})
		if a := got["m9"]; !errors.Is(a.err, context.Canceled) {
			t.Errorf("the canceled move = %v; want context.Canceled", a.err)
		}
		if state("m9") != record.StateAttempting || state("m10") != record.StateSent {
			t.Errorf("m9 stands %s (want attempting: it never ran), m10 %s (want sent)", state("m9"), state("m10"))
		}
	})

	t.Run("a claim runs alone", func(t *testing.T) {
		// A claim (a move into attempting) comes right before a vendor
		// call, which waits for it: it never waits for a batch's turn.
		claimed := make(chan error, 1)
		behind(t, "m12", map[string]store.Update{"m13": sent(13)}, background, func(func(string) bool) {
			_, err := s.Open(ctx, &record.Message{ID: "q1", Account: "acme", Kind: "sms", Request: "sms",
				To: "+919876543210", Provider: "mem", Metered: true, Charge: inr(10), State: record.StateQueued, CreatedAt: at})
			must(t, err)
			// Under the held lock, with a batch under way and a move
			// waiting for the next: a grouped claim would wait with them.
			bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			_, err = s.Move(bounded, "acme", "q1", store.Update{State: record.StateAttempting, From: record.StateQueued, At: at})
			claimed <- err
		})
		if err := <-claimed; err != nil || state("q1") != record.StateAttempting {
			t.Fatalf("a claim while a batch was under way = %v, stands %s; want attempting at once", err, state("q1"))
		}
	})

	t.Run("off", func(t *testing.T) {
		if _, err := pgstore.New(pool, pgstore.WithGroupCommit(0)); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("WithGroupCommit(0) = %v; want ErrInvalid", err)
		}
		one, err := pgstore.New(pool, pgstore.WithGroupCommit(1))
		must(t, err)
		before := counter.batches.Load()
		if _, err := one.Move(ctx, "acme", "m11", sent(11)); err != nil {
			t.Fatal(err)
		}
		if counter.batches.Load() != before || pgstore.PendingMoves(one) != 0 {
			t.Fatal("WithGroupCommit(1) still batched a move")
		}
	})
}

// blocked reports whether a statement waits for a row of pool's
// messages table: the waiter holds the row's tuple lock while it waits
// for the transaction that locked the row.
func blocked(t *testing.T, pool *pgxpool.Pool) bool {
	t.Helper()
	var waiting bool
	err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'tuple' AND relation = 'notify_messages'::regclass AND pid <> pg_backend_pid())`).Scan(&waiting)
	must(t, err)
	return waiting
}
