package providertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// Failure is a vendor failure that a Harness can inject into the next send.
type Failure int

// The failures.
const (
	// Temporary: the vendor fails in a way that proves the message was
	// not accepted and may be accepted later (a vendor's documented
	// "service unavailable, try later" error body, SMTP 421 or 451). The
	// provider must return a retryable error (notify.IsRetryable: outcome
	// not accepted, code CodeUnavailable or CodeRateLimited). A bare 5xx
	// or a proxy's error page proves no such thing: it is not a Temporary
	// failure.
	Temporary Failure = iota + 1
	// Permanent: the vendor refuses the message for good (bad number, bad
	// template, SMTP 550). The provider must return CodeRejected or
	// CodeInvalidArgument, whose outcome is not accepted.
	Permanent
	// RateLimited: the vendor asks the caller to slow down (HTTP 429, a
	// vendor's rate-limit error code). The provider must return
	// CodeRateLimited, whose outcome is not accepted.
	RateLimited
	// AnswerLost: the vendor accepts the message and the answer is lost
	// (the fake takes it, counts it in Received, and then drops the
	// connection or otherwise never answers). The provider cannot know
	// whether the message went out, so it must return an error of unknown
	// outcome (notify.OutcomeOf is OutcomeUnknown; never retryable), and
	// the vendor must have received the message exactly once.
	AnswerLost
	// VendorErrorOn5xx: the vendor refuses the message with its own
	// error answer, in its documented error format, on an HTTP 5xx and
	// with an error code the provider need not know, such as
	// {"return": false, "status_code": 503, "message": "busy"} on a 503.
	// The vendor formed that answer and took nothing, so the provider
	// must return a certain refusal (notify.OutcomeOf is
	// StateFailed, never StateUnknown) whatever the status, and
	// the vendor receives nothing; see notify.Provider. Only an answer
	// that is not the vendor's own (a proxy's page, an empty or cut body)
	// leaves the outcome unknown. A fake whose vendor is not spoken to
	// over HTTP reports false.
	VendorErrorOn5xx
)

// String returns "temporary", "permanent", "rate-limited",
// "answer-lost" or "vendor-error-on-5xx".
func (f Failure) String() string {
	switch f {
	case Temporary:
		return "temporary"
	case Permanent:
		return "permanent"
	case RateLimited:
		return "rate-limited"
	case AnswerLost:
		return "answer-lost"
	case VendorErrorOn5xx:
		return "vendor-error-on-5xx"
	}
	return fmt.Sprintf("Failure(%d)", int(f))
}

// Harness connects the suite to one provider and the fake vendor behind
// it. It is a struct of hooks rather than an interface so that a harness
// leaves out, as nil, what its fake cannot do; the subtests needing a nil
// hook are skipped with the reason.
//
// Run calls the hooks from the test goroutine only, one subtest after
// another; only Provider.Send and Envelope are called concurrently (by the
// concurrency subtest).
type Harness struct {
	// Provider is the provider under test, wired to the fake vendor.
	// Required.
	Provider notify.Provider

	// Envelope returns a new, valid envelope that Provider must accept, as
	// the Notifier would hand it over (Kind, To, Provider, Units, Account
	// and the content set). The provider decides the kind and content. i
	// counts the calls from 0, for harnesses that want distinct recipients
	// or texts. The suite fills ID with a fresh UUID when it is empty and
	// changes nothing else, except in the missing-content subtest, which
	// clears SMS, Email and Chat. It is called concurrently. Required.
	Envelope func(i int) *notify.Envelope

	// Secrets lists strings that must never appear in an error or a Result:
	// API keys, tokens, passwords, the OTP codes of the envelopes. Empty
	// strings are ignored. Optional.
	Secrets []string

	// FailNext makes the fake vendor fail the next send it receives with f,
	// and reports whether the fake can simulate f; the subtest for f is
	// skipped when it returns false. The failure must apply to one send
	// only: the suite checks that the following send succeeds. Nil skips
	// every failure subtest.
	FailNext func(f Failure) bool

	// SetLatency makes the fake vendor wait d before answering each
	// request, or until the request is abandoned (the fake must watch for
	// that, such as through http.Request.Context, so that stopping it does
	// not wait d; net/http cancels that context only once the handler has
	// read the request body, so read it before waiting). Zero restores
	// prompt answers; the suite resets it to zero after use. Nil skips the
	// slow-vendor subtests.
	SetLatency func(d time.Duration)

	// Received returns how many messages the fake vendor has accepted so
	// far. The suite compares it before and after sends: +1 for a success
	// and for an AnswerLost failure, +0 for an ended context or any other
	// injected failure. Nil skips those comparisons.
	Received func() int
}

