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
	// req is the request env was prepared from: the caller's, or its copy
	// in the recipient's locale (localize), which a queued send keeps.
	req Request
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

// prepare is prepareRequest in a span, in the recipient's locale
// (localize).
func (n *Notifier) prepare(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	return n.prepareIn(ctx, op, acct, req, true)
}

// prepareAsIs is prepareRequest in a span, in the locale the request
// alone chooses: for a worker, whose request was localized when it was
// queued, and for the paths that localize many messages at once.
func (n *Notifier) prepareAsIs(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	return n.prepareIn(ctx, op, acct, req, false)
}

func (n *Notifier) prepareIn(ctx context.Context, op string, acct *Account, req Request, localized bool) (prepared, error) {
	ctx, sp := n.start(ctx, spanPrepare, false)
	p, err := n.prepareRequest(ctx, op, acct, req)
	if err == nil && localized && p.env.Localized != nil {
		err = n.localize(ctx, op, func(int) *Account { return acct }, []*prepared{&p})
	}
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
	return prepared{ch: ch, env: env, req: req}, nil
}

// The recipient's locale (issue 48), the end of the prepare step. A
// channel that rendered a template with variants for a request that named
// no locale offers the message in another one (Envelope.Localized). The
// Notifier then reads the stored locales of such messages' recipients
// (store.Preferences.Locales, part of the ledger), one read per account
// for all the messages of a send, and prepares the copy of the request in
// the recipient's locale in the message's place, so that its variant,
// segments and price are that locale's. A request that names a locale, or
// a template without variants, reads nothing.
//
// A stored locale never fails a send that the request alone would make:
// a copy its channel refuses (a variant a later edit broke, no DLT
// registration for the variant) is sent as first prepared, its record's
// note saying why. A queued send keeps the localized copy as its payload,
// and its worker prepares it as it is (prepareAsIs): it goes in the
// variant it was charged for, whatever the recipient chose since.

// offered returns a pointer to each of ps whose channel offers another
// locale (Envelope.Localized), for localize; nil, allocating nothing,
// when none does.
func offered(ps []prepared) []*prepared {
	var out []*prepared
	for i := range ps {
		if ps[i].env != nil && ps[i].env.Localized != nil {
			out = append(out, &ps[i])
		}
	}
	return out
}

// localize prepares each of ps (ps[i] sent for account acct(i)) whose
// channel offers another locale again in its recipient's stored one, and
// clears every Envelope.Localized. A store that cannot answer fails the
// send, as every read of the ledger before a charge does.
func (n *Notifier) localize(ctx context.Context, op string, acct func(int) *Account, ps []*prepared) error {
	var keys []string             // the recipient's key, for each one offered
	var asked map[string][]string // the keys, by account
	for i, p := range ps {
		if p == nil || p.env == nil || p.env.Localized == nil {
			continue
		}
		if keys == nil { // made for a send that may read: the others allocate nothing
			keys, asked = make([]string, len(ps)), make(map[string][]string)
		}
		if key, ok := n.listKey(p.env.Kind, p.env.To); ok {
			keys[i] = key
			asked[acct(i).ID] = append(asked[acct(i).ID], key)
		} else {
			p.env.Localized = nil
		}
	}
	if len(asked) == 0 {
		return nil
	}
	stored := make(map[string]map[string]string, len(asked))
	for account, tos := range asked {
		locales, err := n.ledger.Locales(ctx, account, tos)
		if err != nil {
			return storeFailure(op, "preferences", err)
		}
		stored[account] = locales
	}
	for i, p := range ps {
		if keys[i] == "" {
			continue
		}
		copyIn := p.env.Localized
		p.env.Localized = nil
		tag := stored[acct(i).ID][keys[i]]
		if tag == "" {
			continue
		}
		q, err := n.prepareRequest(ctx, op, acct(i), copyIn(tag))
		switch {
		case CodeOf(err) == CodeInvalidArgument:
			p.note = joinNote(p.note, "sent in the wording its request chooses, not in the recipient's locale "+tag+": "+err.Error())
		case err != nil:
			return err
		default:
			q.env.Localized = nil
			p.env, p.req = q.env, q.req
		}
	}
	return nil
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
