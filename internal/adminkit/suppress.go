package adminkit

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/internal/syncbuf"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/store"
)

// newSuppressionServer serves b with its ledger's suppression list.
func newSuppressionServer(t *testing.T, b Backend) *server {
	logs := &syncbuf.Buffer{}
	h, err := adminapi.New(b.Store, adminKey, adminapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
		adminapi.WithSuppressions(b.Msgs.(store.Suppressions), notifytest.New(t).Notifier))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &server{url: ts.URL, logs: logs, b: b}
}

func (k kit) testSuppressionEndpoints(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newSuppressionServer(t, b)
		s.create(t, "acme")
		const base = "/admin/v1/accounts/acme/suppressions"

		// Without the admin key: 401, nothing added.
		want(t, s.do(t, "POST", base, "", `{"channel":"email","to":"a@example.com","reason":"manual"}`), 401, "unauthenticated")
		want(t, s.do(t, "GET", base, "Bearer nope", ""), 401, "unauthenticated")
		want(t, s.do(t, "POST", base+"/remove", "", `{"channel":"email","to":"a@example.com"}`), 401, "unauthenticated")

		r := s.admin(t, "POST", base, `{"channel":"email","to":" Ann@Example.com","reason":"unsubscribed"}`)
		want(t, r, 200, "")
		if d := r.data(); d["to"] != "ann@example.com" || d["reason"] != "unsubscribed" || d["channel"] != "email" || d["at"] == "" {
			t.Fatalf("add answered %s", r.raw)
		}
		// A hard bounce outranks it; a manual entry then does not.
		want(t, s.admin(t, "POST", base, `{"channel":"email","to":"ann@example.com","reason":"hard_bounce"}`), 200, "")
		if r := s.admin(t, "POST", base, `{"channel":"email","to":"ann@example.com","reason":"manual"}`); r.data()["reason"] != "hard_bounce" {
			t.Errorf("manual over hard_bounce answered %s", r.raw)
		}
		want(t, s.admin(t, "POST", base, `{"channel":"sms","to":"+91 98765 43210","reason":"complaint"}`), 200, "")
		e, ok, err := b.Msgs.(store.Suppressions).LookupSuppression(context.Background(), "acme", "sms", "+919876543210")
		if err != nil || !ok || e.Reason != store.SuppressComplaint {
			t.Fatalf("store after add: %+v, %v, %v", e, ok, err)
		}
		if logs := s.logs.String(); !strings.Contains(logs, "suppression.add") || strings.Contains(logs, "ann@example.com") || strings.Contains(logs, "9876543210") {
			t.Errorf("change log %s: want the action without the recipient", logs)
		}

		// Inputs are checked before the store, naming each bad field.
		for body, field := range map[string]string{
			`{"channel":"Fax!","to":"a@example.com","reason":"manual"}`:   "channel",
			`{"to":"a@example.com","reason":"manual"}`:                    "channel",
			`{"channel":"email","to":"not-an-address","reason":"manual"}`: "to",
			`{"channel":"sms","to":"98765","reason":"manual"}`:            "to",
			`{"channel":"email","to":"a@example.com","reason":"bored"}`:   "reason",
			`{"channel":"email","to":"a@example.com"}`:                    "reason",
		} {
			r := s.admin(t, "POST", base, body)
			want(t, r, 400, "invalid_argument")
			if r.field(field) == "" {
				t.Errorf("%s: %s names no %s", body, r.raw, field)
			}
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/suppressions", `{"channel":"email","to":"a@example.com","reason":"manual"}`), 404, "not_found")

		// The list, by channel then recipient, paged and filtered.
		want(t, s.admin(t, "POST", base, `{"channel":"email","to":"bob@example.com","reason":"manual"}`), 200, "")
		r = s.admin(t, "GET", base+"?limit=2", "")
		want(t, r, 200, "")
		list, _ := r.data()["suppressions"].([]any)
		next, _ := r.data()["next"].(string)
		if len(list) != 2 || next == "" || list[0].(map[string]any)["to"] != "ann@example.com" || list[1].(map[string]any)["to"] != "bob@example.com" {
			t.Fatalf("first page %s", r.raw)
		}
		r = s.admin(t, "GET", base+"?limit=2&after="+next, "")
		list, _ = r.data()["suppressions"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["to"] != "+919876543210" || r.data()["next"] != nil {
			t.Fatalf("second page %s", r.raw)
		}
		r = s.admin(t, "GET", base+"?channel=sms", "")
		if list, _ := r.data()["suppressions"].([]any); len(list) != 1 {
			t.Fatalf("sms filter %s", r.raw)
		}
		want(t, s.admin(t, "GET", base+"?channel=Fax!", ""), 400, "invalid_argument")
		want(t, s.admin(t, "GET", base+"?after=!!", ""), 400, "invalid_argument")

		// Removal.
		want(t, s.admin(t, "POST", base+"/remove", `{"channel":"email","to":"ANN@example.com"}`), 200, "")
		want(t, s.admin(t, "POST", base+"/remove", `{"channel":"email","to":"ann@example.com"}`), 404, "not_found")
		want(t, s.admin(t, "POST", base+"/remove", `{"channel":"email","to":"x"}`), 400, "invalid_argument")
		if _, ok, _ := b.Msgs.(store.Suppressions).LookupSuppression(context.Background(), "acme", "email", "ann@example.com"); ok {
			t.Error("entry still there after removal")
		}
		want(t, s.admin(t, "DELETE", base, ""), 405, "method_not_allowed")

		// An internationalised domain is one entry, kept in ASCII, whichever
		// spelling adds or removes it: the form every send reads.
		r = s.admin(t, "POST", base, `{"channel":"email","to":"Meena@Bücher.example","reason":"unsubscribed"}`)
		if want(t, r, 200, ""); r.data()["to"] != "meena@xn--bcher-kva.example" {
			t.Fatalf("an IDN address was added as %s", r.raw)
		}
		if r := s.admin(t, "POST", base, `{"channel":"email","to":"meena@xn--bcher-kva.example","reason":"unsubscribed"}`); r.data()["to"] != "meena@xn--bcher-kva.example" {
			t.Fatalf("its ASCII spelling answered %s", r.raw)
		}
		if list, _ := s.admin(t, "GET", base+"?channel=email", "").data()["suppressions"].([]any); len(list) != 2 {
			t.Fatalf("%d e-mail entries, want bob's and one for both spellings of meena's", len(list))
		}
		want(t, s.admin(t, "POST", base+"/remove", `{"channel":"email","to":"MEENA@BÜCHER.EXAMPLE"}`), 200, "")
		want(t, s.admin(t, "POST", base+"/remove", `{"channel":"email","to":"meena@xn--bcher-kva.example"}`), 404, "not_found")
		want(t, s.admin(t, "POST", base, `{"channel":"email","to":"a@bü_cher.example","reason":"manual"}`), 400, "invalid_argument")
	})
}

// Without a list given to adminapi.New (WithSuppressions), the endpoints
// are not routed, whether or not the store keeps one.
func (k kit) testSuppressionEndpointsNeedAList(t *testing.T) {
	s := newServer(t, k.nb(t))
	s.create(t, "acme")
	want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/suppressions", ""), 404, "not_found")
}