// The suite's time limits. They are generous because tests run under
// -race on shared machines; a provider that honours its context returns
// well within them.
const (
	// prompt bounds how long Send may take once its context has ended.
	prompt = 2 * time.Second
	// slowVendor is the latency set on the fake vendor: far longer than
	// prompt, so a provider that waits for the vendor fails the subtest.
	slowVendor = 10 * time.Second
	// sendLimit bounds every send that is expected to succeed.
	sendLimit = 30 * time.Second
)

// Concurrency of the concurrency subtest.
const (
	goroutines      = 32
	sendsPerRoutine = 3
	concurrentSends = goroutines * sendsPerRoutine
)

// Run runs the conformance suite against h as subtests of t. It fails t at
// once when a required field of h is nil.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Provider == nil {
		t.Fatal("providertest: Harness.Provider is nil")
	}
	if h.Envelope == nil {
		t.Fatal("providertest: Harness.Envelope is nil")
	}
	s := &suite{h: h}
	t.Run("Name", s.testName)
	t.Run("Send", s.testSend)
	t.Run("CanceledContext", s.testCanceledContext)
	t.Run("ExpiredDeadline", s.testExpiredDeadline)
	t.Run("SlowVendorDeadline", s.testSlowVendorDeadline)
	t.Run("SlowVendorCancel", s.testSlowVendorCancel)
	t.Run("TemporaryFailure", func(t *testing.T) { s.testFailure(t, Temporary) })
	t.Run("RateLimited", func(t *testing.T) { s.testFailure(t, RateLimited) })
	t.Run("PermanentFailure", func(t *testing.T) { s.testFailure(t, Permanent) })
	t.Run("AnswerLost", func(t *testing.T) { s.testFailure(t, AnswerLost) })
	t.Run("VendorErrorOn5xx", func(t *testing.T) { s.testFailure(t, VendorErrorOn5xx) })
	t.Run("MissingContent", s.testMissingContent)
	t.Run("Concurrent", s.testConcurrent)
}

type suite struct {
	h Harness
	n atomic.Int64 // envelopes made so far
}

// envelope returns the harness's next envelope, with an ID.
func (s *suite) envelope(t *testing.T) *notify.Envelope {
	env := s.h.Envelope(int(s.n.Add(1) - 1))
	if env == nil {
		t.Fatal("providertest: Harness.Envelope returned nil")
	}
	if env.ID == "" {
		env.ID = uuid.NewString()
	}
	return env
}

// received returns the vendor's count, or -1 when it is not observable.
func (s *suite) received() int {
	if s.h.Received == nil {
		return -1
	}
	return s.h.Received()
}

// checkReceived checks that the vendor accepted want messages since
// before was read.
func (s *suite) checkReceived(t *testing.T, before, want int, what string) {
	t.Helper()
	if before < 0 {
		return
	}
	if got := s.h.Received() - before; got != want {
		t.Errorf("%s: vendor accepted %d messages, want %d", what, got, want)
	}
}

// checkSecrets fails t when s appears to contain a declared secret; what
// says where s came from. The secret itself is not printed, since test
// logs are kept too.
func (s *suite) checkSecrets(t *testing.T, what, text string) {
	t.Helper()
	for i, sec := range s.h.Secrets {
		if sec != "" && strings.Contains(text, sec) {
			t.Errorf("%s contains Harness.Secrets[%d] (%d chars)", what, i, len(sec))
		}
	}
}

// redact formats v with every declared secret replaced, so that failure
// messages never print one.
func (s *suite) redact(v any) string {
	text := fmt.Sprint(v)
	for i, sec := range s.h.Secrets {
		if sec != "" {
			text = strings.ReplaceAll(text, sec, fmt.Sprintf("[Secrets[%d]]", i))
		}
	}
	return text
}

// errPanic marks a Send that panicked.
var errPanic = errors.New("providertest: Send panicked")

// safeSend calls Send and turns a panic into an error wrapping errPanic
// that carries the panic value.
func (s *suite) safeSend(ctx context.Context, env *notify.Envelope) (res *notify.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	return s.h.Provider.Send(ctx, env)
}

// send calls Send, failing t on a panic, and checks the error and the
// Result for secrets.
//
//lint:ignore ST1008 the error is data here, checked beside the result and the time it took
func (s *suite) send(t *testing.T, ctx context.Context, env *notify.Envelope) (res *notify.Result, err error, elapsed time.Duration) {
	t.Helper()
	start := time.Now()
	res, err = s.safeSend(ctx, env)
	elapsed = time.Since(start)
	s.checkResult(t, res, err)
	if errors.Is(err, errPanic) {
		t.Fatal(s.redact(err))
	}
	return res, err, elapsed
}

