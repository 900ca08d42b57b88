package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/notifykit/notify/internal/recordmove"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// reconcileBatch is how many stale records Reconcile reads at a time.
const reconcileBatch = 100

// clockSlack widens the window in which ByKey looks for an abandoned
// send's records, for instances whose clocks (or whose database's) differ
// a little. Earlier records of the same key are harmless to include: they
// failed (which freed the key) and are skipped.
const clockSlack = time.Minute

// ReconcileResult counts what one Reconcile pass settled.
type ReconcileResult struct {
	// Refunded counts records still pending (the vendor was never called,
	// or certainly refused every call) moved to failed, their charge
	// refunded.
	Refunded int
	// Unknown counts records left attempting (the vendor may have the
	// message) moved to unknown, their charge kept.
	Unknown int
}

// Reconcile settles the records of sends whose holder died (a crash, a
// killed process, a lost goroutine): every record still pending or
// attempting that has not moved for the settle threshold
// (WithSettleAfter). A pending one is refunded and marked failed, since
// the vendor was never called or certainly refused every call (a send
// that died waiting to retry); an attempting one becomes unknown and keeps
// its charge, since the vendor may have the message. An unknown
// one's idempotency key is completed with its receipt, so a repeat of
// the key gets that receipt and never a second send; a failed one's key
// is left to its lease, after which a repeat sends afresh.
//
// Each record is settled exactly once, however many instances reconcile
// the same store at once: the store moves a record only along record.CanMove,
// and the refund is part of the move. Observers get StateFailed or
// StateUnknown with the record's receipt and a nil Envelope.
//
// Reconcile runs until no stale record is left or ctx ends; run it at
// start and then periodically: ReconcileTask makes it a queue's periodic
// task, every half threshold, as the gateway runs it. Queued and
// scheduled records are left alone: a job will take them.
func (n *Notifier) Reconcile(ctx context.Context) (ReconcileResult, error) {
	const op = "notify.Reconcile"
	var res ReconcileResult
	seen := make(map[string]bool)
	for {
		cutoff := n.now().Add(-n.settleAfter)
		stale, err := n.ledger.Stale(ctx, cutoff, reconcileBatch)
		if err != nil {
			return res, storeFailure(op, "ledger", err)
		}
		progress := false
		for _, m := range stale {
			if seen[m.ID] {
				continue // a record a failing store could not move
			}
			seen[m.ID] = true
			progress = true
			after, err := n.settleAbandoned(ctx, m)
			if err != nil {
				return res, storeFailure(op, "ledger", err)
			}
			if after == nil {
				continue // another instance settled it
			}
			switch after.State {
			case record.StateFailed:
				res.Refunded++
			case record.StateUnknown:
				res.Unknown++
				n.completeKey(ctx, after)
			}
		}
		if len(stale) < reconcileBatch || !progress {
			return res, nil
		}
	}
}

// settleAbandoned settles one record whose holder is presumed dead: a
// pending one to failed (refunded), an attempting one to unknown. It
// returns the record after the move, or nil when the record was no longer
// open (someone else moved it first); observers hear of the move.
func (n *Notifier) settleAbandoned(ctx context.Context, m *record.Message) (*record.Message, error) {
	u := store.Update{At: n.now()}
	var err error
	switch m.State {
	case record.StatePending:
		u.State, u.ErrorCode = record.StateFailed, string(CodeUnavailable)
		err = errors.New("the send was abandoned before its vendor was called; the charge was refunded")
	case record.StateAttempting:
		u.State, u.ErrorCode = record.StateUnknown, string(CodeOutcomeUnknown)
		err = errors.New("the send was abandoned while its vendor was being called, which may have the message; the charge stands")
	default:
		return nil, nil
	}
	u.Error = err.Error()
	u.Attempts = calls(m)
	moved, merr := n.move(ctx, m.Account, m.ID, u)
	if CodeOf(merr) == CodeConflict {
		return nil, nil
	}
	if merr != nil {
		return nil, merr
	}
	after := n.reread(ctx, m, u, moved)
	r := recordReceipt(after)
	e := Event{Type: r.Status, Receipt: r, Err: &Error{Code: Code(u.ErrorCode), Op: "notify.Reconcile", Err: err}}
	if after.Refunded && !m.Refunded {
		e.Refund = m.Charge
	}
	n.observe(ctx, e)
	return after, nil
}

// calls counts the vendor calls m's record knows of: the moves into
// attempting its history holds (every call follows one), or the count a
// send wrote, when higher (a retry whose move back to pending failed
// leaves no step of its own). A holder that died wrote no count, and a
// record settled with none would say its vendor was never called.
func calls(m *record.Message) int {
	n := 0
	for _, c := range m.History {
		if c.State == record.StateAttempting {
			n++
		}
	}
	return max(n, m.Attempts)
}

// completeKey completes the idempotency key of a settled record with the
// receipt a repeat should get. A key already completed (by a repeat that
// settled it first) or gone is left as it is.
func (n *Notifier) completeKey(ctx context.Context, m *record.Message) {
	if n.idem == nil || m.IdempotencyKey == "" {
		return
	}
	sctx := detached(ctx)
	defer sctx.release()
	// The parts of a Composite or Bulk request are opened one after the
	// other within one send, which a lease bounds: its request record and
	// siblings are no older than that.
	since := m.CreatedAt.Add(-n.settleAfter - clockSlack)
	siblings, err := n.ledger.ByKey(sctx, m.Account, m.IdempotencyKey, since)
	if err != nil {
		return // the key keeps its lease; a repeat after it settles the key itself
	}
	if r, err := n.receiptOfKey(sctx, m.Account, m.IdempotencyKey, since, siblings); err == nil && r != nil {
		_ = n.complete(sctx, m.Account, m.IdempotencyKey, r)
	}
}

