package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The causes of a limit's refusal (an *Error with CodeRateLimited):
// errors.Is tells which limit refused a send.
var (
	// ErrRateLimited: the account's rate limit (WithRateLimit).
	ErrRateLimited = errors.New("too many sends for this account")
	// ErrOTPThrottled: the per-recipient throttle on one-time codes
	// (WithOTPThrottle).
	ErrOTPThrottled = errors.New("too many one-time codes to this recipient")
)

// admission is what admit took from the Notifier's limits for one send:
// the units to give back if the send went nowhere. A nil *admission took
// nothing.
type admission struct {
	n       *Notifier
	ctx     context.Context
	at      time.Time
	rateKey string // "" when no rate unit was taken
	otpKey  string // "" when no OTP unit was taken
}

// admit applies the per-account rate limit and, to a message that carries
// a one-time code, the per-recipient OTP throttle. It runs after Prepare
// (a bad request is refused as such, never as rate limited) and inside the
// idempotency reservation (a replay never counts). A dual OTP passes both
// legs and counts once. A refusal is told to the observers (StateRefused)
// as a request of kind.
func (n *Notifier) admit(ctx context.Context, op string, acct *Account, kind Kind, envs ...*Envelope) (*admission, error) {
	if err := n.suppressed(ctx, op, acct, envs); err != nil { // suppression.go: before any unit is taken
		return nil, err
	}
	return n.take(ctx, op, acct, kind, envs...)
}

// take is admit once the suppression list let envs through: it takes
// the limits' units. EnqueueTxMany checks the list for all its requests
// at once (suppressedEach), then takes each request's units.
func (n *Notifier) take(ctx context.Context, op string, acct *Account, kind Kind, envs ...*Envelope) (*admission, error) {
	if n.rate == nil && n.otpThrottle == nil {
		return nil, nil
	}
	a := &admission{n: n, ctx: ctx, at: n.now()}
	if n.rate != nil {
		if err := n.rate.Take(ctx, acct.ID, a.at); err != nil {
			return nil, n.refused(ctx, acct, kind, envs, limitError(op, ErrRateLimited, err))
		}
		a.rateKey = acct.ID
	}
	if n.otpThrottle != nil {
		for _, env := range envs {
			if env == nil || !env.CarriesOTP {
				continue
			}
			key := acct.ID + "\x00" + env.To
			if err := n.otpThrottle.Take(ctx, key, a.at); err != nil {
				a.giveBack()
				return nil, n.refused(ctx, acct, kind, envs, limitError(op, ErrOTPThrottled, err))
			}
			a.otpKey = key
			break
		}
	}
	if a.rateKey == "" && a.otpKey == "" {
		return nil, nil // nothing taken, nothing to give back
	}
	return a, nil
}

// unless gives the units back unless r shows that something went out, or
// may have: a send refused before or by the vendor does not count.
func (a *admission) unless(r *Receipt) {
	if a == nil || (r != nil && r.Status != record.StateFailed) {
		return
	}
	a.giveBack()
}

func (a *admission) giveBack() {
	if a.rateKey == "" && a.otpKey == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), settleTimeout)
	defer cancel()
	// A failed give-back leaves the unit spent until it expires: the
	// caller is limited a little early, never let through a little late.
	if a.rateKey != "" {
		_ = a.n.rate.Undo(ctx, a.rateKey, a.at)
	}
	if a.otpKey != "" {
		_ = a.n.otpThrottle.Undo(ctx, a.otpKey, a.at)
	}
}

// limitError words a store.Limiter's refusal for the caller, keeping its
// RetryAfter, with cause (ErrRateLimited, ErrOTPThrottled) in its chain;
// any other Limiter error is the store failing.
func limitError(op string, cause, err error) error {
	var limit *store.LimitError
	if errors.As(err, &limit) {
		return &Error{Code: CodeRateLimited, Op: op, RetryAfter: limit.RetryAfter, Err: fmt.Errorf("%w: %s", cause, limit.Rule)}
	}
	return storeFailure(op, "limits", err)
}

// refused tells the observers of a refusal by a limit (StateRefused) and
// returns err; a store's failure to answer is no refusal and is only
// returned.
func (n *Notifier) refused(ctx context.Context, acct *Account, kind Kind, envs []*Envelope, err error) error {
	if len(n.observers) == 0 || CodeOf(err) != CodeRateLimited {
		return err
	}
	r := &Receipt{Account: acct.ID, Kind: kind, Status: record.StateFailed, Cost: Money{Currency: acct.Currency},
		ErrorCode: CodeRateLimited, Error: err.Error()}
	var env *Envelope
	for _, e := range envs {
		if e != nil && r.To == "" {
			r.To = e.To
		}
	}
	if len(envs) == 1 {
		env = envs[0]
	}
	n.observe(ctx, Event{Type: StateRefused, Envelope: env, Receipt: r, Err: err})
	return err
}
