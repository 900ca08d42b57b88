package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// settleTimeout bounds each refund, record and idempotency write. They run
// detached from the caller's context, because a caller that gives up must
// not leave a charge without its refund or a send without its record.
const settleTimeout = 5 * time.Second

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
}

// sendRequest runs one request through the whole pipeline: idempotency,
// prepare, limits, charge, deliver, settle, record (send traces it).
func (n *Notifier) sendRequest(ctx context.Context, op string, req Request) (*Receipt, error) {
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		p, err := n.prepare(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		if until := n.heldUntil(p.env, n.now()); !until.IsZero() {
			return n.hold(ctx, op, acct, req, p, until)
		}
		undo, err := n.admit(ctx, op, acct, req.Kind(), p.env)
		if err != nil {
			return nil, err
		}
		r, err := n.dispatch(ctx, op, acct, p)
		undo.unless(r)
		return r, err
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// keyed runs fn under the caller's idempotency key, if the request has
// one. The key is looked up first: a repeat gets the first receipt without
// being prepared again (see fingerprintOf). A key on a Notifier without an
// store.Keys is refused, not ignored: its caller counts on a repeat
// never sending twice.
func (n *Notifier) keyed(ctx context.Context, op string, acct *Account, key string, req Request, fn func() (*Receipt, error)) (*Receipt, error) {
	switch {
	case key == "":
		return fn()
	case n.idem == nil:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "idempotency_key",
			Message: "needs an idempotency store: configure the Notifier with notify.WithIdempotency"}}}
	}
	return n.idempotent(ctx, op, acct, key, fingerprintOf(req), fn)
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
	}
	return prepared{ch: ch, env: env}, nil
}

// idempotent runs fn once per (account, key). A repeat of a send that was
// accepted, or whose outcome is unknown, returns the first receipt (and,
// for an unknown one, its error again) and never sends twice; only a send
// that certainly went nowhere frees the key for another try.
func (n *Notifier) idempotent(ctx context.Context, op string, acct *Account, key, fp string, fn func() (*Receipt, error)) (*Receipt, error) {
	res, err := n.idem.Reserve(ctx, acct.ID, key, fp)
	if err != nil {
		return nil, storeFailure(op, "idempotency", err)
	}
	if res.Receipt != nil {
		first, err := decodeReceipt(res.Receipt)
		if err != nil {
			return nil, storeFailure(op, "idempotency", err)
		}
		return first, replayError(op, first)
	}
	if !res.Abandoned.IsZero() {
		// The key's last holder died mid-send: settle what it left first,
		// and answer with its receipt if its message went out or may have.
		// Until that is known nothing is sent, and the key stays held
		// until its lease runs out.
		prev, err := n.settleKey(ctx, acct, key, res.Abandoned)
		if err != nil {
			return nil, storeFailure(op, "ledger", err)
		}
		if prev != nil {
			sctx := detached(ctx)
			defer sctx.release()
			_ = n.complete(sctx, acct.ID, key, prev)
			return prev, replayError(op, prev)
		}
	}
	r, sendErr := fn()
	// The key is settled even when the caller has gone meanwhile.
	sctx := detached(ctx)
	defer sctx.release()
	if r == nil || r.Status == record.StateFailed {
		// Nothing went out, so the key is freed for a retry; money stays
		// taken only when the refund failed, which the receipt says (the
		// durable record that will settle it is still to come). If the
		// release fails the key stays reserved until the store lets it go,
		// and repeats get Conflict: never a double send.
		_ = n.idem.Release(sctx, acct.ID, key)
		return r, sendErr
	}
	if err := n.complete(sctx, acct.ID, key, r); err != nil {
		// The message went out (or may have) and is paid for; failing now
		// would invite a second send. The key stays reserved, so repeats
		// get Conflict. Observers may hold r already, so the note goes on
		// a copy.
		c := *r
		c.Note = joinNote(c.Note, "idempotency record failed: "+err.Error())
		r = &c
	}
	return r, sendErr
}

// unknownError classifies err, an unknown outcome, as CodeOutcomeUnknown,
// keeping err (a context error, a provider's own code) as the cause.
func unknownError(op, provider string, err error) *Error {
	if e, ok := err.(*Error); ok && e.Code == CodeOutcomeUnknown {
		return wrap(op, provider, CodeOutcomeUnknown, err)
	}
	return &Error{Code: CodeOutcomeUnknown, Op: op, Provider: provider, Err: err}
}

