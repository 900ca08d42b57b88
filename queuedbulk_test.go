package notify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// bulkOf is a bulk SMS from acme to numbers, its idempotency key key.
func bulkOf(key string, numbers ...string) *sms.BulkRequest {
	return &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Our store opens at 10 tomorrow.", IdempotencyKey: key},
		To: numbers}
}

// Enqueue of a Bulk request queues each recipient as its own message,
// charged once each; the workers send each once; a repeat of the key
// answers the same receipt and queues nothing more.
func TestEnqueueBulkQueuesEachRecipientOnce(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	req := bulkOf("camp-1", "9876543210", "9876543211", "9876543212")
	rc, err := queued.New(r.n).Enqueue(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateQueued || len(rc.Legs) != 3 || rc.Cost.Minor != 3*smsPrice {
		t.Fatalf("receipt %+v: want queued, 3 legs, charged %d", rc, 3*smsPrice)
	}
	for i, l := range rc.Legs {
		if l.Status != record.StateQueued || l.MessageID == "" || l.Cost.Minor != smsPrice {
			t.Fatalf("leg %d: %+v", i, l)
		}
	}
	if r.vendor.Len() != 0 || r.balance(t) != opening-3*smsPrice {
		t.Fatalf("before the workers: vendor %d, balance %d", r.vendor.Len(), r.balance(t))
	}
	again, err := queued.New(r.n).Enqueue(ctx, bulkOf("camp-1", "9876543210", "9876543211", "9876543212"))
	if err != nil || again.MessageID != rc.MessageID {
		t.Fatalf("a repeat of the key: %+v, %v; want the first receipt", again, err)
	}
	if got := r.run(); got != 3 || r.vendor.Len() != 3 {
		t.Fatalf("the workers ran %d and sent %d; want 3 each", got, r.vendor.Len())
	}
	for _, l := range rc.Legs {
		if m := r.message(t, l.MessageID); m.State != record.StateSent {
			t.Fatalf("leg %s is %s, want sent", l.MessageID, m.State)
		}
	}
	if r.run() != 0 || r.balance(t) != opening-3*smsPrice {
		t.Fatal("something ran or moved money twice")
	}
}

// SendAt of a Bulk request schedules every recipient for its time.
func TestSendAtBulk(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	at := r.clock.Now().Add(time.Hour)
	rc, err := queued.New(r.n).SendAt(ctx, bulkOf("", "9876543210", "9876543211"), at)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateScheduled || !rc.SendAt.Equal(at) || len(rc.Legs) != 2 || rc.Legs[1].Status != record.StateScheduled {
		t.Fatalf("receipt %+v: want both scheduled at %v", rc, at)
	}
	r.clock.Advance(time.Hour - time.Second)
	if r.run() != 0 || r.vendor.Len() != 0 {
		t.Fatal("a scheduled recipient went early")
	}
	r.clock.Advance(time.Second)
	if r.run() != 2 || r.vendor.Len() != 2 {
		t.Fatalf("at its time the vendor got %d, want 2", r.vendor.Len())
	}
}

// A wallet that pays for some recipients only: those are queued, the
// rest get failed legs, charged nothing, as Send of a Bulk does.
func TestEnqueueBulkShortWallet(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	spend := int64(opening - 2*smsPrice) // leaves the price of two
	if _, err := r.wallet.Debit(ctx, "acme", notify.Money{Minor: spend, Currency: record.INR()}, "spent elsewhere"); err != nil {
		t.Fatal(err)
	}
	rc, err := queued.New(r.n).Enqueue(ctx, bulkOf("", "9876543210", "9876543211", "9876543212"))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateQueued || rc.Cost.Minor != 2*smsPrice ||
		rc.Legs[2].Status != record.StateFailed || rc.Legs[2].ErrorCode != notify.CodeInsufficientFunds || rc.Legs[2].MessageID != "" {
		t.Fatalf("receipt %+v, last leg %+v: want two queued and the third failed for funds", rc, rc.Legs[2])
	}
	if r.balance(t) != 0 || r.run() != 2 || r.vendor.Len() != 2 {
		t.Fatalf("balance %d, vendor %d: want 0 and 2", r.balance(t), r.vendor.Len())
	}
}

// A promotional bulk SMS queued at 22:00 IST waits for 09:00, every
// recipient, where Send of it is refused.
func TestEnqueueBulkPromotionWaitsForItsWindow(t *testing.T) {
	r := newWindowRig(t, true)
	ctx := context.Background()
	r.clock.Advance(time.Date(2026, 11, 26, 22, 0, 0, 0, ist).Sub(r.clock.Now()))
	rc, err := queued.New(r.n).Enqueue(ctx, &sms.BulkRequest{To: []string{"9876543210", "9876543211"},
		Message: sms.Request{Account: "acme", TemplateSlug: "sale"}})
	if err != nil {
		t.Fatal(err)
	}
	nine := time.Date(2026, 11, 27, 9, 0, 0, 0, ist)
	if rc.Status != record.StateScheduled || !rc.SendAt.Equal(nine) || !rc.Legs[1].SendAt.Equal(nine) {
		t.Fatalf("receipt %+v: want both scheduled for 09:00 IST", rc)
	}
	r.clock.Advance(nine.Sub(r.clock.Now()))
	if r.run() != 2 || r.vendor.Len() != 2 {
		t.Fatalf("at 09:00 the vendor got %d, want 2", r.vendor.Len())
	}
}

// What a queued bulk refuses, with nothing queued or charged: a
// recipient on the suppression list (named by its index), a bulk in the
// caller's transaction, a bad number.
func TestEnqueueBulkRefusals(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	if _, err := r.ledger.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: sms.Kind, To: "+919876543211",
		Reason: store.SuppressHardBounce, At: queueEpoch}); err != nil {
		t.Fatal(err)
	}
	_, err := queued.New(r.n).Enqueue(ctx, bulkOf("", "9876543210", "9876543211"))
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeSuppressed || !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "to.1" {
		t.Fatalf("a suppressed recipient: %v; want CodeSuppressed naming to.1", err)
	}
	_, err = queued.New(r.n).Enqueue(ctx, bulkOf("", "9876543210", "12"))
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &e) || e.Fields[0].Field != "to.1" {
		t.Fatalf("a bad number: %v; want InvalidArgument naming to.1", err)
	}
	_, err = queued.New(r.n).EnqueueTx(ctx, r.q.Begin(), bulkOf("", "9876543210"))
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "EnqueueTxMany") {
		t.Fatalf("a bulk in the caller's transaction: %v", err)
	}
	if r.run() != 0 || r.balance(t) != opening {
		t.Fatal("a refused bulk queued or charged something")
	}
}

