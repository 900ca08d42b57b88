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

// enqueueMany is queued.Sender.EnqueueTxMany: every request prepared
// and checked first (bad ones named requests.<i>.<field>), the list read
// once per account and channel, then all opened in tx in one call.
func (n *Notifier) enqueueMany(ctx context.Context, op string, tx any, reqs []Request) ([]*Receipt, error) {
	switch {
	case n.queue == nil:
		return nil, &Error{Code: CodeUnavailable, Op: op, Err: errors.New("no queue is configured (notify.WithQueue)")}
	case len(reqs) == 0:
		return nil, nil
	}
	batch, err := n.prepareMany(ctx, op, reqs)
	if err != nil {
		return nil, err
	}
	envs := make([]*Envelope, len(batch))
	for i, b := range batch {
		envs[i] = b.env
	}
	// The suppression list and the preferences for them all, in one read
	// per account and channel (and category) where the ledger can,
	// before any limit's unit is taken.
	if err := n.refusedEach(ctx, op, func(i int) *Account { return batch[i].acct }, envs, "requests.%d.to"); err != nil {
		return nil, err
	}
	for i, b := range batch {
		undo, err := n.take(ctx, op, b.acct, reqs[i].Kind(), b.env)
		if err != nil {
			n.giveBack(batch[:i])
			return nil, prefixFields(err, fmt.Sprintf("requests.%d.", i))
		}
		batch[i].undo = undo
	}
	ms := make([]*record.Message, len(batch))
	for i, b := range batch {
		ms[i] = b.m
	}
	if err := n.openMany(ctx, tx, ms); err != nil {
		n.giveBack(batch)
		if errors.Is(err, queue.ErrUnsupportedTx) {
			return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "tx",
				Message: "is not a transaction the queue can join"}}, Err: err}
		}
		return nil, storeFailure(op, "queue", err)
	}
	rs := make([]*Receipt, len(batch))
	for i, b := range batch {
		r := n.receiptOf(b.acct, b.env, b.createdAt)
		r.Status, r.SendAt, r.Cost = b.state, b.sendAt, b.env.Price
		rs[i] = r
	}
	return rs, nil
}

// queuedPart is a request of EnqueueTxMany, prepared: its account,
// envelope and record, what the record says once the queue took it (the
// queue may keep the record itself), and its admission.
type queuedPart struct {
	acct      *Account
	env       *Envelope
	m         *record.Message
	state     record.State
	sendAt    time.Time
	createdAt time.Time
	undo      *admission
}

// prepareMany prepares every request of EnqueueTxMany and builds its
// record, or names every bad field.
func (n *Notifier) prepareMany(ctx context.Context, op string, reqs []Request) ([]queuedPart, error) {
	accounts := make(map[string]*Account)
	batch := make([]queuedPart, len(reqs))
	ps := make([]*prepared, len(reqs))
	codecs := make([]RequestCodec, len(reqs))
	var fe record.FieldErrors
	for i, req := range reqs {
		prefix := fmt.Sprintf("requests.%d", i)
		if nilness.Is(req) {
			fe.Add(prefix, "is required")
			continue
		}
		switch req.(type) {
		case Bulk, Composite:
			fe.Add(prefix, "a composite or bulk request cannot go in EnqueueTxMany: give its parts")
			continue
		}
		if req.Key() != "" {
			fe.Add(prefix+".idempotency_key", "cannot go with a send in the caller's transaction, which is its idempotency")
			continue
		}
		codec, ok := n.channels[req.Kind()].(RequestCodec)
		if !ok {
			fe.Addf(prefix, "the %s channel is not configured or cannot queue its requests", req.Kind())
			continue
		}
		acct := accounts[req.AccountID()]
		if acct == nil {
			a, err := n.account(ctx, op, req.AccountID())
			if err != nil {
				return nil, prefixFields(err, prefix+".")
			}
			acct, accounts[req.AccountID()] = a, a
		}
		p, err := n.prepareAsIs(ctx, op, acct, req)
		if err != nil {
			if CodeOf(err) != CodeInvalidArgument {
				return nil, err
			}
			var e *Error
			if errors.As(prefixFields(err, prefix+"."), &e) {
				fe = append(fe, e.Fields...)
			}
			continue
		}
		ps[i], codecs[i], batch[i].acct = &p, codec, acct
	}
	if len(fe) > 0 {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: fe}
	}
	// Every recipient's locale in one read per account, then each payload
	// in the locale it goes in.
	if err := n.localize(ctx, op, func(i int) *Account { return batch[i].acct }, ps); err != nil {
		return nil, err
	}
	now := n.now()
	for i, p := range ps {
		payload, err := codecs[i].EncodeRequest(p.req)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("encoding request %d for the queue: %w", i, err)}
		}
		p.env.ID = n.newID()
		m := n.queuedRecord(batch[i].acct, *p, payload, n.heldUntil(p.env, now), now)
		batch[i] = queuedPart{acct: batch[i].acct, env: p.env, m: m, state: m.State, sendAt: m.SendAt, createdAt: now}
	}
	return batch, nil
}

// openMany opens ms in tx, in one call (Queue.OpenTxMany).
func (n *Notifier) openMany(ctx context.Context, tx any, ms []*record.Message) error {
	return n.queue.OpenTxMany(ctx, tx, ms)
}

// giveBack gives back the limits' units the parts took.
func (n *Notifier) giveBack(parts []queuedPart) {
	for _, p := range parts {
		p.undo.unless(nil)
	}
}
