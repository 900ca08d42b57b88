package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// runQueued checks the records a queue opens (package queue), as part
// of RunLedger:
//
//   - Open writes a queued or a scheduled record, its history that one
//     step, with its SendAt, Payload and fallback links (Fallback,
//     Follows, Confirm) read back and its charge
//     debited; a short wallet is ErrInsufficientFunds and writes
//     nothing;
//   - a queued record moves to attempting (a worker's claim), back to
//     queued (a retry, charge held), to attempting again and to sent;
//     of Goroutines claims of one queued record at once exactly one
//     moves it, the others are ErrConflict;
//   - a scheduled (or queued) record moves to failed, refunded once: a
//     second move into failed is ErrConflict and refunds nothing;
//   - the Payload stays while the record is live (record.State.Live)
//     and is gone after the move into sent, failed or unknown;
//   - Stale never returns a queued or scheduled record, however long it
//     has waited, nor Attempting count one;
//   - a move with Update.From happens only from that state: a cancel
//     (From queued, into failed) of a record a worker has taken is
//     ErrConflict and refunds nothing, and no step is backfilled.
func runQueued(t *testing.T, h LedgerHarness) {
	runAll(t, []subtest{
		{"OpenWaiting", func(t *testing.T) { testOpenWaiting(t, h) }},
		{"OpenWaitingShort", func(t *testing.T) { testOpenWaitingShort(t, h) }},
		{"QueuedRetry", func(t *testing.T) { testQueuedRetry(t, h) }},
		{"WaitingFailRefundsOnce", func(t *testing.T) { testWaitingFailRefundsOnce(t, h) }},
		{"PayloadWhileLive", func(t *testing.T) { testPayloadWhileLive(t, h) }},
		{"WaitingNotStale", func(t *testing.T) { testWaitingNotStale(t, h) }},
		{"ConcurrentClaim", func(t *testing.T) { testConcurrentClaim(t, h) }},
		{"ConditionalMove", func(t *testing.T) { testConditionalMove(t, h) }},
	})
}

// waitingMessage returns a record for a queue to open in state st
// (queued, or scheduled and due at sendAt), with a payload.
func waitingMessage(account string, charge int64, st record.State, at, sendAt time.Time) *record.Message {
	m := sampleMessage(account, charge, at)
	m.State = st
	if st == record.StateScheduled {
		m.SendAt = sendAt
	}
	m.Payload = []byte(`{"to":"+919876543210","body":"your code is 123456"}`)
	return m
}

// takenWaiting is taken for a record with a payload.
func takenWaiting(m *record.Message) *record.Message {
	c := taken(m)
	c.Payload = slices.Clone(m.Payload)
	return c
}

func openWaiting(t *testing.T, s store.Ledger, m *record.Message) record.Balance {
	t.Helper()
	b, err := s.Open(context.Background(), takenWaiting(m))
	if err != nil {
		t.Fatalf("Open(%s in %s): %v", m.ID, m.State, err)
	}
	return b
}

// wantPayload fails t unless rec's Payload is want (nil: none).
func wantPayload(t *testing.T, what string, rec *record.Message, want []byte) {
	t.Helper()
	if want == nil && rec.Payload != nil || string(rec.Payload) != string(want) {
		t.Fatalf("%s: Payload = %q, want %q", what, rec.Payload, want)
	}
}

