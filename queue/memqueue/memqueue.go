package memqueue

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Config configures a Queue.
type Config struct {
	// Ledger is the ledger the queue opens its records through. Required.
	Ledger store.Ledger
	// Workers bounds the jobs Run runs at once. Default 4.
	Workers int
	// Now is the queue's clock; a test may pass a clock it moves, and
	// call Tick after each move. Default time.Now.
	Now func() time.Time
}

// Queue is an in-memory queue.Queue. It is safe for concurrent use.
type Queue struct {
	ledger  store.Ledger
	workers int
	now     func() time.Time

	mu      sync.Mutex
	jobs    jobHeap
	seq     uint64 // orders jobs due at the same time, first in first out
	running bool
	wake    chan struct{} // a job was added or the clock moved: Run looks again
}

// entry is a job in the heap: a send, or a periodic task's next run.
type entry struct {
	job      queue.Job
	periodic *queue.Periodic
	fails    int // runs of the job that failed so far
	seq      uint64
}

// New returns a Queue over cfg.Ledger.
func New(cfg Config) (*Queue, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("memqueue: Config.Ledger is required")
	}
	q := &Queue{ledger: cfg.Ledger, workers: cfg.Workers, now: cfg.Now, wake: make(chan struct{}, 1)}
	if q.workers <= 0 {
		q.workers = 4
	}
	if q.now == nil {
		q.now = time.Now
	}
	return q, nil
}

// Open opens m through the ledger and adds its job, as queue.Queue
// documents. In memory the two cannot be torn apart but by a crash, which
// loses both.
func (q *Queue) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if err := checkState(m); err != nil {
		return record.Balance{}, err
	}
	job := jobOf(m, q.now())
	b, err := q.ledger.Open(ctx, m)
	if err != nil {
		return record.Balance{}, err
	}
	q.push(&entry{job: job})
	return b, nil
}

// OpenTx adds m to tx, a *Tx of this queue: Commit opens it, Rollback
// drops it. It answers a zero Balance, since nothing is charged until
// Commit; a short wallet is Commit's error. Another tx is
// queue.ErrUnsupportedTx.
func (q *Queue) OpenTx(ctx context.Context, tx any, m *record.Message) (record.Balance, error) {
	t, ok := tx.(*Tx)
	if !ok || t == nil || t.q != q {
		return record.Balance{}, queue.ErrUnsupportedTx
	}
	if err := checkState(m); err != nil {
		return record.Balance{}, err
	}
	if err := ctx.Err(); err != nil {
		return record.Balance{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return record.Balance{}, fmt.Errorf("memqueue: %w: the transaction has ended", store.ErrInvalid)
	}
	t.recs = append(t.recs, m)
	return record.Balance{}, nil
}

// OpenTxMany adds every record of ms to tx, as OpenTx does each.
func (q *Queue) OpenTxMany(ctx context.Context, tx any, ms []*record.Message) error {
	for _, m := range ms {
		if _, err := q.OpenTx(ctx, tx, m); err != nil {
			return err
		}
	}
	return nil
}

// OpenMany answers queue.ErrNoBatch and writes nothing: in memory a
// ledger's opens cannot be undone, so a batch cannot be all or none, and
// the Notifier opens the records one by one.
func (q *Queue) OpenMany(context.Context, []*record.Message) error { return queue.ErrNoBatch }

// checkState refuses a record a queue may not open.
func checkState(m *record.Message) error {
	switch {
	case m == nil || !m.State.Waiting():
		return fmt.Errorf("memqueue: open: %w: a queued record starts queued or scheduled", store.ErrInvalid)
	case m.State == record.StateScheduled && m.SendAt.IsZero():
		return fmt.Errorf("memqueue: open: %w: a scheduled record needs its SendAt", store.ErrInvalid)
	}
	return nil
}

// jobOf is the job of the record m, opened at now.
func jobOf(m *record.Message, now time.Time) queue.Job {
	at := now
	if m.State == record.StateScheduled {
		at = m.SendAt
	}
	return queue.Job{Account: m.Account, Message: m.ID, At: at}
}

// push adds e to the heap and wakes Run.
func (q *Queue) push(e *entry) {
	q.mu.Lock()
	q.seq++
	e.seq = q.seq
	heap.Push(&q.jobs, e)
	q.mu.Unlock()
	q.Tick()
}

// Tick tells the queue that its clock moved (or a job was added), so that
// a running Run looks for due jobs at once. A test that moves the clock
// of Config.Now calls it after each move.
func (q *Queue) Tick() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Len returns the number of jobs waiting, due or not (periodic tasks not
// counted).
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, e := range q.jobs {
		if e.periodic == nil {
			n++
		}
	}
	return n
}

// popDue removes and returns the earliest job due at now, or nil and the
// time the next one is due (zero when none waits).
func (q *Queue) popDue(now time.Time) (*entry, time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return nil, time.Time{}
	}
	if next := q.jobs[0]; next.job.At.After(now) {
		return nil, next.job.At
	}
	return heap.Pop(&q.jobs).(*entry), time.Time{}
}

