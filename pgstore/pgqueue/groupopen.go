package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// groupBegin begins a group's transaction and bounds, in the same round
// trip, how long its debits wait for a wallet another transaction holds
// (a caller's EnqueueTx, say): a group that waited on one slow wallet
// would hold every Open in it. Past the bound the group is split and
// each Open waits for its own wallet alone.
const groupBegin = "BEGIN; SET LOCAL lock_timeout = '100ms'"

// openBatcher commits concurrent Opens together (Config.GroupCommit): a
// transaction of pgstore.Store.OpenTxMany and one insert of the jobs,
// one commit, where each Open alone makes five round trips and a
// commit. One transaction is under way at a time, on the goroutine
// flush runs; the Opens that arrive meanwhile wait for the next, so the
// wait is bounded by one commit, and an Open that finds none under way
// is sent at once (a group of one). No transaction of the batcher waits
// for a wallet longer than groupBegin allows: one that fails before its
// commit hands each of its Opens back to its caller, which opens it in
// a transaction of its own (openAlone), beside the next group.
type openBatcher struct {
	q   *Queue
	max int

	mu      sync.Mutex
	pending []*pendingOpen
	running bool // a flush goroutine is running
}

// pendingOpen is one Open waiting for its group; done is closed once it
// has its answer, or once its group handed it back (alone).
type pendingOpen struct {
	ctx     context.Context
	m       *record.Message
	done    chan struct{}
	alone   bool // its group wrote nothing: its caller opens it alone
	balance record.Balance
	err     error
}

// open opens m with the Opens that wait beside it, as Open documents. A
// ctx that ends while m waits for its group withdraws it (nothing is
// written: ctx's error); one that ends once its group is under way
// leaves its outcome unknown, as a context that ends during a lone
// Open's commit does: store.ErrUnavailable, never a context error, which
// would read as "nothing written".
func (b *openBatcher) open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if err := ctx.Err(); err != nil {
		return record.Balance{}, b.q.st.WrapErr(ctx, "pgqueue: open", err)
	}
	p := &pendingOpen{ctx: ctx, m: m, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, p)
	if !b.running {
		b.running = true
		go b.flush()
	}
	b.mu.Unlock()
	select {
	case <-p.done:
		return b.answer(p)
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.pending, p); i >= 0 {
		b.pending = slices.Delete(b.pending, i, i+1)
		b.mu.Unlock()
		return record.Balance{}, b.q.st.WrapErr(ctx, "pgqueue: open", ctx.Err())
	}
	b.mu.Unlock()
	select {
	case <-p.done: // answered meanwhile
		return b.answer(p)
	default:
	}
	return record.Balance{}, fmt.Errorf("pgqueue: open: %w: the context ended while its group committed, so the record and job may stand (%v)",
		store.ErrUnavailable, ctx.Err())
}

// answer is p's answer once done is closed: its group's, or its own
// Open in a transaction of its own when the group handed it back.
func (b *openBatcher) answer(p *pendingOpen) (record.Balance, error) {
	if p.alone {
		return b.q.openAlone(p.ctx, p.m)
	}
	return p.balance, p.err
}

// flush runs the waiting Opens, at most b.max at a time, until none is
// left.
func (b *openBatcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), b.max)
		if n == 0 {
			b.running = false
			b.pending = nil
			b.mu.Unlock()
			return
		}
		group := slices.Clone(b.pending[:n])
		b.pending = slices.Delete(b.pending, 0, n)
		b.mu.Unlock()
		b.run(group)
	}
}

// run commits group together. When the transaction failed before its
// commit (which then wrote nothing), a group of one answers a refusal of
// the store's (store.ErrInsufficientFunds and the like) as its own, and
// any other group hands each Open back to its caller, so that an Open
// that cannot be opened answers for itself and its neighbours are
// opened.
func (b *openBatcher) run(group []*pendingOpen) {
	live := group[:0]
	for _, p := range group {
		if err := p.ctx.Err(); err != nil {
			p.err = b.q.st.WrapErr(p.ctx, "pgqueue: open", err) // never sent: nothing written
			close(p.done)
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := groupContext(live)
	defer cancel()
	balances, mayStand, err := b.commit(ctx, live)
	switch {
	case err == nil:
		for i, p := range live {
			p.balance = balances[i]
		}
	case mayStand, len(live) == 1 && refusal(err):
		for _, p := range live {
			p.err = err
		}
	default:
		for _, p := range live {
			p.alone = true
		}
	}
	for _, p := range live {
		close(p.done)
	}
}

// refusal reports whether err is the store's refusal of a record, which
// no second try can change.
func refusal(err error) bool {
	for _, kind := range []error{store.ErrInsufficientFunds, store.ErrNotFound, store.ErrConflict, store.ErrInvalid} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// commit opens every record of group in one transaction and answers
// each one's balance. mayStand reports that the error, if any, may
// follow a commit that took effect (its answer was lost); otherwise the
// transaction wrote nothing.
func (b *openBatcher) commit(ctx context.Context, group []*pendingOpen) (_ []record.Balance, mayStand bool, _ error) {
	q := b.q
	tx, err := q.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: groupBegin})
	if err != nil {
		return nil, false, q.st.WrapErr(ctx, "pgqueue: open: begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op once committed
	var balances []record.Balance
	if len(group) == 1 {
		bal, err := q.openTx(ctx, tx, group[0].m) // its one statement, not OpenTxMany's four
		if err != nil {
			return nil, false, err
		}
		balances = []record.Balance{bal}
	} else {
		ms := make([]*record.Message, len(group))
		for i, p := range group {
			ms[i] = p.m
		}
		if balances, err = q.openTxMany(ctx, tx, ms); err != nil {
			return nil, false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, !pgconn.SafeToRetry(err), q.commitError(ctx, err)
	}
	return balances, false, nil
}

// groupContext is the context a group runs under: none of its Opens'
// cancellations (one caller giving up must not cancel its neighbours'
// records), and the latest of their deadlines, when each has one, so the
// group does not run longer than some caller waits for it.
func groupContext(group []*pendingOpen) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, p := range group {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithCancel(context.WithoutCancel(group[0].ctx))
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.WithoutCancel(group[0].ctx), latest)
}