// settleKey settles the sends of an idempotency key whose reservation
// was abandoned, before anything is sent with the key again: it finds the
// key's records opened since the reservation, settles the open ones, and
// returns the receipt a repeat gets (nil when none of them went out or
// may have, so the caller sends afresh). An error means the records could
// not be read or settled, and nothing may be sent.
func (n *Notifier) settleKey(ctx context.Context, acct *Account, key string, since time.Time) (*Receipt, error) {
	account := acct.ID
	msgs, err := n.ledger.ByKey(ctx, account, key, since.Add(-clockSlack))
	if err != nil {
		return nil, err
	}
	for i, m := range msgs {
		if !m.State.Open() {
			continue
		}
		after, err := n.settleAbandoned(ctx, m)
		if err != nil {
			return nil, err
		}
		if after == nil { // moved meanwhile: read it as it is now
			if after, err = n.ledger.Message(ctx, account, m.ID); err != nil {
				return nil, err
			}
		}
		msgs[i] = after
	}
	return n.receiptOfKey(ctx, account, key, since.Add(-clockSlack), msgs)
}

// wentOut reports whether the vendor has m or may have it: every state
// but failed, and a failed record that was sent, or unknown, before a
// delivery report failed it. Only a message certainly not accepted frees
// its idempotency key.
func wentOut(m *record.Message) bool {
	if m.State != record.StateFailed {
		return true
	}
	for _, st := range m.History {
		switch st.State {
		case record.StateSent, record.StateUnknown, record.StateDelivered, record.StateRead:
			return true
		}
	}
	return false
}

// keyReceipt is the receipt that answers a repeat of the key whose sends
// msgs are: the last one that went out or may have (a part of a Composite
// request is combined with its siblings, the parts opened with it), or
// nil when each was certainly not accepted.
func keyReceipt(newID func() string, msgs []*record.Message) *Receipt {
	var last *record.Message
	for _, m := range msgs {
		if wentOut(m) {
			last = m
		}
	}
	switch {
	case last == nil:
		return nil
	case last.Request == "" || last.Request == last.Kind:
		return recordReceipt(last)
	}
	// The parts of one composite request were opened together; a failed
	// part belongs to the same request when it was opened within the
	// slack. Parts are in the order they were opened.
	var legs []*Receipt
	for _, m := range msgs {
		if m.Request == last.Request && m.CreatedAt.Sub(last.CreatedAt).Abs() <= clockSlack {
			legs = append(legs, recordReceipt(m))
		}
	}
	r := combineLegs(newID(), last.Account, last.Request, legs)
	r.Domain, r.IdempotencyKey, r.Metered, r.CreatedAt = last.Domain, last.IdempotencyKey, last.Metered, last.CreatedAt
	if r.Status == record.StateUnknown {
		r.ErrorCode, r.Error = CodeOutcomeUnknown, "the outcome of a leg is unknown"
	}
	return r
}

// Message returns the record of the account's message id: status, cost,
// provider and the provider's message ID, the time of each state, and the
// error of a failed or unknown one; never the Payload of a queued one. A
// message of another account, or one the store no longer keeps, is
// NotFound.
func (n *Notifier) Message(ctx context.Context, account, id string) (*record.Message, error) {
	const op = "record.Message"
	acct, err := n.account(ctx, op, account)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "id", Message: "is required"}}}
	}
	m, err := n.ledger.Message(ctx, acct.ID, id)
	if CodeOf(err) == CodeNotFound {
		return nil, &Error{Code: CodeNotFound, Op: op, Err: fmt.Errorf("no message %q", id)}
	}
	if err != nil {
		return nil, storeFailure(op, "ledger", err)
	}
	m.Payload = nil // the queued request may hold a one-time code
	return m, nil
}

// reread returns m's record as the move u, answered by moved, left it:
// read again from the ledger, or, should that fail, m with the move's
// state, charge and error applied (without its history's new step).
func (n *Notifier) reread(ctx context.Context, m *record.Message, u store.Update, moved store.Moved) *record.Message {
	sctx := detached(ctx)
	defer sctx.release()
	if after, err := n.ledger.Message(sctx, m.Account, m.ID); err == nil {
		return after
	}
	after := standing(m, moved)
	if u.ErrorCode != "" {
		after.ErrorCode, after.Error = u.ErrorCode, u.Error
	}
	return after
}

// movedRecord is m as u, a move that applied from m's state, left it:
// u's step and fields applied by the ledger's own rule, the charge, refund
// and time as the move answered them.
func movedRecord(m *record.Message, u store.Update, moved store.Moved) *record.Message {
	after := *m
	after.History, after.Tried = slices.Clone(m.History), slices.Clone(m.Tried)
	recordmove.Apply(&after, u)
	after.Charge, after.Refunded, after.UpdatedAt = moved.Charge, moved.Refunded, moved.UpdatedAt
	return &after
}

// standing is a copy of m with where a move's answer, moved, says the
// record stands: its state, charge and last move (the rest as m had it).
func standing(m *record.Message, moved store.Moved) *record.Message {
	after := *m
	after.State, after.Charge, after.Refunded, after.UpdatedAt = moved.State, moved.Charge, moved.Refunded, moved.UpdatedAt
	return &after
}
