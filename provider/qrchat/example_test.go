package qrchat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/qrchat"
)

func Example() {
	// A stand-in for the gateway.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/sessions/default":
			fmt.Fprint(w, `{"name":"default","status":"WORKING"}`)
		case "/api/sendText":
			var in map[string]string
			json.NewDecoder(r.Body).Decode(&in)
			fmt.Println(in["session"], in["chatId"], in["text"])
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id":"true_919876543210@c.us_3EB0EXAMPLE"}`)
		}
	}))
	defer gw.Close()

	p, err := qrchat.New(qrchat.Config{BaseURL: gw.URL, APIKey: "key"})
	if err != nil {
		panic(err)
	}
	res, err := p.Send(context.Background(), &notify.Envelope{
		Kind: notify.KindChat, To: "9876543210",
		Chat: &notify.ChatMessage{Gateway: notify.GatewayQR, Text: "Your order shipped"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ProviderMessageID)
	// Output:
	// default 919876543210@c.us Your order shipped
	// true_919876543210@c.us_3EB0EXAMPLE
}
