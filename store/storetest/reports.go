package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// sentMessage opens a record with a charge of 100 and moves it to sent
// under provider ID pmid, a minute after msgEpoch.
func sentMessage(t *testing.T, s store.Ledger, account, pmid string) *record.Message {
	t.Helper()
	m := sampleMessage(account, 100, msgEpoch)
	openMessage(t, s, m)
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, m, store.Update{State: record.StateSent, At: msgEpoch.Add(time.Minute), ProviderMessageID: pmid})
	return m
}

func states(m *record.Message) []record.State {
	out := make([]record.State, len(m.History))
	for i, c := range m.History {
		out[i] = c.State
	}
	return out
}

func testDeliveryReports(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sentMessage(t, s, acct, newName("pm"))
	delivered := msgEpoch.Add(2 * time.Minute)
	read := msgEpoch.Add(3 * time.Minute)
	moveMessage(t, s, m, store.Update{State: record.StateDelivered, At: delivered})
	got := moveMessage(t, s, m, store.Update{State: record.StateRead, At: read})
	want := []record.State{record.StatePending, record.StateAttempting, record.StateSent,
		record.StateDelivered, record.StateRead}
	if !slices.Equal(states(got), want) || !got.History[3].At.Equal(delivered) || !got.History[4].At.Equal(read) {
		t.Fatalf("history = %v, want %v with the reports' times", got.History, want)
	}
	if got.Cost().Minor != 100 || got.Refunded {
		t.Fatalf("a read record costs %v (refunded %v), want its charge", got.Cost(), got.Refunded)
	}
	for _, to := range []record.State{record.StateFailed, record.StateRead, record.StateSent, record.StateUnknown} {
		moved, err := s.Move(context.Background(), acct, m.ID, store.Update{State: to, At: read.Add(time.Minute), Error: "must not stick"})
		wantErr(t, "Move of a read record to "+string(to), err, store.ErrConflict)
		if after := wantMoved(t, s, m, moved); after.State != record.StateRead || len(after.History) != 5 {
			t.Fatalf("Move of a read record to %s returned %+v, want it as it stands", to, after)
		}
	}
	wantWallet(t, s, acct, 900)

	// An unknown record is settled by a report either way.
	unknown := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, unknown)
	moveMessage(t, s, unknown, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, unknown, store.Update{State: record.StateUnknown, At: msgEpoch})
	got = moveMessage(t, s, unknown, store.Update{State: record.StateDelivered, At: delivered, ProviderMessageID: "late-id"})
	if got.ProviderMessageID != "late-id" || got.Cost().Minor != 100 {
		t.Fatalf("unknown reported delivered = %+v, want the report's ID and the charge kept", got)
	}
	wantWallet(t, s, acct, 800)
}

func testReportedFailure(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	kept := sentMessage(t, s, acct, newName("pm"))
	refunded := sentMessage(t, s, acct, newName("pm"))
	wantWallet(t, s, acct, 800)

	got := moveMessage(t, s, kept, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Hour),
		ErrorCode: "rejected", Error: "undelivered", VendorCode: "DND", KeepCharge: true})
	if got.Refunded || got.Cost().Minor != 100 || got.VendorCode != "DND" || got.Error != "undelivered" {
		t.Fatalf("failed, charge kept = %+v (cost %v)", got, got.Cost())
	}
	if again := readMessage(t, s, acct, kept.ID); again.Refunded || again.VendorCode != "DND" {
		t.Fatalf("read back: %+v", again)
	}
	wantWallet(t, s, acct, 800)

	got = moveMessage(t, s, refunded, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Hour),
		ErrorCode: "rejected", VendorCode: "131047"})
	if !got.Refunded || got.Cost().Minor != 0 || got.VendorCode != "131047" {
		t.Fatalf("failed and refunded = %+v (cost %v)", got, got.Cost())
	}
	if again := readMessage(t, s, acct, refunded.ID); !again.Refunded {
		t.Fatalf("read back: Refunded is false")
	}
	wantWallet(t, s, acct, 900)
	for _, m := range []*record.Message{kept, refunded} {
		for _, to := range []record.State{record.StateFailed, record.StateDelivered, record.StateRead} {
			_, err := s.Move(context.Background(), acct, m.ID, store.Update{State: to, At: msgEpoch.Add(2 * time.Hour)})
			wantErr(t, "Move of a failed record to "+string(to), err, store.ErrConflict)
		}
	}
	wantWallet(t, s, acct, 900)
}

