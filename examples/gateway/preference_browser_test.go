package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// prefSecret is the gateway's NOTIFY_PREFERENCES_SECRET in the browser
// test: hex of 32 bytes.
const prefSecret = "6e6f746966792d707265666572656e6365732d7465737420736563726574212a"

// TestPreferencePageInBrowser: an account defines its categories (admin
// API) and makes a link for one recipient (POST /api/v1/preferences/link);
// the recipient opens it in a real browser, sees order checked and
// marketing (opt-in) not, unchecks order on SMS and saves; the next order
// SMS is refused 422 declined, uncharged, while order by chat still goes.
// The same link altered in one character, or made with another secret,
// shows the refusal and no form.
func TestPreferencePageInBrowser(t *testing.T) {
	t.Parallel()
	g := start(t, map[string]string{"NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_PREFERENCES_SECRET": prefSecret,
		"NOTIFY_PREFERENCES_TITLE": "Acme"})
	ctx := browser(t)
	const cats = "/admin/v1/accounts/demo/categories"
	for name, body := range map[string]string{
		"order":     `{"description":"Order updates"}`,
		"marketing": `{"description":"Offers","opt_in":true}`,
		"otp":       `{"description":"Sign-in codes","critical":true}`,
	} {
		if a := g.admin(t, http.MethodPut, cats+"/"+name, body); a.status != 201 {
			t.Fatalf("put %s: %d %s", name, a.status, a.raw)
		}
	}
	r := g.post(t, "/preferences/link", g.key, `{"to":"9876543210","channels":["sms","chat"]}`)
	link, _ := r.body["url"].(string)
	if r.status != 200 || !strings.HasPrefix(link, g.root()+"/preferences?t=") || strings.Contains(link, "9876543210") {
		t.Fatalf("link: %d %s", r.status, r.raw)
	}

	box := func(category, channel string) string { return `input[name="c:` + category + `:` + channel + `"]` }
	checked := func(sel string) bool {
		return step(t, ctx, "read "+sel, chromedp.Evaluate[bool](`document.querySelector('`+sel+`').checked`))
	}
	step(t, ctx, "open the link", chromedp.Steps(
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(box("order", "sms"))),
	))
	if h := step(t, ctx, "read the heading", chromedp.Text(chromedp.CSS("h1"))); h != "Acme" {
		t.Errorf("heading %q", h)
	}
	if !checked(box("order", "sms")) || !checked(box("order", "chat")) || checked(box("marketing", "sms")) {
		t.Fatal("the page does not show order on and marketing (opt-in) off")
	}
	if n := step(t, ctx, "count the fixed boxes", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-category="otp"] input[disabled]').length`)); n != 2 {
		t.Fatalf("the critical category has %d fixed boxes, want 2", n)
	}
	step(t, ctx, "uncheck order on SMS and save", chromedp.Steps(
		chromedp.Click(chromedp.CSS(box("order", "sms"))),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#saved")),
	))
	if checked(box("order", "sms")) || !checked(box("order", "chat")) {
		t.Fatal("after saving, the page does not show order off on SMS and on by chat")
	}

	balance := g.balanceMinor(t)
	if r := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Order 7 shipped","category":"order"}`); r.status != 422 ||
		!strings.Contains(r.raw, `"declined"`) {
		t.Fatalf("an order SMS after the recipient unchecked it: %d %s; want 422 declined", r.status, r.raw)
	}
	if got := g.balanceMinor(t); got != balance {
		t.Fatalf("balance %v after a declined send, want %v", got, balance)
	}
	if r := g.post(t, "/messenger/send", g.key, `{"to":"9876543210","message":"Order 7 shipped","category":"order"}`); r.status != 200 {
		t.Fatalf("an order chat message: %d %s", r.status, r.raw)
	}

	// An altered link: one character of the token changed.
	i := strings.Index(link, "?t=") + 3 + 10
	c := byte('A')
	if link[i] == 'A' {
		c = 'B'
	}
	altered := link[:i] + string(c) + link[i+1:]
	step(t, ctx, "open an altered link", chromedp.Steps(
		chromedp.Navigate(altered),
		chromedp.WaitVisible(chromedp.CSS("#refusal")),
	))
	if n := step(t, ctx, "count the forms", chromedp.Evaluate[int](`document.forms.length`)); n != 0 {
		t.Fatalf("an altered link shows %d forms", n)
	}
	if r := g.send(t, http.MethodGet, altered, nil, ""); r.status != http.StatusForbidden {
		t.Fatalf("an altered link: %d, want 403", r.status)
	}
}
