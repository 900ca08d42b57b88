package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The deliver step: the provider calls of one envelope, each under its
// own deadline (attemptCtx), with capped, jittered retries of certain,
// temporary refusals, failover along Envelope.Providers and the circuit
// breakers (WithBreaker) that skip a provider that keeps failing.

// deliver calls the channel until the message is accepted, its outcome
// is unknown, it is refused for good, the attempts run out, or the retry
// would outlive the caller's deadline. A caller's context that has ended
// before an attempt stops the send there: the vendor was not called again,
// so that is a certain non-acceptance. Each attempt walks env's
// providers (walk) when the channel offers several or breakers watch
// them; the provider calls go to *tried when it offers several, or when
// *tried lists calls already (a batch that failed over: failBatchOver).
func (n *Notifier) deliver(ctx context.Context, ch Channel, env *Envelope, tried *[]record.Attempt) (*Result, int, record.State, error) {
	var res *Result
	listed := len(*tried) > 0
	if len(env.Providers) <= 1 && n.breakers == nil && !listed {
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
	if len(env.Providers) > 1 || listed {
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

// startAttempt starts the span of one provider call: attempt number
// (from 1), or of a batch of size messages when batch is above zero.
func (n *Notifier) startAttempt(ctx context.Context, provider string, number, batch int) (context.Context, span) {
	ctx, sp := n.start(ctx, spanAttempt, false)
	switch {
	case !sp.recording():
	case batch > 0:
		sp.s.SetAttributes(str(keyProvider, provider), num(keyAttempt, number), num(keyBatch, batch))
	default:
		sp.s.SetAttributes(str(keyProvider, provider), num(keyAttempt, number))
	}
	return ctx, sp
}

// endAttempt ends an attempt's span with its outcome: accepted, refused
// (certainly not accepted) or unknown, and the code of a failure. A bare
// error is an unknown outcome, as OutcomeOf reads it.
func (sp span) endAttempt(err error) {
	if !sp.recording() {
		sp.end(nil)
		return
	}
	outcome := "accepted"
	switch OutcomeOf(err) {
	case record.StateFailed:
		outcome = "refused"
	case record.StateUnknown:
		outcome = "unknown"
	}
	if err == nil {
		sp.s.SetAttributes(str(keyOutcome, outcome))
		sp.s.End()
		return
	}
	code := CodeOutcomeUnknown
	if e := (*Error)(nil); errors.As(err, &e) {
		code = orInternal(e.Code)
	} else if c := CodeOf(err); c == CodeCanceled || c == CodeDeadlineExceeded {
		code = c
	}
	sp.s.SetAttributes(str(keyOutcome, outcome), str(keyErrorCode, string(code)))
	sp.s.Fail(code)
	sp.s.End()
}

// attemptCtx bounds one delivery attempt by a deadline, like
// context.WithDeadline, but pays for a timer and a done channel only when
// somebody waits on Done. Providers that make network calls wait on Done
// (and then the cost is noise beside the call); in-process providers only
// ask Err, and for them context.WithDeadline's four allocations and timer
// were a third of the cost of a whole send.
type attemptCtx struct {
	context.Context // the caller's context
	deadline        time.Time
	// detached: the parent's values without its cancellation, as
	// context.WithoutCancel gives, without that allocation (see detached).
	// Its deadline is set, settleTimeout on, only when a store first asks
	// for it (Deadline, Done): a store that only asks Err (memstore) runs
	// in microseconds, and a send would otherwise read the clock twice
	// more for each store call.
	detached bool
	armed    atomic.Bool // a detached context's deadline is set

	// state is why the attempt ended: running (0), deadline, parentDone or
	// released. Err reads it without the lock, as most attempts only ask Err.
	state atomic.Int32

	mu         sync.Mutex
	done       chan struct{} // made on the first call to Done
	stopTimer  func() bool
	stopParent func() bool
}

const (
	running int32 = iota
	deadlinePassed
	parentDone
	released
)

func newAttemptCtx(parent context.Context, deadline time.Time) *attemptCtx {
	return &attemptCtx{Context: parent, deadline: deadline}
}

// Deadline returns the attempt's deadline, which is never later than the
// parent's (newAttemptCtx is used only when it is earlier).
func (c *attemptCtx) Deadline() (time.Time, bool) {
	if c.detached {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.setDeadline()
	}
	return c.deadline, true
}

// setDeadline sets a detached context's deadline, once. Called with c.mu
// held.
func (c *attemptCtx) setDeadline() {
	if !c.armed.Load() {
		c.deadline = time.Now().Add(settleTimeout)
		c.armed.Store(true) // after the write: check reads armed, then deadline
	}
}

// Done returns a channel closed when the attempt ends: at the deadline,
// when the parent is done, or at release.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.detached {
		c.setDeadline()
	}
	if c.state.Load() == running {
		if why := c.check(); why != running {
			c.state.Store(why)
		}
	}
	if c.state.Load() != running {
		close(c.done)
		return c.done
	}
	t := time.AfterFunc(time.Until(c.deadline), func() { c.end(deadlinePassed) })
	c.stopTimer = t.Stop
	c.stopParent = func() bool { return false }
	if !c.detached {
		c.stopParent = context.AfterFunc(c.Context, func() { c.end(parentDone) })
	}
	return c.done
}

// Err returns nil while the attempt runs, then the reason it ended. It
// checks the clock and the parent itself, so a caller that never waits on
// Done still sees the deadline.
func (c *attemptCtx) Err() error {
	if c.state.Load() == running {
		if why := c.check(); why != running {
			c.end(why)
		}
	}
	switch c.state.Load() {
	case deadlinePassed:
		return context.DeadlineExceeded
	case parentDone:
		return c.Context.Err()
	case released:
		return context.Canceled
	}
	return nil
}

func (c *attemptCtx) check() int32 {
	if c.detached {
		if !c.armed.Load() {
			return running // no deadline yet: see detached
		}
	} else if c.Context.Err() != nil {
		return parentDone
	}
	if !time.Now().Before(c.deadline) {
		return deadlinePassed
	}
	return running
}

// end records why the attempt ended, once, and wakes those waiting on Done.
func (c *attemptCtx) end(why int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.state.CompareAndSwap(running, why) {
		return
	}
	if c.done != nil {
		close(c.done)
	}
	if c.stopTimer != nil {
		c.stopTimer()
		c.stopParent()
	}
}

// release ends the attempt (as a CancelFunc would) and frees its timer.
func (c *attemptCtx) release() { c.end(released) }

// BreakerPolicy configures the circuit breakers of WithBreaker: one per
// provider, which stops sending to a provider that keeps failing, for a
// while, so that a channel with several providers goes straight to the
// next and a channel with one refuses at once, refunded, rather than
// making every caller wait out a vendor that is down.
type BreakerPolicy struct {
	// Failures is how many failed calls in a row open a provider's
	// breaker. A failed call is a certain, temporary refusal (the vendor
	// down, rate limiting, out of credit) or an unknown outcome (a
	// timeout, a lost answer): each says the provider is in trouble. A
	// permanent refusal (a bad number) says nothing about the provider,
	// and an acceptance closes the count. Default 5.
	Failures int
	// Cooldown is how long an open breaker keeps sends from its
	// provider. Then one send tries it (half open): an acceptance or a
	// permanent refusal closes the breaker, a failure opens it for
	// another Cooldown. Default 30s.
	Cooldown time.Duration
	// OnChange, when not nil, is told when a provider's breaker opens,
	// with the failure that opened it, and when it closes again (cause
	// nil): for metrics and logs (metrics.Observer.BreakerChanged is
	// one). It is called on the goroutine of the send that changed the
	// breaker, must be quick and safe for concurrent use; a panic in it
	// is recovered and ignored.
	OnChange func(ctx context.Context, provider string, open bool, cause error)
}

// WithBreaker gives each provider a circuit breaker with policy p (zero
// fields take their defaults). Without it every send calls its provider,
// however often the provider failed before.
func WithBreaker(p BreakerPolicy) Option {
	return func(n *Notifier) error {
		if p.Failures < 0 || p.Cooldown < 0 {
			return fmt.Errorf("notify: WithBreaker: Failures and Cooldown must not be negative")
		}
		if p.Failures == 0 {
			p.Failures = 5
		}
		if p.Cooldown == 0 {
			p.Cooldown = 30 * time.Second
		}
		n.breakers = &breakers{policy: p, by: make(map[string]*breaker)}
		return nil
	}
}

// breakers are the circuit breakers of a Notifier's providers. Only a
// provider that failed has one (in by), until an acceptance closes it
// again; tracked counts them, so that while every provider is healthy,
// the common case, a send checks and counts its call without a lock. A
// nil *breakers lets every call through.
type breakers struct {
	policy  BreakerPolicy
	tracked atomic.Int64
	mu      sync.Mutex
	by      map[string]*breaker
}

// breaker is one provider's state. Closed: failures counts the failed
// calls in a row. Open: until is when the cooldown ends. Half open (open,
// the cooldown over): probing says a send is trying the provider, and no
// other may until it is done.
type breaker struct {
	failures int
	open     bool
	until    time.Time
	probing  bool
}

// allow reports whether a send may call provider at now(); a true answer
// must be followed by done, or by release when the call was not made.
func (b *breakers) allow(provider string, now func() time.Time) bool {
	if b == nil || b.tracked.Load() == 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.by[provider]
	switch {
	case br == nil || !br.open:
		return true
	case br.probing || now().Before(br.until):
		return false
	}
	br.probing = true // the cooldown is over: this send tries it
	return true
}

// release undoes an allow whose call was not made (the caller left
// first): a probe's turn goes to the next send.
func (b *breakers) release(provider string) {
	if b == nil || b.tracked.Load() == 0 {
		return
	}
	b.mu.Lock()
	if br := b.by[provider]; br != nil {
		br.probing = false
	}
	b.mu.Unlock()
}

// done counts a call of provider, at now(), that failed (failed) or
// not, and reports a change of the breaker: changed, and whether it is
// open now.
func (b *breakers) done(provider string, failed bool, now func() time.Time) (changed, open bool) {
	if b == nil || !failed && b.tracked.Load() == 0 {
		return false, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.by[provider]
	switch {
	case br == nil && !failed:
		return false, false // a healthy provider keeps no state
	case br == nil:
		br = &breaker{}
		b.by[provider] = br
		b.tracked.Add(1)
	}
	br.probing = false
	if !failed {
		// Closed and counting nothing: the provider is healthy again, and
		// keeps no state.
		delete(b.by, provider)
		b.tracked.Add(-1)
		return br.open, false
	}
	br.failures++
	if br.open || br.failures >= b.policy.Failures {
		wasOpen := br.open
		br.open, br.until = true, now().Add(b.policy.Cooldown)
		return !wasOpen, true
	}
	return false, false
}

// breakerChanged tells BreakerPolicy.OnChange. It is called only when
// breakers.done reported a change, which nil breakers never do.
func (n *Notifier) breakerChanged(ctx context.Context, provider string, open bool, cause error) {
	if f := n.breakers.policy.OnChange; f != nil {
		defer func() { _ = recover() }() // a listener's bug must not break a send
		f(ctx, provider, open, cause)
	}
}

// OutcomeOf classifies the error of a delivery attempt (Provider.Send or
// Channel.Deliver), the way database/sql reads driver.ErrBadConn, into
// the state the message is left in - one of the three outcomes:
//
//   - nil: StateSent, accepted;
//   - an *Error whose code is a certain refusal (Unavailable, RateLimited,
//     Rejected, InvalidArgument, Unauthenticated, PermissionDenied,
//     NotFound, InsufficientFunds, Conflict): StateFailed, certainly not
//     accepted;
//   - anything else is StateUnknown, the vendor may have it: CodeOutcomeUnknown, CodeInternal,
//     CodeDeadlineExceeded and CodeCanceled (a provider cut off mid-call
//     cannot say what the vendor got), and every error that is not an
//     *Error, context errors included.
//
// So a provider that knows the vendor did not take the message says so
// with a code (notify.Errorf(notify.CodeUnavailable, ...)); one that does
// not know returns its error as it is, or with CodeOutcomeUnknown.
func OutcomeOf(err error) record.State {
	if err == nil {
		return record.StateSent
	}
	var e *Error
	if !errors.As(err, &e) {
		return record.StateUnknown
	}
	switch e.Code {
	case CodeOutcomeUnknown, CodeInternal, CodeDeadlineExceeded, CodeCanceled, "":
		return record.StateUnknown
	}
	return record.StateFailed
}

// IsRetryable reports whether sending the same message again is both safe
// and may succeed: the vendor certainly did not accept it (OutcomeOf is
// StateFailed) and the failure is temporary (Unavailable or
// RateLimited). The Notifier retries only these.
func IsRetryable(err error) bool {
	return OutcomeOf(err) == record.StateFailed && CodeOf(err).temporary()
}
