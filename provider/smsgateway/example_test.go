package smsgateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
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
	_, err = p.Send(ctx, &notify.Envelope{Kind: notify.KindSMS, To: "9876543210",
		SMS: &notify.SMSMessage{Route: notify.RouteOTP, OTP: "482913", Text: "482913 is your code."}})
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
// token, beside a Notifier that keeps message records.
func ExampleNewWebhook() {
	w := memstore.NewWallet()
	n, err := notify.New(memstore.NewAccounts(), notify.WithWallet(w, wallet.DefaultINR()),
		notify.WithMessageStore(memstore.NewMessages(w)))
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
