package memprovider

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/notifykit/notify"
)

// Handler decides the outcome of one send in place of the default
// acceptance; see Provider.SetHandler.
type Handler func(ctx context.Context, env *notify.Envelope) (*notify.Result, error)

// Provider captures the envelopes it is asked to send. Create one with New;
// the zero value is not usable. All methods are safe for concurrent use.
type Provider struct {
	name string

	mu       sync.Mutex
	sent     []*notify.Envelope
	seq      uint64        // provider message IDs handed out
	changed  chan struct{} // made by Wait, closed (and dropped) by the next capture or Reset
	failN    int
	failCode notify.Code
	latency  time.Duration
	handler  Handler
}

// New returns a Provider called name that accepts every envelope, with no
// latency and no injected failures. An empty name becomes "memprovider".
func New(name string) *Provider {
	if name == "" {
		name = "memprovider"
	}
	return &Provider{name: name}
}

// Name returns the name given to New.
func (p *Provider) Name() string { return p.name }

// Send captures env and returns a Result whose ProviderMessageID is
// "mem-<n>", n counting from 1 over the provider's life (Reset does not
// restart it). In order, Send:
//
//  1. when ctx has already ended, fails at once, capturing nothing, with
//     notify.WithCode(notify.CodeUnavailable, ctx.Err()) (see below);
//  2. waits the latency set by SetLatency; if ctx ends first, fails the
//     same way, capturing nothing;
//  3. fails a nil env with CodeInvalidArgument, capturing nothing;
//  4. while failures set by FailNext remain, fails with their code:
//     capturing nothing, or, for notify.CodeOutcomeUnknown, capturing env
//     first (the vendor took the message, its answer was lost);
//  5. calls the handler set by SetHandler, if any (see SetHandler);
//  6. otherwise captures env and succeeds.
//
// So every error but those of FailNext(n, CodeOutcomeUnknown) and of a
// handler comes with nothing captured, and says so: it is an *notify.Error
// whose code notify.OutcomeOf reads as a certain non-acceptance. For an
// ended context that takes a code, since a bare ctx.Err() (or CodeCanceled,
// CodeDeadlineExceeded) means "unknown" to the Notifier, which would keep
// the charge for a message nobody has. CodeUnavailable is the code the
// notify.Provider contract gives a request that was never written, and
// errors.Is(err, ctx.Err()) still holds.
//
// env is retained, not copied: the notify contract forbids changing an
// envelope once it is handed to a provider.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent(err)
	}
	p.mu.Lock()
	latency := p.latency
	p.mu.Unlock()
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, notSent(ctx.Err())
		case <-t.C:
		}
	}
	if env == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "memprovider: nil envelope")
	}

	p.mu.Lock()
	if p.failN > 0 {
		p.failN--
		code := p.failCode
		p.mu.Unlock()
		if code == notify.CodeOutcomeUnknown {
			res := p.capture(env, nil)
			return nil, notify.Errorf(code, "memprovider: the message was accepted as %s but the answer was lost (injected by FailNext)", res.ProviderMessageID)
		}
		return nil, notify.Errorf(code, "memprovider: %s failure injected by FailNext; nothing captured", code)
	}
	h := p.handler
	p.mu.Unlock()

	if h == nil {
		return p.capture(env, nil), nil
	}
	res, err := h(ctx, env)
	if res == nil {
		if err == nil {
			// Nothing was captured, so the "vendor" certainly has nothing.
			err = notify.Errorf(notify.CodeRejected, "memprovider: the handler set by SetHandler returned neither a Result nor an error; nothing captured")
		}
		return nil, err
	}
	res = p.capture(env, res)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// notSent is the error of a send abandoned because ctx ended before
// anything was captured: certainly not accepted, and still ctx's error
// for errors.Is.
func notSent(ctxErr error) error {
	return notify.WithCode(notify.CodeUnavailable, fmt.Errorf("memprovider: nothing captured: %w", ctxErr))
}