func testOpenWaiting(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	due := msgEpoch.Add(36 * time.Hour)
	queued := waitingMessage(acct, 100, record.StateQueued, msgEpoch, time.Time{})
	scheduled := waitingMessage(acct, 250, record.StateScheduled, msgEpoch, due)
	// A timed fallback of the queued one, which names it.
	queued.Fallback = scheduled.ID
	scheduled.Follows, scheduled.Confirm = queued.ID, record.StateDelivered
	if b := openWaiting(t, s, queued); b.Available.Minor != 900 {
		t.Fatalf("Open of a queued record returned balance %d, want 900", b.Available.Minor)
	}
	if b := openWaiting(t, s, scheduled); b.Available.Minor != 650 {
		t.Fatalf("Open of a scheduled record returned balance %d, want 650", b.Available.Minor)
	}
	wantWallet(t, s, acct, 650)
	for _, m := range []*record.Message{queued, scheduled} {
		got := readMessage(t, s, acct, m.ID)
		want := *m
		want.History = []record.StateChange{{State: m.State, At: msgEpoch}}
		if d := diffMessage(got, &want); d != "" {
			t.Fatalf("the %s record read back differs: %s", m.State, d)
		}
		if !got.SendAt.Equal(m.SendAt) || got.SendAt.IsZero() != m.SendAt.IsZero() {
			t.Fatalf("the %s record's SendAt = %v, want %v", m.State, got.SendAt, m.SendAt)
		}
		wantPayload(t, "the "+string(m.State)+" record read back", got, m.Payload)
		// The store hands out copies.
		got.Payload[0] = 'X'
		wantPayload(t, "the "+string(m.State)+" record read again", readMessage(t, s, acct, m.ID), m.Payload)
		_, err := s.Open(ctx, takenWaiting(m))
		wantErr(t, "a second Open of a "+string(m.State)+" record", err, store.ErrConflict)
	}
	if yes, err := s.Attempting(ctx, queued.Provider, msgEpoch.Add(-time.Hour)); err != nil || yes {
		t.Fatalf("Attempting with only waiting records = %v, %v; want false", yes, err)
	}
	wantWallet(t, s, acct, 650)
}

func testOpenWaitingShort(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 100)
	ctx := context.Background()
	for _, st := range []record.State{record.StateQueued, record.StateScheduled} {
		m := waitingMessage(acct, 150, st, msgEpoch, msgEpoch.Add(time.Hour))
		_, err := s.Open(ctx, takenWaiting(m))
		wantErr(t, "Open in "+string(st)+" from a short wallet", err, store.ErrInsufficientFunds)
		_, err = s.Message(ctx, acct, m.ID)
		wantErr(t, "Message of a "+string(st)+" record refused for funds", err, store.ErrNotFound)
	}
	wantWallet(t, s, acct, 100)
}

func testQueuedRetry(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	m := waitingMessage(acct, 100, record.StateQueued, msgEpoch, time.Time{})
	openWaiting(t, s, m)
	at := func(sec int) time.Time { return msgEpoch.Add(time.Duration(sec) * time.Second) }
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: at(1)})
	if yes, err := s.Attempting(ctx, m.Provider, msgEpoch); err != nil || !yes {
		t.Fatalf("Attempting after a queued record's claim = %v, %v; want true", yes, err)
	}
	got := moveMessage(t, s, m, store.Update{State: record.StateQueued, At: at(2), Attempts: 1,
		ErrorCode: "rate_limited", Error: "try later"})
	if got.Cost().Minor != 100 {
		t.Fatalf("a record back on the queue costs %v, want its charge held", got.Cost())
	}
	wantPayload(t, "a record back on the queue", got, m.Payload)
	if yes, err := s.Attempting(ctx, m.Provider, msgEpoch); err != nil || yes {
		t.Fatalf("Attempting after the move back to queued = %v, %v; want false", yes, err)
	}
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: at(3)})
	got = moveMessage(t, s, m, store.Update{State: record.StateSent, At: at(4), Attempts: 2, ProviderMessageID: newName("pm")})
	want := []record.StateChange{{State: record.StateQueued, At: msgEpoch}, {State: record.StateAttempting, At: at(1)},
		{State: record.StateQueued, At: at(2)}, {State: record.StateAttempting, At: at(3)}, {State: record.StateSent, At: at(4)}}
	if !slices.EqualFunc(got.History, want, func(a, b record.StateChange) bool { return a.State == b.State && a.At.Equal(b.At) }) {
		t.Fatalf("History = %v, want %v", got.History, want)
	}
	if got.Attempts != 2 || got.Cost().Minor != 100 {
		t.Fatalf("sent record = %+v, cost %v", got, got.Cost())
	}
	wantWallet(t, s, acct, 900)
	for _, st := range []record.State{record.StateQueued, record.StateScheduled, record.StatePending} {
		_, err := s.Move(ctx, acct, m.ID, store.Update{State: st, At: at(5)})
		wantErr(t, "a sent record's move into "+string(st), err, store.ErrConflict)
	}
}

