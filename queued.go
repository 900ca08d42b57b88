package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// RequestCodec is an optional interface of a Channel whose requests may
// wait on a queue (package queued, and a Send held for its send window): it turns a
// request into the bytes its record keeps (Message.Payload) and back, for
// the worker that sends it later, maybe in another process. The channels
// of this module implement it with JSON. Decode must accept whatever
// Encode wrote in earlier versions of the channel: a record may wait for
// days.
type RequestCodec interface {
	EncodeRequest(req Request) ([]byte, error)
	DecodeRequest(data []byte) (Request, error)
}

// queueTries is how often a queued send is taken by a worker, first time
// included, while its vendor refuses it for a reason that may pass; then
// it fails and is refunded.
const queueTries = 5

// WithQueue lets the Notifier queue sends on q: those of package queued
// (queued.New(n): Enqueue, SendAt, EnqueueTx, Cancel, SendWithFallback,
// whose Sender is the Worker q's Run runs), and a Send held for its send
// window's opening. q must open its records through the Notifier's own
// ledger (the one New takes): memqueue.New(memqueue.Config{Ledger: ...}),
// pgqueue.New over the same pgstore.Store. Default: no queue; the
// queueing methods answer CodeUnavailable and a Send outside its window
// is refused RateLimited with the wait.
func WithQueue(q queue.Queue) Option {
	return func(n *Notifier) error {
		if nilness.Is(q) {
			return errors.New("WithQueue: nil queue.Queue")
		}
		n.queue = q
		return nil
	}
}

// Queueing is the door through which package queued builds the queue's
// API (queued.Sender: Enqueue, SendAt, EnqueueTx, EnqueueTxMany, Cancel,
// SendWithFallback, Work) on n's pipeline, which it shares with Send. It
// has nothing for other callers: use queued.New(n).
func (n *Notifier) Queueing() queueing { return queueing{n} }

// queueing is the queue side of a Notifier, for package queued, whose
// Sender documents each method's contract; op names the Sender's method
// in errors.
type queueing struct{ n *Notifier }

// Enqueue queues req (tx nil) or queues it in tx, or schedules it at at.
func (q queueing) Enqueue(ctx context.Context, op string, tx any, req Request, at time.Time) (*Receipt, error) {
	return q.n.enqueue(ctx, op, tx, req, at)
}

// EnqueueMany queues reqs in tx.
func (q queueing) EnqueueMany(ctx context.Context, op string, tx any, reqs []Request) ([]*Receipt, error) {
	return q.n.enqueueMany(ctx, op, tx, reqs)
}

// Cancel cancels the account's message id, queued or scheduled.
func (q queueing) Cancel(ctx context.Context, op, account, id string) (*Receipt, error) {
	return q.n.cancel(ctx, op, account, id)
}

// SendWithFallback sends req and schedules chain after it.
func (q queueing) SendWithFallback(ctx context.Context, op string, req Request, chain []fallback) (*Receipt, error) {
	return q.n.sendWithFallback(ctx, op, req, chain)
}

// Work sends the message of job.
func (q queueing) Work(ctx context.Context, job queue.Job) (time.Time, error) {
	return q.n.work(ctx, job)
}

// Now is the Notifier's clock (WithClock).
func (q queueing) Now() time.Time { return q.n.now() }

// SettleAfter is the settle threshold (WithSettleAfter).
func (q queueing) SettleAfter() time.Duration { return q.n.settleAfter }

// enqueueRequest runs the pipeline up to the charge for a queued (at zero or
// past) or scheduled send, in tx when it is not nil.
func (n *Notifier) enqueueRequest(ctx context.Context, op string, tx any, req Request, at time.Time) (*Receipt, error) {
	if nilness.Is(req) {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request", Message: "is required"}}}
	}
	if n.queue == nil {
		return nil, &Error{Code: CodeUnavailable, Op: op, Err: errors.New("no queue is configured (notify.WithQueue)")}
	}
	bulk, isBulk := req.(Bulk)
	_, isComposite := req.(Composite)
	switch {
	case isBulk && tx != nil:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request",
			Message: "a bulk request cannot be queued in the caller's transaction: EnqueueTxMany its recipients"}}}
	case isComposite:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request",
			Message: "a composite request cannot be queued: queue its parts one by one"}}}
	}
	if tx != nil && req.Key() != "" {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "idempotency_key",
			Message: "cannot go with a send in the caller's transaction, which is its idempotency"}}}
	}
	now := n.now()
	codec, ok := n.channels[req.Kind()].(RequestCodec)
	if !ok {
		if n.channels[req.Kind()] == nil {
			return nil, &Error{Code: CodeUnavailable, Op: op, Err: fmt.Errorf("no %s channel is configured", req.Kind())}
		}
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request",
			Message: fmt.Sprintf("the %s channel cannot queue its requests (no notify.RequestCodec)", req.Kind())}}}
	}
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		if isBulk {
			return n.queueBulk(ctx, op, acct, bulk, codec, at, now)
		}
		p, err := n.prepare(ctx, op, acct, req)
		if err != nil {
			return nil, err
		}
		if p.env.CarriesOTP && at.After(now) {
			return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "send_at",
				Message: "cannot schedule a message with a one-time code, which must go at once"}}}
		}
		return n.queueUp(ctx, op, tx, acct, codec, p, n.windowed(p.env, at, now))
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// hold answers a Send of p, outside its send window until until: it is
// scheduled on the queue for then, or, without a queue (or a channel that
// can queue its requests), refused RateLimited with the wait.
func (n *Notifier) hold(ctx context.Context, op string, acct *Account, req Request, p prepared, until time.Time) (*Receipt, error) {
	codec, ok := n.channels[req.Kind()].(RequestCodec)
	if n.queue == nil || !ok {
		return nil, n.windowError(op, until, "")
	}
	r, err := n.queueUp(ctx, op, nil, acct, codec, p, until)
	if r != nil && r.Status == record.StateScheduled {
		r.Note = joinNote(r.Note, "held for its send window")
	}
	return r, err
}

