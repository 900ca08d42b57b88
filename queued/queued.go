package queued

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// MaxSchedule is how far ahead SendAt may schedule a send.
const MaxSchedule = 366 * 24 * time.Hour

// MaxEnqueueTxMany is the most requests one EnqueueTxMany takes.
const MaxEnqueueTxMany = 100_000

// MaxFallbacks is the most steps a fallback chain may have.
const MaxFallbacks = 3

// Fallback is a step of a timed fallback (SendWithFallback): Request is
// sent, After the message before it, unless that message reached Confirm
// by then.
type Fallback struct {
	// Request is what is sent instead: a single request of any channel
	// that can queue its requests (notify.RequestCodec), of the same
	// account, without an idempotency key (the first request's covers the
	// chain) and without a one-time code (a code must go at once).
	// Required.
	Request notify.Request
	// After is how long the step waits for the message before it to be
	// confirmed, from the send of the first message: 1 second to 24
	// hours. Required.
	After time.Duration
	// Confirm is the state of the message before it that makes the step
	// unneeded: record.StateDelivered (the default) or record.StateRead.
	Confirm record.State
}

// pipeline is what a Sender needs of its Notifier
// (notify.Notifier.Queueing).
type pipeline interface {
	Enqueue(ctx context.Context, op string, tx any, req notify.Request, at time.Time) (*notify.Receipt, error)
	EnqueueMany(ctx context.Context, op string, tx any, reqs []notify.Request) ([]*notify.Receipt, error)
	Cancel(ctx context.Context, op, account, id string) (*notify.Receipt, error)
	SendWithFallback(ctx context.Context, op string, req notify.Request, chain []struct {
		Request notify.Request
		After   time.Duration
		Confirm record.State
	}) (*notify.Receipt, error)
	Work(ctx context.Context, job queue.Job) (time.Time, error)
	Now() time.Time
	SettleAfter() time.Duration
}

// Sender queues, schedules and cancels the sends of one Notifier, and is
// the queue.Worker that sends them. It is safe for concurrent use, and
// holds nothing of its own: any number of Senders of one Notifier behave
// as one.
type Sender struct {
	n *notify.Notifier
	p pipeline
}

// New returns the Sender of n, which needs a queue (notify.WithQueue);
// without one every method but Work answers notify.CodeUnavailable. A nil
// n gives a Sender whose every method answers notify.CodeUnavailable.
func New(n *notify.Notifier) *Sender {
	if n == nil {
		return &Sender{}
	}
	return &Sender{n: n, p: n.Queueing()}
}

// ready returns the error of a Sender without a Notifier.
func (s *Sender) ready(op string) error {
	if s == nil || s.p == nil {
		return &notify.Error{Code: notify.CodeUnavailable, Op: op, Err: fmt.Errorf("no Notifier (queued.New(nil))")}
	}
	return nil
}

// Enqueue does what Send does up to the charge (validation, limits,
// pricing, idempotency, the charge and the record, in one step with the
// queue's job) and leaves the delivery to a worker: it answers at once
// with a receipt of StateQueued, and the message goes out when the queue
// runs its job (queue.Queue.Run with this Sender), in this process or
// another. The worker's outcome follows the record, not this receipt:
// read it with notify.Notifier.Message, or hear it through an Observer. A
// repeat of the request's idempotency key answers this queued receipt.
//
// The worker retries a certain, temporary refusal later (the charge
// held), up to 5 takes, then fails and refunds it; it never retries an
// unknown outcome. Cancel stops a send no worker has taken yet. Only
// requests of a channel that implements notify.RequestCodec can be queued
// (this module's sms, chat and e-mail channels do). A notify.Bulk request
// queues each recipient as its own message, in order, checked and counted
// as Send of it is; a recipient the wallet can no longer pay for gets a
// failed leg and the others stand. Its receipt has a leg per recipient
// and is StateQueued (StateScheduled when every leg waits for a time,
// such as its send window's opening). A notify.Composite request is
// CodeInvalidArgument. A message with a one-time code may be queued: its
// record keeps the request, code included, until it is sent.
func (s *Sender) Enqueue(ctx context.Context, req notify.Request) (*notify.Receipt, error) {
	const op = "queued.Enqueue"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	return s.p.Enqueue(ctx, op, nil, req, time.Time{})
}

