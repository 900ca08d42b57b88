package notify_test

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// queueRig is a Notifier with a real SMS channel over a memprovider, on a
// memqueue and a clock the test moves.
type queueRig struct {
	acme
	q      *memqueue.Queue
	clock  *testclock.Clock
	vendor *memprovider.Provider
	ledger *memstore.Ledger
	events *eventLog
}

var queueEpoch = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func newQueueRig(t *testing.T, opts ...notify.Option) *queueRig {
	t.Helper()
	return newQueueRigSMS(t, sms.Config{}, opts...)
}

// newQueueRigSMS is newQueueRig with the SMS channel configured by cfg
// (its Provider set to the rig's vendor).
func newQueueRigSMS(t *testing.T, cfg sms.Config, opts ...notify.Option) *queueRig {
	t.Helper()
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(),
		Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	r := &queueRig{acme: newAcme(t), clock: testclock.New(queueEpoch), vendor: memprovider.New("memsms"),
		events: &eventLog{}}
	ledger := memstore.NewLedger(r.wallet)
	r.ledger = ledger
	q, err := memqueue.New(memqueue.Config{Ledger: ledger, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	r.q = q
	cfg.Provider = r.vendor
	smsCh, err := sms.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := []notify.Option{notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()), notify.WithQueue(q),
		notify.WithClock(r.clock.Now), notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithObserver(r.events),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1})}
	if r.n, err = notify.New(accounts, ledger, append(base, opts...)...); err != nil {
		t.Fatal(err)
	}
	return r
}

