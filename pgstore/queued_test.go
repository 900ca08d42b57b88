package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// waitingRecord is a record a queue opens, in state st, created at at.
func waitingRecord(id string, st record.State, charge int64, at time.Time) *record.Message {
	m := &record.Message{ID: id, Account: "acme", Kind: "sms", Request: "sms", To: "+919876543210",
		Metered: charge > 0, Charge: inr(charge), State: st, Payload: []byte(`{"code":"123456"}`),
		CreatedAt: at, UpdatedAt: at}
	if st == record.StateScheduled {
		m.SendAt = at.Add(time.Hour)
	}
	return m
}

func withAccount(m *record.Message, account string) *record.Message {
	m.Account = account
	return m
}

// TestCleanupKeepsWaiting checks that Cleanup's retention deletes settled
// records only: a queued or scheduled record is kept however old, as are
// pending and attempting ones.
func TestCleanupKeepsWaiting(t *testing.T) {
	s, _ := newStore(t, pgstore.WithRecordTTL(time.Hour))
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	old := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Microsecond)
	for _, m := range []*record.Message{
		waitingRecord("queued", record.StateQueued, 10, old),
		waitingRecord("scheduled", record.StateScheduled, 10, old),
		waitingRecord("sent", record.StateQueued, 10, old),
		waitingRecord("failed", record.StateScheduled, 10, old),
	} {
		if _, err := s.Open(ctx, m); err != nil {
			t.Fatalf("Open(%s): %v", m.ID, err)
		}
	}
	for _, u := range []struct {
		id string
		st record.State
	}{{"sent", record.StateAttempting}, {"sent", record.StateSent}, {"failed", record.StateFailed}} {
		if _, err := s.Move(ctx, "acme", u.id, store.Update{State: u.st, At: old}); err != nil {
			t.Fatalf("Move(%s to %s): %v", u.id, u.st, err)
		}
	}
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != 2 {
		t.Fatalf("Cleanup removed %d rows, want the 2 settled records", n)
	}
	for id, want := range map[string]error{"queued": nil, "scheduled": nil, "sent": store.ErrNotFound, "failed": store.ErrNotFound} {
		m, err := s.Message(ctx, "acme", id)
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Fatalf("Message(%s) after Cleanup: %v, want %v", id, err, want)
		}
		if want == nil && string(m.Payload) != `{"code":"123456"}` {
			t.Fatalf("a waiting record kept by Cleanup has Payload %q", m.Payload)
		}
	}
}

// TestOpenTx checks that OpenTx writes on the caller's transaction: a
// rollback leaves no record and no debit, a commit both; its refusals
// answer as Open's and leave the transaction usable.
func TestOpenTx(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	at := time.Now().UTC().Truncate(time.Microsecond)

	tx, err := pool.Begin(ctx)
	must(t, err)
	b, err := s.OpenTx(ctx, tx, waitingRecord("rolled-back", record.StateQueued, 100, at))
	if err != nil || b.Available.Minor != 900 {
		t.Fatalf("OpenTx = %+v, %v; want 900 left", b, err)
	}
	// Seen from another connection: nothing before the commit.
	if _, err := s.Message(ctx, "acme", "rolled-back"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Message before the commit: %v, want ErrNotFound", err)
	}
	must(t, tx.Rollback(ctx))
	if _, err := s.Message(ctx, "acme", "rolled-back"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Message after a rollback: %v, want ErrNotFound", err)
	}
	wantBalance(t, s, "acme", 1000)

	tx, err = pool.Begin(ctx)
	must(t, err)
	_, err = s.OpenTx(ctx, tx, waitingRecord("too-dear", record.StateQueued, 5000, at))
	wantErr(t, err, store.ErrInsufficientFunds)
	_, err = s.OpenTx(ctx, tx, withAccount(waitingRecord("no-wallet", record.StateQueued, 10, at), "nobody"))
	wantErr(t, err, store.ErrNotFound)
	_, err = s.OpenTx(ctx, tx, waitingRecord("sent", record.StateSent, 10, at))
	wantErr(t, err, store.ErrInvalid)
	// The refusals left tx usable.
	if _, err := s.OpenTx(ctx, tx, waitingRecord("committed", record.StateScheduled, 100, at)); err != nil {
		t.Fatalf("OpenTx after refusals: %v", err)
	}
	must(t, tx.Commit(ctx))
	m, err := s.Message(ctx, "acme", "committed")
	must(t, err)
	if m.State != record.StateScheduled || !m.SendAt.Equal(at.Add(time.Hour)) || string(m.Payload) != `{"code":"123456"}` {
		t.Fatalf("the committed record = %+v", m)
	}
	wantBalance(t, s, "acme", 900)

	// A duplicate ID is ErrConflict, and aborts the transaction.
	tx, err = pool.Begin(ctx)
	must(t, err)
	_, err = s.OpenTx(ctx, tx, waitingRecord("committed", record.StateQueued, 100, at))
	wantErr(t, err, store.ErrConflict)
	must(t, tx.Rollback(ctx))
	wantBalance(t, s, "acme", 900)

	_, err = s.OpenTx(ctx, nil, waitingRecord("nil-tx", record.StateQueued, 100, at))
	wantErr(t, err, store.ErrInvalid)
}

// TestMessagesBeforeMigration0017 checks that records written before
// migration 0017 read back without SendAt or Payload, and that a settled
// one is still what Cleanup deletes.
func TestMessagesBeforeMigration0017(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pool := pgstoretest.Pool(t, schema, 2)
	migrateThrough(t, pool, 16)
	old := time.Now().Add(-90 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
	_, err := pool.Exec(ctx, `INSERT INTO notify_messages (id, account, kind, state, history, created_at, updated_at)
	VALUES ('old-sent', 'acme', 'sms', 'sent', '[]', $1, $1), ('old-pending', 'acme', 'sms', 'pending', '[]', $1, $1)`, old)
	must(t, err)
	s := pgstoretest.Store(t, schema) // runs 0017
	applied, latest, err := s.SchemaVersion(ctx)
	must(t, err)
	if applied != latest || latest < 17 {
		t.Fatalf("SchemaVersion = %d of %d", applied, latest)
	}
	m, err := s.Message(ctx, "acme", "old-pending")
	must(t, err)
	if m.Payload != nil || !m.SendAt.IsZero() {
		t.Fatalf("a record from before 0017 has Payload %q, SendAt %v", m.Payload, m.SendAt)
	}
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != 1 {
		t.Fatalf("Cleanup removed %d rows, want the old sent record", n)
	}
}