// replayError is the error that goes with a receipt returned to a repeat:
// none for a sent one; StateUnknown again for an unknown one, so that a
// repeat is answered as the first request was.
func replayError(op string, r *Receipt) error {
	if r.Status != record.StateUnknown {
		return nil
	}
	what := "message " + r.MessageID
	if r.MessageID == "" {
		what = "an abandoned send"
	}
	return &Error{Code: CodeOutcomeUnknown, Op: op, Provider: r.Provider,
		Err: fmt.Errorf("a repeat of %s, whose outcome is unknown: %s", what, r.Error)}
}

// dispatch charges, delivers, settles and records one prepared message.
// Its receipt's status is the outcome: sent, failed (refunded) or unknown
// (charged).
func (n *Notifier) dispatch(ctx context.Context, op string, acct *Account, p prepared) (*Receipt, error) {
	r, charged, err := n.begin(ctx, op, acct, p)
	if r == nil || err != nil {
		return r, err
	}
	// Deliver, with retries of certain, temporary refusals.
	res, attempts, outcome, derr := n.deliver(ctx, p.ch, p.env, &r.Tried)
	return n.settle(ctx, op, acct, p.env, r, charged, res, attempts, outcome, derr)
}

// begin charges p and opens its record attempting: what comes before the
// vendor call. It returns the receipt to fill and whether money moved. A
// nil receipt and an error: nothing was charged or written, or, when the
// store's answer to the opening was lost, a record with its charge may
// stand, which is failed and refunded as soon as the store answers again
// (unopened). The bool is false then.
func (n *Notifier) begin(ctx context.Context, op string, acct *Account, p prepared) (*Receipt, bool, error) {
	env := p.env
	if env.ID == "" { // a part of a Composite or Bulk request has its ID already
		env.ID = n.newID()
	}

	// Charge and open the record: a caller that has gone already gets
	// nothing charged.
	if err := ctx.Err(); err != nil {
		return nil, false, wrap(op, "", CodeCanceled, err)
	}
	now := n.now()
	balance, charged, err := n.charge(ctx, op, acct, p, now)
	if err != nil {
		return nil, false, err
	}
	n.observe(ctx, Event{Type: record.StatePending, Envelope: env})

	r := n.receiptOf(acct, env, now)
	r.Balance = balance
	return r, charged, nil
}

// receiptOf returns the receipt env starts with, opened at now: what the
// message is, before any outcome.
func (n *Notifier) receiptOf(acct *Account, env *Envelope, now time.Time) *Receipt {
	return &Receipt{MessageID: env.ID, Account: acct.ID, Kind: env.Kind, To: env.To, Country: env.Country, Units: env.Units,
		Metered: n.pricer != nil, Domain: env.Domain, IdempotencyKey: env.IdempotencyKey, CreatedAt: now,
		Provider: env.Provider}
}

// settleOutcome finishes r, the receipt of env, by the outcome of its
// delivery: sent (the charge stands, less what a cheaper failover saves),
// unknown (the charge stands, nothing retries it) or not accepted
// (refunded once). settle traces it.
func (n *Notifier) settleOutcome(ctx context.Context, op string, acct *Account, env *Envelope, r *Receipt, charged bool,
	res *Result, attempts int, outcome record.State, derr error) (*Receipt, error) {
	r.Attempts = attempts
	switch outcome {
	case record.StateSent:
		r.Status = record.StateSent
		if res.Provider != "" {
			r.Provider = res.Provider
		}
		r.ProviderMessageID = res.ProviderMessageID
		r.Gateway = res.Route
		r.Note = res.Note
		r.Cost = env.Price
		var reprice *Money
		if charged && (res.Route != "" && res.Route != env.Route || r.Provider != env.Provider) {
			reprice = n.cheaperPrice(acct, env, res.Route, r.Provider)
		}
		moved, ok := n.finish(ctx, env, r, record.StateSent, reprice)
		if ok && reprice != nil && moved.Charge.Minor == reprice.Minor {
			// The move into sent lowered the charge and credited the
			// difference back, in one step.
			r.Cost = *reprice
			n.readBalance(ctx, acct, r)
		}
		n.report(ctx, env, r, nil)
		return r, nil

	case record.StateUnknown:
		// The vendor may have it: the charge stands and nothing retries it.
		e := unknownError(op, env.Provider, derr)
		r.Status = record.StateUnknown
		r.Cost = env.Price
		r.ErrorCode, r.Error = CodeOf(e), e.Error()
		var pe *Error
		if errors.As(derr, &pe) && pe.Provider != "" {
			// The provider that may have it, not the one Prepare chose:
			// its reports must find the record (a chat failover).
			r.Provider = pe.Provider
		}
		n.finish(ctx, env, r, record.StateUnknown, nil)
		n.report(ctx, env, r, e)
		return r, e
	}
	// Not accepted, for certain.
	return n.fail(ctx, acct, env, r, charged, wrap(op, env.Provider, CodeUnavailable, derr))
}

