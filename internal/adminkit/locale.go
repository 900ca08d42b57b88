package adminkit

import (
	"context"
	"strings"
	"testing"
)

// testAccountLocale: an account's default locale is taken on create and
// by PUT /accounts/{id}/locale in canonical form, kept by the store,
// answered, logged, and cleared by "", and a tag that is no BCP 47 tag is
// 400 naming locale, with nothing changed.
func (k kit) testAccountLocale(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		key := s.create(t, "acme")
		stored := func() string {
			t.Helper()
			a, err := b.Keys.AccountByKey(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			return a.Locale
		}
		r := s.admin(t, "GET", "/admin/v1/accounts/acme", "")
		if _, ok := r.data()["locale"]; ok || stored() != "" {
			t.Fatalf("a new account's locale: %v, stored %q; want none", r.data()["locale"], stored())
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/locale", `{"locale":"hi_in"}`)
		want(t, r, 200, "")
		if r.data()["locale"] != "hi-IN" || stored() != "hi-IN" {
			t.Fatalf("after PUT: %v, stored %q; want hi-IN", r.data()["locale"], stored())
		}
		if !strings.Contains(s.logs.String(), `"action":"account.locale"`) {
			t.Errorf("log: %s", s.logs.String())
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/locale", `{"locale":"Hindi please"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("locale") == "" || stored() != "hi-IN" {
			t.Fatalf("a bad tag: %s, stored %q", r.raw, stored())
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/locale", `{"locale":""}`)
		want(t, r, 200, "")
		if stored() != "" {
			t.Fatalf("cleared: stored %q", stored())
		}
		r = s.admin(t, "POST", "/admin/v1/accounts", `{"id":"shop","locale":"en-in"}`)
		want(t, r, 201, "")
		if r.data()["locale"] != "en-IN" {
			t.Fatalf("created with a locale: %s", r.raw)
		}
		r = s.admin(t, "POST", "/admin/v1/accounts", `{"id":"shop2","locale":"english"}`)
		want(t, r, 400, "invalid_argument")
	})
}

// testDLTSlug: a DLT registration names the template whose variant it
// approves (slug), kept and answered; a slug that is none is 400 naming
// it.
func (k kit) testDLTSlug(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		r := s.admin(t, "PUT", "/admin/v1/accounts/acme/dlt-templates/1107000000000000002",
			`{"entity_id":"1101","content":"ऑर्डर {#var#} भेज दिया गया है","slug":"shipped"}`)
		want(t, r, 201, "")
		if !strings.Contains(r.raw, `"slug":"shipped"`) {
			t.Fatalf("the slug is not answered: %s", r.raw)
		}
		r = s.admin(t, "GET", "/admin/v1/accounts/acme/dlt-templates", "")
		if !strings.Contains(r.raw, `"slug":"shipped"`) {
			t.Fatalf("the slug is not kept: %s", r.raw)
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/dlt-templates/1107000000000000003", `{"content":"x {#var#}","slug":"Shipped!"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("slug") == "" {
			t.Fatalf("a bad slug: %s", r.raw)
		}
	})
}