// A queued bulk with a key that died after its recipients were queued
// but before its receipt was kept: a repeat answers the recipients it
// queued, from its request record, and queues none of them again.
func TestEnqueueBulkRepeatAfterACrash(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	keys := memstore.NewIdempotency(24*time.Hour, memstore.WithClock(r.clock.Now))
	crashing := &forgetReceipt{Keys: keys}
	n := r.notifierOn(t, r.ledger, notify.WithIdempotency(crashing))
	if _, err := queued.New(n).Enqueue(ctx, bulkOf("camp-9", "9876543210", "9876543211")); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(memstore.DefaultIdempotencyLease + time.Second) // the dead holder's lease runs out
	n2 := r.notifierOn(t, r.ledger, notify.WithIdempotency(keys))
	rc, err := queued.New(n2).Enqueue(ctx, bulkOf("camp-9", "9876543210", "9876543211"))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateQueued || len(rc.Legs) != 2 || rc.Legs[0].Status != record.StateQueued {
		t.Fatalf("the repeat answered %+v; want the two queued recipients", rc)
	}
	if got := r.run(); got != 2 || r.vendor.Len() != 2 || r.balance(t) != opening-2*smsPrice {
		t.Fatalf("ran %d, sent %d, balance %d: want each recipient once", got, r.vendor.Len(), r.balance(t))
	}
}

// forgetReceipt is an idempotency store whose holder dies before it
// keeps its receipt: Complete stores nothing, so the key's reservation
// is left to run out, as after a crash.
type forgetReceipt struct{ store.Keys }

func (forgetReceipt) Complete(context.Context, string, string, []byte) error { return nil }

// batchQueue is a memqueue that opens a batch (Queue.OpenMany), as pgqueue does: all
// or none, refusing a batch the wallet cannot pay for whole; lose makes
// it open them and then lose its answer.
type batchQueue struct {
	*memqueue.Queue
	wallet *memstore.Wallet
	calls  int
	lose   bool // the answer lost after the records were written
	// loseFirst loses the answer before anything was written.
	loseFirst bool
}

func (q *batchQueue) OpenMany(ctx context.Context, ms []*record.Message) error {
	q.calls++
	if q.loseFirst {
		return fmt.Errorf("the connection went before the commit: %w", store.ErrUnavailable)
	}
	var sum int64
	for _, m := range ms {
		sum += m.Charge.Minor
	}
	b, err := q.wallet.Balance(ctx, ms[0].Account)
	if err != nil {
		return err
	}
	if b.Available.Minor < sum {
		return fmt.Errorf("the batch costs %d: %w", sum, store.ErrInsufficientFunds)
	}
	for _, m := range ms {
		if _, err := q.Open(ctx, m); err != nil {
			return err
		}
	}
	if q.lose {
		return fmt.Errorf("the commit's answer was lost: %w", store.ErrUnavailable)
	}
	return nil
}

// newBatchRig is a queue rig whose Notifier queues on a batchQueue.
func newBatchRig(t *testing.T) (*queueRig, *batchQueue, *notify.Notifier) {
	r := newQueueRig(t)
	bq := &batchQueue{Queue: r.q, wallet: r.wallet}
	n := r.notifierOn(t, r.ledger, notify.WithQueue(bq), notify.WithIdempotency(memstore.NewIdempotency(time.Hour)))
	return r, bq, n
}