// notifierOn returns a Notifier like the rig's (its SMS vendor, queue
// and clock) on ledger, a wrapper of the rig's ledger that a test makes
// misbehave or count, with opts added.
func (r *queueRig) notifierOn(t *testing.T, ledger store.Ledger, opts ...notify.Option) *notify.Notifier {
	t.Helper()
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	smsCh, err := sms.New(sms.Config{Provider: r.vendor})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, append([]notify.Option{notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()),
		notify.WithQueue(r.q), notify.WithClock(r.clock.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// run runs every due job, as a worker would.
func (r *queueRig) run() int { return r.q.RunDue(context.Background(), queued.New(r.n)) }

const smsPrice = 25 // wallet.DefaultINR's domestic SMS, in paise

func TestEnqueueSendsOnceWhenTheWorkerRuns(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Order #4411 shipped", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateQueued || rc.Cost.Minor != smsPrice || rc.Balance.Minor != opening-smsPrice {
		t.Fatalf("receipt %+v: want queued, charged %d, balance %d", rc, smsPrice, opening-smsPrice)
	}
	if r.vendor.Len() != 0 {
		t.Fatal("Enqueue sent at once")
	}
	m := r.message(t, rc.MessageID)
	if m.State != record.StateQueued || len(m.Payload) != 0 {
		t.Fatalf("record %s with a payload of %d bytes: want queued, and Notifier.Message hides the payload", m.State, len(m.Payload))
	}
	again, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Order #4411 shipped", IdempotencyKey: "k1"})
	if err != nil || again.MessageID != rc.MessageID {
		t.Fatalf("a repeat of the key: %+v, %v; want the first receipt", again, err)
	}
	if n := r.run(); n != 1 {
		t.Fatalf("ran %d jobs, want 1", n)
	}
	if r.vendor.Len() != 1 || r.run() != 0 {
		t.Fatalf("vendor got %d messages, want 1 and no job left", r.vendor.Len())
	}
	m = r.message(t, rc.MessageID)
	if m.State != record.StateSent || m.ProviderMessageID == "" || r.balance(t) != opening-smsPrice {
		t.Fatalf("record %+v, balance %d: want sent, charged once", m, r.balance(t))
	}
	if got := r.vendor.Sent()[0]; got.ID != rc.MessageID || got.To != "+919876543210" {
		t.Fatalf("vendor got message %s to %s, want %s to +919876543210", got.ID, got.To, rc.MessageID)
	}
	if got := r.events.String(); got != "sms:pending,sms:sent" {
		t.Fatalf("events %s, want the charge at enqueue and the outcome at work", got)
	}
}

func TestEnqueueTxRollbackChargesAndSendsNothing(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	tx := r.q.Begin()
	if _, err := queued.New(r.n).EnqueueTx(ctx, tx, &sms.Request{Account: "acme", To: "9876543210", Message: "Order placed"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r.run() != 0 || r.vendor.Len() != 0 || r.balance(t) != opening {
		t.Fatalf("after a rollback: vendor %d, balance %d; want nothing sent or charged", r.vendor.Len(), r.balance(t))
	}

	tx = r.q.Begin()
	rc, err := queued.New(r.n).EnqueueTx(ctx, tx, &sms.Request{Account: "acme", To: "9876543210", Message: "Order placed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.run() != 1 || r.vendor.Len() != 1 || r.balance(t) != opening-smsPrice {
		t.Fatalf("after a commit: vendor %d, balance %d; want one sent, charged once", r.vendor.Len(), r.balance(t))
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateSent {
		t.Fatalf("record %s, want sent", m.State)
	}
}

func TestEnqueueTxRefusals(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		tx    any
		req   *sms.Request
		field string
	}{
		"no tx":      {nil, &sms.Request{Account: "acme", To: "9876543210", Message: "x"}, "tx"},
		"foreign tx": {"BEGIN", &sms.Request{Account: "acme", To: "9876543210", Message: "x"}, "tx"},
		"with a key": {r.q.Begin(), &sms.Request{Account: "acme", To: "9876543210", Message: "x", IdempotencyKey: "k"}, "idempotency_key"},
	} {
		_, err := queued.New(r.n).EnqueueTx(ctx, tc.tx, tc.req)
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want InvalidArgument naming %s", name, err, tc.field)
		}
	}
	if r.balance(t) != opening {
		t.Fatalf("refusals charged: balance %d", r.balance(t))
	}
}

func TestSendAtFiresOnceAtItsTime(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	at := queueEpoch.Add(2 * time.Hour)
	rc, err := queued.New(r.n).SendAt(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Your table is ready"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateScheduled || !rc.SendAt.Equal(at) || rc.Cost.Minor != smsPrice {
		t.Fatalf("receipt %+v: want scheduled at %v, charged", rc, at)
	}
	r.clock.Advance(2*time.Hour - time.Second)
	if r.run() != 0 || r.vendor.Len() != 0 {
		t.Fatal("a scheduled send went before its time")
	}
	r.clock.Advance(time.Second)
	if r.run() != 1 || r.vendor.Len() != 1 {
		t.Fatalf("at its time: vendor got %d, want 1", r.vendor.Len())
	}
	r.clock.Advance(24 * time.Hour)
	if r.run() != 0 || r.vendor.Len() != 1 {
		t.Fatal("a scheduled send fired twice")
	}
	m := r.message(t, rc.MessageID)
	if m.State != record.StateSent || !m.SendAt.Equal(at) || m.History[0].State != record.StateScheduled {
		t.Fatalf("record %+v: want sent, scheduled first", m)
	}
}

func TestSendAtRefusals(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	req := &sms.Request{Account: "acme", To: "9876543210", Message: "later"}
	if _, err := queued.New(r.n).SendAt(ctx, req, time.Time{}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("a zero time: %v, want InvalidArgument", err)
	}
	if _, err := queued.New(r.n).SendAt(ctx, req, queueEpoch.Add(queued.MaxSchedule+time.Second)); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("beyond MaxSchedule: %v, want InvalidArgument", err)
	}
	otp := &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteOTP, Message: "482913"}
	_, err := queued.New(r.n).SendAt(ctx, otp, queueEpoch.Add(time.Hour))
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "send_at") || strings.Contains(err.Error(), "482913") {
		t.Errorf("a scheduled OTP: %v, want InvalidArgument naming send_at, without the code", err)
	}
	if r.balance(t) != opening || r.q.Len() != 0 {
		t.Fatalf("refusals charged or queued: balance %d, %d jobs", r.balance(t), r.q.Len())
	}
	// A time already past queues it now; an OTP may be queued for now.
	past, err := queued.New(r.n).SendAt(ctx, req, queueEpoch.Add(-time.Minute))
	if err != nil || past.Status != record.StateQueued {
		t.Fatalf("a past time: %+v, %v; want queued", past, err)
	}
	queued, err := queued.New(r.n).Enqueue(ctx, otp)
	if err != nil || queued.Status != record.StateQueued {
		t.Fatalf("an OTP queued now: %+v, %v", queued, err)
	}
	if r.run() != 2 || r.vendor.Len() != 2 {
		t.Fatalf("vendor got %d, want 2", r.vendor.Len())
	}
}

func TestCancelRefundsOnceAndNeverSends(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).SendAt(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Sale starts tomorrow"}, queueEpoch.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c, err := queued.New(r.n).Cancel(ctx, "acme", rc.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != record.StateFailed || c.ErrorCode != notify.CodeCanceled || c.Cost.Minor != 0 || c.Balance.Minor != opening {
		t.Fatalf("cancel receipt %+v: want failed, canceled, refunded", c)
	}
	if _, err := queued.New(r.n).Cancel(ctx, "acme", rc.MessageID); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("a second cancel: %v, want Conflict", err)
	}
	r.clock.Advance(2 * time.Hour)
	if r.run() != 1 || r.vendor.Len() != 0 || r.balance(t) != opening {
		t.Fatalf("after the job ran: vendor %d, balance %d; want nothing sent, refunded once", r.vendor.Len(), r.balance(t))
	}
	if _, err := queued.New(r.n).Cancel(ctx, "acme", "no-such-id"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("cancel of an unknown message: %v, want NotFound", err)
	}
	if got := r.events.String(); got != "sms:pending,sms:failed" {
		t.Fatalf("events %s", got)
	}
}

