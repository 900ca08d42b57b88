package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

var ledgerEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// sendRecord opens a record attempting, with a key, and moves it to sent
// under vendor ID "pm-"+id.
func sendRecord(t testing.TB, l *Ledger, id string) {
	t.Helper()
	ctx := context.Background()
	m := &record.Message{ID: id, Account: "a", Provider: "p", IdempotencyKey: "k-" + id,
		State: record.StateAttempting, CreatedAt: ledgerEpoch}
	if _, err := l.Open(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Move(ctx, "a", id, store.Update{State: record.StateSent, At: ledgerEpoch, ProviderMessageID: "pm-" + id}); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerRetention: of the settled records, a Ledger of capacity n
// keeps, after every move, at least the most recent n/2 and none older
// than the most recent n, by ID, key and vendor ID alike.
func TestLedgerRetention(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, 2, 3, 64, 100} {
		l := NewLedger(nil, WithMessageCapacity(n))
		id := func(i int) string { return "m" + strconv.Itoa(i) }
		kept := func(i int) bool {
			_, err := l.Message(ctx, "a", id(i))
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			byKey, _ := l.ByKey(ctx, "a", "k-"+id(i), time.Time{})
			byVendor, _ := l.ByProviderID(ctx, "p", "pm-"+id(i))
			if (len(byKey) == 1) != (err == nil) || (len(byVendor) == 1) != (err == nil) {
				t.Fatalf("n=%d: record %d: Message %v, but ByKey finds %d, ByProviderID %d", n, i, err, len(byKey), len(byVendor))
			}
			return err == nil
		}
		least := max(n/2, 1)
		for i := range 20 * n {
			sendRecord(t, l, id(i))
			for j := max(i-least+1, 0); j <= i; j++ {
				if !kept(j) {
					t.Fatalf("n=%d: after %d settled, record %d (of the latest %d) is forgotten", n, i+1, j, least)
				}
			}
			if old := i - n; old >= 0 && kept(old) {
				t.Fatalf("n=%d: after %d settled, record %d (beyond the latest %d) is kept", n, i+1, old, n)
			}
		}
	}
}

// TestLedgerKeepsOpenRecords: records pending or attempting are never
// forgotten, however many settle around them, nor are their index
// entries; once settled, they go the way of the others.
func TestLedgerKeepsOpenRecords(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(nil, WithMessageCapacity(4))
	pending := &record.Message{ID: "pending", Account: "a", Provider: "p", IdempotencyKey: "kp", CreatedAt: ledgerEpoch}
	attempting := &record.Message{ID: "attempting", Account: "b", Provider: "p", IdempotencyKey: "ka",
		ProviderMessageID: "early", State: record.StateAttempting, CreatedAt: ledgerEpoch}
	for _, m := range []*record.Message{pending, attempting} {
		if _, err := l.Open(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	churn := func(prefix string) {
		for i := range 100 {
			sendRecord(t, l, prefix+strconv.Itoa(i))
		}
	}
	churn("x")
	check := func(account, id, key, vendorID string) {
		t.Helper()
		if _, err := l.Message(ctx, account, id); err != nil {
			t.Errorf("Message(%s): %v", id, err)
		}
		if got, err := l.ByKey(ctx, account, key, time.Time{}); err != nil || len(got) != 1 || got[0].ID != id {
			t.Errorf("ByKey(%s) = %v, %v; want %s", key, recordIDs(got), err, id)
		}
		if vendorID == "" {
			return
		}
		if got, err := l.ByProviderID(ctx, "p", vendorID); err != nil || len(got) != 1 || got[0].ID != id {
			t.Errorf("ByProviderID(%s) = %v, %v; want %s", vendorID, recordIDs(got), err, id)
		}
	}
	check("a", "pending", "kp", "")
	check("b", "attempting", "ka", "early")
	stale, err := l.Stale(ctx, ledgerEpoch.Add(time.Second), -1)
	if err != nil || !slices.Equal(recordIDs(stale), []string{"attempting", "pending"}) {
		t.Errorf("Stale = %v, %v; want the two open records", recordIDs(stale), err)
	}
	if in, err := l.Attempting(ctx, "p", ledgerEpoch); err != nil || !in {
		t.Errorf("Attempting = %v, %v", in, err)
	}
	if got, err := l.ByAccount(ctx, "b", store.MessageCursor{}, 10); err != nil || !slices.Equal(recordIDs(got), []string{"attempting"}) {
		t.Errorf("ByAccount(b) = %v, %v", recordIDs(got), err)
	}

	// Moves between the open states keep them.
	for _, st := range []record.State{record.StateAttempting, record.StatePending, record.StateAttempting} {
		if _, err := l.Move(ctx, "a", "pending", store.Update{State: st, At: ledgerEpoch}); err != nil {
			t.Fatal(err)
		}
		churn("y" + string(st))
	}
	check("a", "pending", "kp", "")

	// Settled, they are forgotten like any other.
	if _, err := l.Move(ctx, "b", "attempting", store.Update{State: record.StateSent, At: ledgerEpoch}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Move(ctx, "a", "pending", store.Update{State: record.StateFailed, At: ledgerEpoch}); err != nil {
		t.Fatal(err)
	}
	churn("z")
	for _, id := range []string{"pending", "attempting"} {
		if _, err := l.Message(ctx, "b", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Message(%s) after it settled and others followed = %v, want ErrNotFound", id, err)
		}
	}
	if got, _ := l.ByProviderID(ctx, "p", "early"); len(got) != 0 {
		t.Errorf("ByProviderID(early) = %v after the record was forgotten", recordIDs(got))
	}
	if got, _ := l.Stale(ctx, ledgerEpoch.Add(time.Second), -1); len(got) != 0 {
		t.Errorf("Stale = %v with no open record", recordIDs(got))
	}
}

// TestLedgerVendorIDChanges: a record is found by the vendor ID it has,
// not by one it had before (as pgstore, which keeps one column, finds
// it).
func TestLedgerVendorIDChanges(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(nil)
	m := &record.Message{ID: "m", Account: "a", Provider: "p", State: record.StateAttempting, CreatedAt: ledgerEpoch}
	if _, err := l.Open(ctx, m); err != nil {
		t.Fatal(err)
	}
	for _, u := range []store.Update{
		{State: record.StateUnknown, At: ledgerEpoch, ProviderMessageID: "v1"},
		{State: record.StateSent, At: ledgerEpoch, ProviderMessageID: "v2"},
	} {
		if _, err := l.Move(ctx, "a", "m", u); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := l.ByProviderID(ctx, "p", "v2"); err != nil || len(got) != 1 {
		t.Errorf("ByProviderID(v2) = %v, %v", recordIDs(got), err)
	}
	if got, err := l.ByProviderID(ctx, "p", "v1"); err != nil || len(got) != 0 {
		t.Errorf("ByProviderID(v1) = %v, %v; want none", recordIDs(got), err)
	}
}

// TestLedgerRequestRetention: request records are kept as settled
// message records are, between capacity/2 and capacity of the latest.
func TestLedgerRequestRetention(t *testing.T) {
	ctx := context.Background()
	const n = 64
	l := NewLedger(nil, WithMessageCapacity(n))
	found := func(i int) bool {
		_, err := l.RequestByKey(ctx, "a", "k"+strconv.Itoa(i), time.Time{})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	for i := range 10 * n {
		r := &store.RequestRecord{ID: "r" + strconv.Itoa(i), Account: "a", IdempotencyKey: "k" + strconv.Itoa(i), CreatedAt: ledgerEpoch}
		if err := l.OpenRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		if !found(max(i-n/2+1, 0)) || i >= n && found(i-n) {
			t.Fatalf("after %d requests, the latest %d are not all kept, or the %dth latest is", i+1, n/2, n+1)
		}
	}
	if err := l.OpenRequest(ctx, &store.RequestRecord{ID: "r" + strconv.Itoa(10*n-1), Account: "a", IdempotencyKey: "k"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a kept request's ID again = %v, want ErrConflict", err)
	}
}

// TestLedgerTurnsUnderLoad runs sends on 8 goroutines through a Ledger
// that keeps few records, so that the generations turn all the time,
// beside readers of every kind, under the race detector in CI. Each
// sender keeps one record pending throughout and checks, at every send,
// that its open records are all found.
func TestLedgerTurnsUnderLoad(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(nil, WithMessageCapacity(16))
	sends := 2000
	if raceEnabled {
		sends = 500
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := l.Stale(ctx, ledgerEpoch.Add(time.Hour), 10); err != nil {
					t.Error(err)
				}
				if _, err := l.ByAccount(ctx, "a", store.MessageCursor{}, 5); err != nil {
					t.Error(err)
				}
				if _, err := l.Attempting(ctx, "p", ledgerEpoch); err != nil {
					t.Error(err)
				}
			}
		})
	}
	var senders sync.WaitGroup
	for g := range 8 {
		senders.Go(func() {
			held := fmt.Sprintf("held-%d", g)
			if _, err := l.Open(ctx, &record.Message{ID: held, Account: "a", Provider: "p", IdempotencyKey: held, CreatedAt: ledgerEpoch}); err != nil {
				t.Error(err)
				return
			}
			for i := range sends {
				id := fmt.Sprintf("%d-%d", g, i)
				m := &record.Message{ID: id, Account: "a", Provider: "p", IdempotencyKey: "k-" + id,
					ProviderMessageID: "early-" + id, State: record.StateAttempting, CreatedAt: ledgerEpoch}
				if _, err := l.Open(ctx, m); err != nil {
					t.Error(err)
					return
				}
				for _, key := range []string{held, "k-" + id} {
					if got, err := l.ByKey(ctx, "a", key, time.Time{}); err != nil || len(got) != 1 {
						t.Errorf("ByKey(%s) of an open record = %v, %v", key, recordIDs(got), err)
						return
					}
				}
				if got, err := l.ByProviderID(ctx, "p", "early-"+id); err != nil || len(got) != 1 {
					t.Errorf("ByProviderID of an open record = %v, %v", recordIDs(got), err)
					return
				}
				if _, err := l.Move(ctx, "a", id, store.Update{State: record.StateSent, At: ledgerEpoch, ProviderMessageID: "pm-" + id}); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := l.Move(ctx, "a", held, store.Update{State: record.StateFailed, At: ledgerEpoch}); err != nil {
				t.Errorf("the record held open: %v", err)
			}
		})
	}
	senders.Wait()
	close(stop)
	readers.Wait()
}

// TestRecSetCollisions: records of one hash are told apart by ID, and
// removing one keeps the others, in order.
func TestRecSetCollisions(t *testing.T) {
	g := newRecSet(0)
	recs := []*record.Message{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	for _, rec := range recs {
		g.add(7, rec)
	}
	g.add(8, &record.Message{ID: "d"})
	for _, rec := range recs {
		if g.find(7, rec.ID) != rec {
			t.Fatalf("find(%s) did not find it", rec.ID)
		}
	}
	if g.find(7, "d") != nil || g.find(9, "a") != nil {
		t.Fatal("find found a record of another ID or hash")
	}
	for _, tc := range []struct {
		remove *record.Message
		want   []string
	}{{recs[1], []string{"a", "c"}}, {recs[0], []string{"c"}}, {recs[2], nil}} {
		g.remove(7, tc.remove)
		if got := recordIDs(g.appendTo(nil, 7)); !slices.Equal(got, tc.want) {
			t.Fatalf("after removing %s: %v, want %v", tc.remove.ID, got, tc.want)
		}
	}
	if g.len() != 1 || len(g.more) != 0 {
		t.Fatalf("%d hashes and %d lists left, want 1 and 0", g.len(), len(g.more))
	}
}

func recordIDs(recs []*record.Message) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

// TestMoveAnswersTheBalanceAfterItsCredit: a move that refunds, or that
// cuts the price, answers the wallet's balance after its credit, so the
// Notifier need not read it; a move that moves no money answers none.
func TestMoveAnswersTheBalanceAfterItsCredit(t *testing.T) {
	w := NewWallet()
	l := NewLedger(w)
	ctx := context.Background()
	inr := record.INR()
	if err := w.Open("a", record.Money{Minor: 1000, Currency: inr}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"refunded", "repriced"} {
		if _, err := l.Open(ctx, &record.Message{ID: id, Account: "a", Metered: true, Charge: record.Money{Minor: 100, Currency: inr},
			State: record.StateAttempting, CreatedAt: ledgerEpoch}); err != nil {
			t.Fatal(err)
		}
	}
	mv, err := l.Move(ctx, "a", "refunded", store.Update{State: record.StateFailed, At: ledgerEpoch})
	if err != nil || mv.Balance != (record.Money{Minor: 900, Currency: inr}) {
		t.Fatalf("refund's move = %+v, %v; want the balance 9.00 after it", mv, err)
	}
	cheaper := record.Money{Minor: 60, Currency: inr}
	mv, err = l.Move(ctx, "a", "repriced", store.Update{State: record.StateSent, At: ledgerEpoch, Reprice: &cheaper})
	if err != nil || mv.Balance != (record.Money{Minor: 940, Currency: inr}) {
		t.Fatalf("reprice's move = %+v, %v; want the balance 9.40 after it", mv, err)
	}
	mv, err = l.Move(ctx, "a", "repriced", store.Update{State: record.StateDelivered, At: ledgerEpoch})
	if err != nil || mv.Balance != (record.Money{}) {
		t.Fatalf("a move that moves no money = %+v, %v; want no balance", mv, err)
	}
}
