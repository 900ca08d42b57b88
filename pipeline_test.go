package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// testChannel is the smallest useful Channel: it checks To and Message and
// hands the envelope to one provider. The real channels live in channel/.
type testChannel struct {
	kind     notify.Kind
	provider notify.Provider
	// prepareErr, when set, is what Prepare answers.
	prepareErr error
	// refund, when set, is what Refund answers; else an SMS keeps its
	// charge and a chat message gets it back, as the real channels say.
	refund func(m *record.Message, r *notify.DeliveryReport) bool
}

func (c *testChannel) Kind() notify.Kind { return c.kind }

func (c *testChannel) Recipient(to string) (string, error) { return strings.TrimSpace(to), nil }

func (c *testChannel) Prepare(_ context.Context, acct *notify.Account, req notify.Request) (*notify.Envelope, error) {
	if c.prepareErr != nil {
		return nil, c.prepareErr
	}
	env := &notify.Envelope{Kind: c.kind, Provider: c.provider.Name(), Units: 1, Class: record.Transactional}
	var fe record.FieldErrors
	switch r := req.(type) {
	case *sms.Request:
		if r.To == "" {
			fe.Add("to", "is required")
		}
		if r.Message == "" {
			fe.Add("message", "is required")
		}
		if strings.HasPrefix(r.Message, "panic") {
			panic("test channel told to panic")
		}
		env.To, env.Domain = r.To, r.Domain
		env.Units = 1 + len(r.Message)/160
		set, _ := sms.SettingsOf(acct)
		env.Content = &sms.Message{Route: r.Route, Text: r.Message, OTP: r.Message, SenderID: set.SenderID}
	case *chat.Request:
		if r.To == "" {
			fe.Add("to", "is required")
		}
		env.To, env.Domain = r.To, r.Domain
		env.Content = &chat.Message{Gateway: chat.GatewayCloud, OTP: r.OTP, Text: r.Message,
			Auto: r.Gateway == "" || r.Gateway == chat.GatewayAuto}
		chat.MessageOf(env).Fallback = chat.MessageOf(env).Auto
		if r.Gateway == chat.GatewayQR {
			chat.MessageOf(env).Gateway = chat.GatewayQR
		}
		env.Route = string(chat.MessageOf(env).Gateway)
		env.CarriesOTP = r.OTP != ""
		if chat.MessageOf(env).Auto && env.Route == string(chat.GatewayCloud) && !env.CarriesOTP {
			again := *r
			again.Gateway = ""
			env.Resend, _ = json.Marshal(&again) // what Failed sends again
		}
	default:
		return nil, notify.Errorf(notify.CodeInvalidArgument, "test channel: unsupported request %T", req)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	return env, nil
}

// Refund implements notify.ReportHandler.
func (c *testChannel) Refund(m *record.Message, r *notify.DeliveryReport) bool {
	if c.refund != nil {
		return c.refund(m, r)
	}
	return c.kind != sms.Kind
}

// Failed implements notify.ReportHandler as the chat channel does: a
// cloud message a report failed goes again through the QR gateway.
func (c *testChannel) Failed(_ context.Context, m *record.Message, _ *notify.DeliveryReport, key string) (notify.Request, error) {
	var req chat.Request
	if err := json.Unmarshal(m.Resend, &req); err != nil {
		return nil, err
	}
	req.Account, req.Gateway, req.IdempotencyKey = m.Account, chat.GatewayQR, key
	return &req, nil
}

func (c *testChannel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	return c.provider.Send(ctx, env)
}

// flatPricer charges 25 paise a unit for SMS, 40 for cloud chat and 10
// for QR chat.
type flatPricer struct{}

func (flatPricer) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	per := int64(25)
	if env.Kind == chat.Kind {
		per = 40
		if env.Route == string(chat.GatewayQR) {
			per = 10
		}
	}
	return notify.Money{Minor: per * int64(env.Units), Currency: acct.Currency}, nil
}

type rig struct {
	acme
	ledger store.Ledger
	sms    *memprovider.Provider
	chat   *memprovider.Provider
	events *eventLog
}

