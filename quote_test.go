package notify_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// TestQuote checks that a quote is the price Send charges, for one
// request, a composite and a bulk one, and that quoting moves no money
// and sends nothing.
func TestQuote(t *testing.T) {
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	smsVendor, chatVendor := memprovider.New("sms"), memprovider.New("cloudchat")
	smsCh, err := sms.New(sms.Config{Provider: smsVendor})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: chatVendor, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithChannel(chatCh),
		notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, req := range []notify.Request{
		&sms.Request{Account: "acme", To: "9876543210", Message: "hello"},
		&otp.Request{Account: "acme", To: "9876543210", OTP: "482913"},
		&sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi"}, To: []string{"9876543210", "9876543211"}},
	} {
		q, err := n.Quote(ctx, req)
		if err != nil {
			t.Fatalf("Quote(%T): %v", req, err)
		}
		before, _ := n.Balance(ctx, "acme")
		if sent := len(smsVendor.Sent()) + len(chatVendor.Sent()); sent != 0 {
			t.Fatalf("Quote(%T) sent %d messages", req, sent)
		}
		r, err := n.Send(ctx, req)
		if err != nil {
			t.Fatalf("Send(%T): %v", req, err)
		}
		if q.Minor == 0 || q != r.Cost {
			t.Errorf("%T: quote %v, Send charged %v", req, q, r.Cost)
		}
		after, _ := n.Balance(ctx, "acme")
		if before.Available.Minor-after.Available.Minor != q.Minor {
			t.Errorf("%T: balance went from %v to %v, quote %v", req, before.Available, after.Available, q)
		}
		smsVendor.Reset()
		chatVendor.Reset()
	}

	_, err = n.Quote(ctx, &sms.Request{Account: "acme", To: "12", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Quote of a bad number: %v, want InvalidArgument", err)
	}
	if _, err := n.Quote(ctx, nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Quote(nil): %v, want InvalidArgument", err)
	}
}
