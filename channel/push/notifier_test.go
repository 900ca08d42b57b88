package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

const opening = 10000

// rig is a Notifier with the push channel (capture providers for Web Push
// and FCM) and the SMS channel, on a memqueue at a fixed time.
type rig struct {
	n            *notify.Notifier
	q            *memqueue.Queue
	s            *queued.Sender
	ledger       *memstore.Ledger
	wp, fcm, sms *memprovider.Provider
	now          time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return r.now }
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR(), Settings: sms.Settings{SenderID: "ACMEIN"}.Map()}); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	r.ledger = memstore.NewLedger(wal)
	q, err := memqueue.New(memqueue.Config{Ledger: r.ledger, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	r.q = q
	var ch *push.Channel
	ch, r.wp, r.fcm = newChannel(t)
	r.sms = memprovider.New("sms")
	smsCh, err := sms.New(sms.Config{Provider: r.sms})
	if err != nil {
		t.Fatal(err)
	}
	r.n, err = notify.New(accounts, r.ledger, notify.WithChannel(ch), notify.WithChannel(smsCh),
		notify.WithPrices(wallet.DefaultINR()), notify.WithQueue(q), notify.WithClock(clock),
		notify.WithIdempotency(memstore.NewIdempotency(0)), notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	r.s = queued.New(r.n)
	return r
}

func (r *rig) balance(t *testing.T) int64 {
	t.Helper()
	b, err := r.n.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

func (r *rig) record(t *testing.T, id string) *record.Message {
	t.Helper()
	m, err := r.n.Message(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPushIsSentChargedRecordedAndConfirmed: a push to a subscription and
// one to a token are priced by class, charged, recorded with their
// recipient's form, answered from the record on a repeated key, and moved
// to delivered by the app's confirmation.
func TestPushIsSentChargedRecordedAndConfirmed(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	sub := subscription(t, "https://Push.Example.COM/s/1")
	rc, err := r.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Title: "Order", Body: "Shipped", IdempotencyKey: "k-1"})
	if err != nil || rc.Status != record.StateSent || rc.Cost.Minor != 2 || rc.Provider != "webpush" || rc.To != "https://push.example.com/s/1" {
		t.Fatalf("send: %+v, %v", rc, err)
	}
	again, err := r.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Title: "Order", Body: "Shipped", IdempotencyKey: "k-1"})
	if err != nil || again.MessageID != rc.MessageID || r.wp.Len() != 1 {
		t.Fatalf("repeat: %+v, %v; Web Push took %d", again, err, r.wp.Len())
	}
	promo, err := r.n.Send(ctx, &push.Request{Account: "acme", Token: token, Body: "20% off", Promotional: true})
	if err != nil || promo.Cost.Minor != 5 || promo.Provider != "fcm" || r.fcm.Len() != 1 {
		t.Fatalf("promotional: %+v, %v", promo, err)
	}
	if got := r.balance(t); got != opening-2-5 {
		t.Fatalf("balance %d, want %d", got, opening-7)
	}
	if m := r.record(t, rc.MessageID); m.Kind != push.Kind || m.State != record.StateSent || m.To != rc.To || m.Charge.Minor != 2 {
		t.Fatalf("record %+v", m)
	}
	// The app confirms: the service worker sends message_id back.
	if _, err := r.n.Report(ctx, &notify.DeliveryReport{Provider: "webpush", Account: "acme", MessageID: rc.MessageID,
		State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	if m := r.record(t, rc.MessageID); m.State != record.StateDelivered {
		t.Fatalf("after the confirmation: %s", m.State)
	}
}

// gone is a push service's answer that a subscription no longer exists,
// as webpush and fcm return it: a certain refusal that is a hard bounce.
type gone struct{}

func (gone) Error() string { return "push: the subscription is gone" }
func (gone) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, ""
}

// TestGoneSubscriptionIsRefundedAndSuppressed: a push the service refuses
// because the subscription is gone is refunded, and the next push to it
// is refused before any charge or vendor call.
func TestGoneSubscriptionIsRefundedAndSuppressed(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	sub := subscription(t, "https://push.example.com/s/gone")
	r.wp.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return nil, notify.WithCode(notify.CodeRejected, gone{})
	})
	rc, err := r.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Body: "Shipped"})
	if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed || rc.Cost.Minor != 0 {
		t.Fatalf("send to a gone subscription: %+v, %v", rc, err)
	}
	if got := r.balance(t); got != opening {
		t.Fatalf("balance %d after a refusal, want %d", got, opening)
	}
	e, ok, err := r.ledger.LookupSuppression(ctx, "acme", push.Kind, "https://push.example.com/s/gone")
	if err != nil || !ok || e.Reason != store.SuppressHardBounce {
		t.Fatalf("suppression %+v, %v, %v", e, ok, err)
	}
	r.wp.SetHandler(nil)
	_, err = r.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Body: "Again"})
	if notify.CodeOf(err) != notify.CodeSuppressed || r.wp.Len() != 0 || r.balance(t) != opening {
		t.Fatalf("next push: %v; Web Push took %d, balance %d", err, r.wp.Len(), r.balance(t))
	}
}