func TestCancelAfterTheWorkerTookItConflicts(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// The vendor's call runs while the test cancels: the worker holds it.
	entered, release := make(chan struct{}), make(chan struct{})
	r.vendor.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		close(entered)
		<-release
		return &notify.Result{ProviderMessageID: "v-1"}, nil
	})
	done := make(chan int)
	go func() { done <- r.run() }()
	<-entered
	if _, err := queued.New(r.n).Cancel(ctx, "acme", rc.MessageID); notify.CodeOf(err) != notify.CodeConflict {
		t.Errorf("cancel of a message in flight: %v, want Conflict", err)
	}
	close(release)
	<-done
	if m := r.message(t, rc.MessageID); m.State != record.StateSent || r.balance(t) != opening-smsPrice {
		t.Fatalf("record %s, balance %d: want sent and charged", m.State, r.balance(t))
	}
}

func TestQueuedTemporaryRefusalIsRetriedLaterThenRefunded(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r.vendor.FailNext(1, notify.CodeUnavailable)
	if r.run() != 1 {
		t.Fatal("the job did not run")
	}
	m := r.message(t, rc.MessageID)
	if m.State != record.StateQueued || r.balance(t) != opening-smsPrice || r.vendor.Len() != 0 {
		t.Fatalf("after a temporary refusal: %s, balance %d; want queued again, charge held", m.State, r.balance(t))
	}
	r.clock.Advance(time.Minute)
	if r.run() != 1 || r.vendor.Len() != 1 {
		t.Fatalf("the retry did not send: vendor %d", r.vendor.Len())
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateSent || m.Attempts != 2 {
		t.Fatalf("record %s after %d attempts, want sent after 2", m.State, m.Attempts)
	}

	// Refused every time: after 5 takes it fails, refunded once.
	rc, err = queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "again"})
	if err != nil {
		t.Fatal(err)
	}
	r.vendor.FailNext(100, notify.CodeUnavailable)
	for range 10 {
		r.run()
		r.clock.Advance(time.Hour)
	}
	m = r.message(t, rc.MessageID)
	if m.State != record.StateFailed || !m.Refunded || m.Attempts != 5 || r.balance(t) != opening-smsPrice {
		t.Fatalf("record %s after %d attempts (refunded %v), balance %d; want failed after 5, refunded",
			m.State, m.Attempts, m.Refunded, r.balance(t))
	}
	if r.q.Len() != 0 {
		t.Fatalf("%d jobs left", r.q.Len())
	}
}

