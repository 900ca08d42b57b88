package notify

import (
	"context"
	"errors"
	"fmt"
	"time"
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
// legs and counts once.
func (n *Notifier) admit(ctx context.Context, op string, acct *Account, envs ...*Envelope) (*admission, error) {
	if n.rate == nil && n.otpThrottle == nil {
		return nil, nil
	}
	a := &admission{n: n, ctx: ctx, at: n.now()}
	if n.rate != nil {
		if err := n.rate.Take(ctx, acct.ID, a.at); err != nil {
			return nil, limitError(op, "too many sends for this account", err)
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
				return nil, limitError(op, "too many one-time codes to this recipient", err)
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
	if a == nil || (r != nil && r.Status != StatusFailed) {
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

// limitError words a Limiter's refusal for the caller, keeping its
// RetryAfter; any other Limiter error is the store failing.
func limitError(op, what string, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeRateLimited {
		limit := "the limit is reached"
		if e.Err != nil {
			limit = e.Err.Error()
		}
		return &Error{Code: CodeRateLimited, Op: op, RetryAfter: e.RetryAfter, Err: fmt.Errorf("%s: %s", what, limit)}
	}
	return storeFailure(op, "limits", err)
}
