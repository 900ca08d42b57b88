package adminkit

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestPathIDsAndCursorsAreKeys: a path ID or a cursor with a NUL, invalid
// UTF-8 or a control character, and a cursor no page gave, is 400 naming
// the field, on memstore as on PostgreSQL (which refuses such text with
// "invalid byte sequence"): nothing of it reaches a store.
func (k kit) testPathIDsAndCursorsAreKeys(t *testing.T) {
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	k.each(t, func(t *testing.T, b Backend) {
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

// failingStore is an admin store whose every call fails in pgx's words,
// naming the database's user, name and address, with the error kind (one
// of package store's, or a context error) or none (the store failing).
type failingStore struct {
	adminapi.Store
	kind error
}

const pgWords = "failed to connect to `user=postgres database=notify host=127.0.0.1:5432`: dial error"

func (f failingStore) err() error {
	if f.kind == nil {
		return fmt.Errorf("pgstore: %s", pgWords)
	}
	return fmt.Errorf("pgstore: %s: %w", pgWords, f.kind)
}

func (f failingStore) Account(context.Context, string) (*notify.Account, error) { return nil, f.err() }
func (f failingStore) Accounts(context.Context, string, int) ([]*notify.Account, error) {
	return nil, f.err()
}
func (f failingStore) CreateAccount(context.Context, *notify.Account, string, notify.Money) error {
	return f.err()
}
func (f failingStore) ReplaceAPIKeys(context.Context, string, ...string) error { return f.err() }

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

// TestStoreFailuresAnswerNoInternals: whatever the store says when it
// fails (a store that fails in pgx's words with any code) stays out of the
// answer, which gives the request ID; the log has it under that ID. The
// pgstore module tests a real pgstore whose server cannot be reached
// (pgstore/internal/adminapitest).
func (k kit) testStoreFailuresAnswerNoInternals(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   error
		status int
		answer string
	}{
		{"unavailable", store.ErrUnavailable, 503, "unavailable"},
		{"internal", nil, 500, "internal"},
		{"deadline_exceeded", context.DeadlineExceeded, 504, "deadline_exceeded"},
		{"canceled", context.Canceled, 503, "canceled"},
		{"outcome_unknown", notify.Errorf(notify.CodeOutcomeUnknown, "lost"), 500, "internal"},
		{"conflict", store.ErrConflict, 409, "conflict"}, // a store's words, though its kind is a refusal's
		{"invalid_argument", store.ErrInvalid, 400, "invalid_argument"},
		{"fields", store.InvalidField("amount", "must be positive"), 400, "invalid_argument"}, // fields in a store's words
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, Backend{Store: failingStore{Store: k.nb(t).Store, kind: c.kind}})
			for _, path := range []string{"/admin/v1/accounts", "/admin/v1/accounts/acme/ledger"} {
				r := s.admin(t, "GET", path, "")
				want(t, r, c.status, c.answer)
				wantPlain(t, path, r, "user=", "database=", "127.0.0.1", "5432", "pgstore", "dial")
			}
			if logs := s.logs.String(); !strings.Contains(logs, "user=postgres database=notify host=127.0.0.1:5432") {
				t.Errorf("the log lacks the store's words:\n%s", logs)
			}
		})
	}
}

// fieldsStore is an admin store whose CreateAccount and Credit refuse
// with err, a store.InvalidFields as a store gives one.
type fieldsStore struct {
	adminapi.Store
	err error
}

func (f fieldsStore) CreateAccount(context.Context, *notify.Account, string, notify.Money) error {
	return f.err
}

func (f fieldsStore) Credit(context.Context, string, notify.Money, string) (record.Balance, error) {
	return record.Balance{}, f.err
}

// TestStoreFieldErrors: the fields a store names (store.InvalidFields, its
// rules and nothing more) are answered as the admin API's own: 400
// invalid_argument listing them, as a store's notify.InvalidField was; a
// store that wraps them in its own words is answered plainly.
func (k kit) testStoreFieldErrors(t *testing.T) {
	fields := store.InvalidFields(record.FieldErrors{{Field: "amount", Message: "would overflow the balance"},
		{Field: "opening", Message: "must not be negative"}, {Field: "amount", Message: "is too large"}})
	for _, c := range []struct {
		name string
		err  error
	}{
		{"bare", fields},
		{"wrapped without words", fmt.Errorf("%w", fields)},
		{"wrapped in plain words", fmt.Errorf("credit %q: %w", "acme", fields)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := k.nb(t)
			newServer(t, b).create(t, "acme")
			s := newServer(t, Backend{Store: fieldsStore{Store: b.Store, err: c.err}})
			for _, r := range []*reply{
				s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"r1"}`),
				s.admin(t, "POST", "/admin/v1/accounts", `{"id":"other","name":"Other"}`),
			} {
				want(t, r, 400, "invalid_argument")
				if got := r.field("amount"); got != "would overflow the balance; is too large" {
					t.Errorf("fields.amount = %q in %s", got, r.raw)
				}
				if got := r.field("opening"); got != "must not be negative" {
					t.Errorf("fields.opening = %q in %s", got, r.raw)
				}
				e, _ := r.body["error"].(map[string]any)
				if msg, _ := e["message"].(string); msg != "invalid request: amount would overflow the balance; opening must not be negative; amount is too large" {
					t.Errorf("message = %q", msg)
				}
			}
			if logs := s.logs.String(); strings.Contains(logs, "admin request failed") {
				t.Errorf("a refusal naming fields was logged as a store failing:\n%s", logs)
			}
		})
	}
	t.Run("wrapped in a package's words", func(t *testing.T) {
		b := k.nb(t)
		newServer(t, b).create(t, "acme")
		s := newServer(t, Backend{Store: fieldsStore{Store: b.Store, err: fmt.Errorf("pgstore: credit: %s: %w", pgWords, fields)}})
		r := s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"r1"}`)
		want(t, r, 400, "invalid_argument")
		wantPlain(t, "top-up", r, "pgstore", "user=", "5432", "overflow")
	})
}
