package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// LedgerHarness connects RunLedger to one store.Ledger.
type LedgerHarness struct {
	// New returns an empty ledger, and fund, which opens an account's
	// wallet in it with an opening balance in
	// rupees. Empty: Stale must see only the subtest's records. It
	// releases the store with t.Cleanup. Required.
	New func(t *testing.T) (s store.Ledger, fund func(t *testing.T, account string, opening record.Money))
}

// RunLedger checks a store.Ledger:
//
//   - Balance reads an account's wallet (ErrNotFound without one); Credit
//     adds to it under a ref, once: a repeat of the ref with the same
//     amount moves nothing more, with another amount it is ErrConflict;
//   - Open writes a pending record, every field intact, with its charge
//     debited; asked for attempting, it writes the record attempting, its
//     history pending then attempting, in flight for Attempting and Stale;
//     any other state is ErrInvalid and writes and charges nothing; a
//     second Open of the ID is ErrConflict and charges nothing;
//     a short wallet is ErrInsufficientFunds and writes no record;
//   - a record without a charge needs no wallet;
//   - Move follows record.CanMove and nothing else, keeps the history of
//     states with their times, and answers a Moved that agrees with the
//     record read back: where it stands, also with ErrConflict for a
//     forbidden move;
//   - a move into failed refunds the charge, exactly once, from pending,
//     attempting or unknown; of 64 goroutines failing one record at once
//     exactly one moves it and one refund is made;
//   - a record belongs to its account: another account's Message and
//     Move are ErrNotFound;
//   - after sent, a record moves on with delivery reports (delivered,
//     read, failed) and never back; a failure keeps the charge when the
//     move says so (KeepCharge), and Refunded tells which; a report of
//     a state the record passed without is kept as a step of the history,
//     before the steps further along, once (record.CanBackfill);
//   - a move into sent may lower the charge (Reprice), crediting the
//     difference in the same step; a later refund gives back the rest;
//   - ByProviderID finds the records a provider accepted under an ID,
//     of every account, oldest first;
//   - ByKey finds the account's records of a key opened since a time,
//     oldest first; Stale finds open records that last moved before a
//     cutoff, least recently moved first, up to the limit;
//   - Attempting tells whether a provider has a record, of any account,
//     in attempting (not pending, not past it) that last moved at or
//     after a time, by the provider the record has;
//   - OpenRequest keeps a request record, its parts in order (an empty
//     part included); a second one of the same ID is ErrConflict;
//     RequestByKey finds the account's newest record of a key opened at
//     or after a time, else ErrNotFound.
func RunLedger(t *testing.T, h LedgerHarness) {
	t.Helper()
	needs(t, h.New != nil, "LedgerHarness needs New")
	runAll(t, []subtest{
		{"BalanceAndCredit", func(t *testing.T) { testBalanceAndCredit(t, h) }},
		{"OpenAndRead", func(t *testing.T) { testOpenAndRead(t, h) }},
		{"OpenAttempting", func(t *testing.T) { testOpenAttempting(t, h) }},
		{"OpenTwice", func(t *testing.T) { testOpenTwice(t, h) }},
		{"OpenShort", func(t *testing.T) { testOpenShort(t, h) }},
		{"OpenUnmetered", func(t *testing.T) { testOpenUnmetered(t, h) }},
		{"OpenUnlisted", func(t *testing.T) { testOpenUnlisted(t, h) }},
		{"Lifecycle", func(t *testing.T) { testLifecycle(t, h) }},
		{"ForbiddenMoves", func(t *testing.T) { testForbiddenMoves(t, h) }},
		{"FailRefundsOnce", func(t *testing.T) { testFailRefundsOnce(t, h) }},
		{"UnknownSettles", func(t *testing.T) { testUnknownSettles(t, h) }},
		{"RecordsPerAccount", func(t *testing.T) { testRecordsPerAccount(t, h) }},
		{"ByKey", func(t *testing.T) { testByKey(t, h) }},
		{"Stale", func(t *testing.T) { testStale(t, h) }},
		{"Attempting", func(t *testing.T) { testAttempting(t, h) }},
		{"Requests", func(t *testing.T) { testRequests(t, h) }},
		{"ConcurrentFail", func(t *testing.T) { testConcurrentFail(t, h) }},
		{"DeliveryReports", func(t *testing.T) { testDeliveryReports(t, h) }},
		{"ReportedFailure", func(t *testing.T) { testReportedFailure(t, h) }},
		{"Backfill", func(t *testing.T) { testBackfill(t, h) }},
		{"AfterRead", func(t *testing.T) { testAfterRead(t, h) }},
		{"ByProviderID", func(t *testing.T) { testByProviderID(t, h) }},
		{"Reprice", func(t *testing.T) { testReprice(t, h) }},
		{"Queued", func(t *testing.T) { runQueued(t, h) }},
	})
}

