package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/wallet"
)

func ExampleWallet() {
	ctx := context.Background()
	w := memstore.NewWallet()
	paise := func(n int64) notify.Money { return notify.Money{Minor: n, Currency: record.INR()} }
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
	err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}, "sk_live_0123456789")
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
	fmt.Println("first:", r.Receipt, err)
	// The Notifier completes a key with the receipt it encoded; the
	// store keeps the bytes as they are.
	_ = idem.Complete(ctx, "acme", "order-42", []byte(`{"message_id":"msg-1"}`))
	r, _ = idem.Reserve(ctx, "acme", "order-42", "fingerprint")
	fmt.Println("repeat:", string(r.Receipt))
	_, err = idem.Reserve(ctx, "acme", "order-42", "another request")
	fmt.Println("other request:", errors.Is(err, store.ErrConflict))
	// Output:
	// first: [] <nil>
	// repeat: {"message_id":"msg-1"}
	// other request: true
}

func ExampleLedger() {
	ctx := context.Background()
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: 1000, Currency: record.INR()}); err != nil {
		panic(err)
	}
	l := memstore.NewLedger(w)
	// The record and its charge are one step; so are a failure and its
	// refund.
	m := &record.Message{ID: "m1", Account: "acme", Kind: "sms", To: "9876543210",
		Charge: notify.Money{Minor: 25, Currency: record.INR()}}
	b, _ := l.Open(ctx, m)
	fmt.Println("after open:", b.Available)
	moved, _ := l.Move(ctx, "acme", "m1", store.Update{State: record.StateFailed, Error: "refused"})
	b, _ = l.Balance(ctx, "acme")
	fmt.Println(moved.State, "refunded:", moved.Refunded, "balance:", b.Available)
	// Output:
	// after open: 9.75 INR
	// failed refunded: true balance: 10.00 INR
}

func ExampleTemplates() {
	ctx := context.Background()
	templates := memstore.NewTemplates()
	_ = templates.PutTemplate(ctx, "acme", &store.Template{
		Slug:      "order-shipped",
		Variables: []string{"ORDER"},
		Bodies:    map[record.Kind]store.Body{"sms": {Text: "Order {{ORDER}} has shipped. -Acme"}},
	})
	t, _ := templates.Template(ctx, "acme", "order-shipped")
	fmt.Println(t.Bodies["sms"].Text)
	_, err := templates.Template(ctx, "other", "order-shipped")
	fmt.Println(notify.CodeOf(err))
	// Output:
	// Order {{ORDER}} has shipped. -Acme
	// not_found
}

func ExampleWindowLimit() {
	ctx := context.Background()
	// The OTP throttle: at most 3 codes per number within 15 minutes. A
	// Notifier takes it as notify.WithOTPThrottle(otp).
	otp, err := memstore.NewWindowLimit(3, 15*time.Minute)
	if err != nil {
		panic(err)
	}
	key := "acme\x00" + "9876543210"
	t0 := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		fmt.Println("code", i+1, otp.Take(ctx, key, t0.Add(time.Duration(i)*time.Minute)))
	}
	err = otp.Take(ctx, key, t0.Add(5*time.Minute))
	var e *store.LimitError
	if errors.As(err, &e) {
		fmt.Println("code 4: retry after", e.RetryAfter, "-", e.Rule)
	}
	// The send of code 3 failed before the vendor had it: give it back.
	_ = otp.Undo(ctx, key, t0.Add(2*time.Minute))
	fmt.Println("code 4 after the undo:", otp.Take(ctx, key, t0.Add(5*time.Minute)))
	// Output:
	// code 1 <nil>
	// code 2 <nil>
	// code 3 <nil>
	// code 4: retry after 10m0s - at most 3 per 15m0s
	// code 4 after the undo: <nil>
}

