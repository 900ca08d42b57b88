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
	"github.com/notifykit/notify/store/storeutil"
)

// newPreferenceServer serves b with its ledger's preferences.
func newPreferenceServer(t *testing.T, b Backend) *server {
	logs := &syncbuf.Buffer{}
	h, err := adminapi.New(b.Store, adminKey, adminapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
		adminapi.WithPreferences(b.Msgs, notifytest.New(t).Notifier))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &server{url: ts.URL, logs: logs, b: b}
}

// categoriesOf returns the categories of an answer's data, by name.
func categoriesOf(t *testing.T, r *reply) map[string]map[string]any {
	t.Helper()
	want(t, r, 200, "")
	out := map[string]map[string]any{}
	list, _ := r.data()["categories"].([]any)
	for _, c := range list {
		m := c.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func (k kit) testCategoryEndpoints(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newPreferenceServer(t, b)
		s.create(t, "acme")
		const base = "/admin/v1/accounts/acme/categories"

		// Without the admin key: 401, nothing defined.
		want(t, s.do(t, "PUT", base+"/marketing", "", `{"description":"Offers"}`), 401, "unauthenticated")
		want(t, s.do(t, "GET", base, "Bearer nope", ""), 401, "unauthenticated")
		want(t, s.do(t, "DELETE", base+"/marketing", "", ""), 401, "unauthenticated")
		if r := s.admin(t, "GET", base, ""); len(categoriesOf(t, r)) != 0 || r.data()["account"] != "acme" {
			t.Fatalf("before any put: %s", r.raw)
		}

		// Defined (201), then replaced (200).
		r := s.admin(t, "PUT", base+"/marketing", `{"description":"Offers and sales"}`)
		want(t, r, 201, "")
		if d := r.data(); d["name"] != "marketing" || d["description"] != "Offers and sales" || d["opt_in"] != false || d["critical"] != false {
			t.Fatalf("put answered %s", r.raw)
		}
		r = s.admin(t, "PUT", base+"/marketing", `{"description":"Offers","opt_in":true}`)
		want(t, r, 200, "")
		if d := r.data(); d["opt_in"] != true || d["description"] != "Offers" {
			t.Fatalf("replace answered %s", r.raw)
		}
		want(t, s.admin(t, "PUT", base+"/otp", `{"critical":true}`), 201, "")
		cats := categoriesOf(t, s.admin(t, "GET", base, ""))
		if len(cats) != 2 || cats["marketing"]["opt_in"] != true || cats["otp"]["critical"] != true || cats["otp"]["description"] != "" {
			t.Fatalf("list: %v", cats)
		}
		if list, _ := s.admin(t, "GET", base, "").data()["categories"].([]any); list[0].(map[string]any)["name"] != "marketing" {
			t.Errorf("the list is not in order of name: %v", list)
		}
		got, err := b.Msgs.Categories(context.Background(), "acme")
		if err != nil || len(got) != 2 || !got[0].OptIn || !got[1].Critical {
			t.Fatalf("store: %+v, %v", got, err)
		}
		if logs := s.logs.String(); !strings.Contains(logs, "category.put") || !strings.Contains(logs, `"replaced":true`) {
			t.Errorf("change log %s: want category.put with replaced", logs)
		}

		// Inputs are checked before the store, naming the field and its
		// rule in storeutil's words.
		for _, c := range []struct{ path, body, field, rule string }{
			{base + "/Promo!", `{}`, "name", storeutil.CategoryRule},
			{base + "/" + strings.Repeat("a", 33), `{}`, "name", storeutil.CategoryRule},
			{base + "/9lives", `{}`, "name", storeutil.CategoryRule},
			{base + "/%00", `{}`, "name", storeutil.CategoryRule},
			{base + "/promo", `{"description":"` + strings.Repeat("x", 201) + `"}`, "description", "at most 200 bytes"},
			{base + "/promo", `{"description":"a\u0007b"}`, "description", "control"},
			{base + "/promo", `{"description":"x","color":"red"}`, "color", "not a field"},
			{base + "/promo", `{"opt_in":"yes"}`, "opt_in", "boolean"},
		} {
			r := s.admin(t, "PUT", c.path, c.body)
			want(t, r, 400, "invalid_argument")
			if f := r.field(c.field); !strings.Contains(f, c.rule) {
				t.Errorf("PUT %s %s: %s; want %s naming %q", c.path, c.body, r.raw, c.field, c.rule)
			}
		}
		want(t, s.admin(t, "PUT", "/admin/v1/accounts/nobody/categories/promo", `{}`), 404, "not_found")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/nobody/categories", ""), 404, "not_found")
		want(t, s.admin(t, "POST", base, `{}`), 405, "method_not_allowed")
		want(t, s.admin(t, "GET", base+"/marketing", ""), 405, "method_not_allowed")
		if got, _ := b.Msgs.Categories(context.Background(), "acme"); len(got) != 2 {
			t.Fatalf("a refused put defined one: %+v", got)
		}

		// Removal takes the category's choices with it.
		if err := b.Msgs.SetChoice(context.Background(), "acme", "sms", "+919876543210", "marketing", true); err != nil {
			t.Fatal(err)
		}
		r = s.admin(t, "DELETE", base+"/marketing", "")
		if want(t, r, 200, ""); r.data()["removed"] != "marketing" {
			t.Fatalf("delete answered %s", r.raw)
		}
		want(t, s.admin(t, "DELETE", base+"/marketing", ""), 404, "not_found")
		want(t, s.admin(t, "DELETE", base+"/Bad!", ""), 400, "invalid_argument")
		want(t, s.admin(t, "DELETE", "/admin/v1/accounts/nobody/categories/otp", ""), 404, "not_found")
		if got, err := b.Msgs.Choices(context.Background(), "acme", "sms", "+919876543210"); err != nil || len(got) != 0 {
			t.Fatalf("choices after the category's removal: %v, %v", got, err)
		}
		if cats := categoriesOf(t, s.admin(t, "GET", base, "")); len(cats) != 1 || cats["otp"] == nil {
			t.Fatalf("after removal: %v", cats)
		}
		if logs := s.logs.String(); !strings.Contains(logs, "category.delete") {
			t.Errorf("change log %s: want category.delete", logs)
		}
	})
}

