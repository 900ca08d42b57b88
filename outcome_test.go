package notify_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestUnknownOutcomesKeepTheCharge: whatever leaves the vendor possibly
// holding the message is an unknown outcome: charged, never retried,
// recorded and observed as such.
func TestUnknownOutcomesKeepTheCharge(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(r *rig) context.Context
		isCause error
		opts    []notify.Option
	}{
		{"bare error", func(r *rig) context.Context {
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return nil, errors.New("connection reset after the request was written")
			})
			return context.Background()
		}, nil, nil},
		{"provider says outcome unknown", func(r *rig) context.Context {
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return nil, notify.Errorf(notify.CodeOutcomeUnknown, "HTTP 502 from a proxy")
			})
			return context.Background()
		}, nil, nil},
		{"provider internal error", func(r *rig) context.Context {
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return nil, notify.Errorf(notify.CodeInternal, "unexpected answer")
			})
			return context.Background()
		}, nil, nil},
		{"provider panics", func(r *rig) context.Context {
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) { panic("boom") })
			return context.Background()
		}, nil, nil},
		{"success without a message ID", func(r *rig) context.Context { return context.Background() }, nil,
			[]notify.Option{notify.WithChannel(&testChannel{kind: sms.Kind, provider: noIDProvider{}})}},
		{"attempt timeout mid-call", func(r *rig) context.Context {
			r.sms.SetHandler(blockUntilDone)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded, nil},
		{"caller cancels mid-call", func(r *rig) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			r.sms.SetHandler(func(hctx context.Context, _ *notify.Envelope) (*notify.Result, error) {
				cancel()
				<-hctx.Done()
				return nil, hctx.Err()
			})
			return ctx
		}, context.Canceled, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts...)
			ctx := c.setup(r)
			rc, err := r.n.Send(ctx, smsReq("hi"))
			if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
				t.Fatalf("code = %q (%v), want outcome_unknown", notify.CodeOf(err), err)
			}
			if c.isCause != nil && !errors.Is(err, c.isCause) {
				t.Fatalf("err = %v: errors.Is(%v) must hold", err, c.isCause)
			}
			if rc == nil || rc.Status != record.StateUnknown || rc.Attempts != 1 || rc.Cost.Minor != 25 ||
				rc.Balance.Minor != opening-25 || rc.ErrorCode != notify.CodeOutcomeUnknown {
				t.Fatalf("receipt = %+v", rc)
			}
			if got := r.balance(t); got != opening-25 {
				t.Fatalf("balance = %d, want the charge kept", got)
			}
			ledger, _, _ := r.wallet.Ledger("acme")
			if len(ledger) != 1 || ledger[0].Ref != rc.MessageID {
				t.Fatalf("ledger = %+v: one debit, no refund", ledger)
			}
			if m, err := r.n.Message(context.Background(), "acme", rc.MessageID); err != nil || m.State != record.StateUnknown || m.Cost().Minor != 25 {
				t.Fatalf("record: %+v, %v", m, err)
			}
			if got := r.events.String(); got != "sms:pending,sms:unknown" {
				t.Fatalf("events = %s", got)
			}
		})
	}
}