// fail settles a message the vendor certainly did not accept: its charge
// is refunded, exactly once, and its record marked failed, in one step.
// When the ledger fails that step for a reason that may pass, the step is
// retried in the background (refundLater) and the error says so: the
// refund follows once the store answers again.
func (n *Notifier) fail(ctx context.Context, acct *Account, env *Envelope, r *Receipt, charged bool, e *Error) (*Receipt, error) {
	n.noteBounce(ctx, acct, env, e) // suppression.go
	r.Status = record.StateFailed
	r.Provider = e.Provider
	r.Cost = Money{Currency: env.Price.Currency}
	r.ErrorCode, r.Error = CodeOf(e), e.Error()
	var late *lateRefund
	// First, the light step that says the vendor does not have it: back
	// to pending (nothing is in flight). Should the refund's heavier step
	// below fail and the process die before it lands, the reconciler
	// finds a pending record and refunds it, where an attempting one
	// would keep its charge.
	_ = n.markAll(ctx, []*Envelope{env}, record.StatePending)
	u := store.Update{State: record.StateFailed, At: n.now(),
		Provider: r.Provider, Attempts: r.Attempts, ErrorCode: string(r.ErrorCode), Error: r.Error, Tried: r.Tried}
	moved, err := n.move(ctx, acct.ID, env.ID, u)
	switch {
	case err == nil:
		if charged {
			n.readBalance(ctx, acct, r)
		}
	case CodeOf(err) == CodeConflict && moved.State == record.StateFailed:
		// Failed already, by a report or the reconciler: what stands is
		// what that step left (a report may have kept the charge).
		r.Cost = moved.Cost()
	case passing(err):
		// The store is failing now (unreachable, timing out): the record
		// stays pending (or attempting, if that step failed too) and the
		// charge stands, for now.
		r.Cost = env.Price
		late = &lateRefund{account: acct.ID, id: env.ID, u: u, refusal: *e}
		e.Err = fmt.Errorf("%w; %s is not written yet (%w) and is retried for up to %v, until the store takes it",
			e.Err, refundOf(env, charged), &StoreError{Store: "ledger", Err: err}, n.settleAfter)
		r.Error = e.Error()
	default:
		r.Cost = env.Price
		e.Err = fmt.Errorf("%w; %s could not be written (%w)", e.Err, refundOf(env, charged), &StoreError{Store: "ledger", Err: err})
		r.Error = e.Error()
	}
	n.report(ctx, env, r, e)
	if late != nil {
		late.receipt = *r // a copy: the caller owns r from here on
		n.refundLater(ctx, late)
	}
	return r, e
}

// refundOf names the step that refunds env's charge: the move of its
// record into failed, which refunds when charged is set.
func refundOf(env *Envelope, charged bool) string {
	if charged {
		return "its refund of " + env.Price.String()
	}
	return "its record's move to failed"
}

// readBalance sets r.Balance to the account's balance after a refund or
// a price cut that the ledger made.
func (n *Notifier) readBalance(ctx context.Context, acct *Account, r *Receipt) {
	sctx := detached(ctx)
	defer sctx.release()
	if b, err := n.ledger.Balance(sctx, acct.ID); err == nil {
		r.Balance = b.Available
	}
}