type eventLog struct {
	mu  sync.Mutex
	got []string
}

func (l *eventLog) Observe(_ context.Context, e notify.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kind := otp.Kind // a dual OTP's combined receipt has no envelope
	if e.Envelope != nil {
		kind = e.Envelope.Kind
	}
	l.got = append(l.got, string(kind)+":"+string(e.Type))
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, ",")
}

const opening = 1000 // paise

func newRig(t *testing.T, opts ...notify.Option) *rig {
	t.Helper()
	return newRigLedger(t, nil, opts...)
}

// newRigLedger is newRig with the rig's memstore.Ledger passed through
// wrap, when not nil.
func newRigLedger(t *testing.T, wrap func(store.Ledger) store.Ledger, opts ...notify.Option) *rig {
	t.Helper()
	accounts := memstore.NewAccounts()
	acct := &notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}
	if err := accounts.Add(acct, "key-acme"); err != nil {
		t.Fatal(err)
	}
	if err := accounts.Add(&notify.Account{ID: "off", Name: "Off", Currency: record.INR(), Disabled: true}); err != nil {
		t.Fatal(err)
	}
	r := &rig{
		acme:   newAcme(t),
		sms:    memprovider.New("memsms"),
		chat:   memprovider.New("memchat"),
		events: &eventLog{},
	}
	r.ledger = memstore.NewLedger(r.wallet)
	if wrap != nil {
		r.ledger = wrap(r.ledger)
	}
	base := []notify.Option{
		notify.WithChannel(&testChannel{kind: sms.Kind, provider: r.sms}),
		notify.WithChannel(&testChannel{kind: chat.Kind, provider: r.chat}),
		notify.WithPrices(flatPricer{}),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithObserver(r.events),
		notify.WithRetry(notify.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}),
	}
	n, err := notify.New(accounts, r.ledger, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	r.n = n
	return r
}

// acme is what the rigs of these tests share: the Notifier under test,
// and the wallet of its account acme, which opens with opening.
type acme struct {
	n      *notify.Notifier
	wallet *memstore.Wallet
}

func newAcme(t *testing.T) acme {
	t.Helper()
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	return acme{wallet: w}
}