// capture records env and returns the Result of its acceptance: a copy of
// res (if any) with Provider and ProviderMessageID filled in when empty.
func (p *Provider) capture(env *notify.Envelope, res *notify.Result) *notify.Result {
	out := notify.Result{}
	if res != nil {
		out = *res
	}
	p.mu.Lock()
	p.seq++
	n := p.seq
	p.sent = append(p.sent, env)
	p.wakeLocked()
	p.mu.Unlock()
	if out.Provider == "" {
		out.Provider = p.name
	}
	if out.ProviderMessageID == "" {
		out.ProviderMessageID = "mem-" + strconv.FormatUint(n, 10)
	}
	return &out
}

// Sent returns the captured envelopes in the order they were captured, as
// a new slice the caller may keep. The envelopes themselves are shared:
// treat them as read-only.
func (p *Provider) Sent() []*notify.Envelope {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*notify.Envelope, len(p.sent))
	copy(out, p.sent)
	return out
}

// Len returns the number of captured envelopes.
func (p *Provider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sent)
}

// Reset discards the captured envelopes, freeing the buffer. Injected
// failures, latency and handler stay as they are, and message IDs keep
// counting.
func (p *Provider) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = nil
	p.wakeLocked()
}

// wakeLocked wakes every Wait. The channel exists only while somebody
// waits, so sends nobody waits for cost nothing here.
func (p *Provider) wakeLocked() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// FailNext makes the next n sends fail with an *notify.Error of code.
//
// Most codes fail before acceptance: nothing is captured and no message
// ID is used. Use a temporary code (notify.CodeUnavailable,
// notify.CodeRateLimited) to exercise the Notifier's retries,
// notify.CodeRejected for a permanent refusal.
//
// notify.CodeOutcomeUnknown models a vendor that accepted the message and
// whose answer was lost: env is captured (Sent, Len and Wait see it, and
// it uses a message ID, named in the error's text) and Send fails with
// CodeOutcomeUnknown, which the Notifier never retries and whose charge
// stands. Tests use it to check that such a message is sent exactly once.
// The other codes that notify.OutcomeOf reads as unknown (CodeInternal,
// CodeDeadlineExceeded, CodeCanceled) capture nothing: an unknown outcome
// whose truth was "not accepted".
//
// An empty code means notify.CodeUnavailable. It replaces any failures
// still pending; n <= 0 cancels them. Sends whose context has already
// ended, or ends during the latency, do not use up a failure.
func (p *Provider) FailNext(n int, code notify.Code) {
	if code == "" {
		code = notify.CodeUnavailable
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failCode = max(n, 0), code
}

// SetLatency makes every later send wait d before doing anything else, as
// a slow vendor would; a send whose context ends first captures nothing
// and fails with CodeUnavailable wrapping the context's error (see Send).
// Zero or less removes the latency (the default).
func (p *Provider) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = max(d, 0)
}

// SetHandler hands the outcome of later sends to h, after the latency and
// any FailNext failures; nil restores the default of accepting every
// envelope. h is called concurrently, outside the provider's lock. What h
// returns decides what happens:
//
//   - a Result and no error: env is captured and the send succeeds; an
//     empty Provider or ProviderMessageID is filled in as usual;
//   - a Result and an error: env is captured (the vendor accepted it) but
//     the send fails with the error, like an answer lost after
//     acceptance. Return an error that notify.OutcomeOf reads as unknown
//     (a bare error, or one coded notify.CodeOutcomeUnknown): a certain
//     code such as CodeUnavailable would tell the Notifier to refund and
//     retry a message the vendor has, which is only worth doing to test a
//     provider that lies;
//   - an error alone: nothing is captured and the send fails with it; give
//     it a certain code (CodeUnavailable, CodeRateLimited, CodeRejected)
//     unless the test wants an unknown outcome for a message nobody has;
//   - neither: nothing is captured and the send fails with CodeRejected
//     saying so.
//
// A panic in h goes up to the caller of Send, which is how tests check
// that the Notifier survives a panicking provider.
func (p *Provider) SetHandler(h Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handler = h
}

// Wait blocks until at least n envelopes are captured (Len() >= n) or ctx
// ends, in which case it returns ctx.Err(). It lets tests wait for sends
// made by other goroutines without sleeping.
func (p *Provider) Wait(ctx context.Context, n int) error {
	for {
		p.mu.Lock()
		have := len(p.sent)
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed := p.changed
		p.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Interface guards
var _ notify.Provider = (*Provider)(nil)
