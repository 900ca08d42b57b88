package notify_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// ledger follows the money the events say moved: what a StatePending event
// charged and what every event's Refund gave back.
type ledger struct {
	mu       sync.Mutex
	charged  int64
	refunded int64
	refused  []notify.Event
}

func (l *ledger) Observe(_ context.Context, e notify.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Type == record.StatePending {
		l.charged += e.Envelope.Price.Minor
	}
	l.refunded += e.Refund.Minor
	if e.Type == notify.StateRefused {
		l.refused = append(l.refused, e)
	}
}

func (l *ledger) net() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.charged - l.refunded
}

// TestEventsAccountForEveryMinorUnit: what the events say was charged,
// less what they say was refunded, is what left the wallet, after sends
// that succeed, fail (refunded), and dual OTPs (legs counted, the combined
// receipt not).
func TestEventsAccountForEveryMinorUnit(t *testing.T) {
	l := &ledger{}
	r := newRig(t, notify.WithObserver(l))
	ctx := context.Background()
	if _, err := r.n.Send(ctx, smsReq("hello")); err != nil {
		t.Fatal(err)
	}
	r.sms.FailNext(1, notify.CodeRejected)
	if _, err := r.n.Send(ctx, smsReq("refused by the vendor")); notify.CodeOf(err) != notify.CodeUnavailable && notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("failed send: %v", err)
	}
	if _, err := r.n.Send(ctx, &otp.Request{Account: "acme", To: "9876543210", OTP: "482913"}); err != nil {
		t.Fatal(err)
	}
	spent := opening - r.balance(t)
	if spent == 0 || l.net() != spent {
		t.Fatalf("events: charged %d, refunded %d; the wallet spent %d", l.charged, l.refunded, spent)
	}
	if l.refunded == 0 {
		t.Fatal("the failed send's refund is in no event")
	}
}

// TestReportedFailureRefundIsInTheEvent: a chat message reported failed
// is refunded (its channel says so), an SMS keeps its charge; the report's
// event says which.
func TestReportedFailureRefundIsInTheEvent(t *testing.T) {
	l := &ledger{}
	r, _ := newReportRig(t, notify.WithObserver(l))
	ctx := context.Background()
	chat, err := r.n.Send(ctx, chatTo("hello"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := r.n.Send(ctx, smsReq("hello"))
	if err != nil {
		t.Fatal(err)
	}
	before := l.refunded
	report(t, r.n, &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: text.ProviderMessageID, State: record.StateFailed})
	if l.refunded != before {
		t.Fatalf("an SMS reported failed keeps its charge, but the event refunded %d", l.refunded-before)
	}
	report(t, r.n, &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: chat.ProviderMessageID, State: record.StateFailed})
	if got := l.refunded - before; got != chat.Cost.Minor || got == 0 {
		t.Fatalf("the chat report's event refunded %d, want its charge %d", got, chat.Cost.Minor)
	}
	if spent := opening - r.balance(t); l.net() != spent {
		t.Fatalf("events: charged %d, refunded %d; the wallet spent %d", l.charged, l.refunded, spent)
	}
}

// TestRefusalsAreEvents: the rate limit and the OTP throttle each tell
// the observers, with the cause that names them and the request's kind.
func TestRefusalsAreEvents(t *testing.T) {
	l := &ledger{}
	r := newRig(t, notify.WithObserver(l),
		notify.WithRateLimit(newCountLimiter(2)), notify.WithOTPThrottle(newCountLimiter(1)))
	ctx := context.Background()
	code := &otp.Request{Account: "acme", To: "9876543210", OTP: "482913"}
	if _, err := r.n.Send(ctx, code); err != nil {
		t.Fatal(err)
	}
	if _, err := r.n.Send(ctx, code); notify.CodeOf(err) != notify.CodeRateLimited || !errors.Is(err, notify.ErrOTPThrottled) {
		t.Fatalf("second OTP: %v, want the throttle's refusal", err)
	}
	if _, err := r.n.Send(ctx, smsReq("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.n.Send(ctx, smsReq("two")); notify.CodeOf(err) != notify.CodeRateLimited || !errors.Is(err, notify.ErrRateLimited) {
		t.Fatalf("third send: %v, want the rate limit's refusal", err)
	}
	if len(l.refused) != 2 {
		t.Fatalf("%d refusal events, want 2", len(l.refused))
	}
	throttled, limited := l.refused[0], l.refused[1]
	if !errors.Is(throttled.Err, notify.ErrOTPThrottled) || throttled.Envelope != nil ||
		throttled.Receipt.Kind != otp.Kind || throttled.Receipt.MessageID != "" ||
		throttled.Receipt.Status != record.StateFailed || throttled.Receipt.ErrorCode != notify.CodeRateLimited {
		t.Fatalf("throttle event: %+v, receipt %+v", throttled, throttled.Receipt)
	}
	if !errors.Is(limited.Err, notify.ErrRateLimited) || errors.Is(limited.Err, notify.ErrOTPThrottled) ||
		limited.Envelope == nil || limited.Receipt.Kind != sms.Kind || limited.Receipt.To == "" {
		t.Fatalf("rate limit event: %+v, receipt %+v", limited, limited.Receipt)
	}
	if spent := opening - r.balance(t); l.net() != spent {
		t.Fatalf("events: charged %d, refunded %d; the wallet spent %d", l.charged, l.refunded, spent)
	}
}
