package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// outboxURL is the gateway's outbox page.
func (g *gateway) outboxURL() string { return g.root() + "/outbox" }

// browser returns a headless Chromium for the test, or skips it with
// instructions when none is installed (NOTIFY_REQUIRE_BROWSER=1, set by
// CI, makes that a failure).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("NOTIFY_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path != "" {
			break
		}
		path, _ = exec.LookPath(name)
	}
	if path == "" {
		msg := "no Chromium: install Debian's (apt-get install chromium) or set NOTIFY_CHROMIUM to a Chrome binary to run the outbox's browser test"
		if os.Getenv("NOTIFY_REQUIRE_BROWSER") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		// This machine has no network beyond loopback: keep Chromium from
		// reaching out at all.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first call starts the browser, which lives as long as the
	// context of that call: no timeout on it, only on each step.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// step runs one browser action within a time bound and returns its value.
func step[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// TestOutboxInBrowser opens the outbox in a real browser, then sends an
// SMS, an e-mail, a chat message and an OTP through the API: each shows up
// on the page without a reload, the e-mail's HTML renders in its iframe,
// and codes stay masked until clicked.
func TestOutboxInBrowser(t *testing.T) {
	t.Parallel()
	g := start(t, map[string]string{})
	ctx := browser(t)

	// The page is empty and connected to its event stream; the mark
	// would be gone after a reload.
	step(t, ctx, "open the outbox", chromedp.Steps(
		chromedp.Navigate(g.outboxURL()),
		chromedp.WaitVisible(chromedp.CSS("#live.on")),
	))
	step(t, ctx, "mark the page", chromedp.Evaluate[bool](`window.notReloaded = true`))

	sent := map[string]string{}
	for name, req := range map[string]struct{ path, body string }{
		"sms":   {"/sms", `{"to":"9876543210","message":"Your parcel 4711 is out for delivery"}`},
		"email": {"/email/send", `{"to":"ravi@example.com","subject":"Welcome to Acme","message":"<h1 style=\"color:#123456\">Welcome, Ravi</h1><p>Your account is ready.</p>"}`},
		"chat":  {"/messenger/send", `{"to":"9123456789","template_slug":"order-confirmed","variables":{"NAME":"Asha","ORDER_ID":"4711","AMOUNT":"₹499.00","DELIVERY_DATE":"12/08/2025","LINK":"https://shop.example/o/4711"}}`},
		"otp":   {"/sms", `{"to":"9876543210","route":"otp","message":"482915"}`},
	} {
		a := g.post(t, req.path, g.key, req.body)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", name, a.status, a.raw)
		}
		sent[name] = a.body["message_id"].(string)
	}

	item := func(name string) string { return `li.message[data-id="` + sent[name] + `"]` }
	text := func(sel string) string { return step(t, ctx, "read "+sel, chromedp.Text(chromedp.CSS(sel))) }
	for name := range sent {
		step(t, ctx, "see the "+name+" arrive", chromedp.WaitVisible(chromedp.CSS(item(name))))
	}
	if !step(t, ctx, "check the mark", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
		t.Fatal("the page reloaded to show the new messages")
	}
	if got := text(item("sms") + " .preview"); got != "Your parcel 4711 is out for delivery" {
		t.Errorf("SMS: %q", got)
	}
	if got := text(item("chat") + " .preview"); got != "template order_confirmed" {
		t.Errorf("chat: %q", got)
	}
	if got := text(item("email") + " .preview"); got != "Welcome to Acme" {
		t.Errorf("e-mail: %q", got)
	}
	if got := text(item("otp") + " .preview"); strings.Contains(got, "482915") || !strings.Contains(got, "••••••") {
		t.Fatalf("the code is not masked: %q", got)
	}

	// A click reveals the code.
	step(t, ctx, "click the code", chromedp.Click(chromedp.CSS(item("otp")+" button.code")))
	if got := text(item("otp") + " button.code"); got != "482915" {
		t.Fatalf("revealed %q", got)
	}

	// The e-mail as its recipient sees it: the HTML rendered in the
	// sandboxed frame, its style applied.
	step(t, ctx, "open the e-mail", chromedp.Steps(
		chromedp.Click(chromedp.CSS(item("email")+" a")),
		chromedp.WaitVisible(chromedp.CSS("#mail-frame")),
	))
	step(t, ctx, "wait for the frame", chromedp.Poll[bool](`(() => { const d = document.querySelector('#mail-frame').contentDocument;
		return d !== null && d.querySelector('h1') !== null; })()`, chromedp.WithPollingTimeout(15*time.Second)))
	heading := step(t, ctx, "read the frame", chromedp.Evaluate[string](
		`document.querySelector('#mail-frame').contentDocument.querySelector('h1').textContent`))
	colour := step(t, ctx, "read the style", chromedp.Evaluate[string](`(() => {
		const d = document.querySelector('#mail-frame').contentDocument;
		return d.defaultView.getComputedStyle(d.querySelector('h1')).color; })()`))
	if heading != "Welcome, Ravi" || colour != "rgb(18, 52, 86)" {
		t.Fatalf("the frame shows %q in %q", heading, colour)
	}
	sandbox := step(t, ctx, "read the sandbox", chromedp.AttributeValue(chromedp.CSS("#mail-frame"), "sandbox"))
	if !sandbox.Exists || strings.Contains(sandbox.Value, "allow-scripts") {
		t.Fatalf("mail HTML is not kept from running scripts: sandbox=%+v", sandbox)
	}
	// The received copy: headers as the SMTP server got them.
	headers := step(t, ctx, "read the headers", chromedp.TextContent(chromedp.CSS("table.headers")))
	if !strings.Contains(headers, "Message-ID") || !strings.Contains(headers, sent["email"]) {
		t.Fatalf("headers: %q", headers)
	}
}

// TestOutboxWithRealVendors: real vendors turn the outbox off unless
// NOTIFY_OUTBOX=on, which needs the admin key and then asks for it.
func TestOutboxWithRealVendors(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	defer vendor.Close()
	real := map[string]string{"NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": "vendor-key-1"}

	g := start(t, real)
	if a := g.send(t, http.MethodGet, g.outboxURL(), nil, ""); a.status != http.StatusNotFound {
		t.Fatalf("outbox with real vendors and NOTIFY_OUTBOX unset: %d", a.status)
	}

	key := strings.Repeat("k", 40)
	on := map[string]string{"NOTIFY_OUTBOX": "on", "NOTIFY_ADMIN_KEY": key}
	for k, v := range real {
		on[k] = v
	}
	g = start(t, on)
	for name, c := range map[string]struct {
		hdr  map[string]string
		want int
	}{
		"no key":     {nil, http.StatusUnauthorized},
		"wrong key":  {map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 40)}, http.StatusUnauthorized},
		"API key":    {map[string]string{"Authorization": "Bearer " + g.key}, http.StatusUnauthorized},
		"bearer":     {map[string]string{"Authorization": "Bearer " + key}, http.StatusOK},
		"basic auth": {map[string]string{"Authorization": basic("admin", key)}, http.StatusOK},
	} {
		a := g.send(t, http.MethodGet, g.outboxURL(), c.hdr, "")
		if a.status != c.want {
			t.Errorf("%s: %d, want %d", name, a.status, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: no basic challenge for the browser", name)
		}
	}
	if a := g.send(t, http.MethodGet, g.outboxURL()+"/events", nil, ""); a.status != http.StatusUnauthorized {
		t.Fatalf("event stream without the key: %d", a.status)
	}

	// A verification's live code, sent by the real SMS vendor and by the
	// chat stand-in alike, is on no page the outbox serves.
	id := verifyStart(t, g, `{"to":"9876543210"}`)
	code := smsCode(t, vendor)
	admin := map[string]string{"Authorization": "Bearer " + key}
	list := g.send(t, http.MethodGet, g.outboxURL(), admin, "")
	ids := regexp.MustCompile(`data-id="([^"]+)"`).FindAllStringSubmatch(list.raw, -1)
	if len(ids) < 2 {
		t.Fatalf("the outbox lists %d messages, want the verification's two:\n%s", len(ids), list.raw)
	}
	pages := []string{g.outboxURL(), g.outboxURL() + "/list"}
	for _, m := range ids {
		pages = append(pages, g.outboxURL()+"?id="+m[1], g.outboxURL()+"/mail/"+m[1]+"?reveal=1")
	}
	for _, u := range pages {
		if a := g.send(t, http.MethodGet, u, admin, ""); strings.Contains(a.raw, code) {
			t.Errorf("%s carries the live code", u)
		}
	}
	if c := verifyCheck(t, g, id, code); c.status != 200 {
		t.Fatalf("check: %d %s", c.status, c.raw)
	}
}

// TestOutboxStreamDoesNotHoldShutdown: an open event stream never goes
// idle, so a graceful shutdown would wait out its whole grace for it.
func TestOutboxStreamDoesNotHoldShutdown(t *testing.T) {
	g := start(t, map[string]string{})
	res, err := g.client.Get(g.outboxURL() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("stream: %q %v", line, err)
	}
	began := time.Now()
	g.shutdown(t)
	if d := time.Since(began); d > shutdownGrace/2 {
		t.Fatalf("shutdown took %s with a stream open", d)
	}
}

func basic(user, pass string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}