// msgEpoch dates the suite's records: whole microseconds, UTC.
var msgEpoch = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

func newLedger(t *testing.T, h LedgerHarness) (store.Ledger, func(t *testing.T, account string, opening record.Money)) {
	t.Helper()
	s, fund := h.New(t)
	if s == nil || fund == nil {
		t.Fatal("LedgerHarness.New returned nil")
	}
	return s, fund
}

// fundedLedger is newLedger with a new account whose wallet opens with
// opening (minor units, as rupees takes): the start of most ledger tests.
func fundedLedger(t *testing.T, h LedgerHarness, opening int64) (store.Ledger, string) {
	t.Helper()
	s, fund := newLedger(t, h)
	acct := newName("acct")
	fund(t, acct, rupees(opening))
	return s, acct
}

// sampleMessage returns a record with every field Open takes set.
func sampleMessage(account string, charge int64, at time.Time) *record.Message {
	return &record.Message{
		ID: newName("msg"), Account: account, Kind: kindChat, Request: kindOTP,
		To: "+919876543210", Country: "IN", Provider: "cloudchat", IdempotencyKey: newName("key"),
		Resend: []byte(`{"to":"9876543210","message":"hello"}`),
		Domain: "shop.example", Units: 2, Metered: charge > 0, Charge: rupees(charge),
		CreatedAt: at, UpdatedAt: at,
	}
}

// taken returns a copy of m for Open, which may keep what it is given
// (store.Ledger.Open): the suite goes on using m.
func taken(m *record.Message) *record.Message {
	c := *m
	c.Resend = slices.Clone(m.Resend)
	c.History = slices.Clone(m.History)
	return &c
}

func openMessage(t *testing.T, s store.Ledger, m *record.Message) record.Balance {
	t.Helper()
	b, err := s.Open(context.Background(), taken(m))
	if err != nil {
		t.Fatalf("Open(%s): %v", m.ID, err)
	}
	return b
}

// moveMessage moves m as u says, checks that the move's answer agrees
// with the record read back, and returns that record.
func moveMessage(t *testing.T, s store.Ledger, m *record.Message, u store.Update) *record.Message {
	t.Helper()
	moved, err := s.Move(context.Background(), m.Account, m.ID, u)
	if err != nil {
		t.Fatalf("Move(%s to %s): %v", m.ID, u.State, err)
	}
	if moved.State != u.State {
		t.Fatalf("Move(%s to %s) answered %+v", m.ID, u.State, moved)
	}
	return wantMoved(t, s, m, moved)
}

// wantMoved fails t unless moved, a Move's answer for m, tells where the
// record read back stands; it returns that record.
func wantMoved(t *testing.T, s store.Ledger, m *record.Message, moved store.Moved) *record.Message {
	t.Helper()
	rec := readMessage(t, s, m.Account, m.ID)
	if moved.State != rec.State || moved.Charge != rec.Charge || moved.Refunded != rec.Refunded || !moved.UpdatedAt.Equal(rec.UpdatedAt) {
		t.Fatalf("Move(%s) answered %+v; the record stands at state %s, charge %v, refunded %v, updated %v",
			m.ID, moved, rec.State, rec.Charge, rec.Refunded, rec.UpdatedAt)
	}
	if moved.Balance.Currency.Code != "" {
		// A store that answers the balance after a move's credit answers
		// the wallet's (the suite's moves do not race).
		b, err := s.Balance(context.Background(), m.Account)
		if err != nil || b.Available != moved.Balance {
			t.Fatalf("Move(%s) answered the balance %v; the wallet holds %+v, %v", m.ID, moved.Balance, b.Available, err)
		}
	}
	return rec
}

func readMessage(t *testing.T, s store.Ledger, account, id string) *record.Message {
	t.Helper()
	m, err := s.Message(context.Background(), account, id)
	if err != nil {
		t.Fatalf("Message(%s): %v", id, err)
	}
	return m
}

