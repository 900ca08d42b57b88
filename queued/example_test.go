package queued_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// wire makes a Notifier with SMS and chat channels on a memqueue, at a
// fixed time, and its queue side.
func wire(now *time.Time) (*queued.Sender, *notify.Notifier, *memqueue.Queue, *memprovider.Provider) {
	clock := func() time.Time { return *now }
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	ledger := memstore.NewLedger(wal)
	q, _ := memqueue.New(memqueue.Config{Ledger: ledger, Now: clock})
	smsVendor := memprovider.New("sms")
	smsCh, _ := sms.New(sms.Config{Provider: smsVendor})
	chatCh, _ := chat.New(chat.Config{Cloud: memprovider.New("cloudchat")})
	n, _ := notify.New(accounts, ledger, notify.WithChannel(smsCh), notify.WithChannel(chatCh),
		notify.WithPrices(wallet.DefaultINR()), notify.WithQueue(q), notify.WithClock(clock))
	return queued.New(n), n, q, smsVendor
}

// Enqueue answers at once; a worker (the queue's Run, here RunDue) sends.
func ExampleSender_Enqueue() {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s, n, q, vendor := wire(&now)
	ctx := context.Background()
	r, _ := s.Enqueue(ctx, &sms.Request{Account: "acme", To: "98765 43210", Message: "Your order #4411 has shipped."})
	fmt.Println(r.Status, "charged", r.Cost, "sent", vendor.Len())
	q.RunDue(ctx, s)
	m, _ := n.Message(ctx, "acme", r.MessageID)
	fmt.Println(m.State, "sent", vendor.Len())
	// Output:
	// queued charged 0.25 INR sent 0
	// sent sent 1
}

// EnqueueTx joins the caller's transaction (a pgx.Tx with pgqueue; here
// memqueue's): a rollback leaves nothing charged or sent.
func ExampleSender_EnqueueTx() {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s, n, q, vendor := wire(&now)
	ctx := context.Background()
	tx := q.Begin()
	_, _ = s.EnqueueTx(ctx, tx, &sms.Request{Account: "acme", To: "98765 43210", Message: "Order placed."})
	_ = tx.Rollback(ctx)
	q.RunDue(ctx, s)
	b, _ := n.Balance(ctx, "acme")
	fmt.Println("sent", vendor.Len(), "balance", b.Available)
	// Output: sent 0 balance 100.00 INR
}

// A chat message, and an SMS two minutes later unless the chat is
// delivered by then.
func ExampleSender_SendWithFallback() {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s, _, q, smsVendor := wire(&now)
	ctx := context.Background()
	r, err := s.SendWithFallback(ctx,
		&chat.Request{Account: "acme", To: "98765 43210", Message: "Your order #4411 has shipped.", Gateway: chat.GatewayCloud},
		queued.Fallback{Request: &sms.Request{Account: "acme", To: "98765 43210", Message: "Your order #4411 has shipped."},
			After: 2 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("chat", r.Status, "fallback", r.Fallback != "")
	now = now.Add(2 * time.Minute) // no delivery report came
	q.RunDue(ctx, s)
	fmt.Println("SMS sent", smsVendor.Len())
	// Output:
	// chat sent fallback true
	// SMS sent 1
}

// SendAt charges a send now and leaves it for a worker at its time;
// Cancel stops it until then and refunds it, once.
func ExampleSender_SendAt() {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s, _, q, vendor := wire(&now)
	ctx := context.Background()
	r, _ := s.SendAt(ctx, &sms.Request{Account: "acme", To: "98765 43210", Message: "Your table is booked for 19:00."},
		now.Add(time.Hour))
	fmt.Println(r.Status, r.SendAt.Format(time.Kitchen), "charged", r.Cost)
	fmt.Println("due now:", q.RunDue(ctx, s))

	c, err := s.Cancel(ctx, "acme", r.MessageID)
	fmt.Println(c.Status, c.ErrorCode, "balance", c.Balance, err)
	now = now.Add(time.Hour)
	fmt.Println("due later:", q.RunDue(ctx, s), "sent:", vendor.Len())
	// Output:
	// scheduled 1:00PM charged 0.25 INR
	// due now: 0
	// failed canceled balance 100.00 INR <nil>
	// due later: 1 sent: 0
}