func testBackfill(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sentMessage(t, s, acct, newName("pm"))
	// The vendor's clock is behind the host's: the step goes where its
	// state belongs, whatever its time.
	delivered, read := msgEpoch.Add(-time.Hour), msgEpoch.Add(3*time.Minute)
	moveMessage(t, s, m, store.Update{State: record.StateRead, At: read})
	moved, err := s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateDelivered, At: delivered, Error: "must not stick"})
	if err != nil {
		t.Fatalf("delivered after read: %v", err)
	}
	got := wantMoved(t, s, m, moved)
	want := []record.State{record.StatePending, record.StateAttempting, record.StateSent,
		record.StateDelivered, record.StateRead}
	if got.State != record.StateRead || !slices.Equal(states(got), want) || !got.History[3].At.Equal(delivered) || got.Error != "" {
		t.Fatalf("delivered after read: %+v, want read with delivered in its history, before read", got)
	}
	if !got.UpdatedAt.Equal(read) {
		t.Fatalf("a backfilled step moved UpdatedAt to %v", got.UpdatedAt)
	}
	if again := readMessage(t, s, acct, m.ID); !slices.Equal(states(again), want) {
		t.Fatalf("read back: history %v", again.History)
	}
	_, err = s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateDelivered, At: delivered})
	wantErr(t, "a second delivered after read", err, store.ErrConflict)
	_, err = s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateSent, At: delivered})
	wantErr(t, "sent after read, with sent in the history", err, store.ErrConflict)
	if again := readMessage(t, s, acct, m.ID); len(again.History) != 5 {
		t.Fatalf("refused steps were kept: %v", again.History)
	}
	wantWallet(t, s, acct, 900)
}

// testAfterRead: an unknown record read before any other report takes a
// late sent step, then a late delivered one, each in its place.
func testAfterRead(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, m)
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, m, store.Update{State: record.StateUnknown, At: msgEpoch.Add(time.Second)})
	moveMessage(t, s, m, store.Update{State: record.StateRead, At: msgEpoch.Add(3 * time.Minute)})
	for _, st := range []record.State{record.StateSent, record.StateDelivered} {
		at := msgEpoch.Add(time.Minute)
		if st == record.StateDelivered {
			at = msgEpoch.Add(2 * time.Minute)
		}
		if moved, err := s.Move(context.Background(), acct, m.ID, store.Update{State: st, At: at}); err != nil || moved.State != record.StateRead {
			t.Fatalf("%s after read: %+v, %v", st, moved, err)
		}
	}
	want := []record.State{record.StatePending, record.StateAttempting, record.StateUnknown,
		record.StateSent, record.StateDelivered, record.StateRead}
	if got := readMessage(t, s, acct, m.ID); !slices.Equal(states(got), want) {
		t.Fatalf("history %v, want %v", got.History, want)
	}
	wantWallet(t, s, acct, 900)
}

func testByProviderID(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	acct, other := newName("acct"), newName("acct")
	fund(t, acct, rupees(1000))
	fund(t, other, rupees(1000))
	pmid := newName("pm")
	first := sentMessage(t, s, acct, pmid)
	// The same vendor ID at another provider is another message.
	elsewhere := sampleMessage(acct, 100, msgEpoch)
	elsewhere.Provider = "qrchat"
	openMessage(t, s, elsewhere)
	moveMessage(t, s, elsewhere, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, elsewhere, store.Update{State: record.StateSent, At: msgEpoch, ProviderMessageID: pmid})
	// A record opened with its vendor ID, of another account, later.
	second := sampleMessage(other, 0, msgEpoch.Add(time.Second))
	second.ProviderMessageID = pmid
	openMessage(t, s, second)

	got, err := s.ByProviderID(context.Background(), "cloudchat", pmid)
	if err != nil {
		t.Fatalf("ByProviderID: %v", err)
	}
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID {
		t.Fatalf("ByProviderID = %v, want [%s %s]", ids(got), first.ID, second.ID)
	}
	if got[0].State != record.StateSent || got[0].Account != acct {
		t.Fatalf("ByProviderID returned %+v", got[0])
	}
	if got, err := s.ByProviderID(context.Background(), "qrchat", pmid); err != nil || len(got) != 1 || got[0].ID != elsewhere.ID {
		t.Fatalf("ByProviderID(qrchat) = %v, %v", ids(got), err)
	}
	for _, id := range []string{newName("pm"), ""} {
		if got, err := s.ByProviderID(context.Background(), "cloudchat", id); err != nil || len(got) != 0 {
			t.Fatalf("ByProviderID(%q) = %v, %v, want none", id, ids(got), err)
		}
	}
}

