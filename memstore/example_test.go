package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/wallet"
)

func ExampleWallet() {
	ctx := context.Background()
	w := memstore.NewWallet()
	paise := func(n int64) notify.Money { return notify.Money{Minor: n, Currency: notify.INR()} }
	if err := w.Open("acme", paise(10000)); err != nil {
		panic(err)
	}

	b, _ := w.Debit(ctx, "acme", paise(25), "msg-1")
	fmt.Println("after msg-1:", wallet.Format(b.Available))
	// A retry with the same ref returns the first result and moves nothing.
	b, _ = w.Debit(ctx, "acme", paise(25), "msg-1")
	fmt.Println("retry of msg-1:", wallet.Format(b.Available))
	b, _ = w.Credit(ctx, "acme", paise(25), "refund:msg-1")
	fmt.Println("after the refund:", wallet.Format(b.Available))
	_, err := w.Debit(ctx, "acme", paise(20000), "msg-2")
	fmt.Println("too large:", notify.CodeOf(err))

	entries, bal, _ := w.Ledger("acme")
	for _, e := range entries {
		fmt.Println(e.Seq, e.Kind, e.Ref, wallet.Format(e.Amount), "->", wallet.Format(e.Balance))
	}
	fmt.Println("balance:", wallet.Format(bal))
	// Output:
	// after msg-1: ₹99.75
	// retry of msg-1: ₹99.75
	// after the refund: ₹100.00
	// too large: insufficient_funds
	// 1 debit msg-1 ₹0.25 -> ₹99.75
	// 2 credit refund:msg-1 ₹0.25 -> ₹100.00
	// balance: ₹100.00
}

func ExampleAccounts() {
	ctx := context.Background()
	accounts := memstore.NewAccounts()
	err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: notify.INR()}, "sk_live_0123456789")
	if err != nil {
		panic(err)
	}
	acct, err := accounts.AccountByKey(ctx, "sk_live_0123456789")
	fmt.Println(acct.ID, err)
	_, err = accounts.AccountByKey(ctx, "sk_live_012345678")
	fmt.Println(notify.CodeOf(err))
	// Output:
	// acme <nil>
	// unauthenticated
}

func ExampleIdempotency() {
	ctx := context.Background()
	idem := memstore.NewIdempotency(24 * time.Hour)

	r, err := idem.Reserve(ctx, "acme", "order-42", "fingerprint")
	fmt.Println("first:", r, err)
	_ = idem.Complete(ctx, "acme", "order-42", &notify.Receipt{MessageID: "msg-1"})
	r, _ = idem.Reserve(ctx, "acme", "order-42", "fingerprint")
	fmt.Println("repeat:", r.MessageID)
	_, err = idem.Reserve(ctx, "acme", "order-42", "another request")
	fmt.Println("other request:", notify.CodeOf(err))
	// Output:
	// first: <nil> <nil>
	// repeat: msg-1
	// other request: conflict
}

func ExampleDeliveryLog() {
	ctx := context.Background()
	log := memstore.NewDeliveryLog(2) // keeps the last two receipts
	for _, id := range []string{"m1", "m2", "m3"} {
		_ = log.Record(ctx, &notify.Receipt{Account: "acme", MessageID: id, Status: notify.StatusSent})
	}
	_, err := log.Receipt(ctx, "acme", "m1")
	fmt.Println("m1:", notify.CodeOf(err))
	r, _ := log.Receipt(ctx, "acme", "m3")
	fmt.Println("m3:", r.Status, "kept:", log.Len())
	// Output:
	// m1: not_found
	// m3: sent kept: 2
}

func ExampleTemplates() {
	ctx := context.Background()
	templates := memstore.NewTemplates()
	_ = templates.PutTemplate(ctx, "acme", &notify.Template{
		Slug:      "order-shipped",
		Variables: []string{"ORDER"},
		SMS:       "Order {{ORDER}} has shipped. -Acme",
	})
	t, _ := templates.Template(ctx, "acme", "order-shipped")
	fmt.Println(t.SMS)
	_, err := templates.Template(ctx, "other", "order-shipped")
	fmt.Println(notify.CodeOf(err))
	// Output:
	// Order {{ORDER}} has shipped. -Acme
	// not_found
}
