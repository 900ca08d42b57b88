package bench

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The ledger alone: what the two ledger writes of one send cost, in
// newPipeline's memstore.Ledger and in handWritten's maps, with the same
// retention and the same fresh IDs, without the rest of the send. The
// difference is what the pipeline's guarantees on the ledger cost that
// the baseline does without: a debit that remembers its ref (a retried
// charge is never taken twice), the suppression list's check in the
// opening, the set of records in flight (the reconciler's), the index by
// the vendor's ID (reports), records kept in shards by a hash of their
// ID. bench/run reports it beside the pipeline's row (docs/performance.md).

// BenchmarkLedgerAlone opens and settles one record per op: memstore's
// OpenUnlisted and Move, or handWritten's locked steps.
func BenchmarkLedgerAlone(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		w := memstore.NewWallet(memstore.WithRefRetention(1 << 16))
		if err := w.Open("acme", notify.Money{Minor: 1 << 60, Currency: record.INR()}); err != nil {
			b.Fatal(err)
		}
		l := memstore.NewLedger(w, memstore.WithMessageCapacity(1<<16))
		ctx := context.Background()
		stopping := []store.SuppressionReason{store.SuppressHardBounce, store.SuppressManual} // a transactional message's
		b.ReportAllocs()
		for b.Loop() {
			now := time.Now()
			m := ledgerRecord(now)
			if _, _, err := l.OpenUnlisted(ctx, m, m.To, stopping); err != nil {
				b.Fatal(err)
			}
			u := store.Update{State: record.StateSent, From: record.StateAttempting, At: time.Now(), ProviderMessageID: "mem-" + m.ID[:8], Attempts: 1}
			if _, err := l.Move(ctx, "acme", m.ID, u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		h := newHandWritten(nil)
		b.ReportAllocs()
		for b.Loop() {
			now := time.Now()
			m := ledgerRecord(now)
			rec, err := h.open(m.ID, m.Charge.Minor, now)
			if err != nil {
				b.Fatal(err)
			}
			h.settle(rec, "mem-"+m.ID[:8])
		}
	})
}

// ledgerRecord is a record as the pipeline opens one, at now.
func ledgerRecord(now time.Time) *record.Message {
	return &record.Message{ID: uuid.NewString(), Account: "acme", Kind: "sms", Request: "sms", To: "+919876543210",
		Provider: "mem", Units: 1, Metered: true, Charge: notify.Money{Minor: 25, Currency: record.INR()},
		CreatedAt: now, UpdatedAt: now, State: record.StateAttempting}
}