// balance returns acme's balance, in paise.
func (a *acme) balance(t *testing.T) int64 {
	t.Helper()
	b, err := a.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// message returns acme's record id, failing the test without one.
func (a *acme) message(t *testing.T, id string) *record.Message {
	t.Helper()
	m, err := a.n.Message(context.Background(), "acme", id)
	if err != nil {
		t.Fatalf("Message(%s): %v", id, err)
	}
	return m
}

func smsReq(msg string) *sms.Request {
	return &sms.Request{Account: "acme", To: "9876543210", Message: msg}
}

func TestSendSuccess(t *testing.T) {
	r := newRig(t)
	rc, err := r.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hello", Domain: "shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateSent || rc.Provider != "memsms" || rc.ProviderMessageID == "" ||
		rc.Cost.Minor != 25 || rc.Balance.Minor != opening-25 || !rc.Metered || rc.Attempts != 1 ||
		rc.Domain != "shop.example" || len(rc.MessageID) != 36 {
		t.Fatalf("receipt = %+v", rc)
	}
	if got := r.balance(t); got != opening-25 {
		t.Fatalf("balance = %d", got)
	}
	if sent := r.sms.Sent(); len(sent) != 1 || sent[0].ID != rc.MessageID || sent[0].Price.Minor != 25 {
		t.Fatalf("provider saw %+v", sent)
	}
	if m, err := r.n.Message(context.Background(), "acme", rc.MessageID); err != nil || m.State != record.StateSent {
		t.Fatalf("record: %+v, %v", m, err)
	}
	if got := r.events.String(); got != "sms:pending,sms:sent" {
		t.Fatalf("events = %s", got)
	}
}

func TestSendRejectsBeforeCharging(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		name string
		call func() error
		code notify.Code
	}{
		{"bad fields", func() error {
			_, err := r.n.Send(context.Background(), &sms.Request{Account: "acme"})
			var e *notify.Error
			if errors.As(err, &e) && len(e.Fields) != 2 {
				t.Errorf("fields = %+v, want to and message", e.Fields)
			}
			return err
		}, notify.CodeInvalidArgument},
		{"nil request", func() error { _, err := r.n.Send(context.Background(), nil); return err }, notify.CodeInvalidArgument},
		{"no account", func() error {
			_, err := r.n.Send(context.Background(), &sms.Request{To: "9876543210", Message: "x"})
			return err
		}, notify.CodeInvalidArgument},
		{"unknown account", func() error {
			_, err := r.n.Send(context.Background(), &sms.Request{Account: "nobody", To: "9876543210", Message: "x"})
			return err
		}, notify.CodeNotFound},
		{"disabled account", func() error {
			_, err := r.n.Send(context.Background(), &sms.Request{Account: "off", To: "9876543210", Message: "x"})
			return err
		}, notify.CodePermissionDenied},
		{"no e-mail channel", func() error {
			_, err := r.n.Send(context.Background(), &email.Request{Account: "acme", To: "a@b.example", Message: "x"})
			return err
		}, notify.CodeUnavailable},
		{"insufficient funds", func() error {
			_, err := r.n.Send(context.Background(), smsReq(strings.Repeat("x", 160*41)))
			return err
		}, notify.CodeInsufficientFunds},
		{"canceled before", func() error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := r.n.Send(ctx, smsReq("x"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("errors.Is(err, context.Canceled) is false for %v", err)
			}
			return err
		}, notify.CodeCanceled},
		{"channel panics in Prepare", func() error { _, err := r.n.Send(context.Background(), smsReq("panic now")); return err }, notify.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if got := notify.CodeOf(err); got != c.code {
				t.Fatalf("code = %q (%v), want %q", got, err, c.code)
			}
			var e *notify.Error
			if !errors.As(err, &e) || e.Op == "" {
				t.Fatalf("error %v is not an *notify.Error with Op", err)
			}
		})
	}
	if got := r.balance(t); got != opening {
		t.Fatalf("balance moved to %d", got)
	}
	if n := r.sms.Len(); n != 0 {
		t.Fatalf("provider called %d times", n)
	}
}

func TestRetryThenSuccessChargesOnce(t *testing.T) {
	r := newRig(t)
	r.sms.FailNext(2, notify.CodeUnavailable)
	rc, err := r.n.Send(context.Background(), smsReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Attempts != 3 || r.sms.Len() != 1 {
		t.Fatalf("attempts = %d, captured = %d", rc.Attempts, r.sms.Len())
	}
	if got := r.balance(t); got != opening-25 {
		t.Fatalf("balance = %d", got)
	}
}

func TestFailuresAreRefundedOnce(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(r *rig)
		code     notify.Code
		attempts int
	}{
		{"permanent", func(r *rig) { r.sms.FailNext(1, notify.CodeRejected) }, notify.CodeRejected, 1},
		{"temporary, retries exhausted", func(r *rig) { r.sms.FailNext(5, notify.CodeUnavailable) }, notify.CodeUnavailable, 3},
		{"rate limited longer than the policy allows", func(r *rig) {
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return nil, &notify.Error{Code: notify.CodeRateLimited, RetryAfter: time.Minute, Err: errors.New("slow down")}
			})
		}, notify.CodeRateLimited, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.setup(r)
			rc, err := r.n.Send(context.Background(), smsReq("hi"))
			if got := notify.CodeOf(err); got != c.code {
				t.Fatalf("code = %q (%v), want %q", got, err, c.code)
			}
			if rc == nil || rc.Status != record.StateFailed || rc.Attempts != c.attempts || rc.Cost.Minor != 0 ||
				rc.Balance.Minor != opening || rc.ErrorCode != c.code {
				t.Fatalf("receipt = %+v", rc)
			}
			if got := r.balance(t); got != opening {
				t.Fatalf("balance = %d, want %d", got, opening)
			}
			ledger, _, err := r.wallet.Ledger("acme")
			if err != nil {
				t.Fatal(err)
			}
			var debits, credits int
			for _, e := range ledger {
				switch {
				case e.Ref == rc.MessageID:
					debits++
				case e.Ref == "refund:"+rc.MessageID:
					credits++
				}
			}
			if debits != 1 || credits != 1 {
				t.Fatalf("ledger has %d debits and %d refunds of the message: %+v", debits, credits, ledger)
			}
			if m, err := r.n.Message(context.Background(), "acme", rc.MessageID); err != nil || m.State != record.StateFailed || !m.Refunded {
				t.Fatalf("record: %+v, %v", m, err)
			}
			if got := r.events.String(); got != "sms:pending,sms:failed" {
				t.Fatalf("events = %s", got)
			}
		})
	}
}

