package smsgateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

func Example() {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "demo-key", Balance: 10000})
	defer vendor.Close()

	p, err := smsgateway.New(smsgateway.Config{APIKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	_, err = p.Send(ctx, &notify.Envelope{Kind: sms.Kind, To: "9876543210",
		Content: &sms.Message{Route: sms.RouteOTP, OTP: "482913", Text: "482913 is your code."}})
	fmt.Println(err)

	sent := vendor.Sent()[0]
	fmt.Println(sent.Route, sent.Numbers, sent.VariablesValues)

	balance, err := p.Balance(ctx)
	fmt.Println(balance, err)
	// Output:
	// <nil>
	// otp [9876543210] 482913
	// 99.75 INR <nil>
}

// ExampleNewWebhook mounts the delivery-report callback under a secret
// token, beside the Notifier whose records its reports move.
func ExampleNewWebhook() {
	n, err := notify.New(memstore.NewAccounts(), memstore.NewLedger(nil))
	if err != nil {
		panic(err)
	}
	hook, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{
		Reporter: n,
		Token:    "3q9xkz1v7b2m5n8c4t6w", // give the vendor https://<host>/webhooks/smsgateway/3q9xkz1v7b2m5n8c4t6w
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/smsgateway/{token}", hook)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks/smsgateway/guessed-token-123456",
		strings.NewReader(`{"request_id":"r1","status":"DELIVERED"}`)))
	fmt.Println(rec.Code)
	// Output: 401
}

// ExampleWebhook is the whole loop: an SMS goes out through the provider
// to the fake vendor, whose delivery report reaches the receiver over
// HTTP and moves the message's record to delivered, at the vendor's time.
func ExampleWebhook() {
	const token = "3q9xkz1v7b2m5n8c4t6w" // the secret of the callback URL
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	defer receiver.Close()

	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "demo-key",
		DLRURL: receiver.URL + "/webhooks/smsgateway/" + token, // what the vendor's dashboard is given
		Now:    func() time.Time { return time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC) }})
	defer vendor.Close()
	p, err := smsgateway.New(smsgateway.Config{APIKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		panic(err)
	}

	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR(), Settings: sms.Settings{SenderID: "ACMEIN"}.Map()}); err != nil {
		panic(err)
	}
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: 10_000, Currency: record.INR()}); err != nil {
		panic(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(w), notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		panic(err)
	}
	hook, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: n, Token: token})
	if err != nil {
		panic(err)
	}
	mux.Handle("POST /webhooks/smsgateway/{token}", hook)
	mux.Handle("GET /webhooks/smsgateway/{token}", hook)

	ctx := context.Background()
	rc, err := n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped"})
	if err != nil {
		panic(err)
	}
	// The vendor posts {"request_id", "mobile", "status": "delivered",
	// "delivery_time": "2026-11-25 14:00:05" (IST), ...}.
	fmt.Println(vendor.ReportNumber(ctx, rc.ProviderMessageID, "9876543210", "delivered"))

	m, err := n.Message(ctx, "acme", rc.MessageID)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.State, m.History[len(m.History)-1].At)
	fmt.Printf("%+v\n", hook.Stats())
	// Output:
	// <nil>
	// delivered 2026-11-25 08:30:05 +0000 UTC
	// {Reports:1 Unmatched:0 Ignored:0 Refused:0 Malformed:0 Failed:0 Held:0}
}
