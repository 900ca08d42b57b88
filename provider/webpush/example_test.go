package webpush_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/webpush"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
	"github.com/notifykit/notify/store"
)

// Example sends a push to a subscription of the fake push service, which
// decrypts it as the browser would, then one to the subscription once the
// user has unsubscribed: a certain refusal that the Notifier turns into a
// suppression of the endpoint.
func Example() {
	service := webpushtest.NewServer(webpushtest.Config{})
	defer service.Close()

	p, err := webpush.New(webpush.Config{
		VAPIDPublicKey:  webpushtest.VAPIDPublicKey, // webpush.GenerateVAPIDKeys makes a pair
		VAPIDPrivateKey: webpushtest.VAPIDPrivateKey,
		Subscriber:      "mailto:ops@example.com",
		HTTPClient:      service.Client(), // default: a client that dials only public addresses
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	// What the browser's PushSubscription.toJSON() gives.
	sub := service.NewSubscription()
	env := &notify.Envelope{ID: "3b1f6c2e-9a4d-4e8b-b7c5-0d2e4f6a8b1c", Kind: push.Kind, To: sub.Endpoint, Provider: p.Name(),
		Content: &push.Message{Keys: sub.Keys, Title: "Acme", Body: "Your order has shipped.", TTL: time.Hour, Urgency: push.UrgencyHigh}}
	ctx := context.Background()
	res, err := p.Send(ctx, env)
	fmt.Println(err, strings.HasPrefix(res.ProviderMessageID, service.URL+"/m/"))
	m := service.Messages()[0]
	fmt.Println(string(m.Payload), m.TTL, m.Urgency)

	service.Expire(sub.Endpoint) // the user unsubscribed
	_, err = p.Send(ctx, env)
	var gone store.Bounce
	fmt.Println(notify.CodeOf(err), notify.IsRetryable(err), errors.As(err, &gone))
	// Output:
	// <nil> true
	// {"message_id":"3b1f6c2e-9a4d-4e8b-b7c5-0d2e4f6a8b1c","title":"Acme","body":"Your order has shipped."} 3600 high
	// rejected false true
}
