package pgqueue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// groupKit is a Queue on a fresh schema, with funded accounts, for the
// group commit's tests.
type groupKit struct {
	t    *testing.T
	q    *Queue
	st   *pgstore.Store
	pool *pgxpool.Pool
}

func newGroupKit(t *testing.T, accounts ...string) *groupKit {
	t.Helper()
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 16)
	st, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := New(st, pool, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if q.opens == nil || q.cfg.GroupCommit != pgstore.DefaultGroupCommit {
		t.Fatalf("a Queue's default group commit: %d, want groups of %d", q.cfg.GroupCommit, pgstore.DefaultGroupCommit)
	}
	for _, a := range accounts {
		if err := st.OpenWallet(ctx, a, record.Money{Minor: 100000, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
	}
	return &groupKit{t: t, q: q, st: st, pool: pool}
}

func groupRecord(account string, charge int64) *record.Message {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &record.Message{ID: pgstoretest.RandomName("msg_"), Account: account, Kind: "sms", Request: "sms",
		To: "+919876543210", Units: 1, Metered: true, Charge: record.Money{Minor: charge, Currency: record.INR()},
		State: record.StateQueued, Payload: []byte(`{"to":"9876543210","message":"hello"}`), CreatedAt: now, UpdatedAt: now}
}

// lockWallet holds account's wallet row in a transaction of its own
// until the returned release is called (or the test ends).
func (k *groupKit) lockWallet(account string) (release func()) {
	k.t.Helper()
	ctx := context.Background()
	tx, err := k.pool.Begin(ctx)
	if err != nil {
		k.t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM notify_wallets WHERE account = $1 FOR UPDATE`, account); err != nil {
		k.t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			if err := tx.Commit(ctx); err != nil {
				k.t.Error(err)
			}
		}
	}
	k.t.Cleanup(release)
	return release
}

// waitFor polls cond until it holds, for 10 seconds at most.
func (k *groupKit) waitFor(what string, cond func() bool) {
	k.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			k.t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// pendingOpens is how many Opens wait for the next group.
func (k *groupKit) pendingOpens() int {
	n, _ := k.q.opens.opens.Waiting()
	return n
}

// opened is one Open's answer.
type opened struct {
	b   record.Balance
	err error
}

// open runs Open of m in a goroutine and answers on the channel.
func (k *groupKit) open(ctx context.Context, m *record.Message) <-chan opened {
	ch := make(chan opened, 1)
	go func() {
		b, err := k.q.Open(ctx, m)
		ch <- opened{b, err}
	}()
	return ch
}

// await is the answer on ch, which must come within 10 seconds.
func (k *groupKit) await(what string, ch <-chan opened) opened {
	k.t.Helper()
	select {
	case got := <-ch:
		return got
	case <-time.After(10 * time.Second):
		k.t.Fatalf("no answer to %s in 10 s", what)
		return opened{}
	}
}

// xmin is the transaction that wrote the record id.
func (k *groupKit) xmin(id string) string {
	var x string
	if err := k.pool.QueryRow(context.Background(), `SELECT xmin::text FROM notify_messages WHERE id = $1`, id).Scan(&x); err != nil {
		k.t.Fatalf("the record %s: %v", id, err)
	}
	return x
}

// debitBalance is the balance the ledger row of the debit ref says.
func (k *groupKit) debitBalance(account, ref string) int64 {
	entries, err := k.st.Statement(context.Background(), account, 0, 100)
	if err != nil {
		k.t.Fatal(err)
	}
	for _, e := range entries {
		if e.Ref == ref {
			return e.Balance.Minor
		}
	}
	k.t.Fatalf("no ledger row of %s", ref)
	return 0
}

// takenAlone reports whether a group is under way and no Open waits.
func (k *groupKit) takenAlone() bool {
	n, running := k.q.opens.opens.Waiting()
	return running && n == 0
}

// behindAStalledOpen holds every free connection of the pool, starts an
// Open on account first, and returns once the batcher took it, alone,
// and waits for a connection: Opens made meanwhile gather for the next
// group. release lets go of the connections; the first Open's answer
// comes on the channel.
func (k *groupKit) behindAStalledOpen(first string) (release func(), answer <-chan opened) {
	k.t.Helper()
	ctx := context.Background()
	var held []*pgxpool.Conn
	for free := k.pool.Stat().MaxConns() - k.pool.Stat().AcquiredConns(); free > 0; free-- {
		c, err := k.pool.Acquire(ctx)
		if err != nil {
			k.t.Fatal(err)
		}
		held = append(held, c)
	}
	release = func() {
		for _, c := range held {
			c.Release()
		}
		held = nil
	}
	k.t.Cleanup(release)
	answer = k.open(ctx, groupRecord(first, 100))
	k.waitFor("the batcher to take the first Open", k.takenAlone)
	return release, answer
}

// TestGroupCommitOpens: Opens that arrive while one is under way commit
// together, in one transaction, each answering its own balance after its
// debit, with its job, and the ledger's running balances exact.
func TestGroupCommitOpens(t *testing.T) {
	k := newGroupKit(t, "a", "b")
	release, first := k.behindAStalledOpen("a")
	group := []*record.Message{groupRecord("a", 100), groupRecord("b", 200), groupRecord("b", 300), groupRecord("a", 400)}
	answers := make([]<-chan opened, len(group))
	for i, m := range group {
		answers[i] = k.open(context.Background(), m)
	}
	k.waitFor("the group to gather", func() bool { return k.pendingOpens() == len(group) })
	release()
	if got := k.await("the first Open", first); got.err != nil || got.b.Available.Minor != 99900 {
		t.Fatalf("the first Open: %+v", got)
	}
	ctx := context.Background()
	for i, m := range group {
		got := k.await("an Open of the group", answers[i])
		if got.err != nil {
			t.Fatalf("Open %d: %v", i, got.err)
		}
		if want := k.debitBalance(m.Account, m.ID); got.b.Available.Minor != want || got.b.Account != m.Account ||
			got.b.Available.Currency.Code != "INR" {
			t.Fatalf("Open %d answered %+v; its ledger row says %d", i, got.b, want)
		}
		if x, x0 := k.xmin(m.ID), k.xmin(group[0].ID); x != x0 {
			t.Fatalf("record %d written by transaction %s, record 0 by %s: not one group", i, x, x0)
		}
		var jobs int
		if err := k.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE args->>'message' = $1`, m.ID).Scan(&jobs); err != nil || jobs != 1 {
			t.Fatalf("record %d has %d jobs (%v), want 1", i, jobs, err)
		}
	}
	for account, want := range map[string]int64{"a": 100000 - 100 - 100 - 400, "b": 100000 - 200 - 300} {
		b, err := k.st.Balance(ctx, account)
		if err != nil || b.Available.Minor != want {
			t.Fatalf("balance of %s: %+v, %v; want %d", account, b, err, want)
		}
		if err := k.st.CheckLedger(ctx, account); err != nil {
			t.Fatalf("the ledger of %s: %v", account, err)
		}
	}
}

// TestGroupCommitSplits: a group with an Open its account cannot pay for
// is split: that Open alone is refused, its neighbours are opened.
func TestGroupCommitSplits(t *testing.T) {
	k := newGroupKit(t, "a", "b")
	release, first := k.behindAStalledOpen("a")
	group := []*record.Message{groupRecord("a", 100), groupRecord("b", 1_000_000), groupRecord("b", 300)}
	answers := make([]<-chan opened, len(group))
	for i, m := range group {
		answers[i] = k.open(context.Background(), m)
	}
	k.waitFor("the group to gather", func() bool { return k.pendingOpens() == len(group) })
	release()
	if got := k.await("the first Open", first); got.err != nil {
		t.Fatal(got.err)
	}
	ctx := context.Background()
	for i, m := range group {
		got := k.await("an Open of the group", answers[i])
		_, rerr := k.st.Message(ctx, m.Account, m.ID)
		if i == 1 {
			if !errors.Is(got.err, store.ErrInsufficientFunds) || !errors.Is(rerr, store.ErrNotFound) {
				t.Fatalf("the Open beyond b's balance: %v (record: %v); want ErrInsufficientFunds and no record", got.err, rerr)
			}
			continue
		}
		if got.err != nil || rerr != nil || got.b.Available.Minor != k.debitBalance(m.Account, m.ID) {
			t.Fatalf("Open %d beside a refused one: %+v (record: %v)", i, got, rerr)
		}
	}
	if b, err := k.st.Balance(ctx, "b"); err != nil || b.Available.Minor != 100000-300 {
		t.Fatalf("b's balance: %+v, %v", b, err)
	}
}

// TestGroupCommitWithdraws: an Open whose context ends while it waits for
// its group is withdrawn, with its context's error and nothing written.
func TestGroupCommitWithdraws(t *testing.T) {
	k := newGroupKit(t, "a", "b")
	release, first := k.behindAStalledOpen("a")
	ctx, cancel := context.WithCancel(context.Background())
	m := groupRecord("b", 100)
	answer := k.open(ctx, m)
	k.waitFor("the Open to wait for a group", func() bool { return k.pendingOpens() == 1 })
	cancel()
	got := k.await("the withdrawn Open", answer)
	if !errors.Is(got.err, context.Canceled) || errors.Is(got.err, store.ErrUnavailable) {
		t.Fatalf("a withdrawn Open: %v; want its context's error, never unknown", got.err)
	}
	if k.pendingOpens() != 0 {
		t.Fatal("the withdrawn Open still waits")
	}
	release()
	if got := k.await("the first Open", first); got.err != nil {
		t.Fatal(got.err)
	}
	if _, err := k.st.Message(context.Background(), "b", m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the withdrawn Open's record: %v, want ErrNotFound", err)
	}
	if b, err := k.st.Balance(context.Background(), "b"); err != nil || b.Available.Minor != 100000 {
		t.Fatalf("b's balance after a withdrawn Open: %+v, %v", b, err)
	}
}

// TestGroupCommitLockTimeout: a group whose wallet another transaction
// holds gives up on it after groupBegin's lock timeout and is split, so
// its neighbours are opened while that Open waits for its wallet alone.
func TestGroupCommitLockTimeout(t *testing.T) {
	k := newGroupKit(t, "a", "b", "c")
	releaseC := k.lockWallet("c") // before the stall: its connection is its own
	release, first := k.behindAStalledOpen("a")
	mb, mc := groupRecord("b", 100), groupRecord("c", 100)
	answerB, answerC := k.open(context.Background(), mb), k.open(context.Background(), mc)
	k.waitFor("the group to gather", func() bool { return k.pendingOpens() == 2 })
	release()
	if got := k.await("the first Open", first); got.err != nil {
		t.Fatal(got.err)
	}
	// c's wallet is still held: b's Open answers only if the group split.
	if got := k.await("b's Open", answerB); got.err != nil || got.b.Available.Minor != 99900 {
		t.Fatalf("b's Open beside a locked wallet: %+v", got)
	}
	select {
	case got := <-answerC:
		t.Fatalf("c's Open answered while its wallet is held: %+v", got)
	default:
	}
	releaseC()
	if got := k.await("c's Open", answerC); got.err != nil || got.b.Available.Minor != 99900 {
		t.Fatalf("c's Open once its wallet is free: %+v", got)
	}
}

// TestGroupCommitOff: GroupCommit 1 opens each record in a transaction
// of its own.
func TestGroupCommitOff(t *testing.T) {
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 2)
	st, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(st, pool, Config{GroupCommit: 1})
	if err != nil || q.opens != nil {
		t.Fatalf("New with GroupCommit 1: %+v, %v; want no grouping", q, err)
	}
	if _, err := New(st, pool, Config{GroupCommit: -1}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("New with GroupCommit -1: %v, want ErrInvalid", err)
	}
}
