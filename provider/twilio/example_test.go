package twilio_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// Example sends an SMS through the fake Twilio, then one that Twilio
// refuses: the recipient replied STOP.
func Example() {
	vendor := twiliotest.NewServer(twiliotest.Config{})
	defer vendor.Close()

	p, err := twilio.New(twilio.Config{
		AccountSID: twiliotest.DefaultAccountSID,
		AuthToken:  twiliotest.DefaultAuthToken,
		From:       twiliotest.DefaultFrom,
		BaseURL:    vendor.URL, // default https://api.twilio.com
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	env := &notify.Envelope{Kind: sms.Kind, To: "+14155550100", Content: &sms.Message{Text: "Your order has shipped."}}
	res, err := p.Send(ctx, env)
	fmt.Println(err, twilio.ValidMessageSID(res.ProviderMessageID))
	m := vendor.Messages()[0]
	fmt.Println(m.From, m.To, m.Status, m.Body)

	vendor.FailNext(twiliotest.Unsubscribed)
	_, err = p.Send(ctx, env)
	var te *twilio.Error
	fmt.Println(notify.CodeOf(err), notify.IsRetryable(err), errors.As(err, &te) && te.Code == 21610)
	// Output:
	// <nil> true
	// +15005550006 +14155550100 queued Your order has shipped.
	// rejected false true
}

// ExampleProvider_CheckHealth is the readiness check: the account is
// active, then suspended, and credentials Twilio refuses are named without
// the token.
func ExampleProvider_CheckHealth() {
	vendor := twiliotest.NewServer(twiliotest.Config{})
	defer vendor.Close()
	p, err := twilio.New(twilio.Config{
		AccountSID: twiliotest.DefaultAccountSID,
		AuthToken:  twiliotest.DefaultAuthToken,
		From:       twiliotest.DefaultFrom,
		BaseURL:    vendor.URL,
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ctx := context.Background()
	fmt.Println(p.CheckHealth(ctx))

	vendor.SetAccountStatus("suspended")
	err = p.CheckHealth(ctx)
	fmt.Println(notify.CodeOf(err), err)

	wrong, err := twilio.New(twilio.Config{
		AccountSID: twiliotest.DefaultAccountSID,
		AuthToken:  "0123456789abcdef0123456789abcdef",
		From:       twiliotest.DefaultFrom,
		BaseURL:    vendor.URL,
	})
	if err != nil {
		panic(err)
	}
	defer wrong.Close()
	var te *twilio.Error
	err = wrong.CheckHealth(ctx)
	fmt.Println(notify.CodeOf(err), errors.As(err, &te) && te.Code == 20003)
	// Output:
	// <nil>
	// rejected rejected: twilio: the Twilio account is suspended: it sends nothing until it is reactivated (a balance at zero suspends it: add funds in the Twilio Console)
	// rejected true
}

// ExampleNewWebhook is the whole loop: an SMS goes out through the SMS
// channel and the fake Twilio, whose signed status callback reaches the
// receiver over HTTP and moves the message's record to delivered; a
// forged callback is refused.
func ExampleNewWebhook() {
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	defer receiver.Close()
	callback := receiver.URL + "/webhooks/twilio/status" // https://<host>/... in production

	vendor := twiliotest.NewServer(twiliotest.Config{})
	defer vendor.Close()
	p, err := twilio.New(twilio.Config{
		AccountSID:     twiliotest.DefaultAccountSID,
		AuthToken:      twiliotest.DefaultAuthToken,
		From:           twiliotest.DefaultFrom,
		StatusCallback: callback,
		BaseURL:        vendor.URL,
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		panic(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()}); err != nil {
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

	// The receiver checks X-Twilio-Signature with the account's auth token.
	hook, err := twilio.NewWebhook(twilio.WebhookConfig{Reporter: n, AuthToken: twiliotest.DefaultAuthToken})
	if err != nil {
		panic(err)
	}
	mux.Handle("POST /webhooks/twilio/status", hook)

	ctx := context.Background()
	rc, err := n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped"})
	if err != nil {
		panic(err)
	}
	// Twilio posts MessageSid, MessageStatus=delivered, To, From, ...
	fmt.Println(vendor.Report(ctx, rc.ProviderMessageID, "delivered", 0))
	m, err := n.Message(ctx, "acme", rc.MessageID)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.To, m.State)

	forged := url.Values{"MessageSid": {rc.ProviderMessageID}, "MessageStatus": {"failed"}}
	fmt.Println(vendor.Post(ctx, callback, "bm90IHR3aWxpbydzIHNpZ25hdHVyZQ==", forged))
	fmt.Printf("%+v\n", hook.Stats())
	// Output:
	// <nil>
	// +919876543210 delivered
	// twiliotest: the delivery-report receiver answered 401 Unauthorized
	// {Reports:1 Unmatched:0 Ignored:0 Refused:1 Malformed:0 Failed:0 Held:0}
}