// TestPushQueuedScheduledAndBulk: pushes wait on the queue and at a time
// like every message, and a bulk push charges and records each recipient.
func TestPushQueuedScheduledAndBulk(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	q, err := r.s.Enqueue(ctx, &push.Request{Account: "acme", Token: token, Body: "Queued"})
	if err != nil || q.Status != record.StateQueued || r.fcm.Len() != 0 {
		t.Fatalf("enqueue: %+v, %v", q, err)
	}
	at, err := r.s.SendAt(ctx, &push.Request{Account: "acme", Token: token, Body: "Later"}, r.now.Add(time.Hour))
	if err != nil || at.Status != record.StateScheduled {
		t.Fatalf("send at: %+v, %v", at, err)
	}
	r.q.RunDue(ctx, r.s)
	if m := r.record(t, q.MessageID); m.State != record.StateSent || r.fcm.Len() != 1 {
		t.Fatalf("queued push: %s, FCM took %d", m.State, r.fcm.Len())
	}
	r.now = r.now.Add(time.Hour)
	r.q.RunDue(ctx, r.s)
	if m := r.record(t, at.MessageID); m.State != record.StateSent || r.fcm.Len() != 2 {
		t.Fatalf("scheduled push: %s, FCM took %d", m.State, r.fcm.Len())
	}

	bulk, err := r.n.Send(ctx, &push.BulkRequest{Message: push.Request{Account: "acme", Body: "Sale"},
		Subscriptions: []*push.Subscription{subscription(t, "https://push.example.com/s/a"), subscription(t, "https://push.example.com/s/b")},
		Tokens:        []string{token}})
	if err != nil || len(bulk.Legs) != 3 || bulk.Cost.Minor != 6 || r.wp.Len() != 2 || r.fcm.Len() != 3 {
		t.Fatalf("bulk: %+v, %v", bulk, err)
	}
	if got := r.balance(t); got != opening-2-2-6 {
		t.Fatalf("balance %d, want %d", got, opening-10)
	}

	_, err = r.n.Send(ctx, &push.BulkRequest{Message: push.Request{Account: "acme", Body: "Sale"},
		Subscriptions: []*push.Subscription{{Endpoint: "https://push.example.com/s/a"}}, Tokens: []string{token, "bad"}})
	if got := fields(err); got != "subscriptions.0.keys.p256dh,subscriptions.0.keys.auth,tokens.1" {
		t.Fatalf("bad bulk recipients: %q (%v)", got, err)
	}
}

// TestPushThenSMS: a timed fallback push -> SMS sends the SMS only when
// the push was not confirmed in time, and charges once per message
// actually sent.
func TestPushThenSMS(t *testing.T) {
	fallback := func(r *rig) (*notify.Receipt, error) {
		return r.s.SendWithFallback(context.Background(),
			&push.Request{Account: "acme", Token: token, Title: "Order", Body: "Your order has shipped", TTL: 300},
			queued.Fallback{Request: &sms.Request{Account: "acme", To: "98765 43210", Message: "Your order has shipped"},
				After: 5 * time.Minute})
	}
	t.Run("not confirmed", func(t *testing.T) {
		r := newRig(t)
		rc, err := fallback(r)
		if err != nil || rc.Status != record.StateSent || rc.Fallback == "" {
			t.Fatalf("push: %+v, %v", rc, err)
		}
		r.now = r.now.Add(5 * time.Minute)
		r.q.RunDue(context.Background(), r.s)
		if r.sms.Len() != 1 || r.record(t, rc.Fallback).State != record.StateSent {
			t.Fatalf("SMS sent %d, its record %s", r.sms.Len(), r.record(t, rc.Fallback).State)
		}
		if got := r.balance(t); got != opening-2-25 {
			t.Fatalf("balance %d, want %d (a push and an SMS)", got, opening-27)
		}
	})
	t.Run("confirmed in time", func(t *testing.T) {
		r := newRig(t)
		rc, err := fallback(r)
		if err != nil {
			t.Fatal(err)
		}
		r.now = r.now.Add(time.Minute)
		if _, err := r.n.Report(context.Background(), &notify.DeliveryReport{Provider: "fcm", Account: "acme",
			MessageID: rc.MessageID, State: record.StateDelivered}); err != nil {
			t.Fatal(err)
		}
		r.now = r.now.Add(5 * time.Minute)
		r.q.RunDue(context.Background(), r.s)
		if r.sms.Len() != 0 {
			t.Fatalf("the SMS went after the push was confirmed")
		}
		if got := r.balance(t); got != opening-2 {
			t.Fatalf("balance %d, want %d (the push only)", got, opening-2)
		}
		if m := r.record(t, rc.Fallback); m.State != record.StateFailed {
			t.Fatalf("the SMS step: %s, want failed (not needed, refunded)", m.State)
		}
	})
}
