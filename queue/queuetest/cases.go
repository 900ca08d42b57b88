package queuetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

func testOpenQueued(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	before := balance(t, s)
	id, b := open(t, s, newRecord(s, record.StateQueued, 25, time.Time{}))
	if b.Available.Minor != before-25 || balance(t, s) != before-25 {
		t.Fatalf("Open answered balance %d and left %d, want %d: the debit goes with the record", b.Available.Minor, balance(t, s), before-25)
	}
	m, err := s.Ledger.Message(context.Background(), s.Account, id)
	if err != nil || m.State != record.StateQueued || len(m.Payload) == 0 {
		t.Fatalf("record after Open: %+v, %v; want queued with its payload", m, err)
	}
	start(t, s, w)
	r := w.next(t)
	if r.job.Message != id || r.job.Account != s.Account {
		t.Fatalf("ran job %+v, want message %s of %s", r.job, id, s.Account)
	}
	if got := state(t, s, id); got != record.StateSent || w.claimsOf(id) != 1 {
		t.Fatalf("record %s after its job, claimed %d times; want sent, once", got, w.claimsOf(id))
	}
	// A sentinel opened after it runs after it: the first job did not run twice.
	sentinel, _ := open(t, s, newRecord(s, record.StateQueued, 0, time.Time{}))
	if r := w.next(t); r.job.Message != sentinel {
		t.Fatalf("ran %s again, want the sentinel %s", r.job.Message, sentinel)
	}
	w.none(t)
}

func testOpenScheduled(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	at := s.Now().Add(ahead(s))
	id, _ := open(t, s, newRecord(s, record.StateScheduled, 10, at))
	m, err := s.Ledger.Message(context.Background(), s.Account, id)
	if err != nil || m.State != record.StateScheduled || !m.SendAt.Equal(at) {
		t.Fatalf("record after Open: %+v, %v; want scheduled at %v", m, err, at)
	}
	start(t, s, w)
	sentinel, _ := open(t, s, newRecord(s, record.StateQueued, 0, time.Time{}))
	if r := w.next(t); r.job.Message != sentinel {
		t.Fatalf("ran %s at %v before the sentinel, scheduled for %v", r.job.Message, r.at, at)
	}
	if got := state(t, s, id); got != record.StateScheduled {
		t.Fatalf("the scheduled record is %s before its time", got)
	}
	advance(s, ahead(s))
	r := w.next(t)
	if r.job.Message != id || r.at.Before(at) {
		t.Fatalf("ran %s at %v, want %s at or after %v", r.job.Message, r.at, id, at)
	}
	if got := state(t, s, id); got != record.StateSent || w.claimsOf(id) != 1 {
		t.Fatalf("record %s, claimed %d times; want sent, once", got, w.claimsOf(id))
	}
}

func testOpenOtherStates(t *testing.T, h Harness) {
	s := h(t)
	before := balance(t, s)
	for _, st := range []record.State{"", record.StatePending, record.StateAttempting, record.StateSent, record.StateScheduled} {
		m := newRecord(s, st, 10, time.Time{}) // a scheduled one without its SendAt
		if _, err := s.Queue.Open(context.Background(), m); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Open of a record %q: %v, want store.ErrInvalid", st, err)
		}
	}
	if got := balance(t, s); got != before {
		t.Fatalf("balance %d after refused opens, want %d", got, before)
	}
}

func testOpenShort(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	before := balance(t, s)
	m := newRecord(s, record.StateQueued, before+1, time.Time{})
	id := m.ID
	if _, err := s.Queue.Open(context.Background(), m); !errors.Is(err, store.ErrInsufficientFunds) {
		t.Fatalf("Open beyond the balance: %v, want store.ErrInsufficientFunds", err)
	}
	if got := state(t, s, id); got != "" || balance(t, s) != before {
		t.Fatalf("a refused Open left a record %q and balance %d (was %d)", got, balance(t, s), before)
	}
	start(t, s, w)
	sentinel, _ := open(t, s, newRecord(s, record.StateQueued, 0, time.Time{}))
	if r := w.next(t); r.job.Message != sentinel {
		t.Fatalf("ran %s, whose Open was refused", r.job.Message)
	}
}

