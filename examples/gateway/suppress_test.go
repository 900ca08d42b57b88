package main

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify/provider/smtp/smtptest"
)

func TestGatewaySuppression(t *testing.T) {
	suppressionFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey}))
}

func TestGatewaySuppressionPostgres(t *testing.T) {
	t.Parallel()
	suppressionFlow(t, start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_DATABASE_URL": schemaURL(t)}))
}

// suppressionFlow manages an account's suppression list through the admin
// API of a running gateway, and checks that the public API then refuses
// a campaign e-mail to the address (422, nothing charged) while an OTP
// e-mail to it still goes.
func suppressionFlow(t *testing.T, g *gateway) {
	a := g.admin(t, http.MethodPost, "/admin/v1/accounts", `{"id":"shop","name":"Shop","opening_balance":"5.00"}`)
	if a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	key := adminData(a)["api_key"].(string)
	const base = "/admin/v1/accounts/shop/suppressions"
	entry := `{"channel":"email","to":"Asha@Example.com","reason":"unsubscribed"}`

	// Without the admin key, or with the account's API key: refused.
	for _, auth := range []string{"", "Bearer " + key, "Bearer wrong-key"} {
		hdr := map[string]string{"Content-Type": "application/json"}
		if auth != "" {
			hdr["Authorization"] = auth
		}
		if r := g.send(t, http.MethodPost, g.root()+base, hdr, entry); r.status != 401 {
			t.Fatalf("add with auth %q: %d %s", auth, r.status, r.raw)
		}
		if r := g.send(t, http.MethodGet, g.root()+base, hdr, ""); r.status != 401 {
			t.Fatalf("list with auth %q: %d %s", auth, r.status, r.raw)
		}
	}
	if a := g.admin(t, http.MethodGet, base, ""); a.status != 200 || len(adminData(a)["suppressions"].([]any)) != 0 {
		t.Fatalf("list before any add: %d %s", a.status, a.raw)
	}

	if a := g.admin(t, http.MethodPost, base, entry); a.status != 200 || adminData(a)["to"] != "asha@example.com" {
		t.Fatalf("add: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, http.MethodPost, base, `{"channel":"email","to":"asha@example.com","reason":"sometimes"}`); a.status != 400 {
		t.Fatalf("add with a bad reason: %d %s", a.status, a.raw)
	}
	a = g.admin(t, http.MethodGet, base+"?channel=email", "")
	list, _ := adminData(a)["suppressions"].([]any)
	if a.status != 200 || len(list) != 1 || list[0].(map[string]any)["reason"] != "unsubscribed" {
		t.Fatalf("list: %d %s", a.status, a.raw)
	}

	balance := func() float64 {
		t.Helper()
		r := g.curl(t, http.MethodGet, "/balance", map[string]string{"Authorization": key}, "")
		if r.status != 200 {
			t.Fatalf("balance: %d %s", r.status, r.raw)
		}
		return r.body["data"].(map[string]any)["balance_minor"].(float64)
	}
	before := balance()
	campaign := `{"to":"asha@example.com","subject":"Sale","message":"<p>Half price</p>","purpose":"campaign"}`
	r := g.post(t, "/email/send", key, campaign)
	if r.status != 422 || !strings.Contains(r.raw, `"suppressed"`) || strings.Contains(strings.ToLower(r.raw), "asha@") {
		t.Fatalf("campaign to an unsubscribed address: %d %s; want 422 suppressed, without the address", r.status, r.raw)
	}
	if got := balance(); got != before {
		t.Fatalf("balance %v after a suppressed send; want %v", got, before)
	}
	otp := `{"to":"asha@example.com","subject":"Your code","message":"Your code is 604218","purpose":"otp"}`
	if r := g.post(t, "/email/send", key, otp); r.status != 200 {
		t.Fatalf("OTP e-mail to an unsubscribed address: %d %s", r.status, r.raw)
	}
	if got := balance(); got >= before {
		t.Fatalf("balance %v after the OTP e-mail; want less than %v", got, before)
	}

	// Removed, the campaign goes again.
	if a := g.admin(t, http.MethodPost, base+"/remove", `{"channel":"email","to":"asha@example.com"}`); a.status != 200 {
		t.Fatalf("remove: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, http.MethodPost, base+"/remove", `{"channel":"email","to":"asha@example.com"}`); a.status != 404 {
		t.Fatalf("second remove: %d %s", a.status, a.raw)
	}
	if r := g.post(t, "/email/send", key, campaign); r.status != 200 {
		t.Fatalf("campaign after removal: %d %s", r.status, r.raw)
	}
}

// The unsubscribe link of a campaign e-mail really sent through a
// loopback SMTP server: a GET shows a page and records nothing, the POST
// of RFC 8058's one-click records the address, and the next campaign
// e-mail to it is refused (422) with nothing charged.
func TestGatewayUnsubscribeLink(t *testing.T) {
	srv, err := smtptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	smtpURL := "smtp://" + net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)) +
		"?from=news@shop.example&unsubscribe=" + url.QueryEscape("https://shop.example/unsubscribe/{token}")
	g := start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_SMTP_URL": smtpURL,
		"NOTIFY_UNSUBSCRIBE_SECRET": strings.Repeat("ab", 32), "NOTIFY_UNSUBSCRIBE_ACCOUNT": "shop"})
	a := g.admin(t, http.MethodPost, "/admin/v1/accounts", `{"id":"shop","name":"Shop","opening_balance":"5.00"}`)
	if a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	key := adminData(a)["api_key"].(string)
	campaign := `{"to":"ravi@example.com","subject":"Sale","message":"<p>Half price</p>","purpose":"campaign"}`
	if r := g.post(t, "/email/send", key, campaign); r.status != 200 {
		t.Fatalf("first campaign: %d %s", r.status, r.raw)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages at the SMTP server; want 1", len(msgs))
	}
	lu := msgs[0].Header.Get("List-Unsubscribe")
	const prefix = "<https://shop.example/unsubscribe/"
	i := strings.Index(lu, prefix)
	j := strings.Index(lu[max(i, 0):], ">")
	if i < 0 || j < 0 {
		t.Fatalf("List-Unsubscribe %q has no link", lu)
	}
	link := g.root() + "/unsubscribe/" + lu[i+len(prefix):i+j]

	if r := g.send(t, http.MethodGet, link, nil, ""); r.status != 200 || !strings.Contains(r.raw, `method="post"`) || strings.Contains(r.raw, "ravi@") {
		t.Fatalf("GET link: %d %s", r.status, r.raw)
	}
	if a := g.admin(t, http.MethodGet, "/admin/v1/accounts/shop/suppressions", ""); len(adminData(a)["suppressions"].([]any)) != 0 {
		t.Fatalf("a GET recorded: %s", a.raw)
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	// The real token with one character changed.
	tok := lu[i+len(prefix) : i+j]
	flip := "A"
	if tok[10] == 'A' {
		flip = "B"
	}
	if r := g.send(t, http.MethodPost, g.root()+"/unsubscribe/"+tok[:10]+flip+tok[11:], form, "List-Unsubscribe=One-Click"); r.status != 400 {
		t.Fatalf("POST with a forged token: %d %s", r.status, r.raw)
	}
	if r := g.send(t, http.MethodPost, link, form, "List-Unsubscribe=One-Click"); r.status != 200 {
		t.Fatalf("one-click POST: %d %s", r.status, r.raw)
	}
	a = g.admin(t, http.MethodGet, "/admin/v1/accounts/shop/suppressions", "")
	list, _ := adminData(a)["suppressions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["to"] != "ravi@example.com" || list[0].(map[string]any)["reason"] != "unsubscribed" {
		t.Fatalf("after one-click: %s", a.raw)
	}
	if r := g.post(t, "/email/send", key, campaign); r.status != 422 {
		t.Fatalf("campaign after unsubscribing: %d %s", r.status, r.raw)
	}
	if n := srv.Received(); n != 1 {
		t.Fatalf("the SMTP server received %d messages; want 1", n)
	}
}
