package pgstore

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/pgstore/internal/group"
	"github.com/notifykit/notify/store"
)

// DefaultGroupCommit is WithGroupCommit's default: at most 64 moves
// committed together.
const DefaultGroupCommit = 64

// WithGroupCommit sets how many concurrent moves (Move's plain moves: a
// send's move to sent, a report's step; never a move that refunds or
// reprices, which also locks a wallet, nor a queued send's claim, whose
// vendor call waits for it) one transaction commits together, at most. Moves wait for no timer: a move that finds no
// commit under way is sent at once; those that arrive while one is under
// way go together in the next, so the wait is bounded by one commit's
// round trip. Each Move still answers only once its own move is durable,
// and a batch that fails is split, each move run on its own, so one bad
// move cannot fail its neighbours. 1 turns grouping off: every move its
// own statement and commit. Default DefaultGroupCommit (64); n must be
// positive.
func WithGroupCommit(n int) Option {
	return func(s *Store) error {
		if n < 1 {
			return store.InvalidField("group commit", "must be at least 1")
		}
		s.groupCommit = n
		return nil
	}
}

// moveBatcher commits concurrent moves together: one pgx batch, one
// round trip, whose statements PostgreSQL runs as one implicit
// transaction, committed once. One batch is under way at a time; the
// moves that arrive meanwhile wait for the next (group.Gatherer).
type moveBatcher struct {
	s     *Store
	moves *group.Gatherer[*pendingMove]
}

// newMoveBatcher returns a moveBatcher of s that commits at most max
// moves together.
func newMoveBatcher(s *Store, max int) *moveBatcher {
	b := &moveBatcher{s: s}
	b.moves = group.New(max, b.run)
	return b
}

// pendingMove is one Move's statement waiting for its batch, and its
// answer once done is closed.
type pendingMove struct {
	ctx         context.Context
	account, id string // the record moved
	sql         string
	args        []any
	done        chan struct{}
	moved       store.Moved
	err         error // pgx.ErrNoRows when the statement matched no row
}

// context is the context of p's caller.
func (p *pendingMove) context() context.Context { return p.ctx }

// move runs the move statement sql with args, of the account's record
// id, with others' moves when
// some wait, and answers as one QueryRow of it would, scanned by
// scanMoved: pgx.ErrNoRows when it matched no row. A ctx that ends while
// the move waits answers ctx's error: the move may still apply, as a
// statement whose ctx ends may.
func (b *moveBatcher) move(ctx context.Context, account, id, sql string, args []any) (store.Moved, error) {
	if err := ctx.Err(); err != nil {
		return store.Moved{}, err
	}
	p := &pendingMove{ctx: ctx, account: account, id: id, sql: sql, args: args, done: make(chan struct{})}
	b.moves.Add(p)
	select {
	case <-p.done:
		return p.moved, p.err
	case <-ctx.Done():
		return store.Moved{}, ctx.Err()
	}
}

// run commits batch together, or each on its own when the batch failed
// in a way that wrote nothing (a statement's error rolls the whole
// implicit transaction back).
func (b *moveBatcher) run(batch []*pendingMove) {
	live := group.Live(batch, (*pendingMove).context, func(p *pendingMove, err error) {
		p.err = err // never sent: it did not apply
		close(p.done)
	})
	if len(live) == 1 {
		b.single(live[0])
		return
	}
	if len(live) == 0 {
		return
	}
	// One order of rows for every batch, so that two batches never wait
	// for each other's rows.
	slices.SortFunc(live, func(x, y *pendingMove) int {
		return cmp.Or(cmp.Compare(x.account, y.account), cmp.Compare(x.id, y.id))
	})
	ctx, cancel := group.Context(live, (*pendingMove).context)
	defer cancel()
	var pb pgx.Batch
	for _, p := range live {
		pb.Queue(p.sql, p.args...)
	}
	br := b.s.pool.SendBatch(ctx, &pb)
	moved := make([]store.Moved, len(live))
	errs := make([]error, len(live))
	var failed error
	for i := range live {
		moved[i], errs[i] = scanMoved(br.QueryRow())
		if errs[i] != nil && !errors.Is(errs[i], pgx.ErrNoRows) && failed == nil {
			failed = errs[i]
		}
	}
	if err := br.Close(); err != nil && failed == nil {
		failed = err
	}
	switch {
	case failed == nil:
		for i, p := range live {
			p.moved, p.err = moved[i], errs[i]
			close(p.done)
		}
	case wroteNothing(failed):
		// Each on its own: a move that cannot apply answers for itself,
		// and its neighbours apply.
		for _, p := range live {
			b.single(p)
		}
	default:
		// The connection was lost with the batch sent: each move may
		// have applied, as a lone statement's may.
		for _, p := range live {
			p.err = failed
			close(p.done)
		}
	}
}

// single runs p's statement alone, as Move did before grouping: repeated
// after a lost connection only when nothing reached the server.
func (b *moveBatcher) single(p *pendingMove) {
	p.err = b.s.do(p.ctx, onceOnly, func() (err error) {
		p.moved, err = scanMoved(b.s.pool.QueryRow(p.ctx, p.sql, p.args...))
		return err
	})
	close(p.done)
}

// wroteNothing reports whether a batch that failed with err certainly
// wrote nothing: the server refused a statement, which rolled back the
// batch's implicit transaction, or nothing reached the server.
func wroteNothing(err error) bool {
	var pe *pgconn.PgError
	return (errors.As(err, &pe) && !connLost(err)) || pgconn.SafeToRetry(err)
}
