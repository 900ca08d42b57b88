package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/pgstore/pgstoretest"
)

// schemaURL returns the test database's URL with a fresh schema of its
// own as the search_path (a run-time parameter for pgx). It skips the test
// without a PostgreSQL server (see pgstoretest).
func schemaURL(t *testing.T) string {
	t.Helper()
	schema := pgstoretest.Schema(t)
	u, err := url.Parse(pgstoretest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestGatewaysShareADatabase runs two gateways on one PostgreSQL schema:
// they share the account, the wallet and the idempotency keys. It is
// skipped without a PostgreSQL server (see pgstoretest).
func TestGatewaysShareADatabase(t *testing.T) {
	dbURL := schemaURL(t)
	env := func() map[string]string {
		return map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_API_KEY": "shared-key-0123456789", "NOTIFY_BALANCE": "1.00"}
	}
	a := start(t, env())
	b := start(t, env())
	if strings.Contains(a.out.text(), dbURL) {
		t.Errorf("the database URL is printed")
	}
	a.key, b.key = "shared-key-0123456789", "shared-key-0123456789"

	body := `{"to":"9876543210","message":"hi"}`
	if r := a.post(t, "/sms", a.key, body); r.status != 200 {
		t.Fatalf("a: %d %s", r.status, r.raw)
	}
	if r := b.post(t, "/sms", b.key, body); r.status != 200 || r.body["balance_minor"] != 50.0 {
		t.Fatalf("b: %d %s", r.status, r.raw)
	}
	// One idempotency key across both instances: one send, one charge.
	hdr := map[string]string{"Authorization": a.key, "Content-Type": "application/json", "Idempotency-Key": "order-77"}
	first := a.curl(t, http.MethodPost, "/sms", hdr, body)
	again := b.curl(t, http.MethodPost, "/sms", hdr, body)
	if first.status != 200 || again.status != 200 || first.body["message_id"] != again.body["message_id"] {
		t.Fatalf("idempotent repeat: %s / %s", first.raw, again.raw)
	}
	if got := a.balanceMinor(t); got != 25 {
		t.Fatalf("balance %d, want 25", got)
	}
	if r := b.post(t, "/sms", b.key, `{"to":"9876543210","message":"one more"}`); r.status != 200 {
		t.Fatalf("last: %d %s", r.status, r.raw)
	}
	if r := a.post(t, "/sms", a.key, `{"to":"9876543210","message":"too many"}`); r.status != 402 {
		t.Fatalf("empty wallet: %d %s", r.status, r.raw)
	}
}

// TestGatewaysShareTheOTPThrottle: two gateways on one database count one
// recipient's codes together.
func TestGatewaysShareTheOTPThrottle(t *testing.T) {
	dbURL := schemaURL(t)
	env := func() map[string]string {
		return map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_API_KEY": "shared-key-0123456789",
			"NOTIFY_OTP_LIMIT": "2/1h"}
	}
	a, b := start(t, env()), start(t, env())
	const key, body = "shared-key-0123456789", `{"to":"9876543210","otp":"482913"}`
	for i, g := range []*gateway{a, b} {
		if r := g.post(t, "/messenger/send", key, body); r.status != 200 {
			t.Fatalf("OTP %d: %d %s", i, r.status, r.raw)
		}
	}
	if r := a.post(t, "/send-otp", key, body); r.status != 429 || errCode(r) != "rate_limited" {
		t.Fatalf("third OTP across the two: %d %s", r.status, r.raw)
	}
}

// TestCleanEveryDeletesExpiredRows: the gateway's cleaner runs
// pgstore's Cleanup, here on a throttle row that expired long ago.
func TestCleanEveryDeletesExpiredRows(t *testing.T) {
	db := pgstoretest.Store(t, pgstoretest.Schema(t))
	otp, err := db.WindowLimit("otp", 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := otp.Take(context.Background(), "k", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	out := newLines()
	closeDB := cleanEvery(db, time.Millisecond, slog.New(slog.NewTextHandler(out, nil)))
	out.waitFor(t, "expired rows deleted")
	closeDB()
}
