package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
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
}

// send runs one request through the whole pipeline: idempotency, prepare,
// limits, charge, deliver, settle, record.
func (n *Notifier) send(ctx context.Context, op string, req Request) (*Receipt, error) {
	accountID, key := req.common()
	acct, err := n.account(ctx, op, accountID)
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		p, err := n.prepare(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		undo, err := n.admit(ctx, op, acct, p.env)
		if err != nil {
			return nil, err
		}
		r, err := n.dispatch(ctx, op, acct, p)
		undo.unless(r)
		return r, err
	}
	if key == "" || n.idem == nil {
		return run()
	}
	// The key is looked up first: a repeat gets the first receipt without
	// being prepared again (see fingerprintOf).
	return n.idempotent(ctx, op, acct, key, fingerprintOf(req), run)
}

// prepare validates, normalises and prices req: every check that can fail
// without side effects, so that a bad request is refused before it counts
// against a limit or moves money (a key it reserved is released).
func (n *Notifier) prepare(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	ch := n.channels[req.Kind()]
	if ch == nil {
		return prepared{}, &Error{Code: CodeUnavailable, Op: op, Err: fmt.Errorf("no %s channel is configured", req.Kind())}
	}
	env, err := safePrepare(ctx, ch, acct, req)
	if err != nil {
		return prepared{}, wrap(op, "", CodeInternal, err)
	}
	_, env.IdempotencyKey = req.common()
	env.Account = acct
	if env.Kind == "" {
		env.Kind = req.Kind()
	}
	if env.Units <= 0 {
		env.Units = 1
	}
	if n.wallet != nil {
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
	prev, err := n.idem.Reserve(ctx, acct.ID, key, fp)
	if err != nil {
		return nil, storeFailure(op, "idempotency", err)
	}
	if prev != nil {
		return prev, replayError(op, prev)
	}
	r, sendErr := fn()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if r == nil || r.Status == StatusFailed {
		// Nothing went out, so the key is freed for a retry; money stays
		// taken only when the refund failed, which the receipt says (the
		// durable record that will settle it is still to come). If the
		// release fails the key stays reserved until the store lets it go,
		// and repeats get Conflict: never a double send.
		_ = n.idem.Release(sctx, acct.ID, key)
		return r, sendErr
	}
	if err := n.idem.Complete(sctx, acct.ID, key, r); err != nil {
		// The message went out (or may have) and is paid for; failing now
		// would invite a second send. The key stays reserved, so repeats
		// get Conflict. The delivery log may hold r already, so the note
		// goes on a copy.
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
// none for a sent one; OutcomeUnknown again for an unknown one, so that a
// repeat is answered as the first request was.
func replayError(op string, r *Receipt) error {
	if r.Status != StatusUnknown {
		return nil
	}
	return &Error{Code: CodeOutcomeUnknown, Op: op, Provider: r.Provider,
		Err: fmt.Errorf("a repeat of message %s, whose outcome is unknown: %s", r.MessageID, r.Error)}
}

// dispatch charges, delivers, settles and records one prepared message.
// Its receipt's status is the outcome: sent, failed (refunded) or unknown
// (charged).
func (n *Notifier) dispatch(ctx context.Context, op string, acct *Account, p prepared) (*Receipt, error) {
	env := p.env
	env.ID = n.newID()

	// Charge: a caller that has gone already gets nothing charged.
	var charged bool
	var balance Money
	if n.wallet != nil {
		if err := ctx.Err(); err != nil {
			return nil, wrap(op, "", CodeCanceled, err)
		}
		var err error
		balance, charged, err = n.charge(ctx, acct, env)
		if err != nil {
			return nil, storeFailure(op, "wallet", err)
		}
	}
	n.observe(ctx, Event{Type: EventAccepted, Envelope: env})

	// Deliver, with retries of certain, temporary refusals.
	res, attempts, outcome, derr := n.deliver(ctx, p.ch, env)

	r := &Receipt{
		MessageID:      env.ID,
		Account:        acct.ID,
		Kind:           env.Kind,
		To:             env.To,
		Units:          env.Units,
		Metered:        n.wallet != nil,
		Balance:        balance,
		Attempts:       attempts,
		Domain:         env.Domain,
		IdempotencyKey: env.IdempotencyKey,
		CreatedAt:      n.now(),
		Provider:       env.Provider,
	}
	switch outcome {
	case OutcomeAccepted:
		r.Status = StatusSent
		if res.Provider != "" {
			r.Provider = res.Provider
		}
		r.ProviderMessageID = res.ProviderMessageID
		r.Gateway = res.Gateway
		r.Note = res.Note
		r.Cost = env.Price
		if charged && env.Chat != nil && res.Gateway != "" && res.Gateway != env.Chat.Gateway {
			n.repriceFailover(ctx, acct, env, res.Gateway, r)
		}
		n.report(ctx, env, r, nil)
		return r, nil

	case OutcomeUnknown:
		// The vendor may have it: the charge stands and nothing retries it.
		e := unknownError(op, env.Provider, derr)
		r.Status = StatusUnknown
		r.Cost = env.Price
		n.report(ctx, env, r, e)
		return r, e
	}

	// Not accepted, for certain: refund the charge, exactly once.
	e := wrap(op, env.Provider, CodeUnavailable, derr)
	r.Status = StatusFailed
	r.Provider = e.Provider
	r.Cost = Money{Currency: env.Price.Currency}
	if charged {
		if b, err := n.refund(ctx, acct, env); err != nil {
			e.Err = fmt.Errorf("%w; refund of %s failed: %v", e.Err, env.Price, err)
			r.Cost = env.Price
		} else {
			r.Balance = b.Available
		}
	}
	n.report(ctx, env, r, e)
	return r, e
}

// report finishes r with err, if any, records it in the delivery log and
// tells the observers, with the event of r's status. env is nil for a dual
// OTP's combined receipt.
func (n *Notifier) report(ctx context.Context, env *Envelope, r *Receipt, err error) {
	if err != nil {
		r.ErrorCode = CodeOf(err)
		r.Error = err.Error()
	}
	n.record(ctx, r)
	n.observe(ctx, Event{Type: eventOf(r.Status), Envelope: env, Receipt: r, Err: err})
}

// eventOf is the event that reports a receipt of status s.
func eventOf(s Status) EventType {
	switch s {
	case StatusSent:
		return EventSent
	case StatusUnknown:
		return EventUnknown
	}
	return EventFailed
}

// charge debits env.Price. It reports whether money moved. A debit whose
// outcome is unknown (store unreachable, context ended mid-call) is
// resolved by asking again with the same ref, which either returns the
// recorded debit or makes it now; then it is refunded, so a failed charge
// never leaves money taken without a receipt.
func (n *Notifier) charge(ctx context.Context, acct *Account, env *Envelope) (Money, bool, error) {
	if env.Price.Minor <= 0 {
		b, err := n.wallet.Balance(ctx, acct.ID)
		return b.Available, false, err
	}
	b, err := n.wallet.Debit(ctx, acct.ID, env.Price, env.ID)
	if err == nil {
		return b.Available, true, nil
	}
	switch CodeOf(err) {
	case CodeInsufficientFunds, CodeNotFound, CodeInvalidArgument:
		return Money{}, false, err // definite: nothing moved
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if _, again := n.wallet.Debit(sctx, acct.ID, env.Price, env.ID); again == nil {
		if _, rerr := n.refund(ctx, acct, env); rerr != nil {
			return Money{}, false, fmt.Errorf("%w; refund of uncertain debit failed: %v", err, rerr)
		}
	}
	return Money{}, false, err
}

// repriceFailover settles a chat message that a failover delivered through
// another gateway than the one it was priced for: when that gateway is
// cheaper, the difference is credited back under ref "adjust:<id>", so the
// message costs what its route cost. A dearer gateway is not charged extra:
// the caller agreed to the first price, and asking for more after delivery
// could fail for want of funds.
func (n *Notifier) repriceFailover(ctx context.Context, acct *Account, env *Envelope, used ChatGateway, r *Receipt) {
	alt, chat := *env, *env.Chat
	chat.Gateway = used
	alt.Chat = &chat
	price, err := n.pricer.Price(acct, &alt)
	if err != nil || price.Minor >= env.Price.Minor {
		return
	}
	diff := Money{Minor: env.Price.Minor - price.Minor, Currency: env.Price.Currency}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	b, err := n.wallet.Credit(sctx, acct.ID, diff, "adjust:"+env.ID)
	if err != nil {
		r.Note = joinNote(r.Note, "price adjustment for the "+string(used)+" gateway failed: "+err.Error())
		return
	}
	r.Cost, r.Balance = price, b.Available
}

// refund credits env.Price back under ref "refund:<id>". The ref makes the
// credit idempotent in the store, so retrying a refund whose answer was
// lost cannot pay back twice.
func (n *Notifier) refund(ctx context.Context, acct *Account, env *Envelope) (Balance, error) {
	base := context.WithoutCancel(ctx)
	var err error
	for try := 0; try < 3; try++ {
		sctx, cancel := context.WithTimeout(base, settleTimeout)
		var b Balance
		b, err = n.wallet.Credit(sctx, acct.ID, env.Price, "refund:"+env.ID)
		cancel()
		if err == nil {
			return b, nil
		}
		if c := CodeOf(err); c != CodeUnavailable && c != CodeDeadlineExceeded && c != CodeInternal {
			break
		}
	}
	return Balance{}, err
}

func (n *Notifier) record(ctx context.Context, r *Receipt) {
	if n.deliveries == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	if err := n.deliveries.Record(sctx, r); err != nil {
		r.Note = joinNote(r.Note, "delivery log: "+err.Error())
	}
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
// so that is a certain non-acceptance.
func (n *Notifier) deliver(ctx context.Context, ch Channel, env *Envelope) (*Result, int, Outcome, error) {
	timeout := n.timeout
	if d, ok := n.providerTimeouts[env.Provider]; ok {
		timeout = d
	}
	var last error
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			return nil, attempt - 1, OutcomeNotAccepted, contextError(cerr, last)
		}
		res, err := attemptDeliver(ctx, ch, env, timeout)
		switch OutcomeOf(err) {
		case OutcomeAccepted:
			return res, attempt, OutcomeAccepted, nil
		case OutcomeUnknown:
			return nil, attempt, OutcomeUnknown, err
		}
		last = err
		if cerr := ctx.Err(); cerr != nil {
			return nil, attempt, OutcomeNotAccepted, contextError(cerr, err)
		}
		// Certainly not accepted here, so IsRetryable comes down to
		// whether the code is temporary.
		if attempt >= n.retry.MaxAttempts || !CodeOf(err).Temporary() {
			return nil, attempt, OutcomeNotAccepted, err
		}
		delay := n.backoff(attempt, err)
		if delay < 0 {
			return nil, attempt, OutcomeNotAccepted, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= delay {
			return nil, attempt, OutcomeNotAccepted, err // the retry could not finish in time
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, attempt, OutcomeNotAccepted, contextError(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// attemptDeliver makes one attempt under the attempt timeout. A panic, or
// a success without a message ID, is a bug of the provider's: CodeInternal,
// which OutcomeOf reads as unknown, since the provider may have written
// the request before it went wrong. The Internal cause tells the HTTP
// adapter to keep the details for the log.
func attemptDeliver(ctx context.Context, ch Channel, env *Envelope, timeout time.Duration) (res *Result, err error) {
	if timeout > 0 {
		deadline := time.Now().Add(timeout)
		if dl, ok := ctx.Deadline(); !ok || dl.After(deadline) {
			actx := newAttemptCtx(ctx, deadline)
			defer actx.release()
			ctx = actx
		}
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &Error{Code: CodeInternal, Err: fmt.Errorf("provider panicked: %v", p)}
		}
	}()
	res, err = ch.Deliver(ctx, env)
	if err == nil && (res == nil || res.ProviderMessageID == "") {
		return nil, &Error{Code: CodeInternal, Err: errors.New("provider reported success without a message ID")}
	}
	if err != nil && ctx.Err() != nil && OutcomeOf(err) == OutcomeUnknown &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		// The attempt timed out and the provider returned an error of its
		// own that does not say the vendor refused: keep both.
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return res, err
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
