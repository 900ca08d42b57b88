package pgstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// wantMoved fails the test unless got is want, and is where the record
// stands as Message reads it: Move answers the columns of the record it
// wrote, not a copy of something else.
func wantMoved(t *testing.T, s *pgstore.Store, id string, got, want store.Moved) {
	t.Helper()
	if !got.UpdatedAt.Equal(want.UpdatedAt) || got.State != want.State || got.Charge != want.Charge ||
		got.Refunded != want.Refunded {
		t.Fatalf("Move(%s) = %+v, want %+v", id, got, want)
	}
	m, err := s.Message(context.Background(), "acme", id)
	must(t, err)
	if m.State != got.State || m.Charge != got.Charge || m.Refunded != got.Refunded || !m.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("Move(%s) = %+v, but the record is %s, %v, refunded %v, at %v",
			id, got, m.State, m.Charge, m.Refunded, m.UpdatedAt)
	}
}

// TestMoveAnswersMoved checks what each kind of move answers: a plain
// move, a reprice, a refund and a kept charge, a backfilled step, a
// Conflict (where the record stands) and a missing record (nothing).
func TestMoveAnswersMoved(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	at := func(min int) time.Time { return time.Date(2025, 6, 1, 12, min, 0, 0, time.UTC) }
	open := func(id string, charge notify.Money) {
		t.Helper()
		_, err := s.Open(ctx, &record.Message{ID: id, Account: "acme", Kind: sms.Kind, Request: sms.Kind,
			To: "9876543210", Provider: "mem", Metered: charge.Minor > 0, Charge: charge, CreatedAt: at(0)})
		must(t, err)
	}
	move := func(id string, u store.Update) (store.Moved, error) {
		t.Helper()
		return s.Move(ctx, "acme", id, u)
	}

	// A move, then a move into sent that lowers the charge.
	open("m1", inr(100))
	got, err := move("m1", store.Update{State: record.StateAttempting, At: at(1), Attempts: 1})
	must(t, err)
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateAttempting, Charge: inr(100), UpdatedAt: at(1)})
	cheaper := inr(60)
	got, err = move("m1", store.Update{State: record.StateSent, At: at(2), ProviderMessageID: "p1", Reprice: &cheaper})
	must(t, err)
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateSent, Charge: inr(60), UpdatedAt: at(2)})
	wantBalance(t, s, "acme", 940)

	// Conflict answers where the record stands, and changes nothing.
	got, err = move("m1", store.Update{State: record.StateAttempting, At: at(3)})
	wantErr(t, err, store.ErrConflict)
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateSent, Charge: inr(60), UpdatedAt: at(2)})

	// A report further along, then one that backfills: the answer is the
	// state further along, and the backfill leaves the time as it was.
	got, err = move("m1", store.Update{State: record.StateRead, At: at(5)})
	must(t, err)
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateRead, Charge: inr(60), UpdatedAt: at(5)})
	got, err = move("m1", store.Update{State: record.StateDelivered, At: at(4)})
	must(t, err)
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateRead, Charge: inr(60), UpdatedAt: at(5)})
	m, err := s.Message(ctx, "acme", "m1")
	must(t, err)
	var states []record.State
	for _, h := range m.History {
		states = append(states, h.State)
	}
	if want := []record.State{record.StatePending, record.StateAttempting, record.StateSent,
		record.StateDelivered, record.StateRead}; !slices.Equal(states, want) {
		t.Fatalf("history %v, want %v", states, want)
	}
	got, err = move("m1", store.Update{State: record.StateDelivered, At: at(6)})
	wantErr(t, err, store.ErrConflict) // the step is there already
	wantMoved(t, s, "m1", got, store.Moved{State: record.StateRead, Charge: inr(60), UpdatedAt: at(5)})

	// A failure refunds the charge in the same step, unless it is kept.
	open("m2", inr(100))
	got, err = move("m2", store.Update{State: record.StateFailed, At: at(7), ErrorCode: string(notify.CodeRejected)})
	must(t, err)
	wantMoved(t, s, "m2", got, store.Moved{State: record.StateFailed, Charge: inr(100), Refunded: true, UpdatedAt: at(7)})
	wantBalance(t, s, "acme", 940)
	open("m3", inr(100))
	_, err = move("m3", store.Update{State: record.StateAttempting, At: at(8)})
	must(t, err)
	_, err = move("m3", store.Update{State: record.StateSent, At: at(9)})
	must(t, err)
	got, err = move("m3", store.Update{State: record.StateFailed, At: at(10), KeepCharge: true})
	must(t, err)
	wantMoved(t, s, "m3", got, store.Moved{State: record.StateFailed, Charge: inr(100), UpdatedAt: at(10)})
	wantBalance(t, s, "acme", 840)

	// An unmetered record has no charge and no currency.
	open("m4", notify.Money{})
	got, err = move("m4", store.Update{State: record.StateFailed, At: at(11)})
	must(t, err)
	wantMoved(t, s, "m4", got, store.Moved{State: record.StateFailed, UpdatedAt: at(11)})

	// A missing record, or another account's, is NotFound with nothing.
	for _, c := range []struct{ account, id string }{{"acme", "nope"}, {"beta", "m1"}} {
		got, err := s.Move(ctx, c.account, c.id, store.Update{State: record.StateSent, At: at(12)})
		wantErr(t, err, store.ErrNotFound)
		if got != (store.Moved{}) {
			t.Fatalf("Move(%s, %s) = %+v on NotFound, want zero", c.account, c.id, got)
		}
	}
	checkLedger(t, s, "acme")
}