func testWaitingFailRefundsOnce(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	scheduled := waitingMessage(acct, 100, record.StateScheduled, msgEpoch, msgEpoch.Add(time.Hour))
	queued := waitingMessage(acct, 250, record.StateQueued, msgEpoch, time.Time{})
	openWaiting(t, s, scheduled)
	openWaiting(t, s, queued)
	wantWallet(t, s, acct, 650)
	for _, m := range []*record.Message{scheduled, queued} {
		_, err := s.Move(ctx, acct, m.ID, store.Update{State: record.StateSent, At: msgEpoch})
		wantErr(t, "a "+string(m.State)+" record's move into sent", err, store.ErrConflict)
		_, err = s.Move(ctx, acct, m.ID, store.Update{State: record.StatePending, At: msgEpoch})
		wantErr(t, "a "+string(m.State)+" record's move into pending", err, store.ErrConflict)
	}
	got := moveMessage(t, s, scheduled, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Minute),
		ErrorCode: "canceled", Error: "canceled by the sender"})
	if !got.Refunded || got.Cost().Minor != 0 || got.ErrorCode != "canceled" {
		t.Fatalf("a canceled scheduled record = %+v, cost %v", got, got.Cost())
	}
	wantWallet(t, s, acct, 750)
	moveMessage(t, s, queued, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Minute)})
	wantWallet(t, s, acct, 1000)
	for _, m := range []*record.Message{scheduled, queued} {
		moved, err := s.Move(ctx, acct, m.ID, store.Update{State: record.StateFailed, At: msgEpoch.Add(2 * time.Minute)})
		wantErr(t, "a second move into failed", err, store.ErrConflict)
		if moved.State != record.StateFailed || !moved.Refunded {
			t.Fatalf("the conflict of a second move into failed answered %+v, want the failed record", moved)
		}
	}
	wantWallet(t, s, acct, 1000)
}

func testPayloadWhileLive(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	for _, to := range []record.State{record.StateSent, record.StateFailed, record.StateUnknown} {
		m := waitingMessage(acct, 10, record.StateScheduled, msgEpoch, msgEpoch.Add(time.Hour))
		openWaiting(t, s, m)
		wantPayload(t, "a scheduled record", readMessage(t, s, acct, m.ID), m.Payload)
		got := moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: msgEpoch.Add(time.Hour)})
		wantPayload(t, "a record claimed from scheduled", got, m.Payload)
		got = moveMessage(t, s, m, store.Update{State: to, At: msgEpoch.Add(time.Hour + time.Second)})
		wantPayload(t, "a record moved into "+string(to), got, nil)
		if !got.SendAt.Equal(m.SendAt) {
			t.Fatalf("a record moved into %s: SendAt = %v, want %v (it does not change)", to, got.SendAt, m.SendAt)
		}
	}
	// Straight from the queue to failed (a cancel).
	m := waitingMessage(acct, 10, record.StateQueued, msgEpoch, time.Time{})
	openWaiting(t, s, m)
	got := moveMessage(t, s, m, store.Update{State: record.StateFailed, At: msgEpoch.Add(time.Second)})
	wantPayload(t, "a queued record canceled", got, nil)
	// A record opened any other way has none.
	p := sampleMessage(acct, 10, msgEpoch)
	openMessage(t, s, p)
	if got := readMessage(t, s, acct, p.ID); got.Payload != nil || !got.SendAt.IsZero() {
		t.Fatalf("a pending record has Payload %q, SendAt %v; want none", got.Payload, got.SendAt)
	}
}

