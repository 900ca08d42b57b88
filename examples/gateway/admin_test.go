package main

import (
	"net/http"
	"strings"
	"testing"
)

const testAdminKey = "admin-key-0123456789-0123456789-abcdef"

// admin sends a request to the admin API of g with the admin key.
func (g *gateway) admin(t *testing.T, method, path, body string) *answer {
	t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + testAdminKey}
	if body != "" {
		hdr["Content-Type"] = "application/json"
	}
	return g.json(t, g.send(t, method, g.root()+path, hdr, body))
}

func adminData(a *answer) map[string]any { d, _ := a.body["data"].(map[string]any); return d }

func TestGatewayAdminNotMountedWithoutKey(t *testing.T) {
	g := start(t, map[string]string{})
	if a := g.admin(t, http.MethodGet, "/admin/v1/accounts", ""); a.status != 404 {
		t.Fatalf("without NOTIFY_ADMIN_KEY: %d %s", a.status, a.raw)
	}
}

func TestGatewayAdminFlow(t *testing.T) {
	t.Parallel()
	adminFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey}))
}

func TestGatewayAdminFlowPostgres(t *testing.T) {
	t.Parallel()
	adminFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_DATABASE_URL": schemaURL(t)}))
}

// adminFlow runs an account's life through the admin API of a running
// gateway, checking each step against the public API.
func adminFlow(t *testing.T, g *gateway) {
	// The admin key is not an API key, and an API key is not the admin key.
	if a := g.curl(t, http.MethodGet, "/balance", map[string]string{"Authorization": testAdminKey}, ""); a.status != 401 {
		t.Fatalf("admin key on the API: %d", a.status)
	}
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(g.base, "/api/v1")+"/admin/v1/accounts", nil)
	req.Header.Set("Authorization", "Bearer "+g.key)
	if resp, err := g.client.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("API key on the admin API: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	a := g.admin(t, http.MethodPost, "/admin/v1/accounts", `{"id":"shop","name":"Shop","opening_balance":"1.00"}`)
	if a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	key := adminData(a)["api_key"].(string)
	if strings.Contains(g.out.text(), key) {
		t.Error("the new API key is in the log")
	}
	for range 2 {
		a = g.admin(t, http.MethodPost, "/admin/v1/accounts/shop/topups", `{"amount":"5.00","reference":"inv-1"}`)
		if a.status != 200 || adminData(a)["balance_minor"] != 600.0 {
			t.Fatalf("top-up: %d %s", a.status, a.raw)
		}
	}
	sms := `{"to":"9876543210","message":"Hello from the shop"}`
	if r := g.post(t, "/sms", key, sms); r.status != 200 || r.body["balance_minor"] != 575.0 {
		t.Fatalf("send with the new account: %d %s", r.status, r.raw)
	}
	a = g.admin(t, http.MethodGet, "/admin/v1/accounts/shop/ledger", "")
	entries, _ := adminData(a)["entries"].([]any)
	if a.status != 200 || len(entries) != 2 || entries[0].(map[string]any)["ref"] != "topup:inv-1" ||
		entries[1].(map[string]any)["kind"] != "debit" {
		t.Fatalf("ledger: %d %s", a.status, a.raw)
	}
	a = g.admin(t, http.MethodGet, "/admin/v1/accounts/shop/messages", "")
	msgs, _ := adminData(a)["messages"].([]any)
	if a.status != 200 || len(msgs) != 1 || msgs[0].(map[string]any)["channel"] != "sms" {
		t.Fatalf("messages: %d %s", a.status, a.raw)
	}
	// Disabled: the account's sends are refused.
	if a = g.admin(t, http.MethodPost, "/admin/v1/accounts/shop/disable", ""); a.status != 200 {
		t.Fatalf("disable: %d %s", a.status, a.raw)
	}
	if r := g.post(t, "/sms", key, sms); r.status != 403 {
		t.Fatalf("send while disabled: %d %s", r.status, r.raw)
	}
	if a = g.admin(t, http.MethodPost, "/admin/v1/accounts/shop/enable", ""); a.status != 200 {
		t.Fatalf("enable: %d %s", a.status, a.raw)
	}
	// Rotated: the old key is refused at once, the new one works.
	a = g.admin(t, http.MethodPost, "/admin/v1/accounts/shop/rotate-key", "")
	fresh, _ := adminData(a)["api_key"].(string)
	if a.status != 200 || fresh == "" {
		t.Fatalf("rotate: %d %s", a.status, a.raw)
	}
	if r := g.post(t, "/sms", key, sms); r.status != 401 {
		t.Fatalf("send with the old key: %d %s", r.status, r.raw)
	}
	if r := g.post(t, "/sms", fresh, sms); r.status != 200 {
		t.Fatalf("send with the new key: %d %s", r.status, r.raw)
	}
	// The changes are logged with their request IDs.
	for _, action := range []string{"account.create", "wallet.topup", "account.disable", "account.rotate_key"} {
		if !strings.Contains(g.out.text(), action) {
			t.Errorf("no log line for %s", action)
		}
	}
	if strings.Contains(g.out.text(), fresh) || strings.Contains(g.out.text(), testAdminKey) {
		t.Error("a key is in the log")
	}
}