func TestQueuedUnknownOutcomeIsNeverRetried(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r.vendor.FailNext(1, notify.CodeOutcomeUnknown)
	r.run()
	r.clock.Advance(24 * time.Hour)
	if r.run() != 0 || r.vendor.Len() != 1 {
		t.Fatalf("vendor got %d, want the one unknown send and no retry", r.vendor.Len())
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateUnknown || r.balance(t) != opening-smsPrice {
		t.Fatalf("record %s, balance %d: want unknown, charged", m.State, r.balance(t))
	}
}

func TestQueuedRequestThatNoLongerPreparesIsRefunded(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// Another process works the queue, where the account has been
	// disabled since: the send fails, refunded, and nothing goes out.
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR(), Disabled: true}); err != nil {
		t.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: r.vendor})
	if err != nil {
		t.Fatal(err)
	}
	w, err := notify.New(accounts, r.ledger, notify.WithChannel(smsCh), notify.WithClock(r.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.q.RunDue(ctx, queued.New(w)); n != 1 {
		t.Fatalf("ran %d jobs, want 1", n)
	}
	m := r.message(t, rc.MessageID)
	if m.State != record.StateFailed || !m.Refunded || m.ErrorCode != string(notify.CodePermissionDenied) ||
		r.balance(t) != opening || r.vendor.Len() != 0 {
		t.Fatalf("record %s (%s, refunded %v), balance %d, vendor %d: want failed, refunded, not sent",
			m.State, m.ErrorCode, m.Refunded, r.balance(t), r.vendor.Len())
	}
}

// plainRequest is a request of a channel without a RequestCodec.
type plainRequest struct{ account string }

func (*plainRequest) Kind() notify.Kind       { return "push" }
func (p *plainRequest) AccountID() string     { return p.account }
func (*plainRequest) Key() string             { return "" }
func (*plainRequest) Fingerprint(h hash.Hash) { h.Write([]byte("push")) }

func TestEnqueueNeedsAQueueAndACodec(t *testing.T) {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh))
	if _, err := queued.New(n).Enqueue(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "x"}); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("Enqueue without a queue: %v, want Unavailable", err)
	}
	r := newQueueRig(t, notify.WithChannel(&testChannel{kind: "push", provider: memprovider.New("push")}))
	_, err := queued.New(r.n).Enqueue(context.Background(), &plainRequest{account: "acme"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("a channel without a codec: %v, want InvalidArgument", err)
	}
}

// The codecs of this module's channels give back the request they took.
func TestChannelCodecsRoundTrip(t *testing.T) {
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("s")})
	chatCh, _ := chat.New(chat.Config{Cloud: memprovider.New("c"), CloudOTPTemplate: "otp_code"})
	emailCh, _ := email.New(email.Config{Provider: memprovider.New("e")})
	for _, tc := range []struct {
		codec notify.RequestCodec
		req   notify.Request
	}{
		{smsCh, &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteDLT, Message: "Code 1", DLTTemplateID: "1107", DLTEntityID: "1201", IdempotencyKey: "k"}},
		{chatCh, &chat.Request{Account: "acme", To: "9876543210", TemplateName: "order_update", Variables: record.Vars{"1": "4411"}, Gateway: chat.GatewayCloud}},
		{emailCh, &email.Request{Account: "acme", To: "a@example.com", Subject: "Invoice", Message: "<p>Hi</p>", Purpose: "invoice"}},
	} {
		data, err := tc.codec.EncodeRequest(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		back, err := tc.codec.DecodeRequest(data)
		if err != nil {
			t.Fatal(err)
		}
		if fingerprintOf(back) != fingerprintOf(tc.req) || back.AccountID() != tc.req.AccountID() || back.Key() != tc.req.Key() {
			t.Errorf("%T: decoded %+v, want %+v", tc.req, back, tc.req)
		}
		if _, err := tc.codec.DecodeRequest([]byte(`{"request":{}}`)); err == nil {
			t.Errorf("%T: a payload without an account decoded", tc.req)
		}
	}
	if _, err := smsCh.EncodeRequest(&chat.Request{}); err == nil {
		t.Error("the sms codec encoded a chat request")
	}
}

// promoRenderer renders every template as a promotional text.
type promoRenderer struct{}

func (promoRenderer) Render(_ context.Context, _ notify.Kind, _ *notify.Account, slug, _ string, _ record.Vars) (*notify.Rendered, error) {
	return &notify.Rendered{Slug: slug, Class: record.Promotional, Text: "Sale: 20% off everything today"}, nil
}