func wantWallet(t *testing.T, s store.Ledger, account string, minor int64) {
	t.Helper()
	b, err := s.Balance(context.Background(), account)
	if err != nil {
		t.Fatalf("Balance(%s): %v", account, err)
	}
	if b.Available.Minor != minor {
		t.Fatalf("balance of %s = %d, want %d", account, b.Available.Minor, minor)
	}
}

// diffMessage describes how got differs from want, or returns "".
func diffMessage(got, want *record.Message) string {
	var d diffs
	d.field("ID", got.ID, want.ID)
	d.field("Account", got.Account, want.Account)
	d.field("Kind", got.Kind, want.Kind)
	d.field("Request", got.Request, want.Request)
	d.field("To", got.To, want.To)
	d.field("Country", got.Country, want.Country)
	d.field("State", got.State, want.State)
	d.field("Provider", got.Provider, want.Provider)
	d.field("ProviderMessageID", got.ProviderMessageID, want.ProviderMessageID)
	d.field("Gateway", got.Gateway, want.Gateway)
	d.field("IdempotencyKey", got.IdempotencyKey, want.IdempotencyKey)
	d.field("Domain", got.Domain, want.Domain)
	d.field("Units", got.Units, want.Units)
	d.field("Metered", got.Metered, want.Metered)
	d.field("Charge", got.Charge, want.Charge)
	d.field("Attempts", got.Attempts, want.Attempts)
	d.field("ErrorCode", got.ErrorCode, want.ErrorCode)
	d.field("Error", got.Error, want.Error)
	d.field("Note", got.Note, want.Note)
	d.field("VendorCode", got.VendorCode, want.VendorCode)
	d.field("Refunded", got.Refunded, want.Refunded)
	d.field("Resend", string(got.Resend), string(want.Resend))
	d.field("Fallback", got.Fallback, want.Fallback)
	d.field("Follows", got.Follows, want.Follows)
	d.field("Confirm", got.Confirm, want.Confirm)
	if !got.CreatedAt.Equal(want.CreatedAt) {
		d.add("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt)
	}
	if !got.UpdatedAt.Equal(want.UpdatedAt) {
		d.add("UpdatedAt = %v, want %v", got.UpdatedAt, want.UpdatedAt)
	}
	if !slices.EqualFunc(got.History, want.History, func(a, b record.StateChange) bool {
		return a.State == b.State && a.At.Equal(b.At)
	}) {
		d.add("History = %v, want %v", got.History, want.History)
	}
	if (got.Tried == nil) != (want.Tried == nil) || !slices.EqualFunc(got.Tried, want.Tried, func(a, b record.Attempt) bool {
		return a.Provider == b.Provider && a.Outcome == b.Outcome && a.ErrorCode == b.ErrorCode && a.At.Equal(b.At)
	}) {
		d.add("Tried = %v, want %v", got.Tried, want.Tried)
	}
	return d.String()
}

func testBalanceAndCredit(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	ctx := context.Background()
	acct := newName("acct")
	_, err := s.Balance(ctx, acct)
	wantErr(t, "Balance of an account without a wallet", err, store.ErrNotFound)
	_, err = s.Credit(ctx, acct, rupees(100), newName("topup"))
	wantErr(t, "Credit of an account without a wallet", err, store.ErrNotFound)
	fund(t, acct, rupees(1000))
	wantWallet(t, s, acct, 1000)
	ref := newName("topup")
	b, err := s.Credit(ctx, acct, rupees(250), ref)
	if err != nil || b.Available.Minor != 1250 {
		t.Fatalf("Credit = %+v, %v; want 1250 available", b, err)
	}
	if b, err = s.Credit(ctx, acct, rupees(250), ref); err != nil || b.Available.Minor != 1250 {
		t.Fatalf("a repeated Credit = %+v, %v; want the first answer and no money moved", b, err)
	}
	_, err = s.Credit(ctx, acct, rupees(300), ref)
	wantErr(t, "Credit of a used ref with another amount", err, store.ErrConflict)
	_, err = s.Credit(ctx, acct, rupees(100), "")
	wantErr(t, "Credit without a ref", err, store.ErrInvalid)
	wantWallet(t, s, acct, 1250)
}

func testOpenAndRead(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 100, msgEpoch)
	if b := openMessage(t, s, m); b.Available.Minor != 900 {
		t.Fatalf("Open returned balance %d, want 900", b.Available.Minor)
	}
	wantWallet(t, s, acct, 900)
	want := *m
	want.State = record.StatePending
	want.History = []record.StateChange{{State: record.StatePending, At: msgEpoch}}
	if d := diffMessage(readMessage(t, s, acct, m.ID), &want); d != "" {
		t.Fatalf("the record read back differs: %s", d)
	}
	// The store keeps no caller memory, and hands out copies.
	m.To = "changed"
	got := readMessage(t, s, acct, m.ID)
	got.History[0].State = "changed"
	if again := readMessage(t, s, acct, m.ID); again.To != want.To || again.History[0].State != record.StatePending {
		t.Fatalf("the stored record changed with the caller's copy: %+v", again)
	}
}