// RunDue runs every job (and periodic task) due by the queue's clock, one
// at a time in the caller's goroutine, jobs that a run makes due again
// included, and returns how many it ran. Tests use it in place of Run. It
// stops early when ctx ends.
func (q *Queue) RunDue(ctx context.Context, w queue.Worker) int {
	n := 0
	for ctx.Err() == nil {
		e, _ := q.popDue(q.now())
		if e == nil {
			return n
		}
		q.runEntry(ctx, w, e)
		n++
	}
	return n
}

// runEntry runs e once and puts back what must run again: a retry, a
// failed job after its backoff, a periodic task's next run.
func (q *Queue) runEntry(ctx context.Context, w queue.Worker, e *entry) {
	// A run's next time counts from its start, read before it runs: read
	// after, it would move with a clock that advanced while it ran (a
	// test's, once it saw the run), and the run due then would be
	// skipped.
	started := q.now()
	if p := e.periodic; p != nil {
		e.job.At = started.Add(p.Every)
		_ = p.Run(ctx) // the task runs again at its next interval either way
		q.push(e)
		return
	}
	retry, err := w.Work(ctx, e.job)
	switch {
	case err != nil:
		e.fails++
		e.job.At = started.Add(queue.Backoff(e.fails))
		q.push(e)
	case !retry.IsZero():
		e.fails = 0
		e.job.At = retry
		q.push(e)
	}
}

// Run runs due jobs with up to Config.Workers at once, and the periodic
// tasks, until ctx ends, as queue.Queue documents. Jobs run on a context
// that ctx's end does not cancel, so that a send in flight finishes
// (Run waits for it) rather than turning into an unknown outcome.
func (q *Queue) Run(ctx context.Context, w queue.Worker, periodic ...queue.Periodic) error {
	for i := range periodic {
		if periodic[i].Every <= 0 || periodic[i].Run == nil {
			return fmt.Errorf("memqueue: periodic task %q needs Every > 0 and Run", periodic[i].Name)
		}
	}
	q.mu.Lock()
	if q.running {
		q.mu.Unlock()
		return errors.New("memqueue: Run is running already")
	}
	q.running = true
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.running = false
		q.dropPeriodic()
		q.mu.Unlock()
	}()
	for i := range periodic {
		p := periodic[i]
		q.push(&entry{periodic: &p, job: queue.Job{At: q.now().Add(p.Every)}})
	}

	jobCtx := context.WithoutCancel(ctx)
	slots := make(chan struct{}, q.workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e, next := q.popDue(q.now())
		if e != nil {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				q.push(e) // not started: it waits for the next Run
				return nil
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				q.runEntry(jobCtx, w, e)
			}()
			continue
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(q.now()), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// dropPeriodic removes the periodic tasks from the heap when Run ends.
// Called with q.mu held.
func (q *Queue) dropPeriodic() {
	kept := q.jobs[:0]
	for _, e := range q.jobs {
		if e.periodic == nil {
			kept = append(kept, e)
		}
	}
	clear(q.jobs[len(kept):])
	q.jobs = kept
	heap.Init(&q.jobs)
}

// jobHeap orders entries by due time, then by arrival.
type jobHeap []*entry

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	if !h[i].job.At.Equal(h[j].job.At) {
		return h[i].job.At.Before(h[j].job.At)
	}
	return h[i].seq < h[j].seq
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(*entry)) }
func (h *jobHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// Interface guards.
var _ queue.Queue = (*Queue)(nil)