// newWindowRig is a queue rig whose SMS channel renders promotional
// templates and keeps TRAI's hours (the default), its clock at 22:00 IST.
func newWindowRig(t *testing.T, queued bool) *queueRig {
	t.Helper()
	r := newQueueRigSMS(t, sms.Config{Renderer: promoRenderer{}})
	if queued {
		return r
	}
	smsCh, err := sms.New(sms.Config{Provider: r.vendor, Renderer: promoRenderer{}})
	if err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	if r.n, err = notify.New(accounts, r.ledger, notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()),
		notify.WithClock(r.clock.Now)); err != nil {
		t.Fatal(err)
	}
	return r
}

var ist = time.FixedZone("IST", 5*3600+1800)

func TestPromotionalSMSAt22ISTGoesAt09(t *testing.T) {
	r := newWindowRig(t, true)
	ctx := context.Background()
	r.clock.Advance(time.Date(2026, 11, 26, 22, 0, 0, 0, ist).Sub(r.clock.Now()))
	rc, err := r.n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", TemplateSlug: "sale"})
	if err != nil {
		t.Fatal(err)
	}
	opening := time.Date(2026, 11, 27, 9, 0, 0, 0, ist)
	if rc.Status != record.StateScheduled || !rc.SendAt.Equal(opening) || r.vendor.Len() != 0 {
		t.Fatalf("Send at 22:00 IST: %+v; want scheduled for 09:00 IST, nothing sent", rc)
	}
	r.clock.Advance(opening.Sub(r.clock.Now()) - time.Second)
	if r.run() != 0 || r.vendor.Len() != 0 {
		t.Fatal("the promotional SMS went before 09:00")
	}
	r.clock.Advance(time.Second)
	if r.run() != 1 || r.vendor.Len() != 1 {
		t.Fatalf("at 09:00 the vendor got %d, want 1", r.vendor.Len())
	}
	// A transactional SMS and an OTP go at 22:00 all the same.
	r.clock.Advance(13 * time.Hour) // 22:00 again
	for _, req := range []*sms.Request{
		{Account: "acme", To: "9876543210", Message: "Your order has shipped"},
		{Account: "acme", To: "9876543210", Route: sms.RouteOTP, Message: "482913"},
	} {
		rc, err := r.n.Send(ctx, req)
		if err != nil || rc.Status != record.StateSent {
			t.Fatalf("%+v at 22:00: %+v, %v; want sent at once", req, rc, err)
		}
	}
}

func TestSendWindowWithoutAQueueIsRateLimited(t *testing.T) {
	r := newWindowRig(t, false)
	r.clock.Advance(time.Date(2026, 11, 26, 22, 0, 0, 0, ist).Sub(r.clock.Now()))
	_, err := r.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", TemplateSlug: "sale"})
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeRateLimited || !errors.As(err, &e) || e.RetryAfter != 11*time.Hour {
		t.Fatalf("%v: want RateLimited with RetryAfter 11h", err)
	}
	if r.vendor.Len() != 0 || r.balance(t) != opening {
		t.Fatal("a held send went out or was charged")
	}
}