// queueUp encodes the request of p (in its recipient's locale), admits
// it and opens it queued, or scheduled at at, in tx when not nil.
func (n *Notifier) queueUp(ctx context.Context, op string, tx any, acct *Account, codec RequestCodec,
	p prepared, at time.Time) (*Receipt, error) {
	payload, err := encodeQueued(op, codec, p.req)
	if err != nil {
		return nil, err
	}
	undo, err := n.admit(ctx, op, acct, p.req.Kind(), p.env)
	if err != nil {
		return nil, err
	}
	r, err := n.openQueued(ctx, op, tx, acct, p, payload, at)
	undo.unless(r)
	return r, err
}

// encodeQueued encodes req, of codec's channel, for its queued record.
func encodeQueued(op string, codec RequestCodec, req Request) ([]byte, error) {
	payload, err := codec.EncodeRequest(req)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("encoding the request for the queue: %w", err)}
	}
	return payload, nil
}

// openQueued opens the record of p queued (or scheduled at at) with its
// job. A lost answer from the queue leaves the record and its job both
// there or both missing: the receipt is then StateUnknown with
// CodeOutcomeUnknown, since the job may run.
func (n *Notifier) openQueued(ctx context.Context, op string, tx any, acct *Account, p prepared, payload []byte, at time.Time) (*Receipt, error) {
	env := p.env
	if env.ID == "" { // a recipient of a Bulk request has its ID already (openRequest)
		env.ID = n.newID()
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap(op, "", CodeCanceled, err)
	}
	now := n.now()
	m := n.queuedRecord(acct, p, payload, at, now)
	opened := openedAs(m) // read before Open, which takes m
	var b record.Balance
	var err error
	if tx != nil {
		b, err = n.queue.OpenTx(ctx, tx, m)
	} else {
		b, err = n.queue.Open(ctx, m)
	}
	if errors.Is(err, queue.ErrUnsupportedTx) {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "tx",
			Message: "is not a transaction the queue can join"}}, Err: err}
	}
	if tx == nil && err != nil {
		if err = n.lostOpening(ctx, op, acct.ID, env.ID, err); err == nil {
			b, _ = n.ledger.Balance(ctx, acct.ID) // the queue's answer, with its balance, was lost
		}
	}
	// A send in the caller's transaction moves money only if it commits,
	// which the Notifier cannot see: its observers hear of it from the
	// worker.
	return n.queuedOutcome(ctx, op, acct, env, opened, b, err, tx == nil)
}

// lostOpening reads back the record id of account after the queue
// answered err to its opening (outside a caller's transaction, whose
// commit is the caller's). A record found was written with its job, in
// one transaction, so the opening took place: nil. One not found may
// still be, by a commit on its way, whose job would send it: err,
// marked notFoundYet for the answer's words. A definite err, or a record
// that cannot be read, leaves err as it is. The read runs on the
// caller's context: it only makes the answer truer.
func (n *Notifier) lostOpening(ctx context.Context, op, account, id string, err error) error {
	if definiteOpening(storeFailure(op, "queue", err).Code) {
		return err
	}
	_, rerr := n.ledger.Message(ctx, account, id)
	switch {
	case rerr == nil:
		return nil
	case CodeOf(rerr) == CodeNotFound:
		return &notFoundYet{err}
	}
	return err
}

// definiteOpening reports whether a queue's refusal of an opening, of
// code, certainly wrote nothing.
func definiteOpening(code Code) bool {
	switch code {
	case CodeInsufficientFunds, CodeNotFound, CodeInvalidArgument, CodeConflict, CodeCanceled:
		return true
	}
	return false
}

// notFoundYet marks a queue's lost answer whose record was not found
// when read back (lostOpening).
type notFoundYet struct{ err error }

func (e *notFoundYet) Error() string { return e.err.Error() }
func (e *notFoundYet) Unwrap() error { return e.err }