// A queue that opens many records at once (Queue.OpenMany) gets a
// queued bulk in one call; when it refuses the batch for funds, the
// recipients are opened one by one, those the wallet pays for queued.
func TestEnqueueBulkAtOnce(t *testing.T) {
	r, bq, n := newBatchRig(t)
	ctx := context.Background()
	rc, err := queued.New(n).Enqueue(ctx, bulkOf("", "9876543210", "9876543211", "9876543212"))
	if err != nil || rc.Status != record.StateQueued || bq.calls != 1 || rc.Cost.Minor != 3*smsPrice {
		t.Fatalf("%+v, %v, %d OpenMany calls: want queued in one call", rc, err, bq.calls)
	}
	if rc.Balance.Minor != opening-3*smsPrice {
		t.Errorf("the receipt's balance %d, want %d", rc.Balance.Minor, opening-3*smsPrice)
	}
	if got := r.q.RunDue(ctx, queued.New(n)); got != 3 || r.vendor.Len() != 3 {
		t.Fatalf("ran %d, sent %d", got, r.vendor.Len())
	}
	// Funds for two of three: refused whole at once, then two queued.
	left := r.balance(t)
	if _, err := r.wallet.Debit(ctx, "acme", notify.Money{Minor: left - 2*smsPrice, Currency: record.INR()}, "spent elsewhere"); err != nil {
		t.Fatal(err)
	}
	rc, err = queued.New(n).Enqueue(ctx, bulkOf("", "9876543213", "9876543214", "9876543215"))
	if err != nil || rc.Status != record.StateQueued || bq.calls != 2 || rc.Legs[2].ErrorCode != notify.CodeInsufficientFunds ||
		rc.Legs[1].Status != record.StateQueued || r.balance(t) != 0 {
		t.Fatalf("%+v, %v, %d calls, balance %d: want two queued one by one", rc, err, bq.calls, r.balance(t))
	}
}

// A lost answer of the batch whose records were written: each is read
// back and found, so every recipient is queued for certain, charged once,
// and a repeat of the key queues none again.
func TestEnqueueBulkAtOnceAnswerLost(t *testing.T) {
	r, bq, n := newBatchRig(t)
	ctx := context.Background()
	bq.lose = true
	rc, err := queued.New(n).Enqueue(ctx, bulkOf("camp-3", "9876543210", "9876543211"))
	if err != nil || rc == nil || rc.Status != record.StateQueued || rc.Legs[0].Status != record.StateQueued ||
		rc.Legs[1].Status != record.StateQueued || rc.Cost.Minor != 2*smsPrice {
		t.Fatalf("%+v, %v: want every leg read back queued, charged", rc, err)
	}
	bq.lose = false
	again, err := queued.New(n).Enqueue(ctx, bulkOf("camp-3", "9876543210", "9876543211"))
	if again == nil || again.MessageID != rc.MessageID || bq.calls != 1 {
		t.Fatalf("a repeat: %+v, %v, %d calls; want the first answer, nothing opened again", again, err, bq.calls)
	}
	if got := r.q.RunDue(ctx, queued.New(n)); got != 2 || r.vendor.Len() != 2 || r.balance(t) != opening-2*smsPrice {
		t.Fatalf("ran %d, sent %d, balance %d: want each recipient once", got, r.vendor.Len(), r.balance(t))
	}
}

// A lost answer of a batch that wrote nothing: the records are not found,
// so every leg stays unknown (a commit on its way could still queue
// them), and the answer says that most likely nothing was queued or
// charged, never that a charge stands.
func TestEnqueueBulkAtOnceAnswerLostBeforeAnyWrite(t *testing.T) {
	r, bq, n := newBatchRig(t)
	bq.loseFirst = true
	rc, err := queued.New(n).Enqueue(context.Background(), bulkOf("camp-4", "9876543210", "9876543211"))
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || rc == nil || rc.Status != record.StateUnknown || rc.Legs[0].Status != record.StateUnknown {
		t.Fatalf("%+v, %v: want every leg unknown", rc, err)
	}
	if msg := rc.Legs[0].Error; !strings.Contains(msg, "not found yet") || !strings.Contains(msg, "most likely nothing was queued or charged") {
		t.Errorf("leg error %q: want it to say the record is not found and most likely nothing was charged", msg)
	}
	if r.balance(t) != opening || r.q.Len() != 0 {
		t.Fatalf("balance %d, %d jobs: nothing was written", r.balance(t), r.q.Len())
	}
}

// A queue wrapped by embedding the contract (for logging, say) keeps its
// batch: OpenMany is a method of queue.Queue, not an optional interface a
// wrapper would hide.
func TestEnqueueBulkAtOnceThroughAWrapper(t *testing.T) {
	r := newQueueRig(t)
	bq := &batchQueue{Queue: r.q, wallet: r.wallet}
	wrapped := struct{ queue.Queue }{bq}
	n := r.notifierOn(t, r.ledger, notify.WithQueue(wrapped))
	rc, err := queued.New(n).Enqueue(context.Background(), bulkOf("", "9876543210", "9876543211"))
	if err != nil || rc.Status != record.StateQueued || bq.calls != 1 {
		t.Fatalf("%+v, %v, %d OpenMany calls: want queued in one call through the wrapper", rc, err, bq.calls)
	}
}