func testOpenAttempting(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	m := sampleMessage(acct, 100, msgEpoch)
	m.State = record.StateAttempting
	if b := openMessage(t, s, m); b.Available.Minor != 900 {
		t.Fatalf("Open returned balance %d, want 900", b.Available.Minor)
	}
	want := *m
	want.History = []record.StateChange{{State: record.StatePending, At: msgEpoch}, {State: record.StateAttempting, At: msgEpoch}}
	if d := diffMessage(readMessage(t, s, acct, m.ID), &want); d != "" {
		t.Fatalf("the record opened attempting differs: %s", d)
	}
	if yes, err := s.Attempting(ctx, m.Provider, msgEpoch); err != nil || !yes {
		t.Fatalf("Attempting after an Open in attempting = %v, %v; want true", yes, err)
	}
	stale, err := s.Stale(ctx, msgEpoch.Add(time.Minute), 10)
	if err != nil || len(stale) != 1 || stale[0].ID != m.ID || stale[0].State != record.StateAttempting {
		t.Fatalf("Stale = %v, %v; want the record opened attempting", stale, err)
	}
	_, err = s.Move(ctx, acct, m.ID, store.Update{State: record.StateAttempting, At: msgEpoch.Add(time.Second)})
	wantErr(t, "a move into attempting of a record opened attempting", err, store.ErrConflict)
	moveMessage(t, s, m, store.Update{State: record.StateSent, At: msgEpoch.Add(2 * time.Second), ProviderMessageID: newName("pm")})
	if yes, err := s.Attempting(ctx, m.Provider, msgEpoch); err != nil || yes {
		t.Fatalf("Attempting after the move to sent = %v, %v; want false", yes, err)
	}
	wantWallet(t, s, acct, 900)

	for _, st := range []record.State{record.StateSent, record.StateFailed, record.StateUnknown, "waiting"} {
		o := sampleMessage(acct, 100, msgEpoch)
		o.State = st
		_, err := s.Open(ctx, taken(o))
		wantErr(t, "Open in "+string(st), err, store.ErrInvalid)
		_, err = s.Message(ctx, acct, o.ID)
		wantErr(t, "Message of a record refused its state", err, store.ErrNotFound)
	}
	wantWallet(t, s, acct, 900)
}

func testOpenTwice(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, m)
	_, err := s.Open(context.Background(), taken(m))
	wantErr(t, "a second Open of one ID", err, store.ErrConflict)
	wantWallet(t, s, acct, 900)
}

func testOpenShort(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 50)
	m := sampleMessage(acct, 100, msgEpoch)
	_, err := s.Open(context.Background(), taken(m))
	wantErr(t, "Open beyond the balance", err, store.ErrInsufficientFunds)
	wantShownToSender(t, "Open beyond the balance", err)
	_, err = s.Message(context.Background(), acct, m.ID)
	wantErr(t, "Message of a record refused for want of funds", err, store.ErrNotFound)
	wantWallet(t, s, acct, 50)
	_, err = s.Open(context.Background(), sampleMessage(newName("nowallet"), 100, msgEpoch))
	wantErr(t, "Open charging an account without a wallet", err, store.ErrNotFound)
}

func testOpenUnmetered(t *testing.T, h LedgerHarness) {
	s, _ := newLedger(t, h)
	acct := newName("acct") // no wallet: nothing to charge
	m := sampleMessage(acct, 0, msgEpoch)
	openMessage(t, s, m)
	if got := readMessage(t, s, acct, m.ID); got.State != record.StatePending || got.Charge.Minor != 0 {
		t.Fatalf("unmetered record = %+v", got)
	}
}

