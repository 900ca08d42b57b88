package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/notifykit/notify/record"
)

// sendCompositeRequest sends the parts of req at once, such as the dual-channel
// OTP: the code by SMS and by chat at the same time, each part with its
// own message ID, price and charge.
//
// Every part is prepared first: a bad field in any (named as
// req.PartField says) is an InvalidArgument error with nothing sent or
// charged. A part whose channel is not configured is skipped and reported
// in its leg receipt. Then the parts are charged and delivered
// concurrently, each through the whole pipeline; a panic in a part is
// contained and reported as that part's failure. The request counts once
// against the rate limit and the OTP throttle, and is idempotent as a
// whole.
//
// The receipt (Kind req.Kind()) has one leg per part, in order; its Cost
// is the sum of what the legs keep charged. Its record.State is StateSent when
// at least one leg was accepted, else StateUnknown when a leg's outcome
// is unknown (the error is then CodeOutcomeUnknown), else StateFailed.
// With no leg accepted, the error is the most telling one: the unknown
// one, else the first part's that is more than "unavailable". The
// combined receipt is passed to observers (with a nil Envelope). Latency is that of the slowest part,
// not the sum.
func (n *Notifier) sendCompositeRequest(ctx context.Context, op string, req Composite) (*Receipt, error) {
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		parts, err := n.prepareParts(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		if err := n.skipRefused(ctx, op, acct, parts); err != nil {
			return nil, err // every part's recipient opted out, or the list cannot be read
		}
		envs := make([]*Envelope, len(parts)) // nil for a part skipped
		for i, p := range parts {
			if p.skipped == nil {
				envs[i] = p.p.env
			}
		}
		// The list was read for every part (skipRefused): take the
		// limits' units.
		undo, err := n.take(ctx, op, acct, req.Kind(), envs...)
		if err != nil {
			return nil, err
		}
		id, err := n.openRequest(ctx, op, acct, req, false, envs)
		if err != nil {
			undo.unless(nil)
			return nil, err
		}
		r, err := n.sendParts(ctx, op, acct, id, req, parts)
		undo.unless(r)
		return r, err
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// part is one prepared part of a composite request.
type part struct {
	kind    Kind
	p       prepared // p.env is nil when the part is skipped
	skipped error
}

// prepareParts prepares every part; it fails when any part has a bad
// field (all are named, each once), fails otherwise, or when no part can
// go.
func (n *Notifier) prepareParts(ctx context.Context, op string, acct *Account, req Composite) ([]part, error) {
	reqs := req.Parts()
	if len(reqs) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Err: errors.New("the request has no parts")}
	}
	parts := make([]part, len(reqs))
	var bad record.FieldErrors
	var other error
	for i, r := range reqs {
		parts[i].kind = r.Kind()
		p, err := n.prepareAsIs(ctx, op, acct, r)
		p.via = req.Kind()
		parts[i].p = p
		if err == nil {
			continue
		}
		var e *Error
		switch {
		case errors.As(err, &e) && e.Code == CodeInvalidArgument && len(e.Fields) > 0:
			for _, f := range e.Fields {
				// A field both parts break is named once, by the first
				// part's rule (the SMS's in the dual OTP), as the
				// request's own words say it.
				if f.Field = req.PartField(i, f.Field); !bad.Has(f.Field) {
					bad = append(bad, f)
				}
			}
		case CodeOf(err) == CodeUnavailable: // no channel or gateway for this part: send the others
			parts[i].skipped = err
		case other == nil:
			other = err
		}
	}
	if len(bad) > 0 {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: bad}
	}
	if other != nil {
		return nil, other
	}
	// The parts' recipients' locales in one read (the dual OTP's legs
	// share their number).
	var ps []*prepared
	for i := range parts {
		if parts[i].p.env != nil && parts[i].p.env.Localized != nil {
			ps = append(ps, &parts[i].p)
		}
	}
	if err := n.localize(ctx, op, func(int) *Account { return acct }, ps); err != nil {
		return nil, err
	}
	for _, p := range parts {
		if p.skipped == nil {
			return parts, nil
		}
	}
	return nil, parts[0].skipped
}

// skipRefused skips each part whose recipient is on the account's
// list with an entry that stops it, or whose preferences decline the
// part's category on its channel (its leg is failed, suppressed or
// declined, nothing charged): the dual OTP's code still goes by chat to
// a number whose SMS hard-bounced. Only when every part that could go is
// stopped is the request refused, with the first part's refusal, as a
// single send is; a list or preferences that cannot be read refuse it
// too.
func (n *Notifier) skipRefused(ctx context.Context, op string, acct *Account, parts []part) error {
	var first error
	left := 0
	for i := range parts {
		p := &parts[i]
		if p.skipped != nil {
			continue
		}
		if err := n.refusedFor(ctx, op, acct, []*Envelope{p.p.env}); err != nil {
			if !recipientRefused(err) {
				return err
			}
			p.skipped = err
			if first == nil {
				first = err
			}
			continue
		}
		left++
	}
	if left == 0 && first != nil {
		return first
	}
	return nil
}

