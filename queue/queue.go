package queue

import (
	"context"
	"errors"
	"time"

	"github.com/notifykit/notify/record"
)

// Job is one queued send: the record it delivers, and when.
type Job struct {
	// Account and Message name the record (store.Ledger.Message).
	Account string
	Message string
	// At is when the job is due: the record's SendAt for a scheduled
	// send, its opening for a queued one, the time a retry asked for.
	At time.Time
	// Slots, when set, bounds the queue's sends in flight: the worker
	// takes one of them for its claim and vendor call only (see Slots).
	// Nil bounds nothing beyond the jobs the queue runs at once.
	Slots *Slots
}

// Worker runs jobs. The queue side of a Notifier, queued.Sender
// (queued.New(n)), is the Worker of its queue.
type Worker interface {
	// Work runs job once. A nil error with a zero retry: the job is done
	// (sent, failed, or found settled already). A non-zero retry: run the
	// job again at that time (the worker moved the record back to
	// queued after a certain, temporary refusal). An error: the run
	// changed nothing certain (a store that did not answer before the
	// claim, say), and the queue runs the job again later by its own
	// backoff. Work must be safe to run more than once for one job, and
	// concurrently for different jobs.
	Work(ctx context.Context, job Job) (retry time.Time, err error)
}

// Periodic is a task a queue runs every Every, on one of the processes
// sharing the queue at a time, such as Notifier.Reconcile: hosts need not
// schedule it themselves.
type Periodic struct {
	// Name identifies the task, unique among a queue's tasks; a queue on
	// a database uses it to run the task once across its processes.
	Name string
	// Every is the interval between runs (> 0).
	Every time.Duration
	// Run runs the task once. Its error is the queue's to log; the task
	// runs again at its next interval either way.
	Run func(ctx context.Context) error
}

// Queue keeps jobs durably with the records they deliver, and runs them.
// Implementations are safe for concurrent use.
type Queue interface {
	// Open writes m, a record in record.StateQueued or StateScheduled
	// (due at m.SendAt), through the queue's ledger, with its debit as
	// store.Ledger.Open documents, and a job that delivers it, in one
	// atomic step: the job exists if and only if the record does. Its
	// errors are the ledger's (store.ErrInsufficientFunds and the rest);
	// another state, or a scheduled record without its SendAt, is
	// store.ErrInvalid. Open takes m as Ledger.Open does.
	Open(ctx context.Context, m *record.Message) (record.Balance, error)

	// OpenTx is Open inside tx, a transaction of the caller's that the
	// queue can join (pgx.Tx for pgqueue, *memqueue.Tx for memqueue): the
	// record, its debit and its job take effect when, and only if, the
	// caller commits tx. A tx of another type is ErrUnsupportedTx.
	OpenTx(ctx context.Context, tx any, m *record.Message) (record.Balance, error)

	// OpenTxMany is OpenTx of every record of ms, in order, in one call
	// (queued.Sender.EnqueueTxMany): pgqueue pipelines them to the server in
	// one round trip, memqueue adds each to tx. On an error some may be
	// written in tx, which the caller rolls back.
	OpenTxMany(ctx context.Context, tx any, ms []*record.Message) error

	// OpenMany is Open of every record of ms, in order, in one atomic
	// step of the queue's own (a queued or scheduled bulk request opens
	// its recipients through it): on a refusal of the ledger
	// (store.ErrInsufficientFunds and the rest) nothing is written; an
	// error of the commit leaves the outcome unknown, all of them written
	// or none. pgqueue writes them in two statements. A queue that cannot
	// open a batch all or none (memqueue) answers ErrNoBatch and writes
	// nothing. Both are methods of the contract rather than optional
	// interfaces, so that a queue wrapped by embedding keeps them.
	OpenMany(ctx context.Context, ms []*record.Message) error

	// Run runs due jobs with w, and the periodic tasks, until ctx ends,
	// then waits for the jobs it started and returns nil; an error says
	// the queue could not start. Jobs run concurrently, up to the queue's
	// configured number of workers. Calling Run twice at once is an
	// error.
	Run(ctx context.Context, w Worker, periodic ...Periodic) error
}

// ErrNoBatch is OpenMany's answer from a queue that cannot open a batch
// all or none: it wrote nothing, and the caller opens the records one by
// one.
var ErrNoBatch = errors.New("queue: this queue opens a batch of records one at a time")

// ErrUnsupportedTx is the error of OpenTx given a transaction the queue
// cannot join.
var ErrUnsupportedTx = errors.New("queue: a transaction of a type this queue cannot join")

// Backoff returns how long a queue waits before it runs again a job whose
// run failed for the n-th time (n >= 1): 1 s doubling to at most 10
// minutes. It is the one backoff of the queues of this module.
func Backoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < 10*time.Minute; i++ {
		d *= 2
	}
	return min(d, 10*time.Minute)
}