// opening is what a queued record says of itself when it is opened: the
// queue takes the record, so its receipt is made of this copy.
type opening struct {
	state     record.State
	sendAt    time.Time
	createdAt time.Time
}

func openedAs(m *record.Message) opening { return opening{m.State, m.SendAt, m.CreatedAt} }

// queuedOutcome is the receipt of env's record, opened as o, after the
// queue answered err to its opening (b the balance then), read back
// when it was lost (lostOpening): queued or scheduled when it took it,
// observers told when observe; nil and the error when it certainly wrote
// nothing; else StateUnknown with CodeOutcomeUnknown, since the record
// and its job may stand and the job may send it.
func (n *Notifier) queuedOutcome(ctx context.Context, op string, acct *Account, env *Envelope, o opening, b record.Balance, err error, observe bool) (*Receipt, error) {
	r := n.receiptOf(acct, env, o.createdAt)
	if err == nil {
		r.Status, r.SendAt, r.Cost, r.Balance = o.state, o.sendAt, env.Price, b.Available
		if observe {
			n.observe(ctx, Event{Type: record.StatePending, Envelope: env})
		}
		return r, nil
	}
	e := storeFailure(op, "queue", err)
	if definiteOpening(e.Code) {
		return nil, e // nothing written
	}
	why := "so message " + env.ID + " may be queued"
	if nf := (*notFoundYet)(nil); errors.As(err, &nf) {
		why = "and message " + env.ID + " is not found yet: most likely nothing was queued or charged, " +
			"but a commit on its way may still queue it, charged, and send it; read the message before sending again"
	}
	r.Status, r.Cost = record.StateUnknown, env.Price
	e = &Error{Code: CodeOutcomeUnknown, Op: op, Err: fmt.Errorf("the queue's answer was lost, %s: %w", why, e)}
	r.ErrorCode, r.Error = e.Code, e.Error()
	return r, e
}

// queuedRecord is the record of env, whose request encodes as payload,
// opened at now: queued, or scheduled when at is after now.
func (n *Notifier) queuedRecord(acct *Account, p prepared, payload []byte, at, now time.Time) *record.Message {
	env := p.env
	state := record.StateQueued
	if at.After(now) {
		state = record.StateScheduled
	} else {
		at = time.Time{}
	}
	return &record.Message{ID: env.ID, Account: acct.ID, Kind: env.Kind, Request: env.Kind, To: env.To, Country: env.Country,
		Provider: env.Provider, IdempotencyKey: env.IdempotencyKey, Domain: env.Domain, Units: env.Units,
		Metered: n.pricer != nil, Charge: env.Price, Note: p.note, CreatedAt: now, UpdatedAt: now, State: state,
		SendAt: at, Payload: payload}
}

// cancel is queued.Sender.Cancel: it fails m, queued or scheduled,
// refunded, and the timed-fallback steps after it.
func (n *Notifier) cancel(ctx context.Context, op, account, id string) (*Receipt, error) {
	acct, err := n.account(ctx, op, account)
	if err != nil {
		return nil, err
	}
	m, err := n.ledger.Message(ctx, acct.ID, id)
	if err != nil {
		return nil, storeFailure(op, "ledger", err)
	}
	if !m.State.Waiting() {
		return recordReceipt(m), &Error{Code: CodeConflict, Op: op,
			Err: fmt.Errorf("message %s is %s: only a queued or scheduled message can be canceled", id, m.State)}
	}
	r, err := n.failWaiting(ctx, acct, m, m.State, CodeCanceled, "canceled before it was sent", nil)
	if err != nil {
		if CodeOf(err) == CodeConflict {
			if m, rerr := n.ledger.Message(ctx, acct.ID, id); rerr == nil {
				return recordReceipt(m), storeFailure(op, "ledger", err)
			}
		}
		return nil, storeFailure(op, "ledger", err)
	}
	if m.Fallback != "" {
		// The steps of a timed fallback after it stop with it.
		n.cancelSteps(ctx, acct.ID, m.Fallback, record.StateScheduled, fmt.Sprintf("not needed: the step it follows, %s, was canceled", id))
	}
	return r, nil
}

// enqueue is enqueueRequest in a span; Work's span, which sends the
// message later, links to it while this process remembers it.
func (n *Notifier) enqueue(ctx context.Context, op string, tx any, req Request, at time.Time) (*Receipt, error) {
	var account string
	var kind Kind
	if !nilness.Is(req) {
		account, kind = req.AccountID(), req.Kind()
	}
	ctx, sp := n.startRequest(ctx, spanEnqueue, account, kind)
	r, err := n.enqueueRequest(ctx, op, tx, req, at)
	if r != nil && r.MessageID != "" {
		n.remember(ctx, r.Account, r.MessageID)
		for _, l := range r.Legs { // a bulk's recipients: each worker's span links here
			if l.MessageID != "" {
				n.remember(ctx, l.Account, l.MessageID)
			}
		}
	}
	sp.endReceipt(r, err)
	return r, err
}
