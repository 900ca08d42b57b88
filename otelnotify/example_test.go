package otelnotify_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/otelnotify"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// A Notifier traced through the program's tracer provider. A program
// passes its SDK's (sdktrace.NewTracerProvider with an exporter, shut
// down on exit); the no-op one here is also what a Notifier without the
// option has. The caller's span, if ctx carries one, is the send's parent.
func ExampleWithTracerProvider() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})

	var tp trace.TracerProvider = noop.NewTracerProvider()
	n, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh),
		notify.WithPrices(wallet.DefaultINR()), otelnotify.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := n.Send(context.Background(), &sms.Request{Account: "acme", To: "+91 98765 43210", Message: "Your order #4411 has shipped."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Status)

	// A nil provider is refused, not taken for the default.
	_, err = notify.New(accounts, memstore.NewLedger(wal), otelnotify.WithTracerProvider(nil))
	fmt.Println(err)
	// Output:
	// sent
	// notify.New: otelnotify.WithTracerProvider: nil TracerProvider
}
