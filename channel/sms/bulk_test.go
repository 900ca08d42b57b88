package sms_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/wallet"
)

// TestBulkWithoutBatches: a provider that sends one message at a time
// gets one call per recipient, each settled on its own.
func TestBulkWithoutBatches(t *testing.T) {
	p := memprovider.New("mem")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	if ch.MaxBatch() != 1 {
		t.Fatalf("MaxBatch = %d", ch.MaxBatch())
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(testAccount()); err != nil {
		t.Fatal(err)
	}
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: 1000, Currency: notify.INR()}); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, notify.WithChannel(ch), notify.WithWallet(w, wallet.DefaultINR()),
		notify.WithMessageStore(memstore.NewMessages(w)))
	if err != nil {
		t.Fatal(err)
	}
	p.FailNext(1, notify.CodeRejected) // the first recipient's send, for good
	r, err := n.SendSMSBulk(context.Background(), &notify.BulkSMSRequest{
		Message: notify.SMSRequest{Account: "acme", Message: "Sale"}, To: []string{"9876543210", "9876543211", "9876543212"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Sent()); got != 2 {
		t.Fatalf("provider took %d messages, want 2", got)
	}
	if r.Legs[0].Status != notify.StatusFailed || r.Legs[1].Status != notify.StatusSent || r.Legs[2].Status != notify.StatusSent ||
		r.Cost.Minor != 50 {
		t.Fatalf("receipt %+v", r)
	}
}