// testOpenUnlisted: an entry of the recipient with a stopping reason
// writes and charges nothing and answers the entry; one whose reason
// does not stop, or of another recipient, kind or account, opens as
// Open does; Open's refusals stand; a reason that is no reason is
// ErrInvalid.
func testOpenUnlisted(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	acct, neighbour := newName("acct"), newName("acct")
	fund(t, acct, rupees(1000))
	ctx := context.Background()
	const to, other, theirs = "+919876543210", "+919876500000", "+919876511111"
	at := msgEpoch.Add(time.Minute)
	for _, e := range []store.Suppression{
		{Account: acct, Kind: kindChat, To: to, Reason: store.SuppressUnsubscribed, At: at},
		{Account: acct, Kind: kindSMS, To: other, Reason: store.SuppressHardBounce, At: at},
		{Account: neighbour, Kind: kindChat, To: theirs, Reason: store.SuppressHardBounce, At: at},
	} {
		if _, err := s.AddSuppression(ctx, e); err != nil {
			t.Fatalf("AddSuppression(%s %s): %v", e.Kind, e.To, err)
		}
	}
	every := []store.SuppressionReason{store.SuppressHardBounce, store.SuppressComplaint, store.SuppressUnsubscribed, store.SuppressManual}
	hardBounce := []store.SuppressionReason{store.SuppressHardBounce}

	stopped := sampleMessage(acct, 100, msgEpoch)
	b, e, err := s.OpenUnlisted(ctx, taken(stopped), to, every)
	if err != nil || e.Reason != store.SuppressUnsubscribed || e.To != to || e.Kind != kindChat || e.Account != acct ||
		!e.At.Equal(at) || b.Available.Minor != 0 {
		t.Fatalf("OpenUnlisted of an unsubscribed recipient = %+v, %+v, %v; want its entry, nothing opened", b, e, err)
	}
	_, err = s.Message(ctx, acct, stopped.ID)
	wantErr(t, "Message of a record the list stopped", err, store.ErrNotFound)
	wantWallet(t, s, acct, 1000)

	// Only a hard bounce stops these: to's entry is an unsubscribe,
	// other's hard bounce is on the SMS list, theirs on another
	// account's; a recipient the list's rules refuse has no entry.
	for _, r := range []string{to, other, theirs, "not a number"} {
		m := sampleMessage(acct, 100, msgEpoch)
		stops := hardBounce
		if r == theirs || r == "not a number" {
			stops = every
		}
		b, e, err = s.OpenUnlisted(ctx, taken(m), r, stops)
		if err != nil || e.Reason != "" {
			t.Fatalf("OpenUnlisted(%q) of a recipient no entry stops = %+v, %v; want it opened", r, e, err)
		}
		if got := readMessage(t, s, acct, m.ID); got.State != record.StatePending || got.Charge.Minor != 100 {
			t.Fatalf("record opened by OpenUnlisted = %+v", got)
		}
	}
	wantWallet(t, s, acct, 600)
	if b.Available.Minor != 600 {
		t.Fatalf("OpenUnlisted answered the balance %v, want 6.00", b.Available)
	}

	short := sampleMessage(acct, 5000, msgEpoch)
	_, _, err = s.OpenUnlisted(ctx, taken(short), to, hardBounce)
	wantErr(t, "OpenUnlisted beyond the balance", err, store.ErrInsufficientFunds)
	_, _, err = s.OpenUnlisted(ctx, taken(sampleMessage(acct, 100, msgEpoch)), to, []store.SuppressionReason{"gone"})
	wantErr(t, "OpenUnlisted with a reason that is none", err, store.ErrInvalid)
	wantWallet(t, s, acct, 600)
}

func testLifecycle(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, m)
	t1, t2 := msgEpoch.Add(time.Second), msgEpoch.Add(3*time.Second)
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: t1})
	tried := []record.Attempt{
		{Provider: "cloudchat", Outcome: record.StateFailed, ErrorCode: "unavailable", At: t1},
		{Provider: "qrchat", Outcome: record.StateSent, At: t2},
	}
	got := moveMessage(t, s, m, store.Update{State: record.StateSent, At: t2,
		Provider: "qrchat", ProviderMessageID: "wamid.1", Gateway: "qr", Attempts: 2, Note: "failed over", Tried: tried})
	want := *m
	want.State, want.UpdatedAt = record.StateSent, t2
	want.Provider, want.ProviderMessageID, want.Gateway, want.Attempts, want.Note = "qrchat", "wamid.1", "qr", 2, "failed over"
	want.Tried = tried
	want.History = []record.StateChange{{State: record.StatePending, At: msgEpoch},
		{State: record.StateAttempting, At: t1}, {State: record.StateSent, At: t2}}
	if d := diffMessage(got, &want); d != "" {
		t.Fatalf("the record read back differs: %s", d)
	}
	if c := got.Cost(); c.Minor != 100 {
		t.Fatalf("a sent record costs %d, want its charge", c.Minor)
	}
	wantWallet(t, s, acct, 900)

	// A later move without Tried keeps the calls.
	t3 := t2.Add(time.Minute)
	got = moveMessage(t, s, m, store.Update{State: record.StateDelivered, At: t3})
	if d := diffMessage(got, &want); !strings.Contains(d, "State =") || strings.Contains(d, "Tried") {
		t.Fatalf("after a report: %s", d)
	}
}