// report finishes r with err, if any, and tells the observers, with the
// event of r's status. env is nil for a dual
// OTP's combined receipt.
func (n *Notifier) report(ctx context.Context, env *Envelope, r *Receipt, err error) {
	if err != nil {
		r.ErrorCode = CodeOf(err)
		r.Error = err.Error()
	}
	e := Event{Type: r.Status, Envelope: env, Receipt: r, Err: err}
	if env != nil && env.Price.Minor > r.Cost.Minor {
		// What was charged and no longer is: a refund, a failover's price cut.
		e.Refund = Money{Minor: env.Price.Minor - r.Cost.Minor, Currency: env.Price.Currency}
	}
	n.observe(ctx, e)
}

// open writes the message's record, opened at now, and its charge,
// env.Price (zero when unmetered), in one step. It reports the balance
// after the charge and whether money moved.
//
// The record opens attempting (record.OpenStates): the vendor call follows
// at once, and one write fewer per send is a third of a send's commits on
// PostgreSQL. A crash after the opening leaves the record attempting,
// which the reconciler settles unknown with its charge, as it would after
// a crash during the vendor call; a record that opened pending and was
// then marked attempting left the same window between the mark and the
// call. When the store's answer is lost (unreachable, context ended
// mid-call), unopened fails the record, which refunds it if it is there:
// money never stays taken without a record.
func (n *Notifier) open(ctx context.Context, op string, acct *Account, p prepared, now time.Time) (Money, bool, error) {
	env := p.env
	m := &Message{ID: env.ID, Account: acct.ID, Kind: env.Kind, Request: p.via, To: env.To, Country: env.Country,
		Provider: env.Provider, IdempotencyKey: env.IdempotencyKey, Domain: env.Domain,
		Units: env.Units, Metered: n.pricer != nil, Charge: env.Price, Note: p.note, CreatedAt: now, UpdatedAt: now,
		State: record.StateAttempting}
	m.Resend, m.Fallback = env.Resend, p.fallback
	if m.Request == "" {
		m.Request = env.Kind
	}
	b, err := n.ledger.Open(ctx, m)
	if err == nil {
		return b.Available, env.Price.Minor > 0, nil // not m's: Open took m
	}
	switch CodeOf(err) {
	case CodeInsufficientFunds, CodeNotFound, CodeInvalidArgument, CodeConflict:
		return Money{}, false, storeFailure(op, "ledger", err) // definite: nothing written
	}
	e := storeFailure(op, "ledger", err)
	n.unopened(ctx, acct, env, now, e)
	return Money{}, false, e
}

// unopened settles the record of env, whose opening's answer was lost
// (e): the record and its debit are both there or both missing, and the
// vendor was not called. Failing the record refunds it if it is there,
// by the steps fail takes for a refusal: back to pending, the durable
// mark that nothing is in flight, then into failed, retried in the
// background while the store fails for a reason that may pass. A record
// left pending is refunded by the reconciler; what stays open is what
// laterefund.go says of a refusal's refund.
func (n *Notifier) unopened(ctx context.Context, acct *Account, env *Envelope, now time.Time, e *Error) {
	_ = n.markAll(ctx, []*Envelope{env}, record.StatePending)
	u := store.Update{State: record.StateFailed, At: n.now(), ErrorCode: string(e.Code),
		Error: "the record could not be confirmed: " + e.Error()}
	_, err := n.move(ctx, acct.ID, env.ID, u)
	if err == nil || !passing(err) {
		return // failed and refunded, or never written (NotFound)
	}
	r := n.receiptOf(acct, env, now)
	r.Status, r.Cost, r.ErrorCode, r.Error = record.StateFailed, env.Price, e.Code, e.Error()
	n.refundLater(ctx, &lateRefund{account: acct.ID, id: env.ID, u: u, refusal: *e, receipt: *r})
}

// finish moves the record of an accepted or unknown message to its final
// state, and reports whether it is there. A record that cannot be written
// stays attempting, and the reconciler makes it unknown: the charge
// stands either way, which is right for both.
func (n *Notifier) finish(ctx context.Context, env *Envelope, r *Receipt, to record.State, reprice *Money) (store.Moved, bool) {
	moved, err := n.move(ctx, env.Account.ID, env.ID, store.Update{State: to, At: n.now(),
		Provider: r.Provider, ProviderMessageID: r.ProviderMessageID, Gateway: r.Gateway,
		Attempts: r.Attempts, ErrorCode: string(r.ErrorCode), Error: r.Error, Note: r.Note, Reprice: reprice,
		Tried: r.Tried})
	if err != nil && moved.State != to {
		r.Note = joinNote(r.Note, "message record: "+err.Error())
		return moved, false
	}
	return moved, true
}

