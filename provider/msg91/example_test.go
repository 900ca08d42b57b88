package msg91_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// Example sends a DLT template by its MSG91 template ID, its values
// going to the template's variables VAR1 and VAR2; MSG91 refuses free
// text, and the provider says so before calling it.
func Example() {
	vendor := msg91test.NewServer(msg91test.Config{AuthKey: "demo-key", Templates: []msg91test.Template{{
		ID: "6808ca80d6fc054bef421352", DLTTemplateID: "1107161234567890123", Sender: "ACMECO",
		Content: "Your order ##VAR1## ships ##VAR2##. - ACMECO"}}})
	defer vendor.Close()

	p, err := msg91.New(msg91.Config{AuthKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	_, err = p.Send(ctx, &notify.Envelope{Kind: sms.Kind, To: "+919876543210",
		Content: &sms.Message{Route: sms.RouteDLT, DLTMessageID: "6808ca80d6fc054bef421352", DLTValues: []string{"A-17", "today"}}})
	fmt.Println(err)
	r := vendor.Sent()[0].Recipients[0]
	fmt.Println(r.Mobile, r.Vars["VAR1"], r.Vars["VAR2"])
	fmt.Println(r.Text)

	_, err = p.Send(ctx, &notify.Envelope{Kind: sms.Kind, To: "+919876543210",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "Your order ships today."}})
	fmt.Println(notify.CodeOf(err), vendor.Requests())

	vendor.FailNext(msg91test.InsufficientBalance)
	_, err = p.Send(ctx, &notify.Envelope{Kind: sms.Kind, To: "+919876543210",
		Content: &sms.Message{Route: sms.RouteDLT, DLTMessageID: "6808ca80d6fc054bef421352", DLTValues: []string{"A-18", "today"}}})
	var me *msg91.Error
	fmt.Println(notify.CodeOf(err), notify.IsRetryable(err), errors.As(err, &me) && me.Code == "301")
	// Output:
	// <nil>
	// 919876543210 A-17 today
	// Your order A-17 ships today. - ACMECO
	// invalid_argument 1
	// unavailable true true
}

// ExampleProvider_Balance reads the MSG91 wallet, exactly, and checks
// health: a key MSG91 refuses is unhealthy, and the error never repeats
// it.
func ExampleProvider_Balance() {
	vendor := msg91test.NewServer(msg91test.Config{AuthKey: "demo-key", Balance: 123456})
	defer vendor.Close()
	p, err := msg91.New(msg91.Config{AuthKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ctx := context.Background()
	balance, err := p.Balance(ctx)
	fmt.Println(balance.Minor, balance.Currency.Code, err, p.CheckHealth(ctx)) // paise

	wrong, err := msg91.New(msg91.Config{AuthKey: "stale-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer wrong.Close()
	err = wrong.CheckHealth(ctx)
	fmt.Println(notify.CodeOf(err), strings.Contains(err.Error(), "stale-key"))
	fmt.Println(err)
	// Output:
	// 123456 INR <nil> <nil>
	// rejected false
	// rejected: msg91: AuthenticationFailure (code 401, HTTP 401) (MSG91 refused the auth key: check msg91 Config.AuthKey)
}

// ExampleNewWebhook is the whole loop: an SMS goes out through the
// provider to the fake MSG91, whose delivery report reaches the webhook
// over HTTP and moves the message's record to delivered, at MSG91's time.
// A POST with a guessed token is refused.
func ExampleNewWebhook() {
	const token = "3q9xkz1v7b2m5n8c4t6w" // the secret of the webhook URL
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	defer receiver.Close()

	vendor := msg91test.NewServer(msg91test.Config{AuthKey: "demo-key",
		Templates: []msg91test.Template{{ID: "6808ca80d6fc054bef421352", DLTTemplateID: "1107161234567890123",
			Sender: "ACMEIN", Content: "Your order ##VAR1## has shipped. - ACME"}},
		ReportURL: receiver.URL + "/webhooks/msg91/" + token, // what MSG91's panel is given
		Now:       func() time.Time { return time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC) }})
	defer vendor.Close()
	p, err := msg91.New(msg91.Config{AuthKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		panic(err)
	}

	// The account's DLT template: its message_id is the MSG91 template ID.
	accounts := memstore.NewAccounts()
	settings := sms.Settings{SenderID: "ACMEIN", DLTTemplates: []sms.DLTTemplate{{ID: "1107161234567890123",
		EntityID: "1101456789012345678", Content: "Your order {#var#} has shipped. - ACME", MessageID: "6808ca80d6fc054bef421352"}}}
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR(), Settings: settings.Map()}); err != nil {
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
	hook, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: n, Token: token})
	if err != nil {
		panic(err)
	}
	mux.Handle("POST /webhooks/msg91/{token}", hook)

	ctx := context.Background()
	rc, err := n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteDLT,
		DLTTemplateID: "1107161234567890123", Message: "Your order A-17 has shipped. - ACME"})
	if err != nil {
		panic(err)
	}
	// MSG91 posts data=[{"requestId", "report": [{"number": "919876543210",
	// "status": "1", "desc": "DELIVERED", "date": "2026-11-25 14:00:05"}], ...}].
	fmt.Println(vendor.Report(ctx, rc.ProviderMessageID, msg91test.Delivered))

	m, err := n.Message(ctx, "acme", rc.MessageID)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.State, m.History[len(m.History)-1].At)

	resp, err := http.Post(receiver.URL+"/webhooks/msg91/guessed-token-123456", "application/json",
		strings.NewReader(`{"requestId":"`+rc.ProviderMessageID+`","status":"2"}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	fmt.Printf("%+v\n", hook.Stats())
	// Output:
	// <nil>
	// delivered 2026-11-25 08:30:05 +0000 UTC
	// 401
	// {Reports:1 Unmatched:0 Ignored:0 Refused:1 Malformed:0 Failed:0 Held:0}
}
