package notify

import (
	"context"
	"errors"
	"time"
)

// queueBulk queues (or schedules at at) every recipient of a Bulk request
// as its own message, for Enqueue and SendAt: the request is prepared,
// checked against the suppression list and counted against the rate
// limit once, as Send of a Bulk is; then each recipient, in order, is
// charged and opened queued or scheduled with its job, held to its send
// window's opening where one holds it. A recipient that cannot be opened
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
	reqs, err := req.Recipients() // as prepareBulk read them: one per recipient, in order
	switch {
	case err != nil:
		return nil, wrap(op, "", CodeInvalidArgument, err)
	case len(reqs) != len(ps):
		return nil, &Error{Code: CodeInternal, Op: op, Err: errors.New("the bulk request named other recipients when read again")}
	}
	payloads := make([][]byte, len(ps))
	for i := range ps {
		if payloads[i], err = encodeQueued(op, codec, reqs[i]); err != nil {
			return nil, err
		}
	}
	id, undo, err := n.admitBulk(ctx, op, acct, req, ps)
	if err != nil {
		return nil, err
	}
	legs := make([]*Receipt, len(ps))
	for i, p := range ps {
		r, err := n.openQueued(ctx, op, nil, acct, p, payloads[i], n.windowed(p.env, at, now))
		if r == nil { // nothing written (no funds, the caller gone), as Send of a Bulk skips it
			r = skippedLeg(acct, req.Kind(), err)
			r.To = p.env.To
		}
		legs[i] = r
	}
	r, err := combineBulk(op, id, acct, req.Kind(), legs)
	if n.pricer != nil {
		n.readBalance(ctx, acct, r)
	}
	undo.unless(r)
	return r, err
}