// checkResult checks the error and the Result of a send for secrets.
func (s *suite) checkResult(t *testing.T, res *notify.Result, err error) {
	t.Helper()
	if err != nil {
		s.checkSecrets(t, "error", err.Error())
	}
	if res != nil {
		s.checkSecrets(t, "Result.ProviderMessageID", res.ProviderMessageID)
		s.checkSecrets(t, "Result.Note", res.Note)
		s.checkSecrets(t, "Result.Provider", res.Provider)
	}
}

// sendOK sends a valid envelope and expects success.
func (s *suite) sendOK(t *testing.T, what string) *notify.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), sendLimit)
	defer cancel()
	before := s.received()
	res, err, _ := s.send(t, ctx, s.envelope(t))
	if err != nil {
		t.Fatalf("%s: Send: %s (code %q)", what, s.redact(err), notify.CodeOf(err))
	}
	if res == nil {
		t.Fatalf("%s: Send returned neither a Result nor an error", what)
	}
	if res.ProviderMessageID == "" {
		t.Errorf("%s: Send succeeded with an empty ProviderMessageID", what)
	}
	s.checkReceived(t, before, 1, what)
	return res
}

func (s *suite) testName(t *testing.T) {
	name := s.h.Provider.Name()
	if name == "" {
		t.Fatal("Name() is empty")
	}
	if strings.TrimSpace(name) != name {
		t.Errorf("Name() = %q has surrounding spaces", s.redact(name))
	}
	s.sendOK(t, "send between Name calls")
	if again := s.h.Provider.Name(); again != name {
		t.Errorf("Name() changed from %q to %q", s.redact(name), s.redact(again))
	}
	s.checkSecrets(t, "Name()", name)
}

func (s *suite) testSend(t *testing.T) {
	first := s.sendOK(t, "first send")
	second := s.sendOK(t, "second send")
	if first.ProviderMessageID != "" && first.ProviderMessageID == second.ProviderMessageID {
		t.Errorf("two sends got the same ProviderMessageID %q", s.redact(first.ProviderMessageID))
	}
}

// checkEnded checks the outcome of a send whose context ended: an error
// that errors.Is target, returned within prompt.
func (s *suite) checkEnded(t *testing.T, res *notify.Result, err error, elapsed time.Duration, target error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Send succeeded (ProviderMessageID %q) though its context ended", s.redact(res.ProviderMessageID))
	}
	if !errors.Is(err, target) {
		t.Errorf("Send error %q (code %q) does not satisfy errors.Is(err, %v)", s.redact(err), notify.CodeOf(err), target)
	}
	if res != nil {
		t.Errorf("Send returned a Result with its error")
	}
	if elapsed > prompt {
		t.Errorf("Send took %v after its context ended, want under %v", elapsed, prompt)
	}
}

func (s *suite) testCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	before := s.received()
	res, err, elapsed := s.send(t, ctx, s.envelope(t))
	s.checkEnded(t, res, err, elapsed, context.Canceled)
	s.checkReceived(t, before, 0, "canceled context")
}

func (s *suite) testExpiredDeadline(t *testing.T) {
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	before := s.received()
	res, err, elapsed := s.send(t, ctx, s.envelope(t))
	s.checkEnded(t, res, err, elapsed, context.DeadlineExceeded)
	s.checkReceived(t, before, 0, "expired deadline")
}

// slow makes the vendor slow for the rest of t.
func (s *suite) slow(t *testing.T) {
	if s.h.SetLatency == nil {
		t.Skip("Harness.SetLatency is nil: the fake vendor cannot be made slow")
	}
	s.h.SetLatency(slowVendor)
	t.Cleanup(func() { s.h.SetLatency(0) })
}

