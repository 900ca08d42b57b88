package vonage_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
)

// Example sends an SMS through the fake Vonage, then one that Vonage
// refuses: the number is barred.
func Example() {
	vendor := vonagetest.NewServer(vonagetest.Config{})
	defer vendor.Close()

	p, err := vonage.New(vonage.Config{
		APIKey:    vonagetest.DefaultAPIKey,
		APISecret: vonagetest.DefaultAPISecret,
		From:      "AcmeInc",
		BaseURL:   vendor.URL, // default https://rest.nexmo.com
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	env := &notify.Envelope{Kind: sms.Kind, To: "+447700900000", Content: &sms.Message{Text: "Your order has shipped."}}
	res, err := p.Send(ctx, env)
	fmt.Println(err, vonage.ValidMessageID(res.ProviderMessageID))
	m := vendor.Messages()[0]
	fmt.Println(m.From, m.To, m.Type, m.Text)

	vendor.FailNext(vonage.StatusNumberBarred)
	_, err = p.Send(ctx, env)
	var ve *vonage.Error
	fmt.Println(notify.CodeOf(err), notify.IsRetryable(err), errors.As(err, &ve) && ve.Status == vonage.StatusNumberBarred)
	// Output:
	// <nil> true
	// AcmeInc 447700900000 text Your order has shipped.
	// rejected false true
}

// ExampleProvider_Balance reads the account's balance, in euros, cut to
// the cent.
func ExampleProvider_Balance() {
	vendor := vonagetest.NewServer(vonagetest.Config{Balance: 102867}) // 10.2867 EUR
	defer vendor.Close()
	p, err := vonage.New(vonage.Config{APIKey: vonagetest.DefaultAPIKey, APISecret: vonagetest.DefaultAPISecret,
		From: "AcmeInc", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	balance, err := p.Balance(context.Background())
	fmt.Println(balance, err)
	// Output:
	// 10.28 EUR <nil>
}

// ExampleNewWebhook receives the fake Vonage's signed delivery receipt
// of a message over HTTP, and turns it into the report the Notifier
// applies (here a recording Reporter takes it): the message named by its
// message-id and, through client-ref, by its account and ID. A forged
// receipt is refused.
func ExampleNewWebhook() {
	reports := &providertest.Reports{} // the *notify.Notifier in production
	hook, err := vonage.NewWebhook(vonage.WebhookConfig{Reporter: reports,
		SignatureSecret: vonagetest.DefaultSignatureSecret, APIKey: vonagetest.DefaultAPIKey})
	if err != nil {
		panic(err)
	}
	receiver := httptest.NewServer(hook)
	defer receiver.Close()
	callback := receiver.URL + "/webhooks/vonage/dlr" // https://<host>/... in production

	// The account has signed webhooks on, with the default method.
	vendor := vonagetest.NewServer(vonagetest.Config{SignatureSecret: vonagetest.DefaultSignatureSecret})
	defer vendor.Close()
	p, err := vonage.New(vonage.Config{APIKey: vonagetest.DefaultAPIKey, APISecret: vonagetest.DefaultAPISecret,
		From: "AcmeInc", Callback: callback, BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	env := &notify.Envelope{ID: "msg-1", Account: &notify.Account{ID: "acme"}, Kind: sms.Kind, To: "+447700900000",
		Content: &sms.Message{Text: "Your order has shipped."}}
	res, err := p.Send(ctx, env)
	if err != nil {
		panic(err)
	}
	// Vonage sends messageId, status=delivered, err-code=0, client-ref,
	// timestamp, nonce and sig, ...
	fmt.Println(vendor.Report(ctx, res.ProviderMessageID, "delivered", "0"))
	r := reports.Got()[0]
	fmt.Println(r.Provider, r.ProviderMessageID == res.ProviderMessageID, r.Account, r.MessageID, r.State)

	forged := url.Values{"messageId": {res.ProviderMessageID}, "status": {"failed"}, "timestamp": {"1764059405"},
		"sig": {"0123456789abcdef0123456789abcdef"}}
	fmt.Println(vendor.Send(ctx, callback, forged))
	fmt.Printf("%+v\n", hook.Stats())
	// Output:
	// <nil>
	// vonage true acme msg-1 delivered
	// vonagetest: the delivery-report receiver answered 401 Unauthorized
	// {Reports:1 Unmatched:0 Ignored:0 Refused:1 Malformed:0 Failed:0 Held:0}
}
