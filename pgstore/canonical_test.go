package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestSuppressionsBeforeMigration0019: e-mail entries written before
// 0019 with an internationalised domain in Unicode are found, after it,
// by every spelling a send may use; one that meets its ASCII twin merges
// into it with the stronger reason; others are left as they were.
func TestSuppressionsBeforeMigration0019(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pool := pgstoretest.Pool(t, schema, 2)
	migrateThrough(t, pool, 18)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	_, err := pool.Exec(ctx, `INSERT INTO notify_suppressions (account, kind, recipient, reason, at) VALUES
	('acme', 'email', 'ann@bücher.example', 'hard_bounce', $1),
	('acme', 'email', 'ann@xn--bcher-kva.example', 'unsubscribed', $1),
	('acme', 'email', 'bob@bücher.example', 'complaint', $1),
	('acme', 'email', 'carol@example.com', 'manual', $1),
	('acme', 'email', 'dan@bü_cher.example', 'manual', $1),
	('other', 'email', 'ann@bücher.example', 'unsubscribed', $1),
	('acme', 'sms', '+919876543210', 'complaint', $1)`, at)
	must(t, err)
	s := pgstoretest.Store(t, schema) // runs 0019
	for _, c := range []struct {
		account, kind, to string
		reason            store.SuppressionReason
	}{
		{"acme", "email", "ann@xn--bcher-kva.example", store.SuppressHardBounce},
		{"acme", "email", "bob@xn--bcher-kva.example", store.SuppressComplaint},
		{"acme", "email", "carol@example.com", store.SuppressManual},
		{"acme", "email", "dan@bü_cher.example", store.SuppressManual},
		{"other", "email", "ann@xn--bcher-kva.example", store.SuppressUnsubscribed},
		{"acme", "sms", "+919876543210", store.SuppressComplaint},
	} {
		e, ok, err := s.LookupSuppression(ctx, c.account, record.Kind(c.kind), c.to)
		if err != nil || !ok || e.Reason != c.reason || !e.At.Equal(at) {
			t.Errorf("%s %s %s after 0019: %+v, %v, %v; want %s", c.account, c.kind, c.to, e, ok, err, c.reason)
		}
	}
	var left int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_suppressions WHERE recipient LIKE '%bücher%'`).Scan(&left))
	if left != 0 {
		t.Errorf("%d entries still spell the domain in Unicode", left)
	}
	var total int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_suppressions`).Scan(&total))
	if total != 6 {
		t.Errorf("%d entries, want 6 (the two spellings of one address merged)", total)
	}
}
