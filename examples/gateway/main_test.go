package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// lines is the gateway's stdout as seen by a test: every line is kept, and
// handed to waitFor as it arrives.
type lines struct {
	mu      sync.Mutex
	partial string
	all     []string
	ch      chan string
}

func newLines() *lines { return &lines{ch: make(chan string, 4096)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial += string(p)
	for {
		i := strings.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := l.partial[:i]
		l.partial = l.partial[i+1:]
		l.all = append(l.all, line)
		select {
		case l.ch <- line:
		default: // nobody waits for it; it is still in all
		}
	}
	return len(p), nil
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// waitFor returns the first line, from now on, that contains s.
func (l *lines) waitFor(t testing.TB, s string) string {
	t.Helper()
	return l.waitForWithin(t, s, 20*time.Second)
}

// waitForWithin is waitFor giving up after d.
func (l *lines) waitForWithin(t testing.TB, s string, d time.Duration) string {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case line := <-l.ch:
			if strings.Contains(line, s) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line with %q in:\n%s", s, l.text())
		}
	}
}

// staticDNS resolves every host to a public address.
type staticDNS struct{}

func (staticDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// gateway is a running examples/gateway.
type gateway struct {
	base   string // http://host:port/api/v1
	key    string
	out    *lines
	stop   context.CancelFunc
	done   chan error
	client *http.Client
}

// start runs the gateway with env (NOTIFY_ADDR defaults to a free port)
// and reads its address and key from the banner.
func start(t *testing.T, env map[string]string) *gateway {
	t.Helper()
	return startWith(t, env, deps{resolver: staticDNS{}})
}

// startWith is start with the dependencies given.
func startWith(t *testing.T, env map[string]string, d deps) *gateway {
	t.Helper()
	if _, ok := env["NOTIFY_ADDR"]; !ok {
		env["NOTIFY_ADDR"] = "127.0.0.1:0"
	}
	g := &gateway{out: newLines(), done: make(chan error, 1), client: &http.Client{Timeout: 20 * time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	go func() {
		g.done <- runWith(ctx, func(k string) string { return env[k] }, g.out, d)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-g.done:
		case <-time.After(20 * time.Second):
			t.Error("the gateway did not stop")
		}
	})
	line := g.out.waitFor(t, "listening on ")
	g.base = line[strings.Index(line, "http://"):]
	line = g.out.waitFor(t, "API key: ")
	g.key = strings.Fields(strings.TrimPrefix(line, "API key: "))[0]
	g.out.waitFor(t, "try: curl")
	return g
}

// shutdown stops the gateway as a signal would and waits for run to
// return nil; start's cleanup then finds it stopped.
func (g *gateway) shutdown(t *testing.T) {
	t.Helper()
	g.stop()
	select {
	case err := <-g.done:
		g.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway did not stop")
	}
}

type answer struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// root is the gateway's root URL: the API's base URL without BasePath.
func (g *gateway) root() string { return strings.TrimSuffix(g.base, httpapi.BasePath) }

// send sends one request the way curl would (method, URL, headers and a
// raw body) and returns the answer, its body parsed when it is JSON.
func (g *gateway) send(t *testing.T, method, url string, hdr map[string]string, body string) *answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// curl is send to a path of the API, whose answers are all JSON.
func (g *gateway) curl(t *testing.T, method, path string, hdr map[string]string, body string) *answer {
	t.Helper()
	return g.json(t, g.send(t, method, g.base+path, hdr, body))
}

// json fails the test unless a's body is a JSON object.
func (g *gateway) json(t *testing.T, a *answer) *answer {
	t.Helper()
	if a.body == nil {
		t.Fatalf("not a JSON object: %d %s", a.status, a.raw)
	}
	return a
}

func (g *gateway) post(t *testing.T, path, auth, body string) *answer {
	t.Helper()
	return g.curl(t, http.MethodPost, path, map[string]string{"Authorization": auth, "Content-Type": "application/json"}, body)
}

func (g *gateway) balanceMinor(t *testing.T) int64 {
	t.Helper()
	a := g.curl(t, http.MethodGet, "/balance", map[string]string{"Authorization": g.key}, "")
	if a.status != 200 {
		t.Fatalf("balance: %d %s", a.status, a.raw)
	}
	return int64(a.body["data"].(map[string]any)["balance_minor"].(float64))
}

func errCode(a *answer) string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestGatewayEndpoints(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_BALANCE": "50"})
	bare, bearer := g.key, "Bearer "+g.key

	// The balance, in both auth forms.
	for _, auth := range []string{bare, bearer, "bearer " + g.key} {
		a := g.curl(t, http.MethodGet, "/balance", map[string]string{"Authorization": auth}, "")
		want := `{"success":true,"data":{"account":"demo","name":"Demo account","balance":"50.00","balance_minor":5000,"currency":{"code":"INR","symbol":"₹","exponent":2}}}`
		if a.status != 200 || strings.TrimSpace(a.raw) != want {
			t.Fatalf("balance with %q: %d %s", strings.Replace(auth, g.key, "<key>", 1), a.status, a.raw)
		}
	}

	type send struct {
		name, path, auth, body string
		channel                string
		cost                   int64
	}
	order := `"variables":{"NAME":"Asha","ORDER_ID":"4711","AMOUNT":"₹499","DELIVERY_DATE":"12/08/2025","LINK":"https://shop.example/o/4711"}`
	sends := []send{
		{"sms", "/sms", bearer, `{"to":"9876543210","message":"Hello from notify"}`, "sms", 25},
		{"sms aliases", "/sms/send", bare, `{"numbers":"+91 98765 43210","variables_values":"Order 4711 shipped","rout":"sms","website":"shop.example","sender_id":"ACMEIN"}`, "sms", 25},
		{"sms otp route, numeric", "/sms", bare, `{"to":9876543210,"message":482915,"route":"otp"}`, "sms", 20},
		{"sms template", "/sms", bearer, `{"to":"9876543210","template_slug":"order-confirmed",` + order + `}`, "sms", 50},
		{"sms dlt", "/sms", bare, `{"to":"9876543210","route":"dlt","sender_id":"ACMEIN","dlt_template_id":1107161234567890123,"dlt_entity_id":"1201161234567890123","message":"Dear Asha, your order 4711 has shipped."}`, "sms", 18},
		{"dual otp", "/send-otp", bearer, `{"to":"9876543210","otp":"482915","brand_name":"Acme","domain":"shop.example"}`, "otp", 55},
		{"dual otp brand alias", "/send-otp", bare, `{"to":"9876543210","otp":739104,"brand":"Acme"}`, "otp", 55},
		{"chat otp (a)", "/messenger/send", bearer, `{"to":"9876543210","otp":"482915","action":"login","brand":"Acme"}`, "chat", 35},
		{"chat template (b)", "/messenger/send-otp", bare, `{"to":"9876543210","template_slug":"order-confirmed",` + order + `}`, "chat", 35},
		{"chat media (c)", "/send-messenger", bearer, `{"to":"9876543210","message":"Your invoice","media_url":"https://cdn.example.com/invoice.pdf","file_name":"Invoice.pdf","type":"otp"}`, "chat", 35},
		{"chat cloud template (d)", "/messenger/send", bare, `{"gateway":"cloud","to":"9876543210","template_name":"order_update","language":"en","variables":["Asha","4711"]}`, "chat", 35},
		{"email html", "/email/send", bearer, `{"to":"asha@example.com","subject":"Welcome","message":"<p>Hello <b>Asha</b></p>","from_name":"Acme","reply_to":"help@example.com","purpose":"notification"}`, "email", 8},
		{"email template", "/email/send", bare, `{"to":"asha@example.com","template_slug":"payment-receipt","variables":{"NAME":"Asha","AMOUNT":"₹499.00","PAYMENT_ID":"pay_81","DATE":"10/08/2025","LINK":"https://shop.example/r/81"},"purpose":"invoice"}`, "email", 10},
		{"email otp purpose", "/email/send", bearer, `{"to":"asha@example.com","subject":"Your code","message":"Your code is 604218","purpose":"otp"}`, "email", 10},
		{"chat qr promotional", "/messenger/send", bearer, `{"gateway":"qr","type":"promotional","to":"9876543210","message":"20% off today","website":"shop.example"}`, "chat", 20},
	}
	spent := int64(0)
	for _, s := range sends {
		a := g.post(t, s.path, s.auth, s.body)
		if a.status != 200 || a.body["success"] != true || a.body["channel"] != s.channel {
			t.Fatalf("%s: %d %s", s.name, a.status, a.raw)
		}
		if got := int64(a.body["cost_minor"].(float64)); got != s.cost {
			t.Errorf("%s: cost %d paise, want %d", s.name, got, s.cost)
		}
		spent += s.cost
		if got := int64(a.body["balance_minor"].(float64)); got != 5000-spent {
			t.Errorf("%s: balance %d after, want %d", s.name, got, 5000-spent)
		}
		if id, _ := a.body["message_id"].(string); len(id) != 36 {
			t.Errorf("%s: message_id %q", s.name, id)
		}
		if a.header.Get("X-Request-ID") == "" {
			t.Errorf("%s: no X-Request-ID", s.name)
		}
	}
	if got := g.balanceMinor(t); got != 5000-spent {
		t.Fatalf("balance %d, want %d", got, 5000-spent)
	}
	// The in-process SMTP server received the mail and logged it, with
	// the recipient masked and OTP-like digits hidden.
	if line := g.out.text(); !strings.Contains(line, `msg="smtp message received"`) || !strings.Contains(line, `to=a***@example.com`) ||
		!strings.Contains(line, `subject="Payment received: ₹499.00 (ID pay_81)"`) {
		t.Errorf("mail not logged as expected:\n%s", line)
	}

	// Failures: the documented status and code, and no charge.
	fails := []struct {
		name, method, path string
		hdr                map[string]string
		body               string
		status             int
		code               string
	}{
		{"no key", "POST", "/sms", map[string]string{"Content-Type": "application/json"}, `{"to":"9876543210","message":"x"}`, 401, "unauthenticated"},
		{"wrong key", "POST", "/sms", map[string]string{"Authorization": "Bearer nk_wrong", "Content-Type": "application/json"}, `{"to":"9876543210","message":"x"}`, 401, "unauthenticated"},
		{"alias conflict", "POST", "/sms", map[string]string{"Authorization": bare, "Content-Type": "application/json"}, `{"to":"9876543210","numbers":"9123456789","message":"x"}`, 400, "invalid_argument"},
		{"bad number", "POST", "/messenger/send", map[string]string{"Authorization": bare, "Content-Type": "application/json"}, `{"to":"12345","message":"x"}`, 400, "invalid_argument"},
		{"form body", "POST", "/sms", map[string]string{"Authorization": bare, "Content-Type": "application/x-www-form-urlencoded"}, `to=9876543210&message=x`, 415, "unsupported_media_type"},
		{"wrong method", "GET", "/send-otp", map[string]string{"Authorization": bare}, ``, 405, "method_not_allowed"},
		{"unknown path", "POST", "/whatsapp/send", map[string]string{"Authorization": bare, "Content-Type": "application/json"}, `{}`, 404, "not_found"},
	}
	before := g.balanceMinor(t)
	for _, f := range fails {
		a := g.curl(t, f.method, f.path, f.hdr, f.body)
		if a.status != f.status || errCode(a) != f.code || a.body["success"] != false {
			t.Errorf("%s: %d %s, want %d %s", f.name, a.status, a.raw, f.status, f.code)
		}
	}
	if got := g.balanceMinor(t); got != before {
		t.Errorf("failures moved the balance by %d", before-got)
	}

	// Secrets stay out of the output: the OTPs sent and the wrong key.
	out := g.out.text()
	for _, s := range []string{"482915", "739104", "604218", "nk_wrong"} {
		if strings.Contains(out, s) {
			t.Errorf("stdout contains %q", s)
		}
	}
}

func TestGatewayInsufficientFunds(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_BALANCE": "0.10"})
	a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"x"}`)
	if a.status != 402 || errCode(a) != "insufficient_funds" {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	// A QR chat message costs ₹0.10 and still fits.
	if a := g.post(t, "/messenger/send", g.key, `{"gateway":"qr","to":"9876543210","message":"x"}`); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != 0 {
		t.Fatalf("balance %d", got)
	}
}

func TestGatewayChosenKeyIsNotPrinted(t *testing.T) {
	const key = "my-own-key-0123456789"
	g := start(t, map[string]string{"NOTIFY_API_KEY": key, "NOTIFY_BALANCE": "₹1,000.00"})
	if g.key != "$NOTIFY_API_KEY" || strings.Contains(g.out.text(), key) {
		t.Fatalf("banner shows the chosen key:\n%s", g.out.text())
	}
	g.key = key
	if got := g.balanceMinor(t); got != 100000 {
		t.Fatalf("balance %d", got)
	}
}

func TestGatewayConfigErrors(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad balance":                           {"NOTIFY_BALANCE": "1e3"},
		"negative balance":                      {"NOTIFY_BALANCE": "-5"},
		"too precise":                           {"NOTIFY_BALANCE": "1.005"},
		"bad addr":                              {"NOTIFY_ADDR": "8080"},
		"short key":                             {"NOTIFY_API_KEY": "abc"},
		"sms url only":                          {"NOTIFY_SMS_URL": "https://sms.example"},
		"cloud token only":                      {"NOTIFY_CLOUD_TOKEN": "t"},
		"qr key only":                           {"NOTIFY_QR_KEY": "k"},
		"smtp url":                              {"NOTIFY_SMTP_URL": "http://user:secretpw@mail.example"},
		"app secret without the cloud gateway":  {"NOTIFY_CLOUD_APP_SECRET": "secretpw"},
		"qr webhook secret without the gateway": {"NOTIFY_QR_WEBHOOK_SECRET": "secretpw"},
		"sms webhook token without the vendor":  {"NOTIFY_SMS_WEBHOOK_TOKEN": "secretpw-secretpw"},
		"short sms webhook token": {"NOTIFY_SMS_URL": "https://sms.example", "NOTIFY_SMS_KEY": "k",
			"NOTIFY_SMS_WEBHOOK_TOKEN": "secretpw"},
		"verify token without the app secret": {"NOTIFY_CLOUD_TOKEN": "t", "NOTIFY_CLOUD_PHONE_ID": "1",
			"NOTIFY_CLOUD_VERIFY_TOKEN": "secretpw"},
	} {
		err := runWith(context.Background(), func(k string) string { return env[k] }, io.Discard, deps{})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		for k := range env {
			if !strings.Contains(err.Error(), k) && !strings.Contains(err.Error(), "NOTIFY_") {
				t.Errorf("%s: %q does not name the variable", name, err)
			}
		}
		if strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s: %q repeats the password", name, err)
		}
	}
}

// TestGatewayGracefulShutdown: an SMS that is at the vendor when the
// gateway is told to stop still completes, is charged once and answered;
// afterwards the gateway accepts nothing and run returns nil.
func TestGatewayGracefulShutdown(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(vendor.Close)
	target, _ := url.Parse(vendor.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)

	g := start(t, map[string]string{"NOTIFY_SMS_URL": gate.URL, "NOTIFY_SMS_KEY": "vendor-key-1", "NOTIFY_BALANCE": "10"})
	addr := strings.TrimSuffix(g.base, "/api/v1")
	answered := make(chan *answer, 1)
	go func() {
		// Not g.curl: t.Fatal must not be called from this goroutine.
		req, _ := http.NewRequest(http.MethodPost, g.base+"/sms", strings.NewReader(`{"to":"9876543210","message":"in flight"}`))
		req.Header.Set("Authorization", g.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := g.client.Do(req)
		if err != nil {
			answered <- &answer{raw: err.Error()}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		a := &answer{status: resp.StatusCode, raw: string(raw)}
		_ = json.Unmarshal(raw, &a.body)
		answered <- a
	}()
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the SMS never reached the vendor")
	}
	g.stop()
	g.out.waitFor(t, "listener closed")
	// The listener is closed before Shutdown waits: new requests fail.
	if resp, err := http.Post(addr+"/api/v1/balance", "application/json", nil); err == nil {
		resp.Body.Close()
		t.Errorf("a request after the signal got %d", resp.StatusCode)
	}
	close(release)
	a := <-answered
	if a.status != 200 || a.body["cost_minor"] != 25.0 || a.body["balance_minor"] != 975.0 {
		t.Fatalf("in-flight send: %d %s", a.status, a.raw)
	}
	select {
	case err := <-g.done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		g.done <- nil // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return")
	}
	if vendor.Accepted() != 1 {
		t.Errorf("vendor accepted %d", vendor.Accepted())
	}
}

// TestGatewayOTPLimit: NOTIFY_OTP_LIMIT sets the OTP throttle, counting
// every way a code is sent; "off" removes it.
func TestGatewayOTPLimit(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_OTP_LIMIT": "2/1h"})
	for _, s := range []struct{ path, body string }{
		{"/send-otp", `{"to":"9876543210","otp":"482913"}`},
		{"/sms", `{"to":"9876543210","template_slug":"standard-otp","variables":{"OTP":"482913"}}`},
	} {
		if a := g.post(t, s.path, g.key, s.body); a.status != 200 {
			t.Fatalf("%s: %d %s", s.path, a.status, a.raw)
		}
	}
	a := g.post(t, "/messenger/send", g.key, `{"to":"9876543210","otp":"482913"}`)
	if a.status != 429 || errCode(a) != "rate_limited" || a.header.Get("Retry-After") == "" {
		t.Fatalf("third OTP: %d %s", a.status, a.raw)
	}

	off := start(t, map[string]string{"NOTIFY_OTP_LIMIT": "off"})
	for i := range 7 {
		if a := off.post(t, "/send-otp", off.key, `{"to":"9876543210","otp":"482913"}`); a.status != 200 {
			t.Fatalf("OTP %d without a throttle: %d %s", i, a.status, a.raw)
		}
	}
}

// TestGatewayDevMailTakesInternationalAddresses: the in-process SMTP
// server offers SMTPUTF8, as most relays do, so a local part beyond ASCII
// is sent in development, and an internationalised domain arrives in its
// ASCII form. A relay without SMTPUTF8 gets nothing: the answer names the
// field and the rule, and the charge is refunded.
func TestGatewayDevMailTakesInternationalAddresses(t *testing.T) {
	g := start(t, map[string]string{})
	a := g.post(t, "/email/send", g.key, `{"to":"रमेश@उदाहरण.भारत","subject":"Hi","message":"Hello"}`)
	if a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	// The SMTP log line is written when the server has the message, which
	// is before the provider's send returns.
	if out := g.out.text(); !strings.Contains(out, `msg="smtp message received"`) || !strings.Contains(out, "xn--") {
		t.Fatalf("the dev server's log:\n%s", out)
	}

	relay, err := smtptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(relay.Close)
	g = start(t, map[string]string{"NOTIFY_SMTP_URL": "smtp://" + relay.Addr + "?from=notify@shop.example"})
	before := g.balanceMinor(t)
	a = g.post(t, "/email/send", g.key, `{"to":"रमेश@example.in","subject":"Hi","message":"Hello"}`)
	fields, _ := a.body["error"].(map[string]any)["fields"].(map[string]any)
	if a.status != 400 || fields["to"] == nil || !strings.Contains(a.raw, "SMTPUTF8") || strings.Contains(a.raw, relay.Addr) {
		t.Fatalf("a relay without SMTPUTF8: %d %s", a.status, a.raw)
	}
	if after := g.balanceMinor(t); after != before || len(relay.Messages()) != 0 {
		t.Fatalf("balance %d, was %d; the relay got %d messages", after, before, len(relay.Messages()))
	}
}