// move applies u to the record, detached from the caller's context, and
// tries again while the store fails for a reason that may pass. A
// Conflict answers where the record stands.
func (n *Notifier) move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	var m store.Moved
	tried := false
	err := settleRetry(ctx, func(sctx context.Context) (err error) {
		m, err = n.ledger.Move(sctx, account, id, u)
		if tried && CodeOf(err) == CodeConflict && m.State == u.State && sameInstant(m.UpdatedAt, u.At) {
			return nil // the try whose answer was lost did move it
		}
		tried = true
		return err
	})
	return m, err
}

// sameInstant reports whether a and b are one time as a store keeps it:
// PostgreSQL keeps microseconds.
func sameInstant(a, b time.Time) bool {
	return a.Sub(b).Abs() < time.Microsecond
}

// detached returns the context of a store call that must complete even
// when the caller has gone: ctx's values without its cancellation, bounded
// by settleTimeout from when the store first waits on it (Done) or asks
// its deadline; a store that only asks Err (memstore) runs in
// microseconds and is not bounded, so the send does not read the clock
// for it. An attemptCtx, which pays for a timer only when a store waits on
// Done (a database does), and which ignores ctx's end itself rather than
// through context.WithoutCancel, which would cost each store call of a
// send an allocation. The caller releases it.
func detached(ctx context.Context) *attemptCtx {
	return &attemptCtx{Context: ctx, detached: true}
}

// settleRetry runs fn, each time under a context of its own (detached),
// up to three times while it fails with a code that may pass
// (Unavailable, DeadlineExceeded, Internal). fn must be idempotent.
func settleRetry(ctx context.Context, fn func(context.Context) error) error {
	var err error
	for try := 0; try < 3; try++ {
		sctx := detached(ctx)
		err = fn(sctx)
		sctx.release()
		if err == nil {
			return nil
		}
		if !passing(err) {
			return err
		}
	}
	return err
}

// passing reports whether a store's error may pass if the call is made
// again: Unavailable, DeadlineExceeded or Internal.
func passing(err error) bool {
	c := CodeOf(err)
	return c == CodeUnavailable || c == CodeDeadlineExceeded || c == CodeInternal
}

// cheaperPrice returns the price of env through the route and provider
// used, when the channel delivered it through a route (a chat failover to
// the other gateway) or a provider (a failover to the next) cheaper than
// the one it was priced and charged for; nil otherwise. A dearer one is
// not charged extra: the caller agreed to the first price, and asking for
// more after delivery could fail for want of funds.
func (n *Notifier) cheaperPrice(acct *Account, env *Envelope, route, provider string) *Money {
	alt := *env
	if route != "" {
		alt.Route = route
	}
	alt.Provider = provider
	price, err := n.pricer.Price(acct, &alt)
	if err != nil || price.Minor < 0 || price.Minor >= env.Price.Minor || !price.Currency.Same(env.Price.Currency) {
		return nil // no cheaper price in the currency charged: the charge stands
	}
	return &price
}

func (n *Notifier) observe(ctx context.Context, e Event) {
	for _, o := range n.observers {
		safeObserve(ctx, o, e)
	}
}

func safeObserve(ctx context.Context, o Observer, e Event) {
	defer func() { _ = recover() }() // an observer's bug must not break a send
	o.Observe(ctx, e)
}

