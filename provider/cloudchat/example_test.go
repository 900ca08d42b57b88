package cloudchat_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
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
		Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayCloud, Template: &chat.Template{
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

// ExampleWebhook mounts the status webhook beside the Notifier, whose
// Ledger keeps the message records that reports move.
func ExampleWebhook() {
	accounts := memstore.NewAccounts()
	w := memstore.NewWallet()
	n, err := notify.New(accounts, memstore.NewLedger(w), notify.WithPrices(wallet.DefaultINR()))
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

// ExampleError reads the vendor's own code from a failed send, here an
// authentication template sent without its OTP button's code.
func ExampleError() {
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"(#131008) Required parameter is missing","type":"OAuthException","code":131008,`+
			`"error_data":{"messaging_product":"whatsapp","details":"Button at index 0 of type Url requires a parameter"},"fbtrace_id":"AbCdEf"}}`)
	}))
	defer vendor.Close()
	p, err := cloudchat.New(cloudchat.Config{BaseURL: vendor.URL, PhoneNumberID: "106540352242922", Token: "access-token"})
	if err != nil {
		panic(err)
	}
	_, err = p.Send(context.Background(), &notify.Envelope{Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayCloud, OTP: "482915", Template: &chat.Template{
			Name: "otp_code", Language: "en_US", Params: []string{"482915"}}}})

	var ce *cloudchat.Error
	if errors.As(err, &ce) {
		fmt.Println(ce.Code, ce.Details, ce.TraceID)
	}
	fmt.Println(notify.CodeOf(err))
	// Output:
	// 131008 Button at index 0 of type Url requires a parameter AbCdEf
	// rejected
}

// A template with named parameters, a text header, a URL button with a
// variable and a quick-reply button, as chat.Template carries it.
func ExampleProvider_Send_namedTemplate() {
	vendor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"messages":[{"id":"wamid.NAMED"}]}`)
	}))
	defer vendor.Close()
	p, err := cloudchat.New(cloudchat.Config{BaseURL: vendor.URL, PhoneNumberID: "106540352242922", Token: "access-token"})
	if err != nil {
		panic(err)
	}
	res, err := p.Send(context.Background(), &notify.Envelope{Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayCloud, Template: &chat.Template{
			Name: "order_shipped", Language: "en_US",
			NamedParams: map[string]string{"customer_name": "Asha", "order_id": "A-1042"},
			HeaderText:  "A-1042",
			Buttons: []chat.Button{
				{Kind: chat.ButtonURL, Index: 0, Value: "track/A-1042"},
				{Kind: chat.ButtonQuickReply, Index: 1, Value: "stop-updates"},
			},
		}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ProviderMessageID)
	// Output: wamid.NAMED
}