func (s *suite) testSlowVendorDeadline(t *testing.T) {
	s.slow(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	res, err, elapsed := s.send(t, ctx, s.envelope(t))
	// elapsed includes the 100ms before the deadline.
	s.checkEnded(t, res, err, elapsed-100*time.Millisecond, context.DeadlineExceeded)
}

func (s *suite) testSlowVendorCancel(t *testing.T) {
	s.slow(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const after = 100 * time.Millisecond
	stop := time.AfterFunc(after, cancel)
	defer stop.Stop()
	res, err, elapsed := s.send(t, ctx, s.envelope(t))
	s.checkEnded(t, res, err, elapsed-after, context.Canceled)
}

func (s *suite) testFailure(t *testing.T, f Failure) {
	if s.h.FailNext == nil {
		t.Skip("Harness.FailNext is nil: the fake vendor cannot inject failures")
	}
	if !s.h.FailNext(f) {
		t.Skipf("the fake vendor cannot simulate a %v failure", f)
	}
	ctx, cancel := context.WithTimeout(t.Context(), sendLimit)
	defer cancel()
	before := s.received()
	res, err, _ := s.send(t, ctx, s.envelope(t))
	if err == nil {
		t.Fatalf("Send succeeded (ProviderMessageID %q) though the vendor failed it (%v)", s.redact(res.ProviderMessageID), f)
	}
	code, outcome := notify.CodeOf(err), notify.OutcomeOf(err)
	received := 0
	switch f {
	case Temporary:
		if !notify.IsRetryable(err) {
			t.Errorf("temporary vendor failure gave code %q, outcome %v: want a retryable error (notify.IsRetryable: outcome not_accepted, code unavailable or rate_limited); error: %s",
				code, outcome, s.redact(err))
		}
	case RateLimited:
		if code != notify.CodeRateLimited || outcome != record.StateFailed {
			t.Errorf("rate-limited vendor failure gave code %q, outcome %v: want rate_limited, not_accepted; error: %s", code, outcome, s.redact(err))
		}
		var e *notify.Error
		if errors.As(err, &e) && e.RetryAfter < 0 {
			t.Errorf("RetryAfter = %v, want >= 0", e.RetryAfter)
		}
	case Permanent:
		if (code != notify.CodeRejected && code != notify.CodeInvalidArgument) || outcome != record.StateFailed {
			t.Errorf("permanent vendor failure gave code %q, outcome %v: want rejected or invalid_argument, not_accepted; error: %s", code, outcome, s.redact(err))
		}
	case VendorErrorOn5xx:
		if outcome != record.StateFailed {
			t.Errorf("the vendor refused the message with its own error answer on a 5xx, but the error has code %q, outcome %v: want a certain refusal (outcome not_accepted), whatever the status; error: %s",
				code, outcome, s.redact(err))
		}
	case AnswerLost:
		// The vendor has the message: a refund or a retry would be wrong.
		received = 1
		if outcome != record.StateUnknown {
			t.Errorf("vendor accepted the message and its answer was lost, but the error has code %q, outcome %v: want outcome unknown (a bare error or outcome_unknown), never a certain refusal; error: %s",
				code, outcome, s.redact(err))
		}
	}
	if res != nil {
		t.Errorf("Send returned a Result with its error")
	}
	s.checkReceived(t, before, received, f.String()+" failure")
	// The failure was for one send only: the vendor works again.
	s.sendOK(t, "send after the "+f.String()+" failure")
}

func (s *suite) testMissingContent(t *testing.T) {
	env := s.envelope(t)
	env.Content = nil
	ctx, cancel := context.WithTimeout(t.Context(), sendLimit)
	defer cancel()
	res, err, _ := s.send(t, ctx, env)
	if err == nil {
		// Capture and log providers may accept any envelope; then the
		// Result must still be complete.
		if res == nil || res.ProviderMessageID == "" {
			t.Errorf("Send of an envelope without content succeeded without a ProviderMessageID")
		}
		return
	}
	if code := notify.CodeOf(err); code != notify.CodeInvalidArgument && code != notify.CodeRejected {
		t.Errorf("Send of an envelope without content gave code %q, want invalid_argument or rejected; error: %s", code, s.redact(err))
	}
}

func (s *suite) testConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), sendLimit)
	defer cancel()
	before := s.received()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = make(map[string]int, concurrentSends)
		errs    []error
		results []sendOutcome
	)
	for g := range goroutines {
		wg.Go(func() {
			for range sendsPerRoutine {
				env := s.h.Envelope(int(s.n.Add(1) - 1))
				if env == nil {
					mu.Lock()
					errs = append(errs, errors.New("Harness.Envelope returned nil"))
					mu.Unlock()
					return
				}
				if env.ID == "" {
					env.ID = uuid.NewString()
				}
				res, err := s.safeSend(ctx, env)
				mu.Lock()
				results = append(results, sendOutcome{res, err})
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("goroutine %d: %w", g, err))
				case res == nil || res.ProviderMessageID == "":
					errs = append(errs, fmt.Errorf("goroutine %d: success without a ProviderMessageID", g))
				default:
					ids[res.ProviderMessageID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Secrets are checked here, on the test goroutine.
	for _, o := range results {
		s.checkResult(t, o.res, o.err)
	}
	for i, err := range errs {
		if i < 5 {
			t.Errorf("concurrent Send: %s", s.redact(err))
		}
	}
	if len(errs) > 0 {
		t.Fatalf("%d of %d concurrent sends failed", len(errs), concurrentSends)
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("ProviderMessageID %q was returned %d times", s.redact(id), n)
		}
	}
	s.checkReceived(t, before, concurrentSends, "concurrent sends")
}

type sendOutcome struct {
	res *notify.Result
	err error
}