// blockUntilDone is a provider handler that waits for its context.
func blockUntilDone(ctx context.Context, _ *notify.Envelope) (*notify.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestDeadlinesAndCancellation(t *testing.T) {
	t.Run("caller cancels before the vendor call: canceled, refunded", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		// The StatePending event comes after the charge and before the delivery.
		r := newRig(t, notify.WithObserver(observerFunc(func(_ context.Context, e notify.Event) {
			if e.Type == record.StatePending {
				cancel()
			}
		})))
		rc, err := r.n.Send(ctx, smsReq("hi"))
		if notify.CodeOf(err) != notify.CodeCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if rc.Status != record.StateFailed || rc.Attempts != 0 || r.sms.Len() != 0 || r.balance(t) != opening {
			t.Fatalf("receipt = %+v, vendor got %d, balance %d", rc, r.sms.Len(), r.balance(t))
		}
	})
	t.Run("caller cancels during a call the provider knows went nowhere", func(t *testing.T) {
		r := newRig(t)
		ctx, cancel := context.WithCancel(context.Background())
		r.sms.SetHandler(func(hctx context.Context, _ *notify.Envelope) (*notify.Result, error) {
			cancel()
			<-hctx.Done()
			return nil, notify.WithCode(notify.CodeUnavailable, hctx.Err()) // e.g. still dialing
		})
		_, err := r.n.Send(ctx, smsReq("hi"))
		if notify.CodeOf(err) != notify.CodeCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if got := r.balance(t); got != opening {
			t.Fatalf("balance = %d: a send the vendor certainly did not get must be refunded", got)
		}
	})
	t.Run("no retry past the caller's deadline", func(t *testing.T) {
		// An hour's backoff makes a send's longest two hours and more, which
		// the settle threshold must exceed.
		r := newRig(t, notify.WithRetry(notify.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour}),
			notify.WithSettleAfter(3*time.Hour))
		r.sms.FailNext(5, notify.CodeUnavailable)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rc, err := r.n.Send(ctx, smsReq("hi"))
		if notify.CodeOf(err) != notify.CodeUnavailable || rc.Attempts != 1 {
			t.Fatalf("err = %v, attempts = %d", err, rc.Attempts)
		}
	})
}