func TestQueuedPromotionTakenAfterTheWindowClosedWaits(t *testing.T) {
	r := newWindowRig(t, true)
	ctx := context.Background()
	r.clock.Advance(time.Date(2026, 11, 26, 20, 59, 0, 0, ist).Sub(r.clock.Now()))
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", TemplateSlug: "sale"})
	if err != nil || rc.Status != record.StateQueued {
		t.Fatalf("Enqueue at 20:59: %+v, %v", rc, err)
	}
	// The worker comes at 21:30, after the window closed: it waits.
	r.clock.Advance(31 * time.Minute)
	if r.run() != 1 || r.vendor.Len() != 0 {
		t.Fatal("a promotional SMS went at 21:30")
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateQueued {
		t.Fatalf("record %s, want still queued", m.State)
	}
	r.clock.Advance(time.Date(2026, 11, 27, 9, 0, 0, 0, ist).Sub(r.clock.Now()))
	if r.run() != 1 || r.vendor.Len() != 1 {
		t.Fatalf("at 09:00 the vendor got %d, want 1", r.vendor.Len())
	}
}

func TestBulkPromotionOutsideItsWindowIsRateLimited(t *testing.T) {
	r := newWindowRig(t, true)
	r.clock.Advance(time.Date(2026, 11, 26, 22, 0, 0, 0, ist).Sub(r.clock.Now()))
	_, err := r.n.Send(context.Background(), &sms.BulkRequest{To: []string{"9876543210", "9876543211"},
		Message: sms.Request{Account: "acme", TemplateSlug: "sale"}})
	if notify.CodeOf(err) != notify.CodeRateLimited || r.vendor.Len() != 0 || r.balance(t) != opening {
		t.Fatalf("%v: want RateLimited, nothing sent or charged", err)
	}
}

func TestEnqueueTxMany(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	reqs := []notify.Request{
		&sms.Request{Account: "acme", To: "9876543210", Message: "one"},
		&sms.Request{Account: "acme", To: "9876543211", Message: "two"},
		&sms.Request{Account: "acme", To: "9876543212", Message: "three"},
	}
	tx := r.q.Begin()
	rs, err := queued.New(r.n).EnqueueTxMany(ctx, tx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[1].Status != record.StateQueued || rs[1].To != "+919876543211" || rs[1].Cost.Minor != smsPrice {
		t.Fatalf("receipts %+v", rs)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.run() != 3 || r.vendor.Len() != 3 || r.balance(t) != opening-3*smsPrice {
		t.Fatalf("sent %d, balance %d: want 3 sent, charged once each", r.vendor.Len(), r.balance(t))
	}

	// One bad request refuses them all, naming it, with nothing written.
	bad := []notify.Request{reqs[0], &sms.Request{Account: "acme", To: "12", Message: "x"},
		&sms.Request{Account: "acme", To: "9876543210", Message: "k", IdempotencyKey: "k"}}
	tx = r.q.Begin()
	_, err = queued.New(r.n).EnqueueTxMany(ctx, tx, bad)
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &e) || len(e.Fields) != 2 ||
		e.Fields[0].Field != "requests.1.to" || e.Fields[1].Field != "requests.2.idempotency_key" {
		t.Fatalf("%v (%+v), want InvalidArgument naming requests.1.to and requests.2.idempotency_key", err, e)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.run() != 0 || r.balance(t) != opening-3*smsPrice {
		t.Fatal("a refused batch wrote something")
	}
	if _, err := queued.New(r.n).EnqueueTxMany(ctx, nil, reqs); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("no tx: %v", err)
	}
}

// loseFirstClaim is a ledger whose answer to the first claim of a queued
// record (the move to attempting) is lost after the move landed.
type loseFirstClaim struct {
	store.Ledger
	lost atomic.Bool
}

func (l *loseFirstClaim) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	moved, err := l.Ledger.Move(ctx, account, id, u)
	if err == nil && u.State == record.StateAttempting && u.From.Waiting() && l.lost.CompareAndSwap(false, true) {
		return store.Moved{}, fmt.Errorf("the answer was lost: %w", store.ErrUnavailable)
	}
	return moved, err
}

// A claim whose answer was lost is found to have landed: the worker
// sends the message, once, rather than leaving it attempting for the
// reconciler to charge as unknown.
func TestQueuedClaimWithALostAnswerStillSendsOnce(t *testing.T) {
	r := newQueueRig(t)
	ledger := &loseFirstClaim{Ledger: r.ledger}
	n := r.notifierOn(t, ledger)
	ctx := context.Background()
	rc, err := queued.New(n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Hour)
	r.q.RunDue(ctx, queued.New(n))
	if !ledger.lost.Load() || r.vendor.Len() != 1 {
		t.Fatalf("lost %v, vendor got %d: want the claim's answer lost and the message sent once", ledger.lost.Load(), r.vendor.Len())
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateSent {
		t.Fatalf("record %s, want sent", m.State)
	}
}

// losingQueue is a memqueue whose Open writes the record and its job and
// then loses its answer (lose), or loses it before writing (loseFirst).
type losingQueue struct {
	*memqueue.Queue
	lose, loseFirst bool
}

func (q *losingQueue) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if q.loseFirst {
		return record.Balance{}, fmt.Errorf("the connection went before the commit: %w", store.ErrUnavailable)
	}
	b, err := q.Queue.Open(ctx, m)
	if err == nil && q.lose {
		return record.Balance{}, fmt.Errorf("the commit's answer was lost: %w", store.ErrUnavailable)
	}
	return b, err
}

// TestEnqueueAnswerLost: a queued send whose commit answer was lost is
// read back: found, it is queued for certain, with the balance after its
// charge, and sent once; not found, it is unknown and says that most
// likely nothing was queued or charged, never that a charge stands.
func TestEnqueueAnswerLost(t *testing.T) {
	r := newQueueRig(t)
	lq := &losingQueue{Queue: r.q, lose: true}
	n := r.notifierOn(t, r.ledger, notify.WithQueue(lq))
	ctx := context.Background()
	rc, err := queued.New(n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil || rc.Status != record.StateQueued || rc.Balance.Minor != opening-smsPrice {
		t.Fatalf("a written send whose answer was lost: %+v, %v; want queued, balance %d", rc, err, opening-smsPrice)
	}
	if got := r.q.RunDue(ctx, queued.New(n)); got != 1 || r.vendor.Len() != 1 {
		t.Fatalf("ran %d, sent %d; want once", got, r.vendor.Len())
	}
	lq.lose, lq.loseFirst = false, true
	rc, err = queued.New(n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "again"})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || rc == nil || !strings.Contains(rc.Error, "most likely nothing was queued or charged") ||
		strings.Contains(rc.Error, "stays charged") {
		t.Fatalf("a send lost before any write: %+v, %v; want unknown, most likely nothing charged", rc, err)
	}
	if r.balance(t) != opening-smsPrice || r.q.Len() != 0 {
		t.Fatalf("balance %d, %d jobs: nothing more was written", r.balance(t), r.q.Len())
	}
}

// slotWatch is a ledger that notes how many of slots are taken when a
// record moves to attempting (the claim) and when it moves on from there
// (the outcome).
type slotWatch struct {
	store.Ledger
	slots          *queue.Slots
	atClaim, after atomic.Int64
}

func (l *slotWatch) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State == record.StateAttempting {
		l.atClaim.Store(int64(l.slots.Len()))
	} else {
		l.after.Store(int64(l.slots.Len()))
	}
	return l.Ledger.Move(ctx, account, id, u)
}

