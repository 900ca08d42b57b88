package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// SendOTP sends the dual-channel OTP: the code goes by SMS (otp route)
// and by chat at the same time, each leg with its own message ID, price
// and charge.
//
// Both legs are prepared first: a bad field in either (named by the
// OTPRequest's own field names) is an InvalidArgument error with nothing
// sent or charged. A leg whose channel is not configured is skipped and
// reported in its leg receipt. Then both legs are charged and delivered
// concurrently, each through the whole pipeline; a panic in a leg is
// contained and reported as that leg's failure. The pair counts once
// against the rate limit and the OTP throttle, and is idempotent as a
// whole.
//
// The receipt (Kind KindOTP) has both legs, SMS first; its Cost is the sum
// of what the legs keep charged. Its Status is StatusSent when at least
// one leg was accepted, else StatusUnknown when a leg's outcome is unknown
// (the error is then CodeOutcomeUnknown), else StatusFailed. With no leg
// accepted, SendOTP returns the receipt and the most telling leg error:
// the unknown one, else the SMS leg's, unless the SMS leg was merely
// unavailable and the chat leg failed for another reason. The combined
// receipt is recorded in the delivery log and passed to observers (with a
// nil Envelope). Latency is that of the slower leg, not the sum.
func (n *Notifier) SendOTP(ctx context.Context, req *OTPRequest) (*Receipt, error) {
	const op = "notify.SendOTP"
	if req == nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Err: errors.New("nil request")}
	}
	acct, err := n.account(ctx, op, req.Account)
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		legs, err := n.prepareOTP(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		undo, err := n.admit(ctx, op, acct, KindOTP, legs[0].p.env, legs[1].p.env)
		if err != nil {
			return nil, err
		}
		r, err := n.sendOTP(ctx, op, acct, req, legs)
		undo.unless(r)
		return r, err
	}
	return n.keyed(ctx, op, acct, KindOTP, req.IdempotencyKey, req, run)
}

// otpLeg is one leg of a dual OTP: prepared, or skipped with the reason.
type otpLeg struct {
	kind    Kind
	p       prepared // p.env is nil when the leg is skipped
	skipped error
}

// prepareOTP prepares both legs. Bad input in either is an error naming
// every bad field of both; any other failure but a missing channel or
// gateway (Unavailable) is returned as it is; a leg without a channel or
// gateway is skipped; when both are skipped, there is nothing to send.
func (n *Notifier) prepareOTP(ctx context.Context, op string, acct *Account, req *OTPRequest) ([2]otpLeg, error) {
	smsReq := &SMSRequest{Account: acct.ID, To: req.To, Message: req.OTP, Route: RouteOTP,
		Brand: req.BrandName, Domain: req.Domain, IdempotencyKey: req.IdempotencyKey}
	chatReq := &ChatRequest{Account: acct.ID, To: req.To, OTP: req.OTP, Action: req.Action,
		Brand: req.BrandName, Domain: req.Domain, IdempotencyKey: req.IdempotencyKey}
	legs := [2]otpLeg{{kind: KindSMS}, {kind: KindChat}}
	var errs [2]error
	legs[0].p, errs[0] = n.prepare(ctx, op, acct, smsReq)
	legs[1].p, errs[1] = n.prepare(ctx, op, acct, chatReq)
	legs[0].p.via, legs[1].p.via = KindOTP, KindOTP
	// Bad input is reported by the OTPRequest's own field names.
	errs[0] = renameFields(errs[0], map[string]string{"message": "otp", "brand": "brand_name"})
	errs[1] = renameFields(errs[1], map[string]string{"brand": "brand_name"})

	var bad FieldErrors
	var other error
	for i := range legs {
		err := errs[i]
		if err == nil {
			continue
		}
		var e *Error
		switch {
		case errors.As(err, &e) && e.Code == CodeInvalidArgument && len(e.Fields) > 0:
			for _, f := range e.Fields {
				if !slices.Contains(bad, f) {
					bad = append(bad, f)
				}
			}
		case CodeOf(err) == CodeUnavailable: // no channel or gateway for this leg: send the other alone
			legs[i].skipped = err
		case other == nil:
			other = err
		}
	}
	if len(bad) > 0 {
		return legs, &Error{Code: CodeInvalidArgument, Op: op, Fields: bad}
	}
	if other != nil {
		return legs, other
	}
	if legs[0].skipped != nil && legs[1].skipped != nil {
		return legs, legs[0].skipped
	}
	return legs, nil
}

