package bench

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/wallet"
)

// newPipeline wires what one send through the whole pipeline costs:
// validation and normalisation by the SMS channel, pricing, a debit on
// memstore, delivery to memprovider and a receipt.
func newPipeline(b *testing.B) (*notify.Notifier, *memprovider.Provider) {
	b.Helper()
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", VendorID: "ACMEIN", Currency: notify.INR()}); err != nil {
		b.Fatal(err)
	}
	// Remember the last 65,536 refs: retries of a charge arrive within
	// seconds, and an ever-growing ref table would measure cache misses.
	w := memstore.NewWallet(memstore.WithRefRetention(1 << 16))
	if err := w.Open("acme", notify.Money{Minor: 1 << 60, Currency: notify.INR()}); err != nil {
		b.Fatal(err)
	}
	p := memprovider.New("mem")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		b.Fatal(err)
	}
	n, err := notify.New(accounts, notify.WithChannel(ch), notify.WithWallet(w, wallet.DefaultINR()))
	if err != nil {
		b.Fatal(err)
	}
	return n, p
}

func BenchmarkPipelineSendSMS(b *testing.B) {
	n, p := newPipeline(b)
	ctx := context.Background()
	req := &notify.SMSRequest{Account: "acme", To: "+91 98765 43210", Message: "Your order 4411 has shipped."}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := n.SendSMS(ctx, req); err != nil {
			b.Fatal(err)
		}
		if i++; i%4096 == 0 {
			p.Reset() // the capture buffer is for tests; keep memory flat
		}
	}
}