// deliver calls the channel until the message is accepted, its outcome
// is unknown, it is refused for good, the attempts run out, or the retry
// would outlive the caller's deadline. A caller's context that has ended
// before an attempt stops the send there: the vendor was not called again,
// so that is a certain non-acceptance. Each attempt walks env's
// providers (walk) when the channel offers several or breakers watch
// them; the provider calls go to *tried when it offers several.
func (n *Notifier) deliver(ctx context.Context, ch Channel, env *Envelope, tried *[]record.Attempt) (*Result, int, record.State, error) {
	var res *Result
	if len(env.Providers) <= 1 && n.breakers == nil {
		tries := 0
		attempts, outcome, err := n.retrying(ctx, []*Envelope{env}, func(ctx context.Context, timeout time.Duration) (err error) {
			tries++
			ctx, sp := n.startAttempt(ctx, env.Provider, tries, 0)
			res, err = attemptDeliver(ctx, ch, env, timeout)
			sp.endAttempt(err)
			return err
		})
		return res, attempts, outcome, err
	}
	w := walk{n: n, ch: ch, env: env, marked: env.Provider}
	if len(env.Providers) > 1 {
		w.tried = tried
	}
	_, outcome, err := n.retrying(ctx, []*Envelope{env}, func(ctx context.Context, _ time.Duration) (err error) {
		res, err = w.attempt(ctx)
		return err
	})
	return res, w.calls, outcome, err
}

// walk is one message's way through its providers (Envelope.Providers,
// or Provider alone) over the attempts of deliver.
type walk struct {
	n      *Notifier
	ch     Channel
	env    *Envelope
	marked string            // the provider the record names: the one in flight
	calls  int               // provider calls made
	tried  *[]record.Attempt // nil: not recorded (one provider)
}

// attempt calls env's providers in order, past those whose breaker is
// open, until one accepts the message, may have it (an unknown outcome:
// calling the next could send it twice) or refuses it for good; after a
// certain, temporary refusal it goes on to the next. The error names the
// provider it came from. When every breaker is open, nothing is called
// and the error is Unavailable.
func (w *walk) attempt(ctx context.Context) (*Result, error) {
	names := w.env.Providers
	if len(names) == 0 {
		one := [1]string{w.env.Provider}
		names = one[:]
	}
	var last error
	for _, name := range names {
		if cerr := ctx.Err(); cerr != nil {
			// The caller left before this provider was called: a certain
			// non-acceptance, which retrying turns into the context's
			// error.
			if last == nil {
				last = &Error{Code: CodeUnavailable, Provider: name, Err: cerr}
			}
			return nil, last
		}
		res, err, called := w.call(ctx, name)
		if !called {
			if err != nil { // the record could not be handed over: stop here
				if last == nil {
					last = err
				}
				return nil, last
			}
			continue
		}
		switch OutcomeOf(err) {
		case record.StateSent:
			if res.Provider == "" {
				res.Provider = name
			}
			return res, nil
		case record.StateUnknown:
			return nil, err
		}
		last = err
		if !CodeOf(err).temporary() {
			return nil, err // refused for good: another provider cannot help
		}
	}
	if last == nil {
		return nil, &Error{Code: CodeUnavailable, Provider: w.env.Provider,
			Err: errors.New("every provider of the message is resting after repeated failures (circuit breaker open)")}
	}
	return nil, last
}

// call makes one call of provider name, with an envelope naming it,
// under its attempt timeout, and counts it for the breaker and the
// record. called is false when the breaker kept the call from being made
// (err nil), or the record could not be handed over to the provider (err
// says why: a certain non-acceptance).
func (w *walk) call(ctx context.Context, name string) (res *Result, err error, called bool) {
	n := w.n
	if !n.breakers.allow(name, n.now) {
		return nil, nil, false
	}
	if name != w.marked {
		if err := n.handOver(ctx, w.env, name); err != nil {
			n.breakers.release(name)
			return nil, &Error{Code: CodeUnavailable, Provider: name, Err: err}, false
		}
		w.marked = name
	}
	env := w.env
	if name != env.Provider {
		c := *env // the next provider's copy: an envelope never changes once delivered
		c.Provider = name
		env = &c
	}
	actx, sp := n.startAttempt(ctx, name, w.calls+1, 0)
	res, err = attemptDeliver(actx, w.ch, env, n.attemptTimeout(name))
	if err != nil {
		// Named by the provider it came from: the record and its reports
		// must find the provider that refused or may have the message. A
		// bare error is an unknown outcome, as OutcomeOf reads it.
		err = wrap("", name, CodeOutcomeUnknown, err)
	}
	sp.endAttempt(err)
	w.calls++
	outcome := OutcomeOf(err)
	if w.tried != nil {
		*w.tried = append(*w.tried, record.Attempt{Provider: name, Outcome: outcome, ErrorCode: string(CodeOf(err)), At: n.now()})
	}
	if ctx.Err() != nil {
		n.breakers.release(name) // the caller left: that says nothing of the provider
	} else if changed, open := n.breakers.done(name, outcome == record.StateUnknown || outcome == record.StateFailed && CodeOf(err).temporary(), n.now); changed {
		var cause error
		if open {
			cause = err
		}
		n.breakerChanged(ctx, name, open, cause)
	}
	return res, err, true
}