// SendAt is Enqueue for a send that waits until at: its receipt is
// StateScheduled, with SendAt set, and the queue runs its job at at or
// soon after (a time already past queues it now); a Bulk request's
// recipients all wait until at. at may be at most MaxSchedule ahead. A
// message that carries a one-time code cannot be scheduled
// (CodeInvalidArgument naming send_at): a code must go at once. Cancel
// stops it until a worker takes it.
func (s *Sender) SendAt(ctx context.Context, req notify.Request, at time.Time) (*notify.Receipt, error) {
	const op = "queued.SendAt"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	switch {
	case at.IsZero():
		return nil, invalid(op, "send_at", "is required")
	case at.After(s.p.Now().Add(MaxSchedule)):
		return nil, invalid(op, "send_at", "must be at most 366 days ahead")
	}
	return s.p.Enqueue(ctx, op, nil, req, at)
}

// EnqueueTx is Enqueue inside tx, the caller's own transaction of the
// queue's kind (a pgx.Tx with pgqueue, a *memqueue.Tx with memqueue): the
// message's record, its charge and its job are written in tx, and nothing
// is charged or sent unless the caller commits it, so that an order and
// its confirmation commit together or not at all. A tx the queue cannot
// join is CodeInvalidArgument. The transaction is the request's
// idempotency: a request with an idempotency key is CodeInvalidArgument
// (a key recorded outside tx would outlive a rollback). Limits count the
// send whether or not tx commits; observers hear of it only from the
// worker, since its charge stands only if tx commits. EnqueueTxMany
// queues many requests in one transaction faster.
func (s *Sender) EnqueueTx(ctx context.Context, tx any, req notify.Request) (*notify.Receipt, error) {
	const op = "queued.EnqueueTx"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	if tx == nil {
		return nil, invalid(op, "tx", "is required")
	}
	return s.p.Enqueue(ctx, op, tx, req, time.Time{})
}

// EnqueueTxMany is EnqueueTx for many requests in one transaction of the
// caller's, in the time of a few statements rather than one EnqueueTx
// each (queue.Queue.OpenTxMany: pgqueue writes 10,000 in two round
// trips): a campaign queued with the order that pays for it. Every
// request is prepared first; any that is bad is CodeInvalidArgument
// naming requests.<i>.<field>, with nothing written; so is any whose
// recipient is on the suppression list (CodeSuppressed naming
// requests.<i>.to, the list read once per account and channel). The
// receipts are in the requests' order, queued (or scheduled, when a send
// window holds the message), their Balance zero: read it after the
// commit. On any other error some records may be written in tx: roll it
// back. The rules of EnqueueTx apply to each request: single requests
// only, no idempotency keys, limits counted whether or not tx commits. At
// most MaxEnqueueTxMany requests; none is no receipts and no error.
func (s *Sender) EnqueueTxMany(ctx context.Context, tx any, reqs []notify.Request) ([]*notify.Receipt, error) {
	const op = "queued.EnqueueTxMany"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	switch {
	case tx == nil:
		return nil, invalid(op, "tx", "is required")
	case len(reqs) > MaxEnqueueTxMany:
		return nil, invalid(op, "requests", fmt.Sprintf("at most %d, got %d", MaxEnqueueTxMany, len(reqs)))
	}
	return s.p.EnqueueMany(ctx, op, tx, reqs)
}

// Cancel stops a queued or scheduled message that no worker has taken:
// its record moves to failed (CodeCanceled) and its charge is refunded,
// once, in the same step; the job finds it settled and sends nothing. It
// returns the record's receipt. A message a worker has taken already, or
// settled, is CodeConflict (with its receipt), and one the account does
// not have is CodeNotFound. A Cancel and a worker racing for one message
// never both win. Canceling a step of a timed fallback stops the steps
// after it.
func (s *Sender) Cancel(ctx context.Context, account, id string) (*notify.Receipt, error) {
	const op = "queued.Cancel"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	return s.p.Cancel(ctx, op, account, id)
}