func testWaitingNotStale(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	old := msgEpoch.Add(-365 * 24 * time.Hour)
	queued := waitingMessage(acct, 10, record.StateQueued, old, time.Time{})
	openWaiting(t, s, queued)
	scheduled := waitingMessage(acct, 10, record.StateScheduled, old, old.Add(time.Minute))
	openWaiting(t, s, scheduled)
	// A queued record back from attempting waits too.
	retried := waitingMessage(acct, 10, record.StateQueued, old, time.Time{})
	openWaiting(t, s, retried)
	moveMessage(t, s, retried, store.Update{State: record.StateAttempting, At: old.Add(time.Second)})
	moveMessage(t, s, retried, store.Update{State: record.StateQueued, At: old.Add(2 * time.Second)})
	pending := sampleMessage(acct, 10, old.Add(time.Hour))
	openMessage(t, s, pending)
	got, err := s.Stale(ctx, msgEpoch.Add(365*24*time.Hour), 100)
	if err != nil {
		t.Fatalf("Stale: %v", err)
	}
	if len(got) != 1 || got[0].ID != pending.ID {
		var ids []string
		for _, m := range got {
			ids = append(ids, m.ID+" ("+string(m.State)+")")
		}
		t.Fatalf("Stale = %v, want only the pending record %s", ids, pending.ID)
	}
}

func testConcurrentClaim(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := waitingMessage(acct, 100, record.StateQueued, msgEpoch, time.Time{})
	openWaiting(t, s, m)
	wantOneWins(t, "Move", "claimed the queued record", func() error {
		_, err := s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateAttempting, At: msgEpoch.Add(time.Second)})
		return err
	})
	got := readMessage(t, s, acct, m.ID)
	if got.State != record.StateAttempting || len(got.History) != 2 {
		t.Fatalf("after concurrent claims: state %s, history %v; want attempting, queued then attempting", got.State, got.History)
	}
	wantWallet(t, s, acct, 900)
}

func testConditionalMove(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	m := waitingMessage(acct, 100, record.StateQueued, msgEpoch, time.Time{})
	openWaiting(t, s, m)
	cancel := store.Update{State: record.StateFailed, From: record.StateScheduled, At: msgEpoch.Add(time.Second), ErrorCode: "canceled"}
	moved, err := s.Move(ctx, acct, m.ID, cancel)
	wantErr(t, "a move from scheduled of a queued record", err, store.ErrConflict)
	if moved.State != record.StateQueued {
		t.Fatalf("the conflict answered %s, want queued (where it stands)", moved.State)
	}
	if _, err := s.Move(ctx, acct, m.ID, store.Update{State: record.StateAttempting, From: record.StateQueued, At: msgEpoch.Add(time.Second)}); err != nil {
		t.Fatalf("the claim from queued: %v", err)
	}
	cancel.From = record.StateQueued
	_, err = s.Move(ctx, acct, m.ID, cancel)
	wantErr(t, "a cancel from queued of a record a worker took", err, store.ErrConflict)
	wantWallet(t, s, acct, 900)
	if got := readMessage(t, s, acct, m.ID); got.State != record.StateAttempting || got.Refunded {
		t.Fatalf("after the refused cancel: %s, refunded %v; want attempting, charged", got.State, got.Refunded)
	}
	// From a state CanMove does not allow is a conflict too.
	_, err = s.Move(ctx, acct, m.ID, store.Update{State: record.StateRead, From: record.StateAttempting, At: msgEpoch.Add(2 * time.Second)})
	wantErr(t, "a conditional move CanMove forbids", err, store.ErrConflict)
	// A conditional move adds no backfilled step.
	moveMessage(t, s, m, store.Update{State: record.StateSent, At: msgEpoch.Add(3 * time.Second), ProviderMessageID: newName("pm")})
	moveMessage(t, s, m, store.Update{State: record.StateRead, At: msgEpoch.Add(4 * time.Second)})
	_, err = s.Move(ctx, acct, m.ID, store.Update{State: record.StateDelivered, From: record.StateSent, At: msgEpoch.Add(5 * time.Second)})
	wantErr(t, "a conditional move of a record further along", err, store.ErrConflict)
	// Nor from the state the record is in, into one CanMove forbids.
	_, err = s.Move(ctx, acct, m.ID, store.Update{State: record.StateDelivered, From: record.StateRead, At: msgEpoch.Add(5 * time.Second)})
	wantErr(t, "a conditional move from where the record stands into a state behind it", err, store.ErrConflict)
	if got := readMessage(t, s, acct, m.ID); got.Entered(record.StateDelivered) {
		t.Fatal("a conditional move backfilled delivered")
	}
}