// retrying makes attempts through the attempt function of the provider of
// envs (one message, or one batch), with the retry policy deliver
// describes, and returns how many it made, the outcome and the last error.
// While it waits to try again, the records of envs are pending (see
// waitToRetry).
func (n *Notifier) retrying(ctx context.Context, envs []*Envelope, try func(ctx context.Context, timeout time.Duration) error) (int, record.State, error) {
	timeout := n.attemptTimeout(envs[0].Provider)
	var last error
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			return attempt - 1, record.StateFailed, contextError(cerr, last)
		}
		err := try(ctx, timeout)
		switch OutcomeOf(err) {
		case record.StateSent:
			return attempt, record.StateSent, nil
		case record.StateUnknown:
			return attempt, record.StateUnknown, err
		}
		last = err
		if cerr := ctx.Err(); cerr != nil {
			return attempt, record.StateFailed, contextError(cerr, err)
		}
		// Certainly not accepted here, so IsRetryable comes down to
		// whether the code is temporary.
		if attempt >= n.retry.MaxAttempts || !CodeOf(err).temporary() {
			return attempt, record.StateFailed, err
		}
		delay := n.backoff(attempt, err)
		if delay < 0 {
			return attempt, record.StateFailed, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= delay {
			return attempt, record.StateFailed, err // the retry could not finish in time
		}
		if werr := n.waitToRetry(ctx, envs, delay, err); werr != nil {
			return attempt, record.StateFailed, werr
		}
	}
}

// attemptTimeout is the timeout of one call of provider: its own
// (WithProviderTimeout), else WithTimeout's.
func (n *Notifier) attemptTimeout(provider string) time.Duration {
	if d, ok := n.providerTimeouts[provider]; ok {
		return d
	}
	return n.timeout
}

// waitToRetry waits delay before another attempt at envs, which the
// vendor has just certainly refused, for now. Nothing is in flight during
// the wait, so the records go back to pending for it: a process that dies
// meanwhile leaves them to the reconciler, which refunds pending records,
// rather than attempting ones, whose charge it keeps. They move to
// attempting again before the next call, and the vendor is called only if
// they did. A record whose move to pending fails waits attempting, as
// before this step existed: never worse. An error means not to call the
// vendor again: the caller left during the wait, or a record could not be
// marked attempting; the records are then settled as certainly not
// accepted, with last, the refusal, as the cause.
func (n *Notifier) waitToRetry(ctx context.Context, envs []*Envelope, delay time.Duration, last error) error {
	_ = n.markAll(ctx, envs, record.StatePending)
	t := time.NewTimer(delay)
	select {
	case <-ctx.Done():
		t.Stop()
		return contextError(ctx.Err(), last)
	case <-t.C:
	}
	if err := n.markAll(ctx, envs, record.StateAttempting); err != nil {
		return fmt.Errorf("%w; not tried again: %w", last, err)
	}
	return nil
}

// handOver makes env's record name provider, the next one to be called,
// before it is called: back to pending (nothing is in flight, as while
// waiting to retry), then attempting with provider. A send that dies
// during the call so leaves a record naming the provider that may have
// the message, whose reports then find it; one that dies between the two
// steps leaves it pending, refunded by the reconciler. An error means
// not to call provider.
func (n *Notifier) handOver(ctx context.Context, env *Envelope, provider string) error {
	if err := n.markAll(ctx, []*Envelope{env}, record.StatePending); err != nil {
		return fmt.Errorf("not offered to %s: %w", provider, err)
	}
	_, err := n.move(ctx, env.Account.ID, env.ID, store.Update{State: record.StateAttempting, At: n.now(), Provider: provider})
	if err != nil {
		return fmt.Errorf("not offered to %s: the record could not name it: %w", provider, &StoreError{Store: "ledger", Err: err})
	}
	return nil
}