func testTxRollback(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	ctx := context.Background()
	before := balance(t, s)
	tx, _, rollback, err := s.Begin(ctx)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	var ids []string
	for range 3 {
		m := newRecord(s, record.StateQueued, 10, time.Time{})
		ids = append(ids, m.ID)
		if _, err := s.Queue.OpenTx(ctx, tx, m); err != nil {
			t.Fatalf("OpenTx: %v", err)
		}
	}
	if err := rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	for _, id := range ids {
		if got := state(t, s, id); got != "" {
			t.Errorf("record %s is %s after a rollback", id, got)
		}
	}
	if got := balance(t, s); got != before {
		t.Fatalf("balance %d after a rollback, want %d: nothing is charged", got, before)
	}
	start(t, s, w)
	sentinel, _ := open(t, s, newRecord(s, record.StateQueued, 0, time.Time{}))
	if r := w.next(t); r.job.Message != sentinel {
		t.Fatalf("ran %s, rolled back", r.job.Message)
	}
	w.none(t)
}

func testTxCommit(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	ctx := context.Background()
	before := balance(t, s)
	tx, commit, _, err := s.Begin(ctx)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	m := newRecord(s, record.StateQueued, 10, time.Time{})
	id := m.ID
	if _, err := s.Queue.OpenTx(ctx, tx, m); err != nil {
		t.Fatalf("OpenTx: %v", err)
	}
	if err := commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := state(t, s, id); got != record.StateQueued || balance(t, s) != before-10 {
		t.Fatalf("after commit: record %q, balance %d; want queued, %d", got, balance(t, s), before-10)
	}
	start(t, s, w)
	if r := w.next(t); r.job.Message != id {
		t.Fatalf("ran %s, want %s", r.job.Message, id)
	}
	if got := state(t, s, id); got != record.StateSent || w.claimsOf(id) != 1 {
		t.Fatalf("record %s, claimed %d times; want sent, once", got, w.claimsOf(id))
	}
}

func testTxForeign(t *testing.T, h Harness) {
	s := h(t)
	for _, tx := range []any{nil, "a transaction", struct{}{}} {
		if _, err := s.Queue.OpenTx(context.Background(), tx, newRecord(s, record.StateQueued, 10, time.Time{})); !errors.Is(err, queue.ErrUnsupportedTx) {
			t.Errorf("OpenTx(%#v): %v, want queue.ErrUnsupportedTx", tx, err)
		}
	}
}

// testOpenMany holds OpenMany to all or none: a batch the wallet cannot
// pay for writes nothing; one it can is written whole, and each record
// runs once. A queue that answers queue.ErrNoBatch must write nothing;
// the rest is then skipped.
func testOpenMany(t *testing.T, h Harness) {
	s := h(t)
	many := s.Queue
	w := newWorker(s)
	ctx := context.Background()
	before := balance(t, s)
	short := []*record.Message{newRecord(s, record.StateQueued, 10, time.Time{}), newRecord(s, record.StateQueued, before+1, time.Time{})}
	shortIDs := []string{short[0].ID, short[1].ID}
	err := many.OpenMany(ctx, short)
	if !errors.Is(err, store.ErrInsufficientFunds) && !errors.Is(err, queue.ErrNoBatch) {
		t.Fatalf("OpenMany beyond the balance: %v, want store.ErrInsufficientFunds (or queue.ErrNoBatch)", err)
	}
	for _, id := range shortIDs {
		if got := state(t, s, id); got != "" {
			t.Fatalf("a refused OpenMany left record %s %q", id, got)
		}
	}
	if balance(t, s) != before {
		t.Fatalf("a refused OpenMany moved the balance from %d to %d", before, balance(t, s))
	}
	if errors.Is(err, queue.ErrNoBatch) {
		t.Skip("the queue opens a batch one record at a time (queue.ErrNoBatch), writing nothing")
	}
	ms := []*record.Message{newRecord(s, record.StateQueued, 10, time.Time{}), newRecord(s, record.StateQueued, 20, time.Time{})}
	ids := map[string]bool{ms[0].ID: true, ms[1].ID: true}
	if err := many.OpenMany(ctx, ms); err != nil {
		t.Fatalf("OpenMany: %v", err)
	}
	if balance(t, s) != before-30 {
		t.Fatalf("balance %d after OpenMany, want %d", balance(t, s), before-30)
	}
	start(t, s, w)
	for range 2 {
		r := w.next(t)
		if !ids[r.job.Message] {
			t.Fatalf("ran %s, which OpenMany did not open (or ran it twice)", r.job.Message)
		}
		delete(ids, r.job.Message)
	}
	w.none(t)
}

