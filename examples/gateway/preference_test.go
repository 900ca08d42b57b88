package main

import (
	"net/http"
	"strings"
	"testing"
)

func TestGatewayPreferences(t *testing.T) {
	preferenceFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey}))
}

func TestGatewayPreferencesPostgres(t *testing.T) {
	t.Parallel()
	preferenceFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_DATABASE_URL": schemaURL(t)}))
}

// preferenceFlow defines an account's categories through the admin API
// of a running gateway, records a recipient's "no" to marketing SMS
// through the public API (as an app's settings screen would), and checks
// that a marketing SMS to them is then refused (422 declined, nothing
// charged) while a critical one-time code still goes; the admin API
// reads and changes the same choice, and no log line names the
// recipient.
func preferenceFlow(t *testing.T, g *gateway) {
	a := g.admin(t, http.MethodPost, "/admin/v1/accounts", `{"id":"shop","name":"Shop","opening_balance":"5.00"}`)
	if a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	key := adminData(a)["api_key"].(string)
	const cats = "/admin/v1/accounts/shop/categories"
	if a := g.admin(t, http.MethodPut, cats+"/marketing", `{"description":"Offers and sales"}`); a.status != 201 {
		t.Fatalf("put marketing: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, http.MethodPut, cats+"/otp", `{"description":"Sign-in codes","critical":true}`); a.status != 201 {
		t.Fatalf("put otp: %d %s", a.status, a.raw)
	}
	// The account's API key is no admin key.
	if r := g.send(t, http.MethodPut, g.root()+cats+"/news", map[string]string{"Authorization": "Bearer " + key,
		"Content-Type": "application/json"}, `{}`); r.status != 401 {
		t.Fatalf("put with the API key: %d %s", r.status, r.raw)
	}

	auth := map[string]string{"Authorization": key}
	r := g.curl(t, http.MethodGet, "/categories", auth, "")
	if list, _ := r.body["categories"].([]any); r.status != 200 || len(list) != 2 || list[0].(map[string]any)["name"] != "marketing" {
		t.Fatalf("categories: %d %s", r.status, r.raw)
	}
	// The demo account defines none of shop's.
	if r := g.curl(t, http.MethodGet, "/categories", map[string]string{"Authorization": g.key}, ""); len(r.body["categories"].([]any)) != 0 {
		t.Fatalf("the demo account's categories: %s", r.raw)
	}

	r = g.post(t, "/preferences", key, `{"channel":"sms","to":"9123456789","choices":{"marketing":false}}`)
	if r.status != 200 || r.body["to"] != "+919123456789" {
		t.Fatalf("set: %d %s", r.status, r.raw)
	}

	balance := func() float64 {
		t.Helper()
		r := g.curl(t, http.MethodGet, "/balance", auth, "")
		if r.status != 200 {
			t.Fatalf("balance: %d %s", r.status, r.raw)
		}
		return r.body["data"].(map[string]any)["balance_minor"].(float64)
	}
	before := balance()
	marketing := `{"to":"9123456789","message":"Half price today","category":"marketing"}`
	r = g.post(t, "/sms", key, marketing)
	if r.status != 422 || !strings.Contains(r.raw, `"declined"`) || strings.Contains(r.raw, "9123456789") {
		t.Fatalf("marketing SMS to a recipient who declined it: %d %s; want 422 declined, without the number", r.status, r.raw)
	}
	if got := balance(); got != before {
		t.Fatalf("balance %v after a declined send; want %v", got, before)
	}
	if r := g.post(t, "/send-otp", key, `{"to":"9123456789","otp":"604218","category":"otp"}`); r.status != 200 {
		t.Fatalf("critical OTP: %d %s", r.status, r.raw)
	}
	if got := balance(); got >= before {
		t.Fatalf("balance %v after the OTP; want less than %v", got, before)
	}

	// The admin API sees the same choice, and changing it there lets the
	// next send through.
	const prefs = "/admin/v1/accounts/shop/preferences"
	a = g.admin(t, http.MethodPost, prefs+"/lookup", `{"channel":"sms","to":"+919123456789"}`)
	list, _ := adminData(a)["categories"].([]any)
	if a.status != 200 || len(list) != 2 || list[0].(map[string]any)["allowed"] != false || list[0].(map[string]any)["chosen"] != true {
		t.Fatalf("admin lookup: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, http.MethodPost, prefs, `{"channel":"sms","to":"+919123456789","choices":{"marketing":true}}`); a.status != 200 {
		t.Fatalf("admin set: %d %s", a.status, a.raw)
	}
	r = g.post(t, "/preferences/lookup", key, `{"channel":"sms","to":"9123456789"}`)
	if list, _ := r.body["categories"].([]any); r.status != 200 || list[0].(map[string]any)["allowed"] != true {
		t.Fatalf("lookup after the admin's change: %d %s", r.status, r.raw)
	}
	if r := g.post(t, "/sms", key, marketing); r.status != 200 {
		t.Fatalf("marketing SMS once allowed: %d %s", r.status, r.raw)
	}

	// A category removed takes its choices; a send naming it is a 400.
	if a := g.admin(t, http.MethodDelete, cats+"/marketing", ""); a.status != 200 {
		t.Fatalf("delete: %d %s", a.status, a.raw)
	}
	if r := g.post(t, "/sms", key, marketing); r.status != 400 || !strings.Contains(r.raw, "category") {
		t.Fatalf("SMS naming a removed category: %d %s", r.status, r.raw)
	}

	// Recipients travel in bodies: no log line names them.
	for _, line := range strings.Split(g.out.text(), "\n") {
		if strings.Contains(line, "9123456789") {
			t.Errorf("a log line names the recipient: %s", line)
		}
	}
}