func ids(ms []*record.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// testReprice: a move into sent with a lower price lowers the charge and
// credits the difference once; a later refund gives back only the new
// charge.
func testReprice(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 35, msgEpoch)
	openMessage(t, s, m)
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: msgEpoch})
	wantWallet(t, s, acct, 965)
	ten := rupees(10)
	got := moveMessage(t, s, m, store.Update{State: record.StateSent, At: msgEpoch, Reprice: &ten})
	if got.Charge.Minor != 10 || got.Cost().Minor != 10 {
		t.Fatalf("repriced record: charge %v, cost %v", got.Charge, got.Cost())
	}
	if again := readMessage(t, s, acct, m.ID); again.Charge.Minor != 10 || again.Charge.Currency.Code != "INR" {
		t.Fatalf("read back: charge %v", again.Charge)
	}
	wantWallet(t, s, acct, 990)
	moveMessage(t, s, m, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Hour)})
	wantWallet(t, s, acct, 1000)

	// A price that is not lower changes nothing.
	dear := sampleMessage(acct, 35, msgEpoch)
	openMessage(t, s, dear)
	moveMessage(t, s, dear, store.Update{State: record.StateAttempting, At: msgEpoch})
	fifty := rupees(50)
	if got := moveMessage(t, s, dear, store.Update{State: record.StateSent, At: msgEpoch, Reprice: &fifty}); got.Charge.Minor != 35 {
		t.Fatalf("a dearer price changed the charge to %v", got.Charge)
	}
	wantWallet(t, s, acct, 965)

	// A free gateway gives the whole charge back.
	free := sampleMessage(acct, 35, msgEpoch)
	openMessage(t, s, free)
	moveMessage(t, s, free, store.Update{State: record.StateAttempting, At: msgEpoch})
	zero := rupees(0)
	if got := moveMessage(t, s, free, store.Update{State: record.StateSent, At: msgEpoch, Reprice: &zero}); got.Charge.Minor != 0 || got.Cost().Minor != 0 {
		t.Fatalf("a free price left the charge at %v", got.Charge)
	}
	wantWallet(t, s, acct, 965)

	// A price in another currency is ErrInvalid and moves nothing.
	foreign := sampleMessage(acct, 35, msgEpoch)
	openMessage(t, s, foreign)
	moveMessage(t, s, foreign, store.Update{State: record.StateAttempting, At: msgEpoch})
	cents := record.Money{Minor: 10, Currency: record.Currency{Code: "USD", Exponent: 2}}
	_, err := s.Move(context.Background(), acct, foreign.ID, store.Update{State: record.StateSent, At: msgEpoch, Reprice: &cents})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a reprice in USD of an INR charge: err %v, want ErrInvalid", err)
	}
	if got := readMessage(t, s, acct, foreign.ID); got.State != record.StateAttempting || got.Charge.Minor != 35 {
		t.Fatalf("after a refused reprice the record is %s, charged %v", got.State, got.Charge)
	}
	wantWallet(t, s, acct, 930)

	// A negative price is no reprice, whatever its currency: the move
	// happens and the charge stays.
	minus := record.Money{Minor: -5, Currency: record.Currency{Code: "USD", Exponent: 2}}
	if got := moveMessage(t, s, foreign, store.Update{State: record.StateSent, At: msgEpoch, Reprice: &minus}); got.State != record.StateSent || got.Charge.Minor != 35 {
		t.Fatalf("a negative reprice: the record is %s, charged %v", got.State, got.Charge)
	}
	wantWallet(t, s, acct, 930)
}
