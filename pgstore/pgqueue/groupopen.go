package pgqueue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/pgstore/internal/group"
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
// commit. One transaction is under way at a time, on the Gatherer's
// goroutine; the Opens that arrive meanwhile wait for the next, so an
// Open waits for at most the group under way before its own, and one
// that finds none under way is sent at once (a group of one). No transaction of the batcher waits
// for a wallet longer than groupBegin allows: one that fails before its
// commit hands each of its Opens back to its caller, which opens it in
// a transaction of its own (openAlone), beside the next group.
type openBatcher struct {
	q     *Queue
	opens *group.Gatherer[*pendingOpen]
}

// newOpenBatcher returns an openBatcher of q that commits at most max
// Opens together.
func newOpenBatcher(q *Queue, max int) *openBatcher {
	b := &openBatcher{q: q}
	b.opens = group.New(max, b.run)
	return b
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

// context is the context of p's caller.
func (p *pendingOpen) context() context.Context { return p.ctx }

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
	b.opens.Add(p)
	select {
	case <-p.done:
		return b.answer(p)
	case <-ctx.Done():
	}
	if b.opens.Withdraw(p) {
		return record.Balance{}, b.q.st.WrapErr(ctx, "pgqueue: open", ctx.Err())
	}
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

// run commits members together. When the transaction failed before its
// commit (which then wrote nothing), a group of one answers a refusal of
// the store's (store.ErrInsufficientFunds and the like) as its own, and
// any other group hands each Open back to its caller, so that an Open
// that cannot be opened answers for itself and its neighbours are
// opened.
func (b *openBatcher) run(members []*pendingOpen) {
	live := group.Live(members, (*pendingOpen).context, func(p *pendingOpen, err error) {
		p.err = b.q.st.WrapErr(p.ctx, "pgqueue: open", err) // never sent: nothing written
		close(p.done)
	})
	if len(live) == 0 {
		return
	}
	ctx, cancel := group.Context(live, (*pendingOpen).context)
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

// commit opens every record of members in one transaction and answers
// each one's balance. mayStand reports that the error, if any, may
// follow a commit that took effect (its answer was lost); otherwise the
// transaction wrote nothing.
func (b *openBatcher) commit(ctx context.Context, members []*pendingOpen) (_ []record.Balance, mayStand bool, _ error) {
	q := b.q
	tx, err := q.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: groupBegin})
	if err != nil {
		return nil, false, q.st.WrapErr(ctx, "pgqueue: open: begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op once committed
	var balances []record.Balance
	if len(members) == 1 {
		bal, err := q.openTx(ctx, tx, members[0].m) // its one statement, not OpenTxMany's four
		if err != nil {
			return nil, false, err
		}
		balances = []record.Balance{bal}
	} else {
		ms := make([]*record.Message, len(members))
		for i, p := range members {
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
