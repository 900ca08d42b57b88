package notify_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// countLimiter allows max units per key, for ever: the Notifier's side of
// the Limiter contract is tested here; the stores' windows have their own
// conformance suite (storetest).
type countLimiter struct {
	max  int
	mu   sync.Mutex
	used map[string]int
}

func newCountLimiter(max int) *countLimiter { return &countLimiter{max: max, used: map[string]int{}} }

func (l *countLimiter) Take(_ context.Context, key string, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used[key] >= l.max {
		return &store.LimitError{Rule: fmt.Sprintf("at most %d", l.max), RetryAfter: time.Minute}
	}
	l.used[key]++
	return nil
}

func (l *countLimiter) Undo(_ context.Context, key string, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used[key] > 0 {
		l.used[key]--
	}
	return nil
}

func (l *countLimiter) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used[key]
}

const otpKey = notifytest.AccountID + "\x00" + "+919876543210"

// TestIdempotentOTPReplaysDoNotCountAgainstTheThrottle: five replays of
// one OTP request used to lock the number out for 15 minutes.
func TestIdempotentOTPReplaysDoNotCountAgainstTheThrottle(t *testing.T) {
	throttle := newCountLimiter(5)
	k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(throttle)))
	req := &otp.Request{Account: notifytest.AccountID, To: "+91 98765 43210", OTP: "482913", IdempotencyKey: "login-1"}
	for i := range 6 {
		if _, err := k.Notifier.Send(context.Background(), req); err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
	}
	if got := throttle.count(otpKey); got != 1 {
		t.Fatalf("the throttle counted %d, want 1 (replays do not count)", got)
	}
	for i := range 4 {
		r := *req
		r.IdempotencyKey = fmt.Sprint("login-", i+2)
		if _, err := k.Notifier.Send(context.Background(), &r); err != nil {
			t.Fatalf("OTP %d: %v", i+2, err)
		}
	}
	r := *req
	r.IdempotencyKey = "login-6"
	_, err := k.Notifier.Send(context.Background(), &r)
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeRateLimited || !errors.As(err, &e) || e.RetryAfter != time.Minute {
		t.Fatalf("sixth OTP: %v, want rate_limited with RetryAfter", err)
	}
}

// TestEveryOTPCountsHoweverItIsSent: the otp route, SendOTP, a chat OTP,
// and templates filled with an OTP variable (which used to pass
// unthrottled).
func TestEveryOTPCountsHoweverItIsSent(t *testing.T) {
	ctx := context.Background()
	acct := notifytest.AccountID
	sends := map[string]func(n *notify.Notifier) error{
		"otp route": func(n *notify.Notifier) error {
			_, err := n.Send(ctx, &sms.Request{Account: acct, To: "9876543210", Message: "482913", Route: sms.RouteOTP})
			return err
		},
		"SendOTP": func(n *notify.Notifier) error {
			_, err := n.Send(ctx, &otp.Request{Account: acct, To: "9876543210", OTP: "482913"})
			return err
		},
		"chat otp": func(n *notify.Notifier) error {
			_, err := n.Send(ctx, &chat.Request{Account: acct, To: "9876543210", OTP: "482913"})
			return err
		},
		"sms template with variables.OTP": func(n *notify.Notifier) error {
			_, err := n.Send(ctx, &sms.Request{Account: acct, To: "9876543210", TemplateSlug: "standard-otp",
				Variables: record.Vars{"OTP": "482913"}})
			return err
		},
		"chat template with variables.OTP": func(n *notify.Notifier) error {
			_, err := n.Send(ctx, &chat.Request{Account: acct, To: "9876543210", TemplateSlug: "standard-otp",
				Variables: record.Vars{"OTP": "482913"}})
			return err
		},
	}
	for name, send := range sends {
		t.Run(name, func(t *testing.T) {
			throttle := newCountLimiter(1)
			k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(throttle)))
			if err := send(k.Notifier); err != nil {
				t.Fatalf("first: %v", err)
			}
			if got := throttle.count(otpKey); got != 1 {
				t.Fatalf("counted %d, want 1", got)
			}
			if err := send(k.Notifier); notify.CodeOf(err) != notify.CodeRateLimited {
				t.Fatalf("second: %v, want rate_limited", err)
			}
		})
	}
	t.Run("plain SMS does not count", func(t *testing.T) {
		throttle := newCountLimiter(1)
		k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(throttle)))
		for range 2 {
			if _, err := k.Notifier.Send(ctx, &sms.Request{Account: acct, To: "9876543210", Message: "hello"}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestInvalidRequestOverTheBudgetIsInvalid: once the budget is spent, a
// bad request is still a 400, not a 429.
func TestInvalidRequestOverTheBudgetIsInvalid(t *testing.T) {
	throttle := newCountLimiter(1)
	rate := newCountLimiter(1)
	k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(throttle), notify.WithRateLimit(rate)))
	ctx := context.Background()
	if _, err := k.Notifier.Send(ctx, &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913"}); err != nil {
		t.Fatal(err)
	}
	_, err := k.Notifier.Send(ctx, &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "12"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("bad OTP over the budget: %v, want invalid_argument", err)
	}
	_, err = k.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "12345", Message: "hi"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("bad number over the rate limit: %v, want invalid_argument", err)
	}
}

// TestRefusedSendsDoNotCountUnknownOnesDo: a send the vendor certainly
// refused gives its units back; one it may have taken keeps them.
func TestRefusedSendsDoNotCountUnknownOnesDo(t *testing.T) {
	throttle := newCountLimiter(5)
	rate := newCountLimiter(100)
	k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(throttle), notify.WithRateLimit(rate)))
	ctx := context.Background()
	req := &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "482913", Route: sms.RouteOTP}
	k.SMS.FailNext(1, notify.CodeRejected)
	if _, err := k.Notifier.Send(ctx, req); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("refused send: %v", err)
	}
	if throttle.count(otpKey) != 0 || rate.count(notifytest.AccountID) != 0 {
		t.Fatalf("a refused send counted: throttle %d, rate %d", throttle.count(otpKey), rate.count(notifytest.AccountID))
	}
	k.SMS.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "answer lost")
	})
	if _, err := k.Notifier.Send(ctx, req); notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("unknown send: %v", err)
	}
	if throttle.count(otpKey) != 1 || rate.count(notifytest.AccountID) != 1 {
		t.Fatalf("an unknown send must count: throttle %d, rate %d", throttle.count(otpKey), rate.count(notifytest.AccountID))
	}
}

// TestRateLimitIsANotifierOption: an embedding app gets the per-account
// rate limit without the HTTP adapter.
func TestRateLimitIsANotifierOption(t *testing.T) {
	rate := newCountLimiter(2)
	k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithRateLimit(rate)))
	ctx := context.Background()
	for range 2 {
		if _, err := k.Notifier.Send(ctx, &email.Request{Account: notifytest.AccountID, To: "a@example.com",
			Subject: "Hi", Message: "Hello"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := k.Notifier.Send(ctx, &email.Request{Account: notifytest.AccountID, To: "a@example.com",
		Subject: "Hi", Message: "Hello"})
	if notify.CodeOf(err) != notify.CodeRateLimited || len(k.SentEmail()) != 2 {
		t.Fatalf("third send: %v, sent %d", err, len(k.SentEmail()))
	}
	k.AssertBalance(t, notifytest.DefaultBalance-2*k.LastEmail(t).Price.Minor)
}