// sendParts delivers the prepared parts concurrently and combines their
// receipts.
func (n *Notifier) sendParts(ctx context.Context, op string, acct *Account, id string, req Composite, parts []part) (*Receipt, error) {
	rs := make([]*Receipt, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		if parts[i].skipped != nil {
			rs[i], errs[i] = skippedLeg(acct, parts[i].kind, parts[i].skipped), parts[i].skipped
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i], errs[i] = n.tracedPart(ctx, op, acct, parts[i], i)
		}()
	}
	wg.Wait()

	r := combineLegs(id, acct.ID, req.Kind(), rs)
	r.Metered = n.pricer != nil
	r.IdempotencyKey, r.CreatedAt = req.Key(), n.now()
	for _, p := range parts {
		if p.p.env != nil {
			r.Domain = p.p.env.Domain
			break
		}
	}
	if n.pricer != nil {
		n.readBalance(ctx, acct, r)
	}
	var err error
	switch r.Status {
	case record.StateUnknown:
		for i, leg := range rs {
			if leg.Status == record.StateUnknown {
				err = &Error{Code: CodeOutcomeUnknown, Op: op, Err: fmt.Errorf("no leg was accepted and %w", errs[i])}
				break
			}
		}
	case record.StateFailed:
		err = errs[0]
		for _, e := range errs {
			if e != nil && CodeOf(e) != CodeUnavailable {
				err = e
				break
			}
		}
	}
	n.report(ctx, nil, r, err)
	return r, err
}

// combineLegs makes the receipt of a composite request from its legs'.
func combineLegs(id, account string, kind Kind, legs []*Receipt) *Receipt {
	r := &Receipt{MessageID: id, Account: account, Kind: kind, Status: record.StateFailed, Legs: legs}
	for _, leg := range legs {
		if r.To == "" {
			r.To = leg.To
		}
		if r.Cost.Currency == (record.Currency{}) {
			r.Cost.Currency = leg.Cost.Currency
		}
		r.Units += leg.Units
		r.Attempts += leg.Attempts
		r.Cost.Minor += leg.Cost.Minor
		switch leg.Status {
		case record.StateSent:
			r.Status = record.StateSent
		case record.StateUnknown:
			if r.Status == record.StateFailed {
				r.Status = record.StateUnknown
			}
		}
	}
	return r
}

// dispatchPart sends one part through the pipeline, containing a panic
// as that part's failure.
func (n *Notifier) dispatchPart(ctx context.Context, op string, acct *Account, pt part) (r *Receipt, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("the %s part panicked: %v", pt.kind, p)}
			r = &Receipt{MessageID: pt.p.env.ID, Account: acct.ID, Kind: pt.kind, To: pt.p.env.To,
				Status: record.StateUnknown, Cost: pt.p.env.Price, ErrorCode: CodeInternal, Error: err.Error()}
		}
	}()
	r, err = n.dispatch(ctx, op, acct, pt.p)
	if r == nil { // refused before delivery: no funds, canceled
		r = skippedLeg(acct, pt.kind, err)
		r.To = pt.p.env.To
	}
	return r, err
}

// skippedLeg is the receipt of a part that was not sent.
func skippedLeg(acct *Account, kind Kind, err error) *Receipt {
	return &Receipt{Account: acct.ID, Kind: kind, Status: record.StateFailed,
		Cost: Money{Currency: acct.Currency}, ErrorCode: CodeOf(err), Error: err.Error()}
}

// sendComposite is sendCompositeRequest in a span, the parent of each
// part's (notify.part).
func (n *Notifier) sendComposite(ctx context.Context, op string, req Composite) (*Receipt, error) {
	ctx, sp := n.startRequest(ctx, spanSend, req.AccountID(), req.Kind())
	r, err := n.sendCompositeRequest(ctx, op, req)
	sp.endReceipt(r, err)
	return r, err
}

// tracedPart is dispatchPart in a span of its own, the i-th part of a
// composite send, so that each part's steps are told apart.
func (n *Notifier) tracedPart(ctx context.Context, op string, acct *Account, pt part, i int) (*Receipt, error) {
	ctx, sp := n.start(ctx, spanPart, false)
	if sp.recording() {
		sp.s.SetAttributes(num(keyPart, i), str(keyKind, string(pt.kind)))
	}
	r, err := n.dispatchPart(ctx, op, acct, pt)
	sp.endReceipt(r, err)
	return r, err
}