func testForbiddenMoves(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	ctx := context.Background()
	pending := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, pending)
	sent := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, sent)
	moveMessage(t, s, sent, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, sent, store.Update{State: record.StateSent, At: msgEpoch})
	for _, tt := range []struct {
		m    *record.Message
		from record.State
		to   record.State
	}{
		{pending, record.StatePending, record.StateSent},
		{pending, record.StatePending, record.StateUnknown},
		{pending, record.StatePending, record.StatePending},
		{sent, record.StateSent, record.StateAttempting},
		{sent, record.StateSent, record.StatePending},
		{sent, record.StateSent, record.StateUnknown},
		{sent, record.StateSent, record.StateSent},
	} {
		got, err := s.Move(ctx, acct, tt.m.ID, store.Update{State: tt.to, At: msgEpoch.Add(time.Hour), Error: "must not stick"})
		wantErr(t, fmt.Sprintf("Move from %s to %s", tt.from, tt.to), err, store.ErrConflict)
		if got.State != tt.from {
			t.Fatalf("Move from %s to %s answered %+v, want where the record stands", tt.from, tt.to, got)
		}
		if now := wantMoved(t, s, tt.m, got); now.State != tt.from || now.Error != "" {
			t.Fatalf("a refused move from %s to %s changed the record: %+v", tt.from, tt.to, now)
		}
	}
	wantWallet(t, s, acct, 800)
}

func testFailRefundsOnce(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	fromPending := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, fromPending)
	fromAttempting := sampleMessage(acct, 250, msgEpoch)
	openMessage(t, s, fromAttempting)
	wantWallet(t, s, acct, 650)
	got := moveMessage(t, s, fromPending, store.Update{State: record.StateFailed, At: msgEpoch,
		ErrorCode: "unavailable", Error: "vendor down"})
	if got.ErrorCode != "unavailable" || got.Error != "vendor down" || got.Cost().Minor != 0 {
		t.Fatalf("failed record = %+v, cost %v", got, got.Cost())
	}
	wantWallet(t, s, acct, 750)
	moveMessage(t, s, fromAttempting, store.Update{State: record.StateAttempting, At: msgEpoch})
	moveMessage(t, s, fromAttempting, store.Update{State: record.StateFailed, At: msgEpoch})
	wantWallet(t, s, acct, 1000)
	for _, m := range []*record.Message{fromPending, fromAttempting} {
		_, err := s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateFailed, At: msgEpoch})
		wantErr(t, "a second move into failed", err, store.ErrConflict)
	}
	wantWallet(t, s, acct, 1000)
}

func testUnknownSettles(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	toFailed, toSent := sampleMessage(acct, 100, msgEpoch), sampleMessage(acct, 100, msgEpoch)
	for _, m := range []*record.Message{toFailed, toSent} {
		openMessage(t, s, m)
		moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: msgEpoch})
		got := moveMessage(t, s, m, store.Update{State: record.StateUnknown, At: msgEpoch,
			ErrorCode: "outcome_unknown", Error: "timeout"})
		if got.Cost().Minor != 100 {
			t.Fatalf("an unknown record costs %v, want its charge", got.Cost())
		}
	}
	wantWallet(t, s, acct, 800)
	moveMessage(t, s, toFailed, store.Update{State: record.StateFailed, At: msgEpoch})
	moveMessage(t, s, toSent, store.Update{State: record.StateSent, At: msgEpoch, ProviderMessageID: "pm"})
	wantWallet(t, s, acct, 900)
}

func testRecordsPerAccount(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	acct, other := newName("acct"), newName("acct")
	fund(t, acct, rupees(1000))
	m := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, m)
	_, err := s.Message(context.Background(), other, m.ID)
	wantErr(t, "Message of another account's record", err, store.ErrNotFound)
	_, err = s.Move(context.Background(), other, m.ID, store.Update{State: record.StateFailed, At: msgEpoch})
	wantErr(t, "Move of another account's record", err, store.ErrNotFound)
	_, err = s.Message(context.Background(), acct, newName("missing"))
	wantErr(t, "Message of a missing record", err, store.ErrNotFound)
	wantWallet(t, s, acct, 900)
}