func ExampleRateLimit() {
	ctx := context.Background()
	// Per account: bursts of 3, then 10 sends per second. A Notifier
	// takes it as notify.WithRateLimit(rate).
	rate, err := memstore.NewRateLimit(10, 3)
	if err != nil {
		panic(err)
	}
	verdict := func(err error) string {
		if err != nil {
			return string(notify.CodeOf(err))
		}
		return "allowed"
	}
	t0 := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range 4 {
		fmt.Println("send", i+1, verdict(rate.Take(ctx, "acme", t0)))
	}
	var e *store.LimitError
	if errors.As(rate.Take(ctx, "acme", t0.Add(30*time.Millisecond)), &e) {
		fmt.Println("30ms later: retry after", e.RetryAfter, "-", e.Rule)
	}
	fmt.Println("100ms later:", verdict(rate.Take(ctx, "acme", t0.Add(100*time.Millisecond))))
	fmt.Println("another account:", verdict(rate.Take(ctx, "globex", t0)))
	// Output:
	// send 1 allowed
	// send 2 allowed
	// send 3 allowed
	// send 4 rate_limited
	// 30ms later: retry after 70ms - at most 3 at once, then 1 per 100ms
	// 100ms later: allowed
	// another account: allowed
}

func ExampleVerifications() {
	ctx := context.Background()
	vs := memstore.NewVerifications()
	t0 := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	// The code is never kept: package verify keeps an HMAC of it.
	err := vs.CreateVerification(ctx, &verifystore.Verification{
		ID: "0b5a4c1e-3f1d-4c3a-9d8e-2a7b6c5d4e3f", Account: "acme", To: "+919876543210", Purpose: "login",
		Channels: []string{"chat", "sms"}, CodeHash: []byte("an HMAC-SHA256 of the code......"), Length: 6,
		Status: verifystore.VerificationPending, MaxChecks: 3, MaxSends: 2,
		CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute), UpdatedAt: t0,
	})
	if err != nil {
		panic(err)
	}
	v, _ := vs.PendingVerification(ctx, "acme", "+919876543210", "login", t0)
	// A send, then a resend within the 30-second cooldown, then after it.
	_, ok, _ := vs.TakeSend(ctx, "acme", v.ID, t0, 30*time.Second)
	fmt.Println("send:", ok)
	_, ok, _ = vs.TakeSend(ctx, "acme", v.ID, t0.Add(10*time.Second), 30*time.Second)
	fmt.Println("resend after 10s:", ok)
	_, ok, _ = vs.TakeSend(ctx, "acme", v.ID, t0.Add(30*time.Second), 30*time.Second)
	fmt.Println("resend after 30s:", ok)
	// Each check is counted before the code is compared.
	for i := range 4 {
		v, ok, _ = vs.TakeCheck(ctx, "acme", v.ID, t0.Add(time.Duration(i+1)*time.Minute))
		fmt.Println("check", i+1, ok, v.Checks, v.StatusAt(t0.Add(time.Duration(i+1)*time.Minute)))
	}
	// The third check matched: approve, once.
	v, ok, _ = vs.FinishVerification(ctx, "acme", v.ID, verifystore.VerificationApproved, t0.Add(4*time.Minute))
	fmt.Println("approve:", ok, v.Status)
	_, ok, _ = vs.FinishVerification(ctx, "acme", v.ID, verifystore.VerificationApproved, t0.Add(4*time.Minute))
	fmt.Println("approve again:", ok)
	// Output:
	// send: true
	// resend after 10s: false
	// resend after 30s: true
	// check 1 true 1 pending
	// check 2 true 2 pending
	// check 3 true 3 max_attempts_reached
	// check 4 false 3 max_attempts_reached
	// approve: true approved
	// approve again: false
}

func ExampleCounters() {
	ctx := context.Background()
	c := memstore.NewCounters()
	// A spend cap: at most ₹50.00 (5000 paise) per account per hour.
	const window, limit = time.Hour, 5000
	t0 := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	for i, paise := range []int64{2000, 2500, 1000} {
		sum, added, _ := c.Add(ctx, "spend\x00acme", paise, window, limit, t0.Add(time.Duration(i)*time.Minute))
		fmt.Println("spend", paise, "->", sum, added)
	}
	// A failed send gives its amount back.
	sum, _, _ := c.Add(ctx, "spend\x00acme", -2500, window, 0, t0.Add(3*time.Minute))
	fmt.Println("give back 2500 ->", sum)
	// An hour on, the window has passed the amounts of 9:00.
	sums, _ := c.Sums(ctx, []string{"spend\x00acme", "spend\x00globex"}, window, t0.Add(time.Hour))
	fmt.Println("an hour later:", sums)
	// Output:
	// spend 2000 -> 2000 true
	// spend 2500 -> 4500 true
	// spend 1000 -> 4500 false
	// give back 2500 -> 2000
	// an hour later: [0 0]
}
