package fcm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// Example sends a push through the fake FCM with a service account's JSON
// key, then one to a token FCM has unregistered: a refusal that is a hard
// bounce.
func Example() {
	vendor := fcmtest.NewServer(fcmtest.Config{})
	defer vendor.Close()

	p, err := fcm.New(fcm.Config{
		ProjectID:       vendor.ProjectID(),
		CredentialsJSON: vendor.CredentialsJSON(), // the key file's bytes; its token_uri is the fake's
		BaseURL:         vendor.URL,               // default https://fcm.googleapis.com
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	device := vendor.NewToken() // as the app's Firebase SDK gives it
	env := &notify.Envelope{ID: "4f1c2d3e-0000-4000-8000-000000000001", Kind: push.Kind, To: device,
		Content: &push.Message{Title: "Acme", Body: "Your order has shipped.", Urgency: push.UrgencyHigh}}
	res, err := p.Send(ctx, env)
	fmt.Println(err, strings.HasPrefix(res.ProviderMessageID, "projects/"+vendor.ProjectID()+"/messages/0:"))
	m := vendor.Messages()[0]
	fmt.Println(m.Title, "|", m.Body, "|", m.Data[push.MessageIDKey], "|", m.AndroidPriority, m.APNSHeaders["apns-priority"])

	vendor.Unregister(device) // the app was uninstalled
	_, err = p.Send(ctx, env)
	var bounce store.Bounce
	var fe *fcm.Error
	fmt.Println(notify.CodeOf(err), errors.As(err, &bounce), errors.As(err, &fe) && fe.ErrorCode == fcm.ErrUnregistered)
	fmt.Println("token requests:", vendor.TokenRequests())
	// Output:
	// <nil> true
	// Acme | Your order has shipped. | 4f1c2d3e-0000-4000-8000-000000000001 | HIGH 10
	// rejected true true
	// token requests: 1
}

// Example_notifier is the whole loop through the push channel and the
// Notifier: a push to an FCM token is charged and recorded; once FCM
// answers UNREGISTERED, the push is refunded and the token suppressed, so
// the next one is refused before it is charged or sent.
func Example_notifier() {
	vendor := fcmtest.NewServer(fcmtest.Config{})
	defer vendor.Close()
	p, err := fcm.New(fcm.Config{ProjectID: vendor.ProjectID(), CredentialsJSON: vendor.CredentialsJSON(), BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ch, err := push.New(push.Config{FCM: p})
	if err != nil {
		panic(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()}); err != nil {
		panic(err)
	}
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: 10_000, Currency: record.INR()}); err != nil {
		panic(err)
	}
	ledger := memstore.NewLedger(w)
	n, err := notify.New(accounts, ledger, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	device := vendor.NewToken()
	rc, err := n.Send(ctx, &push.Request{Account: "acme", Token: device, Title: "Acme", Body: "Your order has shipped."})
	fmt.Println(err, rc.Status, vendor.Messages()[0].Data[push.MessageIDKey] == rc.MessageID)

	vendor.Unregister(device)
	rc, err = n.Send(ctx, &push.Request{Account: "acme", Token: device, Body: "Rate your delivery"})
	fmt.Println(notify.CodeOf(err), rc.Status, rc.Cost.Minor)
	e, ok, _ := ledger.LookupSuppression(ctx, "acme", push.Kind, device)
	fmt.Println(ok, e.Reason)

	_, err = n.Send(ctx, &push.Request{Account: "acme", Token: device, Body: "Come back!"})
	fmt.Println(notify.CodeOf(err), vendor.Accepted())
	// Output:
	// <nil> sent true
	// rejected failed 0
	// true hard_bounce
	// suppressed 1
}