// markAll moves the records of envs to state, detached from the caller's
// context; a record already there is left as it is. It returns the first
// failure.
func (n *Notifier) markAll(ctx context.Context, envs []*Envelope, state record.State) error {
	sctx := detached(ctx)
	defer sctx.release()
	var first error
	for _, env := range envs {
		m, err := n.ledger.Move(sctx, env.Account.ID, env.ID, store.Update{State: state, At: n.now()})
		if err != nil && !(CodeOf(err) == CodeConflict && m.State == state) && first == nil {
			first = &StoreError{Store: "ledger", Err: err}
		}
	}
	return first
}

// attemptDeliver makes one attempt under the attempt timeout (attempt).
// A success without a message ID is a bug of the provider's: CodeInternal,
// which OutcomeOf reads as unknown.
func attemptDeliver(ctx context.Context, ch Channel, env *Envelope, timeout time.Duration) (*Result, error) {
	res, err := attempt(ctx, timeout, func(ctx context.Context) (*Result, error) { return ch.Deliver(ctx, env) })
	if err == nil && (res == nil || res.ProviderMessageID == "") {
		return nil, &Error{Code: CodeInternal, Err: errors.New("provider reported success without a message ID")}
	}
	return res, err
}

// attempt makes one call under the attempt timeout. A panic is a bug of
// the provider's: CodeInternal, which OutcomeOf reads as unknown, since
// the provider may have written the request before it went wrong. The
// Internal cause tells the HTTP adapter to keep the details for the log.
func attempt[T any](ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (res T, err error) {
	if actx := attemptContext(ctx, timeout); actx != nil {
		defer actx.release()
		ctx = actx
	}
	defer func() {
		if p := recover(); p != nil {
			var none T
			res, err = none, &Error{Code: CodeInternal, Err: fmt.Errorf("provider panicked: %v", p)}
		}
	}()
	res, err = call(ctx)
	return res, attemptError(ctx, err)
}

// attemptContext returns ctx bounded by timeout, when that ends before
// ctx does, for the caller to release; nil otherwise.
func attemptContext(ctx context.Context, timeout time.Duration) *attemptCtx {
	if timeout > 0 {
		deadline := time.Now().Add(timeout)
		if dl, ok := ctx.Deadline(); !ok || dl.After(deadline) {
			return newAttemptCtx(ctx, deadline)
		}
	}
	return nil
}

// attemptError keeps both causes when the attempt timed out and the
// provider returned an error of its own that does not say the vendor
// refused.
func attemptError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && OutcomeOf(err) == record.StateUnknown &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
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

// backoff returns the delay before the retry after attempt, or -1 when a
// vendor's RetryAfter is longer than the policy allows.
func (n *Notifier) backoff(attempt int, err error) time.Duration {
	d := n.retry.BaseDelay << (attempt - 1)
	if d > n.retry.MaxDelay || d <= 0 {
		d = n.retry.MaxDelay
	}
	d = d/2 + rand.N(d/2+1)
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > d {
		if e.RetryAfter > n.retry.MaxDelay {
			return -1
		}
		d = e.RetryAfter
	}
	return d
}

// contextError classifies a send that ended with the caller's context,
// keeping the last provider error as context for the reader.
func contextError(cerr, last error) error {
	code := CodeCanceled
	if errors.Is(cerr, context.DeadlineExceeded) {
		code = CodeDeadlineExceeded
	}
	if last == nil || errors.Is(last, cerr) {
		return &Error{Code: code, Err: cerr}
	}
	return &Error{Code: code, Err: fmt.Errorf("%w (last attempt: %v)", cerr, last)}
}

// wrap returns err as an *Error of operation op, wrapping it at most once:
// an *Error at the top of the chain is copied with Op and Provider filled
// in; an *Error deeper in the chain lends its code; context errors become
// Canceled or DeadlineExceeded; anything else gets the code def.
func wrap(op, provider string, def Code, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		out := *e
		if e != err { // wrapped by the caller: keep the whole chain as cause
			out.Err = err
		}
		if out.Op == "" {
			out.Op = op
		}
		if out.Provider == "" {
			out.Provider = provider
		}
		return &out
	}
	code := def
	switch {
	case errors.Is(err, context.Canceled):
		code = CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		code = CodeDeadlineExceeded
	}
	return &Error{Code: code, Op: op, Provider: provider, Err: err}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