func (k kit) testPreferenceEndpoints(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newPreferenceServer(t, b)
		s.create(t, "acme")
		s.create(t, "globex")
		for name, body := range map[string]string{
			"marketing": `{"description":"Offers"}`,
			"news":      `{"description":"Newsletter","opt_in":true}`,
			"otp":       `{"critical":true}`,
		} {
			want(t, s.admin(t, "PUT", "/admin/v1/accounts/acme/categories/"+name, body), 201, "")
		}
		const base = "/admin/v1/accounts/acme/preferences"
		want(t, s.do(t, "POST", base+"/lookup", "", `{"channel":"sms","to":"+919876543210"}`), 401, "unauthenticated")
		want(t, s.do(t, "POST", base, "", `{"channel":"sms","to":"+919876543210","choices":{"news":true}}`), 401, "unauthenticated")

		// Before any choice: what the categories' rules give.
		r := s.admin(t, "POST", base+"/lookup", `{"channel":"sms","to":"+91 98765 43210"}`)
		prefs := categoriesOf(t, r)
		if d := r.data(); d["account"] != "acme" || d["channel"] != "sms" || d["to"] != "+919876543210" || len(prefs) != 3 {
			t.Fatalf("lookup: %s", r.raw)
		}
		for name, w := range map[string][2]bool{"marketing": {true, false}, "news": {false, false}, "otp": {true, false}} {
			if p := prefs[name]; p["allowed"] != w[0] || p["chosen"] != w[1] {
				t.Errorf("lookup %s: %v, want allowed %v chosen %v", name, p, w[0], w[1])
			}
		}

		// Choices, answered as a lookup, kept in canonical form.
		r = s.admin(t, "POST", base, `{"channel":"sms","to":"+91 98765 43210","choices":{"news":true,"marketing":false,"otp":false}}`)
		prefs = categoriesOf(t, r)
		for name, w := range map[string][2]bool{"marketing": {false, true}, "news": {true, true}, "otp": {true, true}} {
			if p := prefs[name]; p["allowed"] != w[0] || p["chosen"] != w[1] {
				t.Errorf("set %s: %v, want allowed %v chosen %v", name, p, w[0], w[1])
			}
		}
		got, err := b.Msgs.Choices(context.Background(), "acme", "sms", "+919876543210")
		if err != nil || len(got) != 3 || !got["news"] || got["marketing"] || got["otp"] {
			t.Fatalf("store: %v, %v", got, err)
		}
		prefs = categoriesOf(t, s.admin(t, "POST", base+"/lookup", `{"channel":"sms","to":"+919876543210"}`))
		if prefs["news"]["allowed"] != true || prefs["marketing"]["allowed"] != false {
			t.Errorf("lookup after set: %v", prefs)
		}
		// Another channel's choices are its own.
		prefs = categoriesOf(t, s.admin(t, "POST", base+"/lookup", `{"channel":"chat","to":"+919876543210"}`))
		if prefs["marketing"]["chosen"] != false || prefs["news"]["allowed"] != false {
			t.Errorf("chat lookup: %v", prefs)
		}
		r = s.admin(t, "POST", base, `{"channel":"email","to":" Asha@Example.COM","choices":{"marketing":false}}`)
		if categoriesOf(t, r); r.data()["to"] != "asha@example.com" {
			t.Fatalf("e-mail set: %s", r.raw)
		}
		// A locale, alone or beside choices, answered canonical on every
		// channel of the number; "" forgets it.
		r = s.admin(t, "POST", base, `{"channel":"sms","to":"+919876543210","locale":"hi_in"}`)
		if categoriesOf(t, r); r.data()["locale"] != "hi-IN" {
			t.Fatalf("set a locale: %s", r.raw)
		}
		if r = s.admin(t, "POST", base+"/lookup", `{"channel":"chat","to":"+919876543210"}`); r.data()["locale"] != "hi-IN" {
			t.Errorf("the number's locale on chat: %s", r.raw)
		}
		if tags, err := b.Msgs.Locales(context.Background(), "acme", []string{"+919876543210"}); err != nil || tags["+919876543210"] != "hi-IN" {
			t.Fatalf("store: %v, %v", tags, err)
		}
		r = s.admin(t, "POST", base, `{"channel":"sms","to":"+919876543210","locale":"","choices":{"marketing":true}}`)
		if prefs := categoriesOf(t, r); r.data()["locale"] != "" || prefs["marketing"]["allowed"] != true {
			t.Fatalf("forget the locale beside a choice: %s", r.raw)
		}
		logs := s.logs.String()
		if !strings.Contains(logs, "preference.set") || strings.Contains(logs, "9876543210") || strings.Contains(strings.ToLower(logs), "asha@") ||
			strings.Contains(logs, "hi_in") || strings.Contains(logs, "hi-IN") {
			t.Errorf("change log %s: want preference.set without the recipient or their locale", logs)
		}

		// Inputs are checked, every bad field named, and nothing recorded.
		const to = `"channel":"sms","to":"+919123456789"`
		for _, c := range []struct {
			path, body string
			fields     []string
		}{
			{base + "/lookup", `{"channel":"fax","to":"+919123456789"}`, []string{"channel"}},
			{base + "/lookup", `{"to":"+919123456789"}`, []string{"channel"}},
			{base + "/lookup", `{"channel":"sms"}`, []string{"to"}},
			{base + "/lookup", `{"channel":"sms","to":"98765"}`, []string{"to"}},
			{base + "/lookup", `{` + to + `,"choices":{}}`, []string{"choices"}},
			{base, `{` + to + `}`, []string{"choices"}},
			{base, `{` + to + `,"choices":{}}`, []string{"choices"}},
			{base, `{` + to + `,"choices":{"marketing":true,"promo":false}}`, []string{"choices.promo"}},
			{base, `{` + to + `,"choices":{"marketing":true,"Promo!":false}}`, []string{"choices.Promo!"}},
			{base, `{` + to + `,"choices":{"marketing":"no"}}`, []string{"choices.marketing"}},
			{base, `{"channel":"fax","to":"x","choices":{"marketing":1,"promo":null}}`, []string{"channel", "choices.marketing", "choices.promo"}},
			{base, `{"channel":"fax","to":"x","choices":{"Promo!":false}}`, []string{"channel", "choices.Promo!"}},
			{base, `{` + to + `,"locale":"Hindi"}`, []string{"locale"}},
			{base, `{` + to + `,"locale":"hi","choices":{}}`, []string{"choices"}},
		} {
			r := s.admin(t, "POST", c.path, c.body)
			want(t, r, 400, "invalid_argument")
			for _, f := range c.fields {
				if r.field(f) == "" {
					t.Errorf("POST %s %s: %s names no %s", c.path, c.body, r.raw, f)
				}
			}
		}
		if r := s.admin(t, "POST", base, `{`+to+`,"choices":{"marketing":true,"promo":false}}`); !strings.Contains(r.field("choices.promo"), "must be a category the account defines") {
			t.Errorf("an undefined category: %s", r.raw)
		}
		// globex defines none of acme's categories.
		want(t, s.admin(t, "POST", "/admin/v1/accounts/globex/preferences", `{`+to+`,"choices":{"marketing":true}}`), 400, "invalid_argument")
		for _, acct := range []string{"acme", "globex"} {
			if got, err := b.Msgs.Choices(context.Background(), acct, "sms", "+919123456789"); err != nil || len(got) != 0 {
				t.Fatalf("a refused body recorded %v (%v) for %s", got, err, acct)
			}
			if got, err := b.Msgs.Locales(context.Background(), acct, []string{"+919123456789"}); err != nil || len(got) != 0 {
				t.Fatalf("a refused body recorded the locales %v (%v) for %s", got, err, acct)
			}
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/preferences/lookup", `{"channel":"sms","to":"+919876543210"}`), 404, "not_found")
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/preferences", `{"channel":"sms","to":"+919876543210","choices":{"otp":true}}`), 404, "not_found")
		want(t, s.admin(t, "GET", base, ""), 405, "method_not_allowed")
		want(t, s.admin(t, "GET", base+"/lookup", ""), 405, "method_not_allowed")
	})
}

// Without preferences given to adminapi.New (WithPreferences), the
// endpoints are not routed, whether or not the store keeps them; a nil
// store or recipients is refused.
func (k kit) testPreferenceEndpointsNeedAStore(t *testing.T) {
	b := k.nb(t)
	s := newServer(t, b)
	s.create(t, "acme")
	want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/categories", ""), 404, "not_found")
	want(t, s.admin(t, "PUT", "/admin/v1/accounts/acme/categories/otp", `{}`), 404, "not_found")
	want(t, s.admin(t, "POST", "/admin/v1/accounts/acme/preferences/lookup", `{"channel":"sms","to":"+919876543210"}`), 404, "not_found")
	if _, err := adminapi.New(b.Store, adminKey, adminapi.WithPreferences(nil, notifytest.New(t).Notifier)); err == nil {
		t.Error("WithPreferences(nil, n) was taken")
	}
	if _, err := adminapi.New(b.Store, adminKey, adminapi.WithPreferences(b.Msgs, nil)); err == nil {
		t.Error("WithPreferences(prefs, nil) was taken")
	}
}