func testRetry(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	m := newRecord(s, record.StateQueued, 10, time.Time{})
	id := m.ID
	var retryAt time.Time
	w.plan[id] = []func() (time.Time, error){func() (time.Time, error) {
		retryAt = s.Now().Add(ahead(s))
		return retryAt, nil
	}}
	open(t, s, m)
	start(t, s, w)
	if r := w.next(t); r.job.Message != id {
		t.Fatalf("ran %s, want %s", r.job.Message, id)
	}
	advance(s, ahead(s))
	r := w.next(t)
	if r.job.Message != id || r.at.Before(retryAt) {
		t.Fatalf("ran %s at %v, want %s again at or after %v", r.job.Message, r.at, id, retryAt)
	}
	if got := state(t, s, id); got != record.StateSent {
		t.Fatalf("record %s after the retry, want sent", got)
	}
}

func testFailedRun(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	m := newRecord(s, record.StateQueued, 10, time.Time{})
	id := m.ID
	w.plan[id] = []func() (time.Time, error){func() (time.Time, error) {
		return time.Time{}, errors.New("queuetest: the store did not answer")
	}}
	open(t, s, m)
	start(t, s, w)
	first := w.next(t)
	advance(s, queue.Backoff(1))
	r := w.next(t)
	if r.job.Message != id || r.at.Sub(first.at) < queue.Backoff(1)/2 {
		t.Fatalf("ran %s %v after the failed run, want %s again after about %v", r.job.Message, r.at.Sub(first.at), id, queue.Backoff(1))
	}
	if got := state(t, s, id); got != record.StateSent || w.claimsOf(id) != 1 {
		t.Fatalf("record %s, claimed %d times; want sent, once", got, w.claimsOf(id))
	}
}

func testMany(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		m := newRecord(s, record.StateQueued, 1, time.Time{})
		ids[i] = m.ID
		wg.Go(func() {
			if _, err := s.Queue.Open(context.Background(), m); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Open: %v", err)
	}
	start(t, s, w)
	seen := make(map[string]bool)
	for len(seen) < n {
		seen[w.next(t).job.Message] = true
	}
	for _, id := range ids {
		if got := state(t, s, id); got != record.StateSent || w.claimsOf(id) != 1 {
			t.Errorf("record %s is %s, claimed %d times; want sent, once", id, got, w.claimsOf(id))
		}
	}
}

func testPeriodic(t *testing.T, h Harness) {
	s := h(t)
	ran := make(chan struct{}, 16)
	every := time.Second
	p := queue.Periodic{Name: "queuetest_tick", Every: every, Run: func(context.Context) error {
		select {
		case ran <- struct{}{}:
		default:
		}
		return nil
	}}
	w := newWorker(s)
	start(t, s, w, p)
	running(t, s, w)
	for i := range 2 {
		advance(s, every)
		select {
		case <-ran:
		case <-time.After(wait):
			t.Fatalf("periodic task ran %d times within %v, want 2", i, wait)
		}
	}
}

func testRunStops(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	stop := start(t, s, w)
	id, _ := open(t, s, newRecord(s, record.StateQueued, 10, time.Time{}))
	if r := w.next(t); r.job.Message != id {
		t.Fatalf("ran %s, want %s", r.job.Message, id)
	}
	stop() // fails the test unless Run returns nil in time
}

func testRunTwice(t *testing.T, h Harness) {
	s := h(t)
	w := newWorker(s)
	start(t, s, w)
	running(t, s, w)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := s.Queue.Run(ctx, w)
	if err == nil {
		t.Fatal("a second Run at once returned nil, want an error")
	}
}

// running waits until the queue's Run is running, by a job it ran: then
// its periodic tasks are scheduled too.
func running(t *testing.T, s Setup, w *worker) {
	t.Helper()
	id, _ := open(t, s, newRecord(s, record.StateQueued, 0, time.Time{}))
	if r := w.next(t); r.job.Message != id {
		t.Fatalf("ran %s, want %s", r.job.Message, id)
	}
}
