package pgstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
// moves that arrive meanwhile wait for the next.
type moveBatcher struct {
	s   *Store
	max int

	mu      sync.Mutex
	pending []*pendingMove
	running bool // a flush goroutine is running
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
	b.mu.Lock()
	b.pending = append(b.pending, p)
	if !b.running {
		b.running = true
		go b.flush()
	}
	b.mu.Unlock()
	select {
	case <-p.done:
		return p.moved, p.err
	case <-ctx.Done():
		return store.Moved{}, ctx.Err()
	}
}

// flush runs the waiting moves, at most b.max at a time, until none is
// left.
func (b *moveBatcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), b.max)
		if n == 0 {
			b.running = false
			b.pending = nil
			b.mu.Unlock()
			return
		}
		batch := slices.Clone(b.pending[:n])
		b.pending = slices.Delete(b.pending, 0, n)
		b.mu.Unlock()
		b.run(batch)
	}
}

// run commits batch together, or each on its own when the batch failed
// in a way that wrote nothing (a statement's error rolls the whole
// implicit transaction back).
func (b *moveBatcher) run(batch []*pendingMove) {
	live := batch[:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.err = err // never sent: it did not apply
			close(p.done)
			continue
		}
		live = append(live, p)
	}
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
	ctx, cancel := batchContext(live)
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

// batchContext is the context a batch runs under: none of its moves'
// cancellations (one caller giving up must not cancel its neighbours'
// moves), and the latest of their deadlines, when each has one, so the
// batch is not run longer than some caller waits for it.
func batchContext(batch []*pendingMove) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, p := range batch {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(base, latest)
}
