package notify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// A refusal's refund when the store fails at that moment.
//
// A message its vendor certainly refused is refunded by one Ledger
// step, the move of its record into failed. When that step fails for a
// reason that may pass (the database unreachable or timing out), even
// after the pipeline's immediate retries, the record stays attempting and
// the charge stands. Left so, the reconciler would take the record, once
// it is older than the settle threshold, for a send whose holder died
// while its vendor may have had the message, and settle it unknown with
// its charge: a certain refusal charged.
//
// So the move is retried in the background (refundLater), detached from
// the caller, with backoff, for up to the settle threshold (WithSettleAfter):
// in the usual case, a store that comes back within it, the refund lands
// before the reconciler would take the record. Should the reconciler take
// it first all the same (another instance's clock, a send that took most
// of the threshold), the record is unknown and the move into failed from
// there refunds it just as well (record.CanMove allows unknown -> failed). The
// caller's error says that the refund is not written yet and is retried.
//
// The durable mark that the vendor does not have the message is the
// record's state pending: before the move into failed, the pipeline moves
// the record back to pending, a light step without money, which a store
// that fails the refund's transaction (a lock timeout, a serialization
// failure) usually takes. A record left pending is refunded by the
// reconciler, so a process that dies before the move into failed lands
// still leaves the refusal refunded. Nothing is written before the
// refusal is certain (no mark ahead of the vendor's answer), so no step
// can refund a message the vendor may have: the moves follow the refusal
// of the last attempt, after which no attempt follows.
//
// A record whose opening's answer was lost (the store wrote it, or not,
// and the vendor was not called) is settled by the same two steps and the
// same late retry (unopened in pipeline.go).
//
// What stays open: a store unreachable for both steps and for the whole
// threshold, or a process that dies too. Nothing durable then says the
// vendor refused the message (or never had it); the record stays
// attempting and the reconciler settles it unknown, keeping its charge,
// the safe side (an operator may refund it; the vendor's records tell).
// That holds of one write per send: before records opened attempting, the
// step that marked an open record attempting was that write.

// The backoff of a late refund's tries: the first waits about
// lateRefundFirst, each later one twice as long, up to lateRefundMax.
const (
	lateRefundFirst = 100 * time.Millisecond
	lateRefundMax   = 5 * time.Second
)

// lateRefund is the move into failed of a certainly refused message that
// the ledger failed when the refusal came.
type lateRefund struct {
	account, id string
	// u is the move as the pipeline tried it; its At is kept, so that a
	// try whose answer was lost is recognised by a later one (Conflict,
	// failed at the same instant).
	u store.Update
	// refusal is the vendor's refusal, as the record keeps it; receipt
	// the send's receipt as its caller got it (charge standing).
	refusal Error
	receipt Receipt
}

// refundLater retries l's move on a goroutine of its own, detached from
// ctx's cancellation, until it lands, the store answers that it cannot
// (Conflict: the record was settled otherwise; NotFound, InvalidArgument),
// or the settle threshold has passed since now. A move that lands is told
// to the observers (StateFailed, Envelope nil, with Refund), with the
// receipt the send would have had.
func (n *Notifier) refundLater(ctx context.Context, l *lateRefund) {
	ctx = context.WithoutCancel(ctx)
	end := time.Now().Add(n.settleAfter)
	go n.retryRefund(ctx, l, end)
}

func (n *Notifier) retryRefund(ctx context.Context, l *lateRefund, end time.Time) {
	delay := lateRefundFirst
	for {
		wait := delay/2 + rand.N(delay/2+1)
		if time.Until(end) <= wait {
			return // the threshold passed: the reconciler settles the record
		}
		t := time.NewTimer(wait)
		<-t.C
		deadline := time.Now().Add(settleTimeout)
		if deadline.After(end) {
			deadline = end
		}
		sctx := newAttemptCtx(ctx, deadline)
		m, err := n.ledger.Move(sctx, l.account, l.id, l.u)
		sctx.release()
		switch {
		case err == nil:
			n.refundedLate(ctx, l, m)
			return
		case CodeOf(err) == CodeConflict:
			if m.State == record.StateFailed && sameInstant(m.UpdatedAt, l.u.At) {
				n.refundedLate(ctx, l, m) // a try whose answer was lost did move it
			}
			return // else settled otherwise (a reconciler's refund of a pending record)
		case !passing(err):
			return
		}
		delay = min(2*delay, lateRefundMax)
	}
}

// refundedLate tells the observers of l's move into failed, m, once it
// landed: StateFailed with the refund, and the receipt as it stands now.
func (n *Notifier) refundedLate(ctx context.Context, l *lateRefund, m store.Moved) {
	r := l.receipt
	r.Cost = m.Cost()
	e := l.refusal
	what := "its record was marked failed"
	if m.Refunded {
		what = "its refund of " + m.Charge.String() + " was written"
	}
	e.Err = fmt.Errorf("%w; %s once the ledger answered again", e.Err, what)
	r.ErrorCode, r.Error = e.Code, e.Error()
	if m.Refunded {
		sctx := detached(ctx)
		if b, err := n.ledger.Balance(sctx, l.account); err == nil {
			r.Balance = b.Available
		}
		sctx.release()
	}
	ev := Event{Type: record.StateFailed, Receipt: &r, Err: &e}
	if m.Refunded {
		ev.Refund = m.Charge
	}
	n.observe(ctx, ev)
}