// TestLostAnswerRetryWithSameKeySendsOnce: the vendor takes the message
// and the answer is lost; the client's retry with the same key gets the
// first (unknown) receipt back, and the vendor never gets a second copy.
func TestLostAnswerRetryWithSameKeySendsOnce(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	got := 0
	r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		mu.Lock()
		got++
		mu.Unlock()
		return nil, errors.New("read tcp: connection reset by peer") // after the vendor took it
	})
	req := smsReq("hello")
	req.IdempotencyKey = "order-42"
	first, err := r.n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || first.Status != record.StateUnknown {
		t.Fatalf("first: %+v, %v", first, err)
	}
	for range 3 {
		again, err := r.n.Send(context.Background(), req)
		if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again.MessageID != first.MessageID || again.Status != record.StateUnknown {
			t.Fatalf("repeat: %+v, %v", again, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 1 || r.balance(t) != opening-25 {
		t.Fatalf("vendor got %d copies, balance %d: want 1 copy, charged once", got, r.balance(t))
	}
}

// TestRefusedSendFreesItsKey: only a certain non-acceptance frees the key.
func TestRefusedSendFreesItsKey(t *testing.T) {
	r := newRig(t)
	r.sms.FailNext(3, notify.CodeUnavailable)
	req := smsReq("hello")
	req.IdempotencyKey = "k"
	if _, err := r.n.Send(context.Background(), req); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("first: %v", err)
	}
	rc, err := r.n.Send(context.Background(), req)
	if err != nil || rc.Status != record.StateSent || r.sms.Len() != 1 || r.balance(t) != opening-25 {
		t.Fatalf("retry: %+v, %v; sent %d, balance %d", rc, err, r.sms.Len(), r.balance(t))
	}
}

// TestIdempotencyFingerprintIsTakenAfterNormalisation: "+91 98765 43210"
// and "9876543210" are the same request.
func TestIdempotencyFingerprintIsTakenAfterNormalisation(t *testing.T) {
	k := notifytest.New(t)
	ctx := context.Background()
	first, err := k.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "+91 98765 43210",
		Message: "Your order shipped", IdempotencyKey: "ship-1"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := k.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "Your order shipped", IdempotencyKey: "ship-1"})
	if err != nil || again.MessageID != first.MessageID || len(k.SentSMS()) != 1 {
		t.Fatalf("repeat: %+v, %v; sent %d", again, err, len(k.SentSMS()))
	}
	_, err = k.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543211",
		Message: "Your order shipped", IdempotencyKey: "ship-1"})
	if notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("another number under the same key: %v, want conflict", err)
	}
}

// TestSendOTPWithAFieldOnlyTheChatLegRejectsSendsNothing: both legs are
// prepared before either is charged or sent.
func TestSendOTPWithAFieldOnlyTheChatLegRejectsSendsNothing(t *testing.T) {
	cases := map[string]*otp.Request{
		"unknown action": {To: "9876543210", OTP: "482913", Action: "launch-missiles"},
		"brand of 45 characters": {To: "9876543210", OTP: "482913",
			BrandName: strings.Repeat("b", 45)},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			k := notifytest.New(t)
			req.Account = notifytest.AccountID
			rc, err := k.Notifier.Send(context.Background(), req)
			if notify.CodeOf(err) != notify.CodeInvalidArgument || rc != nil {
				t.Fatalf("SendOTP = %+v, %v; want invalid_argument", rc, err)
			}
			if n := len(k.SentSMS()) + len(k.SentChat()); n != 0 {
				t.Fatalf("%d messages went out", n)
			}
			k.AssertBalance(t, notifytest.DefaultBalance)
		})
	}
}

// TestDualOTPUnknownLegMakesTheWholeUnknown: the chat leg's answer is lost
// and the SMS leg is refused: the pair's outcome is unknown, the chat
// charge stands, and a repeat with the key sends nothing more.
func TestDualOTPUnknownLegMakesTheWholeUnknown(t *testing.T) {
	r := newRig(t)
	r.sms.FailNext(1, notify.CodeRejected)
	r.chat.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return nil, errors.New("EOF after the request was written")
	})
	req := &otp.Request{Account: "acme", To: "9876543210", OTP: "482913", IdempotencyKey: "otp-1"}
	rc, err := r.n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || rc.Status != record.StateUnknown || rc.Cost.Minor != 40 ||
		rc.Legs[0].Status != record.StateFailed || rc.Legs[1].Status != record.StateUnknown {
		t.Fatalf("SendOTP = %+v, %v", rc, err)
	}
	if r.balance(t) != opening-40 {
		t.Fatalf("balance %d, want the chat leg's 40 kept", r.balance(t))
	}
	again, err := r.n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again.MessageID != rc.MessageID || r.balance(t) != opening-40 {
		t.Fatalf("repeat = %+v, %v, balance %d", again, err, r.balance(t))
	}
	for i, want := range []record.State{record.StateFailed, record.StateUnknown} {
		if m, err := r.n.Message(context.Background(), "acme", rc.Legs[i].MessageID); err != nil || m.State != want || m.Request != otp.Kind {
			t.Fatalf("record of leg %d: %+v, %v; want %s, of an otp request", i, m, err, want)
		}
	}
	if ev := r.events.String(); !strings.HasSuffix(ev, ",otp:unknown") {
		t.Fatalf("events = %s: observers must see the combined receipt", ev)
	}
}