func TestIdempotency(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	req := smsReq("hello")
	req.IdempotencyKey = "k1"
	first, err := r.n.Send(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.n.Send(ctx, req)
	if err != nil || again.MessageID != first.MessageID {
		t.Fatalf("repeat = %+v, %v", again, err)
	}
	other := smsReq("another text")
	other.IdempotencyKey = "k1"
	if _, err := r.n.Send(ctx, other); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("reused key with another body: %v", err)
	}
	if r.sms.Len() != 1 || r.balance(t) != opening-25 {
		t.Fatalf("sent %d, balance %d", r.sms.Len(), r.balance(t))
	}

	// A failed send frees its key: the retry sends.
	r.sms.FailNext(1, notify.CodeRejected)
	req2 := smsReq("retry me")
	req2.IdempotencyKey = "k2"
	if _, err := r.n.Send(ctx, req2); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("first try: %v", err)
	}
	if _, err := r.n.Send(ctx, req2); err != nil {
		t.Fatalf("second try: %v", err)
	}
	if r.sms.Len() != 2 || r.balance(t) != opening-50 {
		t.Fatalf("sent %d, balance %d", r.sms.Len(), r.balance(t))
	}
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	r := newRig(t)
	var wg sync.WaitGroup
	var ok, conflicts atomic.Int32
	ids := make(chan string, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := smsReq("once")
			req.IdempotencyKey = "same"
			rc, err := r.n.Send(context.Background(), req)
			switch notify.CodeOf(err) {
			case "":
				ok.Add(1)
				ids <- rc.MessageID
			case notify.CodeConflict:
				conflicts.Add(1)
			default:
				t.Errorf("unexpected error %v", err)
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if r.sms.Len() != 1 || len(seen) != 1 || ok.Load()+conflicts.Load() != 32 || r.balance(t) != opening-25 {
		t.Fatalf("sent %d, distinct receipts %d, ok %d, conflicts %d, balance %d",
			r.sms.Len(), len(seen), ok.Load(), conflicts.Load(), r.balance(t))
	}
}

func TestDualOTP(t *testing.T) {
	t.Run("both legs", func(t *testing.T) {
		r := newRig(t)
		rc, err := r.n.Send(context.Background(), &otp.Request{Account: "acme", To: "9876543210", OTP: "482913", BrandName: "Acme"})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Kind != otp.Kind || len(rc.Legs) != 2 || rc.Legs[0].Kind != sms.Kind || rc.Legs[1].Kind != chat.Kind ||
			rc.Cost.Minor != 65 || rc.Balance.Minor != opening-65 || rc.Status != record.StateSent {
			t.Fatalf("receipt = %+v", rc)
		}
		if s := r.sms.Sent(); len(s) != 1 || sms.MessageOf(s[0]).Route != sms.RouteOTP {
			t.Fatalf("sms leg = %+v", s)
		}
	})
	t.Run("one leg fails", func(t *testing.T) {
		r := newRig(t)
		r.chat.FailNext(1, notify.CodeRejected)
		rc, err := r.n.Send(context.Background(), &otp.Request{Account: "acme", To: "9876543210", OTP: "482913"})
		if err != nil {
			t.Fatal(err)
		}
		if rc.Legs[0].Status != record.StateSent || rc.Legs[1].Status != record.StateFailed ||
			rc.Legs[1].ErrorCode != notify.CodeRejected || rc.Cost.Minor != 25 || r.balance(t) != opening-25 {
			t.Fatalf("receipt = %+v, legs %+v %+v", rc, rc.Legs[0], rc.Legs[1])
		}
		var refunds int
		ledger, _, err := r.wallet.Ledger("acme")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ledger {
			if strings.HasPrefix(e.Ref, "refund:") {
				refunds++
			}
		}
		if refunds != 1 {
			t.Fatalf("%d refunds, want 1", refunds)
		}
	})
	t.Run("both fail", func(t *testing.T) {
		r := newRig(t)
		r.sms.FailNext(1, notify.CodeRejected)
		r.chat.FailNext(1, notify.CodeRejected)
		rc, err := r.n.Send(context.Background(), &otp.Request{Account: "acme", To: "9876543210", OTP: "482913"})
		if notify.CodeOf(err) != notify.CodeRejected || rc.Status != record.StateFailed || rc.Cost.Minor != 0 || r.balance(t) != opening {
			t.Fatalf("err = %v, receipt = %+v", err, rc)
		}
	})
}

func TestDualOTPNamesItsOwnFields(t *testing.T) {
	r := newRig(t)
	rc, err := r.n.Send(context.Background(), &otp.Request{Account: "acme", To: "9876543210"})
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != "otp" {
		t.Fatalf("err = %v: the SMS leg's bad field must be named otp, as in the request", err)
	}
	if rc != nil || r.sms.Len()+r.chat.Len() != 0 || r.balance(t) != opening {
		t.Fatalf("receipt %+v, sent %d, balance %d: nothing may go out", rc, r.sms.Len()+r.chat.Len(), r.balance(t))
	}
}

func TestFailoverToACheaperGatewayIsRepriced(t *testing.T) {
	r := newRig(t)
	r.chat.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return &notify.Result{Route: string(chat.GatewayQR), Note: "cloud unavailable: delivered by qr"}, nil
	})
	rc, err := r.n.Send(context.Background(), &chat.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Cost.Minor != 10 || rc.Balance.Minor != opening-10 || r.balance(t) != opening-10 || rc.Gateway != string(chat.GatewayQR) {
		t.Fatalf("receipt = %+v, balance %d", rc, r.balance(t))
	}
	ledger, _, _ := r.wallet.Ledger("acme")
	if len(ledger) != 2 || ledger[1].Ref != "adjust:"+rc.MessageID || ledger[1].Amount.Minor != 30 {
		t.Fatalf("ledger = %+v", ledger)
	}
}

