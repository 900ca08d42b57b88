package adminapitest_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
)

// TestPathIDsAndCursorsAreKeys: a path ID or a cursor with a NUL, invalid
// UTF-8 or a control character, and a cursor no page gave, is 400 naming
// the field, on memstore as on PostgreSQL (which refuses such text with
// "invalid byte sequence"): nothing of it reaches a store.
func TestPathIDsAndCursorsAreKeys(t *testing.T) {
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	forEachStore(t, func(t *testing.T, b backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		for _, c := range []struct{ method, path, body, field string }{
			{"GET", "/admin/v1/accounts?after=AAAA", "", "after"}, // three NULs
			{"GET", "/admin/v1/accounts?after=" + cursor("a\xffb"), "", "after"},
			{"GET", "/admin/v1/accounts?after=" + cursor("a\nb"), "", "after"},
			{"GET", "/admin/v1/accounts?after=" + cursor(strings.Repeat("a", 256)), "", "after"},
			{"GET", "/admin/v1/accounts/%00", "", "id"},
			{"GET", "/admin/v1/accounts/%FF", "", "id"},
			{"GET", "/admin/v1/accounts/ac%00me", "", "id"},
			{"GET", "/admin/v1/accounts/%C3%28", "", "id"}, // invalid UTF-8
			{"GET", "/admin/v1/accounts/a%0Ab", "", "id"},
			{"GET", "/admin/v1/accounts/" + strings.Repeat("a", 256), "", "id"},
			{"POST", "/admin/v1/accounts/%00/disable", "", "id"},
			{"POST", "/admin/v1/accounts/%00/enable", "", "id"},
			{"POST", "/admin/v1/accounts/%00/rotate-key", "", "id"},
			{"POST", "/admin/v1/accounts/%FF/topups", `{"amount_minor":100,"reference":"r1"}`, "id"},
			{"GET", "/admin/v1/accounts/%00/ledger", "", "id"},
			{"GET", "/admin/v1/accounts/acme/ledger?after=" + cursor("1\x00"), "", "after"},
			{"GET", "/admin/v1/accounts/%00/messages", "", "id"},
			{"GET", "/admin/v1/accounts/acme/messages?after=" + cursor("2026-11-25T06:00:00Z m\x00"), "", "after"},
			{"GET", "/admin/v1/accounts/acme/messages?after=" + cursor("2026-11-25T06:00:00Z \xff"), "", "after"},
			{"GET", "/admin/v1/accounts/%00/dlt-templates", "", "id"},
			{"PUT", "/admin/v1/accounts/acme/dlt-templates/%00", `{"content":"x"}`, "template"},
			{"DELETE", "/admin/v1/accounts/acme/dlt-templates/%FF", "", "template"},
			{"GET", "/admin/v1/accounts/%FF/templates", "", "id"},
			{"PUT", "/admin/v1/accounts/acme/templates/%00", `{"sms":"x"}`, "slug"},
			{"DELETE", "/admin/v1/accounts/acme/templates/%FF", "", "slug"},
			{"DELETE", "/admin/v1/accounts/%00/templates/%FF", "", "slug"},
			// Bodies: JSON strings may hold a NUL ("\u0000"), which no store keeps.
			{"POST", "/admin/v1/accounts", `{"id":"zed","name":"Z\u0000ed"}`, "name"},
			{"POST", "/admin/v1/accounts", `{"id":"zed","sender_ids":["Z\u0000"]}`, "sender_ids[0]"},
			{"PUT", "/admin/v1/accounts/acme/dlt-templates/1107", `{"content":"Code\u0000 {#var#}"}`, "content"},
			{"PUT", "/admin/v1/accounts/acme/dlt-templates/1107", `{"entity_id":"12\u00001","content":"Code {#var#}"}`, "entity_id"},
			{"PUT", "/admin/v1/accounts/acme/templates/welcome", `{"sms":"Hi\u0000 there"}`, "sms"},
			{"PUT", "/admin/v1/accounts/acme/templates/welcome", `{"variables":["N\u0000"],"sms":"Hi {{N}}"}`, "variables[0]"},
		} {
			r := s.admin(t, c.method, c.path, c.body)
			if r.status != 400 || r.code() != "invalid_argument" || r.field(c.field) == "" {
				t.Errorf("%s %s %s: got %d %s, want 400 naming %s", c.method, c.path, c.body, r.status, r.raw, c.field)
			}
		}
		if logs := s.logs.String(); strings.Contains(logs, "admin request failed") {
			t.Errorf("a store was reached and failed:\n%s", logs)
		}
		// Keys that were never made are looked up, and are not found.
		want(t, s.admin(t, "GET", "/admin/v1/accounts/"+strings.Repeat("b", 255), ""), 404, "not_found")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/caf%C3%A9", ""), 404, "not_found")
		want(t, s.admin(t, "GET", "/admin/v1/accounts?after="+cursor("zzz"), ""), 200, "")
	})
}

// wantPlain checks that an answer shows none of leaks and ends its
// message with its request ID.
func wantPlain(t *testing.T, what string, r *reply, leaks ...string) {
	t.Helper()
	for _, leak := range leaks {
		if strings.Contains(r.raw, leak) {
			t.Errorf("%s: the answer shows %q: %s", what, leak, r.raw)
		}
	}
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if id := r.header.Get("X-Request-ID"); id == "" || !strings.HasSuffix(msg, "(request "+id+")") {
		t.Errorf("%s: message %q does not end with the request ID %q", what, msg, id)
	}
}

// TestUnreachableDatabaseAnswersNoInternals: whatever a real pgstore
// whose server cannot be reached says stays out of the answer, which gives
// the request ID; the log has it under that ID. (adminapi's
// TestStoreFailuresAnswerNoInternals tests the same with stores that fail
// in pgx's words.)
func TestUnreachableDatabaseAnswersNoInternals(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://gatewayuser@127.0.0.1:%s/ledgerdb?sslmode=disable&connect_timeout=5", port))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store, err := pgstore.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, backend{store: store})
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/admin/v1/accounts", ""},
		{"GET", "/admin/v1/accounts/acme", ""},
		{"POST", "/admin/v1/accounts", `{"id":"acme"}`},
		{"POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"r1"}`},
		{"GET", "/admin/v1/accounts/acme/ledger", ""},
		{"POST", "/admin/v1/accounts/acme/rotate-key", ""},
	} {
		r := s.admin(t, c.method, c.path, c.body)
		want(t, r, 503, "unavailable")
		wantPlain(t, c.method+" "+c.path, r, "gatewayuser", "ledgerdb", "127.0.0.1", port, "pgstore", "dial")
		if logs := s.logs.String(); !strings.Contains(logs, port) || !strings.Contains(logs, r.header.Get("X-Request-ID")) {
			t.Errorf("%s %s: the log lacks the details or the request ID:\n%s", c.method, c.path, logs)
		}
	}
}
