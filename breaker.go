package notify

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

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
}

// BreakerObserver is an optional interface of an Observer
// (WithObserver) that is told when a provider's circuit breaker opens,
// with the failure that opened it, and when it closes again (cause nil).
// It is called on the goroutine of the send that changed the breaker,
// and must be quick.
type BreakerObserver interface {
	BreakerChanged(ctx context.Context, provider string, open bool, cause error)
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

// breakerChanged tells the observers that implement BreakerObserver.
func (n *Notifier) breakerChanged(ctx context.Context, provider string, open bool, cause error) {
	for _, o := range n.observers {
		if bo, ok := o.(BreakerObserver); ok {
			func() {
				defer func() { _ = recover() }() // an observer's bug must not break a send
				bo.BreakerChanged(ctx, provider, open, cause)
			}()
		}
	}
}