func testByKey(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	acct, other := newName("acct"), newName("acct")
	fund(t, acct, rupees(1000))
	fund(t, other, rupees(1000))
	key := newName("key")
	var mine []*record.Message
	for i := 0; i < 3; i++ {
		m := sampleMessage(acct, 10, msgEpoch.Add(time.Duration(2-i)*time.Minute)) // opened newest first
		m.IdempotencyKey = key
		openMessage(t, s, m)
		mine = append(mine, m)
	}
	elsewhere := sampleMessage(other, 10, msgEpoch)
	elsewhere.IdempotencyKey = key
	openMessage(t, s, elsewhere)
	openMessage(t, s, sampleMessage(acct, 10, msgEpoch)) // another key

	got, err := s.ByKey(context.Background(), acct, key, msgEpoch.Add(time.Minute))
	if err != nil {
		t.Fatalf("ByKey: %v", err)
	}
	ids := func(ms []*record.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	if want := []string{mine[1].ID, mine[0].ID}; !slices.Equal(ids(got), want) {
		t.Fatalf("ByKey since a minute in = %v, want %v (oldest first, none older)", ids(got), want)
	}
	if got, err := s.ByKey(context.Background(), acct, newName("unused"), msgEpoch); err != nil || len(got) != 0 {
		t.Fatalf("ByKey of an unused key = %v, %v", ids(got), err)
	}
}

func testStale(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	at := func(min int) time.Time { return msgEpoch.Add(time.Duration(min) * time.Minute) }
	newAt := func(min int) *record.Message {
		m := sampleMessage(acct, 10, at(min))
		openMessage(t, s, m)
		return m
	}
	attempting := newAt(0)
	moveMessage(t, s, attempting, store.Update{State: record.StateAttempting, At: at(2)})
	pending := newAt(1)
	sent := newAt(0)
	moveMessage(t, s, sent, store.Update{State: record.StateAttempting, At: at(0)})
	moveMessage(t, s, sent, store.Update{State: record.StateSent, At: at(0)})
	unknown := newAt(0)
	moveMessage(t, s, unknown, store.Update{State: record.StateAttempting, At: at(0)})
	moveMessage(t, s, unknown, store.Update{State: record.StateUnknown, At: at(0)})
	newAt(10) // recent

	ctx := context.Background()
	got, err := s.Stale(ctx, at(5), 10)
	if err != nil {
		t.Fatalf("Stale: %v", err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if want := []string{pending.ID, attempting.ID}; !slices.Equal(ids, want) {
		t.Fatalf("Stale = %v, want the pending then the attempting record %v", ids, want)
	}
	if got[1].State != record.StateAttempting || !got[1].UpdatedAt.Equal(at(2)) {
		t.Fatalf("Stale returned %+v", got[1])
	}
	if got, err := s.Stale(ctx, at(5), 1); err != nil || len(got) != 1 || got[0].ID != pending.ID {
		t.Fatalf("Stale with limit 1 = %v, %v", got, err)
	}
	if got, err := s.Stale(ctx, at(1), 10); err != nil || len(got) != 0 {
		t.Fatalf("Stale before anything moved = %v, %v", got, err)
	}
}

func testAttempting(t *testing.T, h LedgerHarness) {
	s, fund := newLedger(t, h)
	acct, other := newName("acct"), newName("acct")
	fund(t, acct, rupees(1000))
	fund(t, other, rupees(1000))
	prov, elsewhere := newName("prov"), newName("prov")
	at := func(min int) time.Time { return msgEpoch.Add(time.Duration(min) * time.Minute) }
	ctx := context.Background()
	want := func(what, provider string, since time.Time, yes bool) {
		t.Helper()
		got, err := s.Attempting(ctx, provider, since)
		if err != nil {
			t.Fatalf("%s: Attempting: %v", what, err)
		}
		if got != yes {
			t.Fatalf("%s: Attempting(%s, %v) = %v, want %v", what, provider, since.Format(time.TimeOnly), got, yes)
		}
	}
	newOf := func(account, provider string) *record.Message {
		m := sampleMessage(account, 10, at(0))
		m.Provider = provider
		openMessage(t, s, m)
		return m
	}

	want("an empty store", prov, at(0), false)
	m := newOf(acct, prov)
	want("a pending record", prov, at(0), false)
	moveMessage(t, s, m, store.Update{State: record.StateAttempting, At: at(2)})
	want("attempting since 2m, asked since 1m", prov, at(1), true)
	want("asked since the very time it moved", prov, at(2), true)
	want("asked since after it moved", prov, at(2).Add(time.Second), false)
	want("another provider", elsewhere, at(0), false)

	// Moved on, under another provider (a chat failover): neither counts.
	moveMessage(t, s, m, store.Update{State: record.StateSent, At: at(3), Provider: elsewhere, ProviderMessageID: newName("pm")})
	want("sent", prov, at(0), false)
	want("sent, by the provider it went through", elsewhere, at(0), false)

	// Any account's record counts; unknown and failed do not.
	o := newOf(other, prov)
	moveMessage(t, s, o, store.Update{State: record.StateAttempting, At: at(4)})
	want("another account's", prov, at(4), true)
	moveMessage(t, s, o, store.Update{State: record.StateUnknown, At: at(5)})
	want("unknown", prov, at(0), false)
	f := newOf(acct, prov)
	moveMessage(t, s, f, store.Update{State: record.StateAttempting, At: at(6)})
	moveMessage(t, s, f, store.Update{State: record.StateFailed, At: at(7)})
	want("failed", prov, at(0), false)

	// Of several attempting records, one young enough is enough.
	for _, min := range []int{8, 20, 9} {
		r := newOf(acct, prov)
		moveMessage(t, s, r, store.Update{State: record.StateAttempting, At: at(min)})
	}
	want("one of three since 15m", prov, at(15), true)
	want("none since 21m", prov, at(21), false)
}

func testConcurrentFail(t *testing.T, h LedgerHarness) {
	s, acct := fundedLedger(t, h, 1000)
	m := sampleMessage(acct, 100, msgEpoch)
	openMessage(t, s, m)
	wantOneWins(t, "Move", "moved the record", func() error {
		_, err := s.Move(context.Background(), acct, m.ID, store.Update{State: record.StateFailed, At: msgEpoch})
		return err
	})
	wantWallet(t, s, acct, 1000)
	if got := readMessage(t, s, acct, m.ID); len(got.History) != 2 {
		t.Fatalf("history after concurrent fails = %v, want pending and failed", got.History)
	}
}

func testRequests(t *testing.T, h LedgerHarness) {
	s, _ := newLedger(t, h)
	acct, other := newName("acct"), newName("acct")
	ctx := context.Background()
	at := func(min int) time.Time { return msgEpoch.Add(time.Duration(min) * time.Minute) }
	older := &store.RequestRecord{ID: newName("req"), Account: acct, Kind: "otp", IdempotencyKey: "k",
		Parts: []string{newName("m"), ""}, CreatedAt: at(0)}
	newer := &store.RequestRecord{ID: newName("req"), Account: acct, Kind: "sms", Bulk: true, IdempotencyKey: "k",
		Parts: []string{newName("m"), "", newName("m")}, CreatedAt: at(5)}
	for _, r := range []*store.RequestRecord{older, newer} {
		if err := s.OpenRequest(ctx, r); err != nil {
			t.Fatalf("OpenRequest %s: %v", r.ID, err)
		}
	}
	err := s.OpenRequest(ctx, older)
	wantErr(t, "OpenRequest of an ID recorded already", err, store.ErrConflict)
	got, err := s.RequestByKey(ctx, acct, "k", at(0))
	if err != nil {
		t.Fatalf("RequestByKey: %v", err)
	}
	if got.ID != newer.ID || got.Kind != "sms" || !got.Bulk || got.IdempotencyKey != "k" || !slices.Equal(got.Parts, newer.Parts) ||
		!got.CreatedAt.Equal(newer.CreatedAt) {
		t.Fatalf("RequestByKey = %+v, want the newer %+v", got, newer)
	}
	if got, err := s.RequestByKey(ctx, acct, "k", at(6)); !isKind(err, store.ErrNotFound) {
		t.Fatalf("RequestByKey after the newest = %+v, %v; want ErrNotFound", got, err)
	}
	if got, err := s.RequestByKey(ctx, other, "k", at(0)); !isKind(err, store.ErrNotFound) {
		t.Fatalf("RequestByKey of another account = %+v, %v; want ErrNotFound", got, err)
	}
}
