package verify_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify"
	"github.com/notifykit/notify/wallet"
)

// Start sends one code by SMS and chat at the same moment; Check
// approves it. The Notifier here has no idempotency store: verify needs
// none.
func Example() {
	ctx := context.Background()
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsVendor, chatVendor := memprovider.New("sms"), memprovider.New("cloudchat")
	smsCh, _ := sms.New(sms.Config{Provider: smsVendor})
	chatCh, _ := chat.New(chat.Config{Cloud: chatVendor, CloudOTPTemplate: "otp_code"})
	n, err := notify.New(accounts, memstore.NewLedger(wal),
		notify.WithChannel(smsCh), notify.WithChannel(chatCh), notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		panic(err)
	}

	guard, err := verify.NewGuard(verify.GuardConfig{Counters: memstore.NewCounters(), SpendCap: 50000})
	if err != nil {
		panic(err)
	}
	svc, err := verify.New(verify.Config{
		Notifier: n, Accounts: accounts, Store: memstore.NewVerifications(), Guard: guard,
		Secret: []byte("at least 32 random bytes, kept out of the database"),
	})
	if err != nil {
		panic(err)
	}

	// The same code goes by SMS and by chat at the same moment.
	v, err := svc.Start(ctx, "acme", "98765 43210", verify.StartOptions{Purpose: "login",
		WebOTPHost: "acme.example"})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Status, v.To, len(v.Legs), "legs, expires", v.ExpiresAt.Sub(v.CreatedAt))

	// What the user typed: here, the code the SMS carried.
	typed := smsVendor.Sent()[0].Content.(*sms.Message).OTP
	res, err := svc.Check(ctx, "acme", v.ID, typed)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status)
	// Output:
	// pending +919876543210 2 legs, expires 10m0s
	// approved
}