// foreignQRPricer is flatPricer, but prices the QR gateway in US cents.
type foreignQRPricer struct{ flatPricer }

func (p foreignQRPricer) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	if env.Kind == chat.Kind && env.Route == string(chat.GatewayQR) {
		return notify.Money{Minor: 1, Currency: record.Currency{Code: "USD", Exponent: 2}}, nil
	}
	return p.flatPricer.Price(acct, env)
}

// A cheaper price in another currency than the charge's is no price cut:
// the ledger would refuse it, and the send is no less sent.
func TestFailoverPricedInAnotherCurrencyKeepsTheCharge(t *testing.T) {
	r := newRig(t, notify.WithPrices(foreignQRPricer{}))
	r.chat.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return &notify.Result{Route: string(chat.GatewayQR), Note: "cloud unavailable: delivered by qr"}, nil
	})
	rc, err := r.n.Send(context.Background(), &chat.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.n.Message(context.Background(), "acme", rc.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Cost.Minor != 40 || r.balance(t) != opening-40 || m.State != record.StateSent || m.Charge.Minor != 40 || m.Note != rc.Note {
		t.Fatalf("receipt = %+v, record %+v, balance %d", rc, m, r.balance(t))
	}
}

func TestUnmeteredAndBalance(t *testing.T) {
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	p := memprovider.New("mem")
	n, err := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(&testChannel{kind: sms.Kind, provider: p}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := n.Send(context.Background(), smsReq("free"))
	if err != nil || rc.Metered || rc.Cost.Minor != 0 {
		t.Fatalf("receipt = %+v, %v", rc, err)
	}
	if _, err := n.Balance(context.Background(), "acme"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("Balance without wallet: %v", err)
	}

	r := newRig(t)
	b, err := r.n.Balance(context.Background(), "acme")
	if err != nil || b.Name != "Acme" || b.Available.Minor != opening || b.Available.Currency.Code != "INR" {
		t.Fatalf("balance = %+v, %v", b, err)
	}
}

// noIDProvider breaks the Provider contract: success without a message ID.
type noIDProvider struct{}

func (noIDProvider) Name() string { return "noid" }
func (noIDProvider) Send(context.Context, *notify.Envelope) (*notify.Result, error) {
	return &notify.Result{}, nil
}

func TestObserverPanicIsContained(t *testing.T) {
	r := newRig(t, notify.WithObserver(observerFunc(func(context.Context, notify.Event) { panic("observer bug") })))
	if _, err := r.n.Send(context.Background(), smsReq("hi")); err != nil {
		t.Fatal(err)
	}
}

// A key on a Notifier that keeps no keys would be ignored, and a repeat
// would send twice: it is refused instead, naming the field and the option,
// before anything is charged or sent.
func TestIdempotencyKeyNeedsAStore(t *testing.T) {
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	smsP, chatP := memprovider.New("memsms"), memprovider.New("memchat")
	n, err := notify.New(accounts, memstore.NewLedger(wal),
		notify.WithChannel(&testChannel{kind: sms.Kind, provider: smsP}),
		notify.WithChannel(&testChannel{kind: chat.Kind, provider: chatP}),
		notify.WithPrices(flatPricer{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keyed := smsReq("hello")
	keyed.IdempotencyKey = "k1"
	sends := map[string]func() error{
		"SendSMS": func() error { _, err := n.Send(ctx, keyed); return err },
		"SendOTP": func() error {
			_, err := n.Send(ctx, &otp.Request{Account: "acme", To: "9876543210", OTP: "482913", IdempotencyKey: "k2"})
			return err
		},
		"SendSMSBulk": func() error {
			_, err := n.Send(ctx, &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi", IdempotencyKey: "k3"},
				To: []string{"9876543210", "9876543211"}})
			return err
		},
	}
	for name, send := range sends {
		err := send()
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 ||
			e.Fields[0].Field != "idempotency_key" || !strings.Contains(e.Fields[0].Message, "WithIdempotency") {
			t.Errorf("%s with a key and no idempotency store: %v", name, err)
		}
	}
	b, err := wal.Balance(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if smsP.Len()+chatP.Len() != 0 || b.Available.Minor != opening {
		t.Fatalf("sent %d, balance %d: nothing may go out", smsP.Len()+chatP.Len(), b.Available.Minor)
	}
	// Without a key the same Notifier sends.
	if _, err := n.Send(ctx, smsReq("hello")); err != nil || smsP.Len() != 1 {
		t.Fatalf("a send without a key: %v, sent %d", err, smsP.Len())
	}
}

// The settle threshold must exceed the longest a send can take, computed
// from the retry policy and the attempt timeouts, or live sends would be
// settled as abandoned.
func TestSettleAfterMustOutlastASend(t *testing.T) {
	accounts := memstore.NewAccounts()
	if got, want := (notify.RetryPolicy{}).Longest(10*time.Second), 34*time.Second; got != want {
		t.Fatalf("the default policy's longest send = %v, want %v (3 attempts of 10s, 2 waits of up to 2s)", got, want)
	}
	if got := (notify.RetryPolicy{MaxAttempts: 1}).Longest(0); got != 0 {
		t.Fatalf("attempts bounded by the caller alone: longest = %v, want 0", got)
	}
	for _, c := range []struct {
		name string
		opts []notify.Option
		ok   bool
	}{
		{"the defaults", nil, true},
		{"just over the defaults' longest", []notify.Option{notify.WithSettleAfter(34*time.Second + 1)}, true},
		{"the defaults' longest", []notify.Option{notify.WithSettleAfter(34 * time.Second)}, false},
		{"a provider's longer timeout", []notify.Option{notify.WithProviderTimeout("slow", time.Minute)}, false},
		{"fewer attempts", []notify.Option{notify.WithSettleAfter(11 * time.Second), notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1})}, true},
		{"attempts bounded by the caller", []notify.Option{notify.WithSettleAfter(time.Second), notify.WithTimeout(0)}, true},
	} {
		_, err := notify.New(accounts, memstore.NewLedger(nil), c.opts...)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok = %v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "WithSettleAfter") {
			t.Errorf("%s: the error must name the option: %v", c.name, err)
		}
	}
}

// TestKeyedSendWhoseReceiptCannotBeStored: with a clock past year 9999 a
// receipt does not encode, so its key cannot be completed. The send that
// went out still answers its receipt, with a note; a repeat of the key is
// Conflict (the key stays held), never a second send, and nothing panics.
func TestKeyedSendWhoseReceiptCannotBeStored(t *testing.T) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRig(t, notify.WithClock(func() time.Time { return far }))
	req := smsReq("hello")
	req.IdempotencyKey = "k-far"
	rc, err := r.n.Send(context.Background(), req)
	if err != nil || rc.Status != record.StateSent || !strings.Contains(rc.Note, "idempotency record failed") {
		t.Fatalf("send = %+v, %v; want sent, with a note that the key was not completed", rc, err)
	}
	if _, err := r.n.Send(context.Background(), req); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("repeat = %v, want Conflict", err)
	}
	if got := len(r.sms.Sent()); got != 1 {
		t.Fatalf("the vendor got %d messages, want 1", got)
	}
}

// observerFunc adapts a function to notify.Observer.
type observerFunc func(ctx context.Context, e notify.Event)

func (f observerFunc) Observe(ctx context.Context, e notify.Event) { f(ctx, e) }
