package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/notifykit/notify/record"
)

// The prepare step: the channel checks and normalises a request into an
// envelope, and the Pricer prices it, with no side effect.

// prepared is a message that passed Prepare and was priced: nothing has
// moved yet.
type prepared struct {
	ch  Channel
	env *Envelope
	via Kind // the request's kind, when it differs from env.Kind (a Composite's)
	// note is the record's first Note.
	note string
	// fallback is the ID of the message that follows this one unless it
	// is confirmed in time (SendWithFallback): the record's Fallback.
	fallback string
	// listed, when its stopping reasons are set, is the suppression
	// list's check the opening makes (store.Ledger.OpenUnlisted) in
	// place of admit's read.
	listed listCheck
}

// prepare is prepareRequest in a span.
func (n *Notifier) prepare(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	ctx, sp := n.start(ctx, spanPrepare, false)
	p, err := n.prepareRequest(ctx, op, acct, req)
	if err == nil && sp.recording() {
		sp.s.SetAttributes(str(keyProvider, p.env.Provider), num(keyUnits, p.env.Units))
	}
	sp.end(err)
	return p, err
}

// prepareRequest validates, normalises and prices req: every check that
// can fail without side effects, so that a bad request is refused before
// it counts against a limit or moves money (a key it reserved is
// released). prepare traces it.
func (n *Notifier) prepareRequest(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	ch := n.channels[req.Kind()]
	if ch == nil {
		return prepared{}, &Error{Code: CodeUnavailable, Op: op, Err: fmt.Errorf("no %s channel is configured", req.Kind())}
	}
	env, err := safePrepare(ctx, ch, acct, req)
	if err != nil {
		return prepared{}, wrap(op, "", CodeInternal, err)
	}
	env.IdempotencyKey = req.Key()
	env.Account = acct
	if env.Kind == "" {
		env.Kind = req.Kind()
	}
	if env.Units <= 0 {
		env.Units = 1
	}
	if n.pricer != nil {
		if env.Price, err = n.pricer.Price(acct, env); err != nil {
			return prepared{}, wrap(op, "", CodeInternal, err)
		}
		if err := checkPriceCurrency(acct, env.Price); err != nil {
			return prepared{}, wrap(op, "", CodeInternal, err)
		}
	}
	return prepared{ch: ch, env: env}, nil
}

// checkPriceCurrency refuses a price in another currency than the
// account's, whatever Pricer gave it: the wallet holds one currency,
// and nothing converts money. A free message may have no currency.
func checkPriceCurrency(acct *Account, price Money) error {
	if price.Currency.Same(acct.Currency) || price.Minor == 0 && price.Currency.Code == "" {
		return nil
	}
	return Errorf(CodePermissionDenied, "the price is in %s, and account %q is in %s: no price is converted from another currency",
		currencyName(price.Currency), acct.ID, currencyName(acct.Currency))
}

func currencyName(c record.Currency) string {
	if c.Code == "" {
		return "no currency"
	}
	return c.Code + " (exponent " + strconv.Itoa(c.Exponent) + ")"
}

func safePrepare(ctx context.Context, ch Channel, acct *Account, req Request) (env *Envelope, err error) {
	defer func() {
		if p := recover(); p != nil {
			env, err = nil, &Error{Code: CodeInternal, Err: fmt.Errorf("channel panicked in Prepare: %v", p)}
		}
	}()
	env, err = ch.Prepare(ctx, acct, req)
	if err == nil && env == nil {
		return nil, &Error{Code: CodeInternal, Err: errors.New("channel returned no envelope")}
	}
	return env, err
}

// InvalidFields returns an InvalidArgument *Error naming every field of
// fe, or nil when fe is empty: the end of a validation that collected its
// failures in a record.FieldErrors (return notify.InvalidFields(fe)).
func InvalidFields(fe record.FieldErrors) error {
	if len(fe) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalidArgument, Fields: fe}
}

// InvalidField returns an InvalidArgument *Error for one field.
func InvalidField(field, message string) *Error {
	return &Error{Code: CodeInvalidArgument, Fields: []record.FieldError{{Field: field, Message: message}}}
}
