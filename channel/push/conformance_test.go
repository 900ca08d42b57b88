package push_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/push"
)

// TestConformance runs the channel kit on the push channel: a Web Push
// subscription and an FCM token, every optional field, both classes, and
// the request codec.
func TestConformance(t *testing.T) {
	ch, wp, fcm := newChannel(t)
	acct := testAccount()
	req := func(r push.Request) *push.Request { r.Account = acct.ID; return &r }
	sub := subscription(t, "https://Push.Example.COM/wpush/v2/gAAAAABk")
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: acct,
		Valid: []notify.Request{
			req(push.Request{Subscription: sub, Title: "Order 1042", Body: "Your order has shipped.", Domain: "shop.example.in"}),
			req(push.Request{Token: " " + token + " ", Body: "नमस्ते, आपका ऑर्डर भेज दिया गया है", IdempotencyKey: "push-1"}),
			req(push.Request{Token: token, Title: "Sale", Body: "20% off today", Promotional: true, Category: "marketing",
				Data: map[string]string{"order": "1042", "screen": "offers"}, Link: "https://shop.example.in/sale",
				Image: "https://cdn.example.in/sale.png", TTL: 600, Urgency: push.UrgencyHigh}),
		},
		Invalid: []channeltest.Invalid{
			{Name: "no recipient", Request: req(push.Request{Body: "b"}), Fields: []string{"subscription"}},
			{Name: "both recipients", Request: req(push.Request{Subscription: sub, Token: token, Body: "b"}), Fields: []string{"token"}},
			{Name: "no body", Request: req(push.Request{Token: token}), Fields: []string{"body"}},
			{Name: "bad keys", Request: req(push.Request{Subscription: &push.Subscription{Endpoint: sub.Endpoint,
				Keys: push.Keys{P256dh: "AAAA", Auth: "x"}}, Body: "b"}),
				Fields: []string{"subscription.keys.p256dh", "subscription.keys.auth"}},
			{Name: "bad ttl and urgency", Request: req(push.Request{Token: token, Body: "b", TTL: -1, Urgency: "now"}),
				Fields: []string{"ttl", "urgency"}},
		},
		Providers: []channeltest.Fake{wp, fcm},
		Secrets:   []string{sub.Keys.Auth},
		Codec:     ch,
		Stored: []channeltest.Stored{{Name: "reqcodec",
			Data:    []byte(`{"account":"acme","idempotency_key":"k","request":{"token":"` + token + `","body":"Hello"}}`),
			Request: req(push.Request{Token: token, Body: "Hello", IdempotencyKey: "k"})}},
	})
}
