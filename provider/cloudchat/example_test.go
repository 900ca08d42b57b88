package cloudchat_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/wallet"
)

func Example() {
	// A stand-in for the vendor; in production leave BaseURL empty.
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.Method, r.URL.Path, r.Header.Get("Authorization") != "")
		fmt.Fprint(w, `{"messaging_product":"whatsapp","contacts":[{"input":"919876543210","wa_id":"919876543210"}],"messages":[{"id":"wamid.EXAMPLE"}]}`)
	}))
	defer vendor.Close()

	p, err := cloudchat.New(cloudchat.Config{
		BaseURL:       vendor.URL,
		PhoneNumberID: "106540352242922",
		Token:         "access-token",
	})
	if err != nil {
		panic(err)
	}
	res, err := p.Send(context.Background(), &notify.Envelope{
		Kind: notify.KindChat, To: "9876543210",
		Chat: &notify.ChatMessage{Gateway: notify.GatewayCloud, Template: &notify.ChatTemplate{
			Name: "order_confirmed", Language: "en_US", Params: []string{"Asha", "A-1042"},
		}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ProviderMessageID)
	// Output:
	// POST /v25.0/106540352242922/messages true
	// wamid.EXAMPLE
}

// ExampleWebhook mounts the status webhook beside a Notifier that keeps
// message records (notify.WithMessageStore), which reports need.
func ExampleWebhook() {
	accounts := memstore.NewAccounts()
	w := memstore.NewWallet()
	n, err := notify.New(accounts, notify.WithWallet(w, wallet.DefaultINR()),
		notify.WithMessageStore(memstore.NewMessages(w)))
	if err != nil {
		panic(err)
	}
	hook, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{
		Reporter:    n,
		AppSecret:   "the app secret",      // from the app's dashboard
		VerifyToken: "a token of your own", // as set in the webhook configuration
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/cloudchat", hook)

	// The vendor's subscription handshake.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet,
		"/webhooks/cloudchat?hub.mode=subscribe&hub.verify_token=a+token+of+your+own&hub.challenge=1158201444", nil))
	fmt.Println(rec.Code, rec.Body.String())
	// Output:
	// 200 1158201444
}
