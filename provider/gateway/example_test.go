package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/gateway"
)

// A remote gateway answers with its own message ID, which becomes the
// ProviderMessageID of the local receipt.
func ExampleNew() {
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Printf("%s %s, idempotency key %s\n", r.Method, r.URL.Path, r.Header.Get("Idempotency-Key"))
		io.WriteString(w, `{"success":true,"message_id":"5d1c0e52-remote","status":"sent"}`)
	}))
	defer remote.Close()

	p, err := gateway.New(gateway.Config{BaseURL: remote.URL + "/api/v1", APIKey: "demo-key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := p.Send(context.Background(), &notify.Envelope{
		ID:      "7f9e2c1a-local",
		Kind:    sms.Kind,
		To:      "9876543210",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "Your order has shipped"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Provider, res.ProviderMessageID)
	// Output:
	// POST /api/v1/sms, idempotency key 7f9e2c1a-local
	// gateway 5d1c0e52-remote
}
