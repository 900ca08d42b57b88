package notify

import (
	"context"
	"errors"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// queueBulk queues (or schedules at at) every recipient of a Bulk request
// as its own message, for Enqueue and SendAt: the request is prepared,
// checked against the suppression list and counted against the rate
// limit once, as Send of a Bulk is; then each recipient, in order, is
// charged and opened queued or scheduled with its job, held to its send
// window's opening where one holds it: all in one step when the queue
// can (openBulkAtOnce), else one by one. A recipient that cannot be opened
// (the balance ran out, the store refused it) gets a failed leg and is
// not queued, and the others stand, as Send of a Bulk sends the others;
// a lost answer of the queue makes that leg unknown (its job may run).
// The receipt has one leg per recipient; it is StateQueued when any leg
// is queued, else StateScheduled (SendAt the earliest leg's) when any is
// scheduled, and otherwise what combineBulk makes of failed and unknown
// legs. With an idempotency key the request record lists every leg
// first (openRequest), so a repeat after a crash answers the legs that
// were opened and never queues them again.
func (n *Notifier) queueBulk(ctx context.Context, op string, acct *Account, req Bulk, codec RequestCodec, at, now time.Time) (*Receipt, error) {
	ps, err := n.prepareBulk(ctx, op, acct, req)
	if err != nil {
		return nil, err
	}
	payloads := make([][]byte, len(ps))
	for i, p := range ps {
		if payloads[i], err = encodeQueued(op, codec, p.req); err != nil {
			return nil, err
		}
	}
	id, undo, err := n.admitBulk(ctx, op, acct, req, ps)
	if err != nil {
		return nil, err
	}
	legs, ok := n.openBulkAtOnce(ctx, op, acct, ps, payloads, at, now)
	if !ok {
		legs = make([]*Receipt, len(ps))
		for i, p := range ps {
			r, err := n.openQueued(ctx, op, nil, acct, p, payloads[i], n.windowed(p.env, at, now))
			if r == nil { // nothing written (no funds, the caller gone), as Send of a Bulk skips it
				r = skippedLeg(acct, req.Kind(), err)
				r.To = p.env.To
			}
			legs[i] = r
		}
	}
	r, err := combineBulk(op, id, acct, req.Kind(), legs)
	if n.pricer != nil {
		n.readBalance(ctx, acct, r)
	}
	undo.unless(r)
	return r, err
}

// openBulkAtOnce opens the recipients ps of a queued bulk in one step
// when the queue can (Queue.OpenMany: pgqueue in two statements,
// where one Open each costs a transaction each) and returns their legs.
// It reports false when the queue cannot, or refused them for certain
// with nothing written (a wallet that cannot pay for all of them, say):
// the caller then opens them one by one, which opens those it can, as
// Send of a Bulk does. A lost answer is read back on the first record
// (lostOpening): found, every leg is queued; else every leg is unknown,
// since all of them may stand.
func (n *Notifier) openBulkAtOnce(ctx context.Context, op string, acct *Account, ps []prepared, payloads [][]byte, at, now time.Time) ([]*Receipt, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	ms := make([]*record.Message, len(ps))
	opened := make([]opening, len(ps))
	for i, p := range ps {
		ms[i] = n.queuedRecord(acct, p, payloads[i], n.windowed(p.env, at, now), now)
		opened[i] = openedAs(ms[i]) // read before OpenMany, which takes the records
	}
	err := n.queue.OpenMany(ctx, ms)
	if errors.Is(err, queue.ErrNoBatch) {
		return nil, false // nothing written: one by one
	}
	if err != nil && len(ps) > 0 {
		// One transaction wrote all of them or none: the first tells.
		err = n.lostOpening(ctx, op, acct.ID, ps[0].env.ID, err)
	}
	legs := make([]*Receipt, len(ps))
	for i, p := range ps {
		r, lerr := n.queuedOutcome(ctx, op, acct, p.env, opened[i], record.Balance{}, err, true)
		if r == nil && lerr != nil {
			return nil, false // certainly nothing written
		}
		legs[i] = r
	}
	return legs, true
}
