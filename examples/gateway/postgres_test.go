package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
)

// schemaURL returns the test database's URL with a fresh schema of its
// own as the search_path (a run-time parameter for pgx). It skips the test
// without a PostgreSQL server (see pgstoretest). It waits for a unit of
// pgUnits first (see there), which t keeps to its end.
func schemaURL(t testing.TB) string {
	t.Helper()
	takePGUnit(t)
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
	t.Parallel()
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
	t.Parallel()
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

// TestCleanupTaskDeletesExpiredRows: the gateway's cleanup, a periodic
// task of the queue, runs pgstore's Cleanup, here on a throttle row that
// expired long ago.
func TestCleanupTaskDeletesExpiredRows(t *testing.T) {
	t.Parallel()
	db := pgstoretest.Store(t, pgstoretest.Schema(t))
	otp, err := db.WindowLimit("otp", 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := otp.Take(context.Background(), "k", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	out := newLines()
	task := cleanupTask(db, time.Millisecond, slog.New(slog.NewTextHandler(out, nil)))
	if task.Name != "pgstore_cleanup" {
		t.Errorf("task %q, want pgstore's", task.Name)
	}
	q, err := memqueue.New(memqueue.Config{Ledger: db})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- q.Run(ctx, noWork{}, task) }()
	out.waitFor(t, "expired rows deleted")
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

// noWork is a queue.Worker for a queue that holds no sends.
type noWork struct{}

func (noWork) Work(context.Context, queue.Job) (time.Time, error) { return time.Time{}, nil }

// keysOf counts the demo account's API keys in the database at dbURL.
func keysOf(t *testing.T, dbURL string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM notify_api_keys WHERE account = $1`, demoAccount).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// authStatus is the status of GET /balance with key.
func (g *gateway) authStatus(t *testing.T, key string) int {
	t.Helper()
	return g.curl(t, http.MethodGet, "/balance", map[string]string{"Authorization": key}, "").status
}

// TestGatewayAPIKeyOnPostgres: on PostgreSQL the demo account outlives
// the gateway, and its keys must not pile up. A start without
// NOTIFY_API_KEY makes a key only when the account has none, and later
// such starts keep it without printing a key they do not know;
// NOTIFY_API_KEY becomes the account's only key, revoking the others.
func TestGatewayAPIKeyOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	env := func(key string) map[string]string {
		m := map[string]string{"NOTIFY_DATABASE_URL": dbURL}
		if key != "" {
			m["NOTIFY_API_KEY"] = key
		}
		return m
	}

	first := start(t, env(""))
	random := first.key
	if !strings.HasPrefix(random, "nk_") || first.authStatus(t, random) != 200 {
		t.Fatalf("first start: key %q", random)
	}
	first.shutdown(t)

	again := start(t, env(""))
	if again.key != "unchanged" || strings.Contains(again.out.text(), "nk_") {
		t.Errorf("a restart without NOTIFY_API_KEY printed a key:\n%s", again.out.text())
	}
	if again.authStatus(t, random) != 200 || keysOf(t, dbURL) != 1 {
		t.Fatalf("after a restart without NOTIFY_API_KEY: %d keys, the first works: %v", keysOf(t, dbURL), again.authStatus(t, random) == 200)
	}
	again.shutdown(t)

	const chosen, other = "chosen-key-0123456789", "other-key-0123456789"
	c := start(t, env(chosen))
	if c.authStatus(t, chosen) != 200 || c.authStatus(t, random) != 401 {
		t.Errorf("NOTIFY_API_KEY did not replace the random key")
	}
	c.shutdown(t)

	o := start(t, env(other))
	if o.authStatus(t, other) != 200 || o.authStatus(t, chosen) != 401 || keysOf(t, dbURL) != 1 {
		t.Errorf("starting with another NOTIFY_API_KEY: the old one still works or keys pile up (%d)", keysOf(t, dbURL))
	}
	o.shutdown(t)

	// Without NOTIFY_API_KEY again: the chosen key is kept, not joined.
	k := start(t, env(""))
	if k.key != "unchanged" || k.authStatus(t, other) != 200 || keysOf(t, dbURL) != 1 {
		t.Errorf("a start without NOTIFY_API_KEY after a chosen one: banner key %q, %d keys", k.key, keysOf(t, dbURL))
	}
	if !strings.Contains(k.out.text(), "Bearer <your key>") {
		t.Errorf("the try line does not leave the key to the user:\n%s", k.out.text())
	}
}

// TestGatewayBannerBalanceOnPostgres: a restarted gateway prints what its
// wallet holds, not NOTIFY_BALANCE, which opens new wallets only.
func TestGatewayBannerBalanceOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	const key = "balance-key-0123456789"
	env := func(balance string) map[string]string {
		return map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_API_KEY": key, "NOTIFY_BALANCE": balance}
	}
	g := start(t, env("1.00"))
	if !strings.Contains(g.out.text(), `account "demo" with a balance of ₹1.00`+"\n") {
		t.Errorf("first start:\n%s", g.out.text())
	}
	if a := g.post(t, "/sms", key, `{"to":"9876543210","message":"hi"}`); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	g.shutdown(t)

	r := start(t, env("50.00"))
	var line string
	for _, l := range strings.Split(r.out.text(), "\n") {
		if strings.Contains(l, "with a balance of") {
			line = l
		}
	}
	if !strings.Contains(line, "₹0.75") || strings.Contains(line, "50.00") || !strings.Contains(line, "NOTIFY_BALANCE opens a new wallet only") {
		t.Errorf("restart: %q, want the ₹0.75 that remains", line)
	}
}

// TestGatewayRestartKeepsAdminChanges: a restart on the same database
// keeps the demo account as the admin API left it, not as the gateway
// first made it.
func TestGatewayRestartKeepsAdminChanges(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	env := map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_API_KEY": "chosen-key-0123456789"}
	g := start(t, env)
	if a := g.admin(t, "DELETE", "/admin/v1/accounts/demo/dlt-templates/"+demoDLTTemplate, ""); a.status != 200 {
		t.Fatalf("deleting the demo DLT template: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, "POST", "/admin/v1/accounts/demo/disable", ""); a.status != 200 {
		t.Fatalf("disabling the demo account: %d %s", a.status, a.raw)
	}
	g.shutdown(t)

	g = start(t, env)
	a := g.admin(t, "GET", "/admin/v1/accounts/demo", "")
	d := adminData(a)
	if a.status != 200 || d["disabled"] != true || len(d["dlt_templates"].([]any)) != 0 {
		t.Fatalf("after a restart the demo account is %s", a.raw)
	}
	if a := g.post(t, "/sms", "chosen-key-0123456789", `{"to":"9876543210","message":"hi"}`); a.status != 403 {
		t.Fatalf("a send of the disabled demo account: %d %s", a.status, a.raw)
	}
}
