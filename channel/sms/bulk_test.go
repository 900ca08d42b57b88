package sms_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
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
	n, _ := acmeNotifier(t, ch, 1000)
	p.FailNext(1, notify.CodeRejected) // the first recipient's send, for good
	r, err := n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Sale"}, To: []string{"9876543210", "9876543211", "9876543212"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Sent()); got != 2 {
		t.Fatalf("provider took %d messages, want 2", got)
	}
	if r.Legs[0].Status != record.StateFailed || r.Legs[1].Status != record.StateSent || r.Legs[2].Status != record.StateSent ||
		r.Cost.Minor != 50 {
		t.Fatalf("receipt %+v", r)
	}
}

// batcher is a provider that sends in batches of two and reports what
// the Notifier had opened when each batch went.
type batcher struct {
	*memprovider.Provider
	opened  *atomic.Int64 // StatePending events so far
	atSend  []int64       // opened at each SendBatch
	hangUp  func()        // called after the first batch, if set
	batches int
}

func (b *batcher) MaxBatch() int { return 2 }

func (b *batcher) SendBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	b.atSend = append(b.atSend, b.opened.Load())
	out := make([]*notify.Result, len(envs))
	for i, env := range envs {
		res, err := b.Send(ctx, env)
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	if b.batches++; b.batches == 1 && b.hangUp != nil {
		b.hangUp()
	}
	return out, nil
}

// TestBulkOpensEachBatchWhenItGoes: a recipient is charged and recorded
// just before its batch goes, not all at the start, so a crash between
// batches leaves the rest unopened (not unknown and charged), and a
// caller that hangs up after a batch is charged for nothing more.
func TestBulkOpensEachBatchWhenItGoes(t *testing.T) {
	for _, hangUp := range []bool{false, true} {
		opened := &atomic.Int64{}
		b := &batcher{Provider: memprovider.New("mem"), opened: opened}
		ch, err := sms.New(sms.Config{Provider: b})
		if err != nil {
			t.Fatal(err)
		}
		n, w := acmeNotifier(t, ch, 1000, notify.WithObserver(observerFunc(func(_ context.Context, e notify.Event) {
			if e.Type == record.StatePending {
				opened.Add(1)
			}
		})))
		ctx, cancel := context.WithCancel(context.Background())
		if hangUp {
			b.hangUp = cancel
		}
		r, _ := n.Send(ctx, &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale"},
			To: []string{"9876543210", "9876543211", "9876543212", "9876543213", "9876543214"}})
		cancel()
		bal, _ := w.Balance(context.Background(), "acme")
		if !hangUp {
			if !slices.Equal(b.atSend, []int64{2, 4, 5}) || r.Cost.Minor != 125 || bal.Available.Minor != 875 {
				t.Fatalf("opened at each batch %v (want 2, 4, 5), cost %d, balance %d", b.atSend, r.Cost.Minor, bal.Available.Minor)
			}
			continue
		}
		if !slices.Equal(b.atSend, []int64{2}) || opened.Load() != 2 || r.Cost.Minor != 50 || bal.Available.Minor != 950 {
			t.Fatalf("after a hang-up: batches %v, opened %d, cost %d, balance %d", b.atSend, opened.Load(), r.Cost.Minor, bal.Available.Minor)
		}
		for _, leg := range r.Legs[2:] {
			if leg.Status != record.StateFailed || leg.ErrorCode != notify.CodeCanceled || leg.MessageID != "" {
				t.Fatalf("a recipient after the hang-up: %+v", leg)
			}
		}
	}
}

// observerFunc adapts a function to notify.Observer.
type observerFunc func(ctx context.Context, e notify.Event)

func (f observerFunc) Observe(ctx context.Context, e notify.Event) { f(ctx, e) }
