package prefpage_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/prefpage"
	"github.com/notifykit/notify/store"
)

var secret = []byte("0123456789abcdef0123456789abcdef-page-secret")

// rig is a Page over a notifytest kit's ledger, served by a real
// http.Server on loopback, its clock settable.
type rig struct {
	kit  *notifytest.Kit
	page *prefpage.Page
	srv  *httptest.Server
	now  time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{kit: notifytest.New(t), now: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	for _, c := range []store.Category{
		{Account: notifytest.AccountID, Name: "order", Description: "Order updates"},
		{Account: notifytest.AccountID, Name: "marketing", Description: "Offers & news", OptIn: true},
		{Account: notifytest.AccountID, Name: "otp", Description: "Sign-in codes", Critical: true},
	} {
		if _, err := r.kit.Ledger.PutCategory(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	page, err := prefpage.New(prefpage.Config{Secret: secret, Preferences: r.kit.Ledger, Recipients: r.kit.Notifier,
		Title: "Acme", Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	r.page = page
	r.srv = httptest.NewServer(page)
	t.Cleanup(r.srv.Close)
	return r
}

// token makes a link for the test number on SMS and chat, good for a day.
func (r *rig) token(t *testing.T) string {
	t.Helper()
	tok, err := r.page.Token(prefpage.Grant{Account: notifytest.AccountID, To: "+919876543210",
		Channels: []notify.Kind{sms.Kind, chat.Kind}, Expires: r.now.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// do sends req and returns the status and body.
func do(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b), res.Header
}

func (r *rig) get(t *testing.T, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"?t="+url.QueryEscape(token), nil)
	return do(t, req)
}

func (r *rig) post(t *testing.T, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, body, _ := do(t, req)
	return status, body
}

// checked lists the boxes a page shows checked, and shown those it lets
// the recipient change.
func boxes(page string) (checked, shown []string) {
	for _, m := range regexp.MustCompile(`name="(c:[^"]+)" value="on"[^>]*?( checked)?>`).FindAllStringSubmatch(page, -1) {
		shown = append(shown, m[1])
		if m[2] != "" {
			checked = append(checked, m[1])
		}
	}
	return checked, shown
}

// The page shows every category with a box per channel, checked where
// the recipient gets it now (opt-out by default, opt-in not), critical
// ones fixed; a POST writes a choice for every box shown and the next
// send obeys it.
func TestPageShowsAndSavesChoices(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tok := r.token(t)
	status, page, h := r.get(t, tok)
	if status != http.StatusOK || h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET: %d, headers %v", status, h)
	}
	checked, shown := boxes(page)
	if strings.Join(shown, " ") != "c:marketing:sms c:marketing:chat c:order:sms c:order:chat" ||
		strings.Join(checked, " ") != "c:order:sms c:order:chat" {
		t.Fatalf("shown %v, checked %v; want marketing and order on both, order checked", shown, checked)
	}
	if !strings.Contains(page, "Offers &amp; news") || !strings.Contains(page, "Always sent") || strings.Contains(page, "9876543210") {
		t.Fatalf("the page lacks a label or the critical note, or shows the number:\n%s", page)
	}

	// Marketing on chat only; order on chat only.
	status, page = r.post(t, url.Values{"t": {tok}, "shown": shown, "c:marketing:chat": {"on"}, "c:order:chat": {"on"}})
	if status != http.StatusOK || !strings.Contains(page, `id="saved"`) {
		t.Fatalf("POST: %d\n%s", status, page)
	}
	if checked, _ := boxes(page); strings.Join(checked, " ") != "c:marketing:chat c:order:chat" {
		t.Fatalf("after saving, checked %v", checked)
	}
	for kind, want := range map[notify.Kind]map[string]bool{
		sms.Kind:  {"marketing": false, "order": false},
		chat.Kind: {"marketing": true, "order": true},
	} {
		got, err := r.kit.Ledger.Choices(ctx, notifytest.AccountID, kind, "+919876543210")
		if err != nil || len(got) != 2 || got["marketing"] != want["marketing"] || got["order"] != want["order"] {
			t.Fatalf("%s choices %v, %v; want %v", kind, got, err, want)
		}
	}
	_, err := r.kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Order 7 shipped", Category: "order"})
	if notify.CodeOf(err) != notify.CodeDeclined {
		t.Fatalf("an order SMS after the recipient unchecked it: %v; want CodeDeclined", err)
	}
	if _, err := r.kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Route: sms.RouteOTP, Message: "4821", Category: "otp"}); err != nil {
		t.Fatalf("a critical SMS: %v", err)
	}
}

// A box the form did not show (a category defined after the page was
// opened) is left alone, and a critical category cannot be declined
// through a forged field.
func TestPageWritesOnlyWhatItShowed(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tok := r.token(t)
	if _, err := r.kit.Ledger.PutCategory(ctx, store.Category{Account: notifytest.AccountID, Name: "news"}); err != nil {
		t.Fatal(err)
	}
	status, _ := r.post(t, url.Values{"t": {tok}, "shown": {"c:order:sms", "c:otp:sms"}})
	if status != http.StatusOK {
		t.Fatal(status)
	}
	got, err := r.kit.Ledger.Choices(ctx, notifytest.AccountID, sms.Kind, "+919876543210")
	if err != nil || len(got) != 1 || got["order"] {
		t.Fatalf("choices %v, %v; want order declined alone", got, err)
	}
}

// A link altered in any place, forged, made with another secret or
// expired is refused and changes nothing.
func TestPageRefusesBadLinks(t *testing.T) {
	r := newRig(t)
	tok := r.token(t)
	other, err := prefpage.New(prefpage.Config{Secret: []byte(strings.Repeat("x", 32)), Preferences: memstore.NewPreferences(),
		Recipients: r.kit.Notifier, Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Token(prefpage.Grant{Account: notifytest.AccountID, To: "+919876543210", Channels: []notify.Kind{sms.Kind},
		Expires: r.now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) string {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for name, bad := range map[string]string{
		"empty": "", "first byte": flip(0), "middle": flip(len(tok) / 2), "last": flip(len(tok) - 1),
		"cut": tok[:len(tok)-4], "another secret": foreign, "padded": tok + "=", "long": strings.Repeat("A", 3000),
	} {
		status, page, _ := r.get(t, bad)
		if status != http.StatusForbidden || !strings.Contains(page, "not valid") || strings.Contains(page, "<form") {
			t.Errorf("%s: %d; want 403 with no form", name, status)
		}
		if status, _ := r.post(t, url.Values{"t": {bad}, "shown": {"c:order:sms"}}); status != http.StatusForbidden {
			t.Errorf("%s POST: %d; want 403", name, status)
		}
	}
	r.now = r.now.Add(24 * time.Hour)
	if status, page, _ := r.get(t, tok); status != http.StatusGone || !strings.Contains(page, "expired") {
		t.Errorf("expired: %d; want 410", status)
	}
	if status, _ := r.post(t, url.Values{"t": {tok}, "shown": {"c:order:sms"}}); status != http.StatusGone {
		t.Errorf("expired POST: %d; want 410", status)
	}
	if got, _ := r.kit.Ledger.Choices(context.Background(), notifytest.AccountID, sms.Kind, "+919876543210"); len(got) != 0 {
		t.Fatalf("a refused link wrote %v", got)
	}
	req, _ := http.NewRequest(http.MethodPut, r.srv.URL, nil)
	if status, _, h := do(t, req); status != http.StatusMethodNotAllowed || h.Get("Allow") == "" {
		t.Errorf("PUT: %d, Allow %q", status, h.Get("Allow"))
	}
}

// Token refuses a grant it cannot keep: no account or channel, a channel
// twice or one that refuses the recipient, an expiry past or too far.
func TestTokenRefusesBadGrants(t *testing.T) {
	r := newRig(t)
	good := prefpage.Grant{Account: notifytest.AccountID, To: "+919876543210", Channels: []notify.Kind{sms.Kind}, Expires: r.now.Add(time.Hour)}
	for name, mod := range map[string]func(*prefpage.Grant){
		"account":     func(g *prefpage.Grant) { g.Account = "" },
		"channel":     func(g *prefpage.Grant) { g.Channels = nil },
		"twice":       func(g *prefpage.Grant) { g.Channels = []notify.Kind{sms.Kind, sms.Kind} },
		"recipient":   func(g *prefpage.Grant) { g.To = "not a number" },
		"unknown":     func(g *prefpage.Grant) { g.Channels = []notify.Kind{"fax"} },
		"expired":     func(g *prefpage.Grant) { g.Expires = r.now },
		"too far out": func(g *prefpage.Grant) { g.Expires = r.now.Add(prefpage.MaxTTL + time.Second) },
	} {
		g := good
		mod(&g)
		if tok, err := r.page.Token(g); err == nil {
			t.Errorf("%s: token %q; want an error", name, tok)
		}
	}
	if _, err := r.page.Token(good); err != nil {
		t.Fatal(err)
	}
	if _, err := prefpage.New(prefpage.Config{Secret: secret[:31], Preferences: r.kit.Ledger, Recipients: r.kit.Notifier}); err == nil {
		t.Error("New with a short secret: no error")
	}
}
