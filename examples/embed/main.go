// Command embed shows notify embedded in a program: it wires the SMS, chat
// and e-mail channels to providers that log instead of sending, charges a
// prepaid wallet kept in memory, sends one message of each kind and the
// dual-channel OTP, and prints the receipts and the balance.
//
//	go run ./examples/embed
//
// Swap the log providers for real ones (provider/smsgateway,
// provider/cloudchat, provider/qrchat, provider/smtp) to send for real.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(out, nil))

	// Stores: one account with ₹100.00 in its wallet.
	accounts := memstore.NewAccounts()
	acct := &notify.Account{ID: "acme", Name: "Acme Stores", Settings: sms.Settings{SenderID: "ACMEST"}.Map(), Currency: record.INR()}
	if err := accounts.Add(acct); err != nil {
		return err
	}
	wal := memstore.NewWallet()
	if err := wal.Open(acct.ID, notify.Money{Minor: 10000, Currency: record.INR()}); err != nil {
		return err
	}

	// Channels over providers that log (OTP codes redacted).
	renderer, err := template.New(nil)
	if err != nil {
		return err
	}
	smsCh, err := sms.New(sms.Config{Provider: logprovider.New(logger, "sms-log"), Renderer: renderer})
	if err != nil {
		return err
	}
	chatCh, err := chat.New(chat.Config{
		Cloud:    logprovider.New(logger, "cloud-log"),
		QR:       logprovider.New(logger, "qr-log"),
		Renderer: renderer,
		// The approved authentication template one-time codes go through
		// on the cloud gateway (the vendor takes them in no other form).
		CloudOTPTemplate: "otp_code",
	})
	if err != nil {
		return err
	}
	emailCh, err := email.New(email.Config{Provider: logprovider.New(logger, "email-log"), Renderer: renderer})
	if err != nil {
		return err
	}

	// The ledger keeps every message's record and moves the wallet's
	// money with it; the prices make sending metered.
	n, err := notify.New(accounts, memstore.NewLedger(wal),
		notify.WithChannel(smsCh),
		notify.WithChannel(chatCh),
		notify.WithChannel(emailCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(24*time.Hour)),
	)
	if err != nil {
		return err
	}

	print := func(what string, r *notify.Receipt, err error) {
		if err != nil {
			fmt.Fprintf(out, "%-14s failed: %v\n", what, err)
			return
		}
		via := r.Provider
		for i, leg := range r.Legs { // the dual OTP: one receipt per channel
			if i > 0 {
				via += "+"
			}
			via += leg.Provider
		}
		fmt.Fprintf(out, "%-14s %s via %s, cost %s, balance %s\n",
			what, r.Status, via, wallet.Format(r.Cost), wallet.Format(r.Balance))
	}

	r, err := n.Send(ctx, &sms.Request{Account: "acme", To: "+91 98765 43210",
		Message: "Your order #4411 has shipped."})
	print("sms", r, err)

	r, err = n.Send(ctx, &chat.Request{Account: "acme", To: "9876543210",
		TemplateSlug: "order-confirmed",
		Variables: record.Vars{"NAME": "Asha", "ORDER_ID": "4411", "AMOUNT": "Rs 1,499",
			"DELIVERY_DATE": "28/11/2026", "LINK": "https://acme.example/orders/4411"}})
	print("chat template", r, err)

	r, err = n.Send(ctx, &email.Request{Account: "acme", To: "asha@example.com",
		TemplateSlug: "invoice-generated", Purpose: email.PurposeInvoice,
		Variables: record.Vars{"NAME": "Asha", "INVOICE_NO": "INV-2026-0042", "AMOUNT": "Rs 1,499",
			"DUE_DATE": "30/11/2026", "LINK": "https://acme.example/invoices/42"}})
	print("email", r, err)

	r, err = n.Send(ctx, &otp.Request{Account: "acme", To: "9876543210", OTP: "482913",
		BrandName: "Acme", IdempotencyKey: "signup-42"})
	print("dual otp", r, err)

	// The same idempotency key again: the first receipt, no second charge.
	r, err = n.Send(ctx, &otp.Request{Account: "acme", To: "9876543210", OTP: "482913",
		BrandName: "Acme", IdempotencyKey: "signup-42"})
	print("dual otp again", r, err)

	// Bad input is refused before anything is charged.
	_, err = n.Send(ctx, &sms.Request{Account: "acme", To: "12345", Message: ""})
	print("bad sms", nil, err)

	b, err := n.Balance(ctx, "acme")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "balance of %s: %s\n", b.Name, wallet.Format(b.Available))
	return nil
}
