package notify

import (
	"context"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// openRequest gives the parts of a Composite or Bulk request their
// message IDs (envs in the request's order; nil for a part not sent) and,
// when the request has an idempotency key, writes its request record before the first part is
// opened, so that a repeat of the key after the process died answers the
// whole request's receipt. It returns the ID of the request's combined
// receipt. An error means nothing was sent or charged.
func (n *Notifier) openRequest(ctx context.Context, op string, acct *Account, req Request, bulk bool, envs []*Envelope) (string, error) {
	id := n.newID()
	parts := make([]string, len(envs))
	for i, env := range envs {
		if env != nil {
			env.ID = n.newID()
			parts[i] = env.ID
		}
	}
	if req.Key() == "" {
		return id, nil
	}
	if err := ctx.Err(); err != nil {
		return "", wrap(op, "", CodeCanceled, err)
	}
	rr := &store.RequestRecord{ID: id, Account: acct.ID, Kind: req.Kind(), Bulk: bulk, IdempotencyKey: req.Key(),
		Parts: parts, CreatedAt: n.now()}
	if err := n.ledger.OpenRequest(ctx, rr); err != nil {
		return "", storeFailure(op, "ledger", err)
	}
	return id, nil
}

// requestReceipt is the receipt that answers a repeat of the key of a
// Composite or Bulk request whose record the store holds: one leg per
// part, in order, each its record's receipt (msgs are the key's records,
// settled), a part without a record a failed leg that was not sent. It
// returns nil, false when the key has no request record since since, and
// nil, true when it has one but no part went out or may have.
func (n *Notifier) requestReceipt(ctx context.Context, account, key string, since time.Time, msgs []*record.Message) (*Receipt, bool, error) {
	rr, err := n.ledger.RequestByKey(ctx, account, key, since)
	switch {
	case CodeOf(err) == CodeNotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	byID := make(map[string]*record.Message, len(msgs))
	for _, m := range msgs {
		byID[m.ID] = m
	}
	legs := make([]*Receipt, len(rr.Parts))
	anyWentOut := false
	var cur record.Currency
	if len(msgs) > 0 {
		cur = msgs[0].Charge.Currency
	}
	for i, id := range rr.Parts {
		m := byID[id]
		if m == nil {
			kind := Kind("")
			if rr.Bulk {
				kind = rr.Kind
			}
			legs[i] = &Receipt{Account: account, Kind: kind, Status: record.StateFailed, Cost: Money{Currency: cur},
				ErrorCode: CodeUnavailable, Error: "not sent: the request stopped before this part"}
			continue
		}
		anyWentOut = anyWentOut || wentOut(m)
		legs[i] = recordReceipt(m)
	}
	if !anyWentOut {
		return nil, true, nil
	}
	var r *Receipt
	if rr.Bulk {
		r, _ = combineBulk("notify.Send", rr.ID, &Account{ID: account, Currency: cur}, rr.Kind, legs)
	} else {
		r = combineLegs(rr.ID, account, rr.Kind, legs)
		if r.Status == record.StateUnknown {
			r.ErrorCode, r.Error = CodeOutcomeUnknown, "the outcome of a leg is unknown"
		}
		r.Domain, r.Metered = msgs[0].Domain, msgs[0].Metered // a part went out: msgs has it
	}
	r.IdempotencyKey, r.CreatedAt = key, rr.CreatedAt
	return r, true, nil
}

// receiptOfKey is the receipt that answers a repeat of key whose records
// since since are msgs (settled): the request's, when the key has a
// request record, else the last record's that went out (keyReceipt).
func (n *Notifier) receiptOfKey(ctx context.Context, account, key string, since time.Time, msgs []*record.Message) (*Receipt, error) {
	r, found, err := n.requestReceipt(ctx, account, key, since, msgs)
	if err != nil {
		return nil, err
	}
	if found {
		return r, nil
	}
	return keyReceipt(n.newID, msgs), nil
}
