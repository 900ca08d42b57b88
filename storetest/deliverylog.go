package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/notifykit/notify"
)

// DeliveryLogHarness connects RunDeliveryLog to one DeliveryLog.
type DeliveryLogHarness struct {
	// New returns an empty log that keeps at least the 1000 most recent
	// receipts, releasing it with t.Cleanup. Required.
	New func(t *testing.T) notify.DeliveryLog
}

// RunDeliveryLog checks a notify.DeliveryLog:
//
//   - a recorded receipt comes back by account and message ID with every
//     field intact, legs included, failed receipts too;
//   - an unknown message, or a message of another account, is NotFound;
//   - Record of a nil receipt fails without a panic;
//   - 64 goroutines recording and reading at once lose nothing.
func RunDeliveryLog(t *testing.T, h DeliveryLogHarness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: DeliveryLogHarness needs New")
	}
	runAll(t, []subtest{
		{"RoundTrip", func(t *testing.T) { testLogRoundTrip(t, h) }},
		{"FailedReceipt", func(t *testing.T) { testLogFailed(t, h) }},
		{"NotFound", func(t *testing.T) { testLogNotFound(t, h) }},
		{"NilReceipt", func(t *testing.T) { testLogNil(t, h) }},
		{"Concurrent", func(t *testing.T) { testLogConcurrent(t, h) }},
	})
}

func newLog(t *testing.T, h DeliveryLogHarness) notify.DeliveryLog {
	t.Helper()
	l := h.New(t)
	if l == nil {
		t.Fatal("DeliveryLogHarness.New returned nil")
	}
	return l
}

func recordAndCheck(t *testing.T, l notify.DeliveryLog, want *notify.Receipt) {
	t.Helper()
	ctx := context.Background()
	if err := l.Record(ctx, want); err != nil {
		t.Fatalf("Record: %v", err)
	}
	got, err := l.Receipt(ctx, want.Account, want.MessageID)
	if err != nil {
		t.Fatalf("Receipt: %v", err)
	}
	if d := diffReceipt(got, want); d != "" {
		t.Fatalf("Receipt differs from the one recorded: %s", d)
	}
}

func testLogRoundTrip(t *testing.T, h DeliveryLogHarness) {
	recordAndCheck(t, newLog(t, h), sampleReceipt(newName("acct")))
}

func testLogFailed(t *testing.T, h DeliveryLogHarness) {
	r := sampleReceipt(newName("acct"))
	r.Kind, r.Legs = notify.KindSMS, nil
	r.Status, r.ErrorCode, r.Error = notify.StateFailed, notify.CodeRejected, "rejected: number is on the DND list"
	r.ProviderMessageID, r.Cost = "", notify.Money{Currency: notify.INR()}
	recordAndCheck(t, newLog(t, h), r)
}

func testLogNotFound(t *testing.T, h DeliveryLogHarness) {
	l := newLog(t, h)
	ctx := context.Background()
	r := sampleReceipt(newName("acct"))
	if err := l.Record(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, err := l.Receipt(ctx, r.Account, newName("msg"))
	wantCode(t, "Receipt of an unknown message", err, notify.CodeNotFound)
	_, err = l.Receipt(ctx, newName("acct"), r.MessageID)
	wantCode(t, "Receipt of another account's message", err, notify.CodeNotFound)
}

func testLogNil(t *testing.T, h DeliveryLogHarness) {
	l := newLog(t, h)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Record(nil) panicked: %v", p)
		}
	}()
	if err := l.Record(context.Background(), nil); err == nil {
		t.Fatal("Record(nil) succeeded")
	}
}

func testLogConcurrent(t *testing.T, h DeliveryLogHarness) {
	l := newLog(t, h)
	acct := newName("acct")
	const per = 10
	ids := make([][]string, Goroutines)
	var wg sync.WaitGroup
	errs := make(chan error, Goroutines)
	for g := 0; g < Goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; i < per; i++ {
				r := &notify.Receipt{MessageID: newName(fmt.Sprintf("g%d-%d", g, i)), Account: acct, Kind: notify.KindEmail, Status: notify.StateSent}
				if err := l.Record(ctx, r); err != nil {
					errs <- err
					return
				}
				ids[g] = append(ids[g], r.MessageID)
				if got, err := l.Receipt(ctx, acct, r.MessageID); err != nil || got.MessageID != r.MessageID {
					errs <- fmt.Errorf("receipt right after Record = %v, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for g := range ids {
		for _, id := range ids[g] {
			if _, err := l.Receipt(context.Background(), acct, id); err != nil {
				t.Fatalf("Receipt(%s) after all goroutines: %v", id, err)
			}
		}
	}
}
