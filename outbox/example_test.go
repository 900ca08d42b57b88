package outbox_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// An app in development keeps what it sends in an outbox and serves the
// page beside its own routes. Its provider, memory, reaches no one, so the
// page may reveal its codes on a click.
func Example() {
	box, err := outbox.New(outbox.WithDevelopmentProviders("mem"))
	if err != nil {
		log.Fatal(err)
	}
	defer box.Close() // ends the page's event streams before a server shuts down

	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}); err != nil {
		log.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: memprovider.New("mem")})
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh), notify.WithObserver(box))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Your parcel ships today"}); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/outbox", box)
	mux.Handle("/outbox/", box)
	// http.ListenAndServe("127.0.0.1:8080", mux) and open /outbox.

	for _, m := range box.Messages(outbox.Filter{Kind: sms.Kind}) {
		fmt.Println(m.To, m.Status, m.SMS.Text, m.SMS.Encoding, m.SMS.Segments)
	}
	// Output: +919876543210 sent Your parcel ships today gsm7 1
}
