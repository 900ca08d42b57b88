package notify

import (
	"context"
	"errors"
	"sync"
)

// SendOTP sends the dual-channel OTP (spec 4.2): the code goes by SMS (otp
// route) and by chat at the same time, each leg through the whole pipeline
// with its own message ID, price and charge. Only delivered legs stay
// charged. The receipt (Kind KindOTP) has both legs, SMS first; its Cost
// is the sum of the delivered legs and its Status is StatusSent when at
// least one leg was delivered.
//
// When no leg was delivered, SendOTP returns the receipt and the SMS leg's
// error, unless the SMS leg was merely unavailable and the chat leg failed
// for another reason, whose error then says more. Latency is that of the
// slower leg, not the sum.
func (n *Notifier) SendOTP(ctx context.Context, req *OTPRequest) (*Receipt, error) {
	const op = "notify.SendOTP"
	if req == nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Err: errors.New("nil request")}
	}
	acct, err := n.account(ctx, op, req.Account)
	if err != nil {
		return nil, err
	}
	if req.IdempotencyKey == "" || n.idem == nil {
		return n.sendOTP(ctx, op, acct, req)
	}
	return n.idempotent(ctx, op, acct, req.IdempotencyKey, fingerprintOf(req), func() (*Receipt, error) {
		return n.sendOTP(ctx, op, acct, req)
	})
}

func (n *Notifier) sendOTP(ctx context.Context, op string, acct *Account, req *OTPRequest) (*Receipt, error) {
	// The pair is idempotent as a whole (SendOTP reserved the key); the
	// legs carry the key only so that their receipts name it, and go
	// straight to sendOne, past the idempotency store.
	smsReq := &SMSRequest{Account: acct.ID, To: req.To, Message: req.OTP, Route: RouteOTP,
		Brand: req.BrandName, Domain: req.Domain, IdempotencyKey: req.IdempotencyKey}
	chatReq := &ChatRequest{Account: acct.ID, To: req.To, OTP: req.OTP, Action: req.Action,
		Brand: req.BrandName, Domain: req.Domain, IdempotencyKey: req.IdempotencyKey}

	var smsR *Receipt
	var smsErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		smsR, smsErr = n.sendOne(ctx, op, acct, smsReq)
	}()
	chatR, chatErr := n.sendOne(ctx, op, acct, chatReq)
	wg.Wait()
	// Bad input is reported by the OTPRequest's own field names.
	smsErr = renameFields(smsErr, map[string]string{"message": "otp", "brand": "brand_name"})
	chatErr = renameFields(chatErr, map[string]string{"brand": "brand_name"})

	smsR = legReceipt(acct, KindSMS, smsR, smsErr)
	chatR = legReceipt(acct, KindChat, chatR, chatErr)
	r := &Receipt{
		MessageID:      n.newID(),
		Account:        acct.ID,
		Kind:           KindOTP,
		To:             smsR.To,
		Status:         StatusFailed,
		Metered:        n.wallet != nil,
		Domain:         req.Domain,
		IdempotencyKey: req.IdempotencyKey,
		CreatedAt:      n.now(),
		Legs:           []*Receipt{smsR, chatR},
		Units:          smsR.Units + chatR.Units,
		Attempts:       smsR.Attempts + chatR.Attempts,
	}
	if r.To == "" {
		r.To = chatR.To
	}
	r.Cost.Currency = acct.Currency
	for _, leg := range r.Legs {
		if leg.Status == StatusSent {
			r.Status = StatusSent
			r.Cost.Minor += leg.Cost.Minor
		}
	}
	if n.wallet != nil {
		// Both legs moved money concurrently; read the balance once both
		// are settled rather than guess which leg's figure came last.
		if b, err := n.wallet.Balance(context.WithoutCancel(ctx), acct.ID); err == nil {
			r.Balance = b.Available
		}
	}
	if r.Status == StatusSent {
		return r, nil
	}
	err := smsErr
	if CodeOf(smsErr) == CodeUnavailable && chatErr != nil && CodeOf(chatErr) != CodeUnavailable {
		// The SMS leg had no channel or provider; the chat leg's error says more.
		err = chatErr
	}
	r.ErrorCode = CodeOf(err)
	r.Error = err.Error()
	return r, err
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

// legReceipt returns r, or for a leg that failed before delivery (bad
// input, no channel, no funds) a failed receipt that says why.
func legReceipt(acct *Account, kind Kind, r *Receipt, err error) *Receipt {
	if r != nil {
		return r
	}
	return &Receipt{Account: acct.ID, Kind: kind, Status: StatusFailed,
		Cost: Money{Currency: acct.Currency}, ErrorCode: CodeOf(err), Error: err.Error()}
}