// panickyLedger panics when it opens a chat record.
type panickyLedger struct{ store.Ledger }

func (l panickyLedger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if m.Kind == chat.Kind {
		panic("ledger bug")
	}
	return l.Ledger.Open(ctx, m)
}

// OpenUnlisted goes through Open, as a wrapper's must.
func (l panickyLedger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	return storeutil.OpenUnlisted(ctx, l, m, to, stopping)
}

// TestDualOTPContainsAPanicInALeg: a panic anywhere in a leg (here the
// ledger) fails that leg, not the process or the other leg.
func TestDualOTPContainsAPanicInALeg(t *testing.T) {
	r := newRigLedger(t, func(l store.Ledger) store.Ledger { return panickyLedger{l} })
	rc, err := r.n.Send(context.Background(), &otp.Request{Account: "acme", To: "9876543210", OTP: "482913"})
	if err != nil || rc.Status != record.StateSent || rc.Legs[0].Status != record.StateSent ||
		rc.Legs[1].ErrorCode != notify.CodeInternal || !strings.Contains(rc.Legs[1].Error, "panicked") {
		t.Fatalf("SendOTP = %+v, %v", rc, err)
	}
}

func TestNewRefusesNilOptions(t *testing.T) {
	cases := map[string]notify.Option{
		"nil option":          nil,
		"WithClock(nil)":      notify.WithClock(nil),
		"WithIDGenerator nil": notify.WithIDGenerator(nil),
		"WithIdempotency nil": notify.WithIdempotency(nil),
		"WithObserver nil":    notify.WithObserver(nil),
		"WithChannel nil":     notify.WithChannel(nil),
		"WithRateLimit nil":   notify.WithRateLimit(nil),
		"WithOTPThrottle nil": notify.WithOTPThrottle(nil),
		"WithPrices nil":      notify.WithPrices(nil),
		"WithProviderTimeout": notify.WithProviderTimeout("", time.Second),
	}
	for name, opt := range cases {
		n, err := notify.New(memstore.NewAccounts(), memstore.NewLedger(nil), opt)
		if err == nil || n != nil {
			t.Errorf("%s: New = %v, %v; want an error", name, n, err)
		}
	}
}

// TestRepeatIsAnsweredBeforePrepare: the first send's answer is lost
// (unknown, charged); by the repeat, preparing the request would fail as
// unavailable (a resolver down, a gateway gone). The repeat must still get
// the first receipt and its unknown error, never "unavailable", which
// would tell the client it may send again under a new key.
func TestRepeatIsAnsweredBeforePrepare(t *testing.T) {
	ch := &testChannel{kind: sms.Kind}
	r := newRig(t, notify.WithChannel(ch)) // replaces the rig's SMS channel
	ch.provider = r.sms
	r.sms.FailNext(1, notify.CodeOutcomeUnknown)
	req := &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped", IdempotencyKey: "ship-1"}
	first, err := r.n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || first == nil {
		t.Fatalf("first = %+v, %v; want outcome_unknown", first, err)
	}
	charged := r.balance(t)

	ch.prepareErr = notify.Errorf(notify.CodeUnavailable, "the resolver is down")
	again, err := r.n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again == nil || again.MessageID != first.MessageID {
		t.Fatalf("repeat = %+v, %v; want the first receipt and outcome_unknown", again, err)
	}
	if n := len(r.sms.Sent()); n != 1 || r.balance(t) != charged {
		t.Fatalf("sent %d, balance %d (was %d)", n, r.balance(t), charged)
	}

	// A request that cannot be prepared holds no key: fixed, it sends.
	req2 := &sms.Request{Account: "acme", To: "9876543210", Message: "Hello", IdempotencyKey: "hello-1"}
	if _, err := r.n.Send(context.Background(), req2); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("unpreparable send: %v", err)
	}
	ch.prepareErr = nil
	if _, err := r.n.Send(context.Background(), req2); err != nil {
		t.Fatalf("the same request once it can be prepared: %v", err)
	}
}