// sendOTP delivers the prepared legs concurrently and combines their
// receipts.
func (n *Notifier) sendOTP(ctx context.Context, op string, acct *Account, req *OTPRequest, legs [2]otpLeg) (*Receipt, error) {
	var rs [2]*Receipt
	var errs [2]error
	var wg sync.WaitGroup
	for i := range legs {
		if legs[i].skipped != nil {
			rs[i], errs[i] = skippedLeg(acct, legs[i].kind, legs[i].skipped), legs[i].skipped
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i], errs[i] = n.dispatchLeg(ctx, op, acct, legs[i])
		}()
	}
	wg.Wait()

	r := combineOTP(n.newID(), acct.ID, rs)
	r.Metered = n.wallet != nil
	r.Domain, r.IdempotencyKey, r.CreatedAt = req.Domain, req.IdempotencyKey, n.now()
	var unknown error
	for i, leg := range rs {
		if leg.Status == StatusUnknown && unknown == nil {
			unknown = errs[i]
		}
	}
	if n.wallet != nil {
		// Both legs moved money concurrently; read the balance once both
		// are settled rather than guess which leg's figure came last.
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		if b, err := n.wallet.Balance(bctx, acct.ID); err == nil {
			r.Balance = b.Available
		}
		cancel()
	}

	var err error
	switch r.Status {
	case StatusUnknown:
		err = &Error{Code: CodeOutcomeUnknown, Op: op, Err: fmt.Errorf("no leg was accepted and %w", unknown)}
	case StatusFailed:
		err = errs[0]
		if CodeOf(err) == CodeUnavailable && errs[1] != nil && CodeOf(errs[1]) != CodeUnavailable {
			// The SMS leg had no channel or provider; the chat leg's error says more.
			err = errs[1]
		}
	}
	n.report(ctx, nil, r, err)
	return r, err
}

// combineOTP combines the receipts of a dual OTP's legs (SMS first) into
// the receipt of the request: sent when a leg was accepted, else unknown
// when a leg's outcome is unknown, else failed; its cost, units and
// attempts are the legs' sums.
func combineOTP(id, account string, legs [2]*Receipt) *Receipt {
	r := &Receipt{
		MessageID: id,
		Account:   account,
		Kind:      KindOTP,
		To:        legs[0].To,
		Status:    StatusFailed,
		Legs:      []*Receipt{legs[0], legs[1]},
		Units:     legs[0].Units + legs[1].Units,
		Attempts:  legs[0].Attempts + legs[1].Attempts,
		Cost:      Money{Currency: legs[0].Cost.Currency},
	}
	if r.To == "" {
		r.To = legs[1].To
	}
	if r.Cost.Currency == (Currency{}) {
		r.Cost.Currency = legs[1].Cost.Currency
	}
	for _, leg := range legs {
		r.Cost.Minor += leg.Cost.Minor
		switch leg.Status {
		case StatusSent:
			r.Status = StatusSent
		case StatusUnknown:
			if r.Status == StatusFailed {
				r.Status = StatusUnknown
			}
		}
	}
	return r
}

// dispatchLeg dispatches one leg, turning a panic anywhere in it (pricer,
// wallet, store) into that leg's failure so that the other leg and the
// process carry on. Money a panicking leg may have moved is left to the
// ledger: the leg's receipt says so.
func (n *Notifier) dispatchLeg(ctx context.Context, op string, acct *Account, leg otpLeg) (r *Receipt, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("the %s leg panicked: %v", leg.kind, p)}
			r = &Receipt{MessageID: leg.p.env.ID, Account: acct.ID, Kind: leg.kind, To: leg.p.env.To,
				Status: StatusUnknown, Cost: leg.p.env.Price, ErrorCode: CodeInternal, Error: err.Error()}
		}
	}()
	r, err = n.dispatch(ctx, op, acct, leg.p)
	if r == nil { // refused before delivery: no funds, canceled
		r = skippedLeg(acct, leg.kind, err)
		r.To = leg.p.env.To
	}
	return r, err
}

// skippedLeg is the receipt of a leg that never reached a provider.
func skippedLeg(acct *Account, kind Kind, err error) *Receipt {
	return &Receipt{Account: acct.ID, Kind: kind, Status: StatusFailed,
		Cost: Money{Currency: acct.Currency}, ErrorCode: CodeOf(err), Error: err.Error()}
}

// renameFields returns err with its field names mapped through names; an
// error without fields is returned as it is.
func renameFields(err error, names map[string]string) error {
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	out := *e
	out.Fields = make([]FieldError, len(e.Fields))
	for i, f := range e.Fields {
		if to, ok := names[f.Field]; ok {
			f.Field = to
		}
		out.Fields[i] = f
	}
	return &out
}