// TestQueuedWorkHoldsASendSlotForTheVendorCallOnly: a job run with a
// queue's Slots takes one for its claim and the vendor's call, and gives
// it back before it writes the outcome, so that the write overlaps other
// sends' calls; with no slot free it waits, and a run whose context ends
// there leaves the record queued, unsent, for the job's next run.
func TestQueuedWorkHoldsASendSlotForTheVendorCallOnly(t *testing.T) {
	r := newQueueRig(t)
	slots := queue.NewSlots(1)
	ledger := &slotWatch{Ledger: r.ledger, slots: slots}
	n := r.notifierOn(t, ledger)
	ctx := context.Background()
	rc, err := queued.New(n).Enqueue(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	job := queue.Job{Account: "acme", Message: rc.MessageID, At: r.clock.Now(), Slots: slots}

	// No slot free: the run waits, and gives up with its context.
	if err := slots.Take(ctx); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := queued.New(n).Work(canceled, job); notify.CodeOf(err) != notify.CodeCanceled {
		t.Fatalf("Work with no slot free and its context ended: %v; want %s", err, notify.CodeCanceled)
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateQueued || r.vendor.Len() != 0 {
		t.Fatalf("record %s, vendor got %d: want it queued and unsent", m.State, r.vendor.Len())
	}
	slots.Give()

	var during atomic.Int64
	r.vendor.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		during.Store(int64(slots.Len()))
		return &notify.Result{ProviderMessageID: "v1"}, nil
	})
	if retry, err := queued.New(n).Work(ctx, job); err != nil || !retry.IsZero() {
		t.Fatalf("Work = %v, %v; want done", retry, err)
	}
	if m := r.message(t, rc.MessageID); m.State != record.StateSent {
		t.Fatalf("record %s, want sent", m.State)
	}
	if ledger.atClaim.Load() != 1 || during.Load() != 1 || ledger.after.Load() != 0 || slots.Len() != 0 {
		t.Fatalf("slots taken at the claim %d, during the call %d, at the outcome %d, after %d; want 1, 1, 0, 0",
			ledger.atClaim.Load(), during.Load(), ledger.after.Load(), slots.Len())
	}
}
