package push_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/provider/webpush"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// vendors is a Notifier whose push channel sends through the real
// providers to their fakes: a push service that decrypts every payload,
// and FCM with its token endpoint.
type vendors struct {
	n      *notify.Notifier
	ledger *memstore.Ledger
	wp     *webpushtest.Server
	fcm    *fcmtest.Server
}

func newVendors(t *testing.T) *vendors {
	t.Helper()
	v := &vendors{wp: webpushtest.NewServer(webpushtest.Config{ApplicationServerKey: webpushtest.VAPIDPublicKey}),
		fcm: fcmtest.NewServer(fcmtest.Config{})}
	t.Cleanup(v.wp.Close)
	t.Cleanup(v.fcm.Close)
	wp, err := webpush.New(webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey,
		Subscriber: webpushtest.Subscriber, HTTPClient: v.wp.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wp.Close() })
	f, err := fcm.New(fcm.Config{ProjectID: v.fcm.ProjectID(), CredentialsJSON: v.fcm.CredentialsJSON(), BaseURL: v.fcm.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ch, err := push.New(push.Config{WebPush: wp, FCM: f})
	if err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(testAccount()); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	v.ledger = memstore.NewLedger(wal)
	v.n, err = notify.New(accounts, v.ledger, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *vendors) balance(t *testing.T) int64 {
	t.Helper()
	b, err := v.n.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// TestWebPushEndToEnd: a push to a subscription reaches the push service
// encrypted for it (the fake decrypts it with the subscription's keys) and
// is charged and recorded; the app's confirmation moves it to delivered; a
// 410 refunds and suppresses the subscription, and the next push to it is
// refused before any charge, with nothing sent.
func TestWebPushEndToEnd(t *testing.T) {
	v := newVendors(t)
	ctx := context.Background()
	sub := v.wp.NewSubscription()
	rc, err := v.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Title: "Order 1042", Body: "It has shipped.",
		Data: map[string]string{"order": "1042"}, Link: "https://shop.example.in/o/1042", TTL: 3600, Urgency: push.UrgencyHigh})
	if err != nil || rc.Status != record.StateSent || rc.Cost.Minor != 2 {
		t.Fatalf("send: %+v, %v", rc, err)
	}
	got := v.wp.MessagesTo(sub.Endpoint)
	if len(got) != 1 || got[0].TTL != 3600 || got[0].Urgency != "high" {
		t.Fatalf("the push service received %+v", got)
	}
	var payload map[string]any
	if err := json.Unmarshal(got[0].Payload, &payload); err != nil {
		t.Fatalf("the payload is not JSON: %v", err)
	}
	if payload["message_id"] != rc.MessageID || payload["title"] != "Order 1042" || payload["body"] != "It has shipped." ||
		payload["link"] != "https://shop.example.in/o/1042" || payload["data"].(map[string]any)["order"] != "1042" {
		t.Fatalf("payload %v", payload)
	}
	if _, err := v.n.Report(ctx, &notify.DeliveryReport{Provider: "webpush", Account: "acme", MessageID: rc.MessageID,
		State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	if m, err := v.n.Message(ctx, "acme", rc.MessageID); err != nil || m.State != record.StateDelivered || m.ProviderMessageID == "" {
		t.Fatalf("record %+v, %v", m, err)
	}

	v.wp.Expire(sub.Endpoint)
	gone, err := v.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Body: "Again"})
	if notify.CodeOf(err) != notify.CodeRejected || gone.Status != record.StateFailed || gone.Cost.Minor != 0 || v.balance(t) != opening-2 {
		t.Fatalf("a push to an expired subscription: %+v, %v; balance %d", gone, err, v.balance(t))
	}
	if e, ok, err := v.ledger.LookupSuppression(ctx, "acme", push.Kind, sub.Endpoint); err != nil || !ok || e.Reason != store.SuppressHardBounce {
		t.Fatalf("suppression %+v %v %v", e, ok, err)
	}
	requests := len(v.wp.Requests())
	_, err = v.n.Send(ctx, &push.Request{Account: "acme", Subscription: sub, Body: "Once more"})
	if notify.CodeOf(err) != notify.CodeSuppressed || len(v.wp.Requests()) != requests || v.balance(t) != opening-2 {
		t.Fatalf("the next push: %v; the service got %d more requests; balance %d", err, len(v.wp.Requests())-requests, v.balance(t))
	}
}

// TestFCMEndToEnd: a push to a token goes to FCM with the message ID in
// its data, charged and recorded; UNREGISTERED refunds and suppresses the
// token, and the next push is refused before any charge.
func TestFCMEndToEnd(t *testing.T) {
	v := newVendors(t)
	ctx := context.Background()
	tok := v.fcm.NewToken()
	rc, err := v.n.Send(ctx, &push.Request{Account: "acme", Token: tok, Title: "Sale", Body: "20% off", Promotional: true})
	if err != nil || rc.Status != record.StateSent || rc.Cost.Minor != 5 || rc.Provider != "fcm" {
		t.Fatalf("send: %+v, %v", rc, err)
	}
	msgs := v.fcm.Messages()
	if len(msgs) != 1 || msgs[0].Token != tok || msgs[0].Data[push.MessageIDKey] != rc.MessageID || msgs[0].Title != "Sale" ||
		rc.ProviderMessageID != msgs[0].Name {
		t.Fatalf("FCM received %+v; receipt %+v", msgs, rc)
	}
	v.fcm.Unregister(tok)
	if _, err := v.n.Send(ctx, &push.Request{Account: "acme", Token: tok, Body: "Again"}); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("a push to an unregistered token: %v", err)
	}
	if _, err := v.n.Send(ctx, &push.Request{Account: "acme", Token: tok, Body: "Once more"}); notify.CodeOf(err) != notify.CodeSuppressed {
		t.Fatalf("the next push: %v", err)
	}
	if got := v.balance(t); got != opening-5 || v.fcm.Accepted() != 1 {
		t.Fatalf("balance %d, FCM accepted %d", got, v.fcm.Accepted())
	}
}
