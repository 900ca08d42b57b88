package qrchat_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/wallet"
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
		Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayQR, Text: "Your order shipped"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ProviderMessageID)
	// Output:
	// default 919876543210@c.us Your order shipped
	// true_919876543210@c.us_3EB0EXAMPLE
}

// ExampleProvider_SupportsMedia configures providers for a gateway that
// runs WAHA Core, the free edition, which sends no media: one refuses
// media envelopes before anything is sent (MediaRefuse, the default), the
// other sends the caption and the media URL as text (MediaAsLink).
func ExampleProvider_SupportsMedia() {
	// A stand-in for a WAHA Core gateway.
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/sessions/default":
			fmt.Fprint(w, `{"name":"default","status":"WORKING"}`)
		case "/api/sendText":
			var in struct {
				Text        string `json:"text"`
				LinkPreview bool   `json:"linkPreview"`
			}
			json.NewDecoder(r.Body).Decode(&in)
			fmt.Printf("sendText %q linkPreview=%v\n", in.Text, in.LinkPreview)
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id":"true_919876543210@c.us_3EB0EXAMPLE"}`)
		default: // sendImage, sendVideo, sendFile
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, `{"statusCode":422,"message":"The feature is available only in Plus version for 'WEBJS' engine. Check this out: https://waha.devlike.pro/","error":"Unprocessable Entity"}`)
		}
	}))
	defer gw.Close()

	invoice := &notify.Envelope{Kind: chat.Kind, To: "9876543210", Content: &chat.Message{
		Gateway: chat.GatewayQR, Text: "Your invoice",
		Media: &chat.Media{URL: "https://cdn.example.com/inv-7.pdf", Kind: chat.MediaDocument, FileName: "inv-7.pdf"},
	}}

	refuse, err := qrchat.New(qrchat.Config{BaseURL: gw.URL, APIKey: "key", Edition: qrchat.EditionCore})
	if err != nil {
		panic(err)
	}
	_, err = refuse.Send(context.Background(), invoice)
	fmt.Println("refuse:", refuse.SupportsMedia(), notify.CodeOf(err))

	link, err := qrchat.New(qrchat.Config{BaseURL: gw.URL, APIKey: "key",
		Edition: qrchat.EditionCore, CoreMedia: qrchat.MediaAsLink})
	if err != nil {
		panic(err)
	}
	res, err := link.Send(context.Background(), invoice)
	if err != nil {
		panic(err)
	}
	fmt.Println("link:", link.SupportsMedia(), res.ProviderMessageID)
	// Output:
	// refuse: false invalid_argument
	// sendText "Your invoice\nhttps://cdn.example.com/inv-7.pdf" linkPreview=false
	// link: false true_919876543210@c.us_3EB0EXAMPLE
}

// ExampleNewWebhook mounts the gateway's message.ack receiver beside the
// Notifier, whose Ledger keeps the message records that reports move. The
// session's webhook is configured on the gateway with
// the same key: {"url": "https://app.example.com/webhooks/waha",
// "events": ["message.ack"], "hmac": {"key": "..."}}.
func ExampleNewWebhook() {
	accounts := memstore.NewAccounts()
	w := memstore.NewWallet()
	n, err := notify.New(accounts, memstore.NewLedger(w), notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		panic(err)
	}
	const key = "the webhook's hmac key" // 32 random bytes or more in production
	hook, err := qrchat.NewWebhook(qrchat.WebhookConfig{Reporter: n, Secret: key})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/waha", hook)

	// The gateway reports a message this Notifier never sent: the event is
	// acknowledged, so that the gateway does not send it again, and counted.
	body := `{"id":"evt_01k7a0b1c2d3e4f5g6h7j8k9m0","timestamp":1760022600123,"event":"message.ack",` +
		`"session":"default","engine":"WEBJS","payload":{"id":"true_919876543210@c.us_3EB0EXAMPLE",` +
		`"from":"919000000000@c.us","to":"919876543210@c.us","fromMe":true,"ack":3,"ackName":"READ"}}`
	mac := hmac.New(sha512.New, []byte(key))
	mac.Write([]byte(body))
	req := httptest.NewRequest(http.MethodPost, "/webhooks/waha", strings.NewReader(body))
	req.Header.Set("X-Webhook-Hmac", hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-Webhook-Hmac-Algorithm", "sha512")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, "unmatched:", hook.Stats().Unmatched)

	// Without the signature, nothing is taken.
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks/waha", strings.NewReader(body)))
	fmt.Println(rec.Code, "refused:", hook.Stats().Refused)
	// Output:
	// 200 unmatched: 1
	// 401 refused: 1
}