// SendWithFallback sends req as Send does and schedules the chain after
// it: the first step goes After the send unless req's message was
// confirmed (delivered, or read, as the step's Confirm says) by then, the
// second After that unless the first step's message was, and so on. The
// steps are charged when they are scheduled, each at its channel's price,
// and refunded when they turn out unneeded: a delivery report that
// confirms a message in time cancels the steps after it at once, and a
// step whose time comes after its message was confirmed goes nowhere.
// Whatever the order in which a report and a step's timer arrive, a step
// is never sent when its message was confirmed before the step was taken
// by a worker, and goes at most once (its record, Message.Follows, names
// the message it follows). req's own charge follows its own outcome and
// reports, as with Send; without steps it is Send.
//
// The chain needs a queue (else CodeUnavailable), a delivery report to
// confirm anything (a message whose channel never reports is always
// followed), and at most MaxFallbacks steps. A Cancel of a step stops the
// steps after it. The receipt is req's, with Fallback naming the first
// step's message. If req is not recorded at all (refused before any
// charge), the steps are canceled, refunded, and its error returned.
func (s *Sender) SendWithFallback(ctx context.Context, req notify.Request, chain ...Fallback) (*notify.Receipt, error) {
	const op = "queued.SendWithFallback"
	if err := s.ready(op); err != nil {
		return nil, err
	}
	if len(chain) > MaxFallbacks {
		return nil, invalid(op, "fallback", fmt.Sprintf("at most %d steps, got %d", MaxFallbacks, len(chain)))
	}
	steps := make([]struct {
		Request notify.Request
		After   time.Duration
		Confirm record.State
	}, len(chain))
	for i, f := range chain {
		steps[i] = f
	}
	return s.p.SendWithFallback(ctx, op, req, steps)
}

// Work sends the message of job, a queued or scheduled send: a Sender is
// the queue.Worker a queue's Run runs. It claims the record by moving it
// to attempting, which one worker wins, then delivers it as Send does,
// with the charge taken when it was queued: accepted, it is sent; refused
// for certain, it is failed and refunded, or, when the refusal may pass
// and the message has been taken fewer than 5 times, moved back to queued
// with its charge, and Work asks for a retry after a backoff; unknown, it
// keeps its charge and is never retried. A record that is no longer
// queued or scheduled (sent, canceled, taken by another worker) is left
// alone, so a job run twice never sends twice; a worker that dies after
// its claim leaves an attempting record, which Reconcile settles.
//
// A request that no longer prepares (its template gone, its account
// disabled) fails, refunded. Work returns an error, for the queue to run
// the job again later, when it could not read or claim the record, or
// preparing it failed for a reason that may pass (a store or channel
// unavailable): nothing moved then. Observers hear of the outcome as they
// do of a Send's.
//
// With job.Slots set, Work takes a slot right before its claim and gives
// it back once the vendor answered, before it writes the outcome; a run
// whose context ends while it waits for one claims nothing and answers
// notify.CodeCanceled, and the job runs again.
func (s *Sender) Work(ctx context.Context, job queue.Job) (time.Time, error) {
	if err := s.ready("queued.Work"); err != nil {
		return time.Time{}, err
	}
	return s.p.Work(ctx, job)
}

// ReconcileTask returns the Notifier's Reconcile as a periodic task for a
// queue's Run (queue.Periodic, named "notify_reconcile"), every half
// settle threshold (notify.WithSettleAfter: a minute by default), so that
// the processes sharing a queue settle abandoned sends without the host
// scheduling it. Its error is the one Reconcile returned.
func (s *Sender) ReconcileTask() queue.Periodic {
	if s.ready("queued.ReconcileTask") != nil {
		return queue.Periodic{Name: "notify_reconcile", Every: time.Minute, Run: s.noNotifier}
	}
	return queue.Periodic{Name: "notify_reconcile", Every: s.p.SettleAfter() / 2, Run: func(ctx context.Context) error {
		_, err := s.n.Reconcile(ctx)
		return err
	}}
}

// noNotifier is the task of a Sender without a Notifier.
func (s *Sender) noNotifier(context.Context) error { return s.ready("queued.ReconcileTask") }

// invalid is notify.InvalidField of op.
func invalid(op, field, message string) error {
	e := notify.InvalidField(field, message)
	e.Op = op
	return e
}

// Interface guards.
var _ queue.Worker = (*Sender)(nil)
