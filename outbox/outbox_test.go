package outbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/record"
)

// devProviders are the providers of the tests' messages: development
// ones, whose codes the page may reveal.
var devProviders = outbox.WithDevelopmentProviders("sms-log", "chat-log", "smtp", "capture")

// newOutbox returns an Outbox that takes the tests' providers for
// development ones, with opts.
func newOutbox(t *testing.T, opts ...outbox.Option) *outbox.Outbox {
	t.Helper()
	o, err := outbox.New(append([]outbox.Option{devProviders}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

var acct = &notify.Account{ID: "acme"}

func smsEnvelope(id, to, text, otp string) *notify.Envelope {
	return &notify.Envelope{ID: id, Kind: sms.Kind, Account: acct, To: to, Provider: "sms-log",
		Price: notify.Money{Minor: 25, Currency: record.INR()}, CarriesOTP: otp != "",
		Content: &sms.Message{Route: sms.RouteSMS, Text: text, OTP: otp, SenderID: "NOTIFY",
			Encoding: sms.GSM7, Segments: 1}}
}

func accept(o *outbox.Outbox, env *notify.Envelope) {
	o.Observe(context.Background(), notify.Event{Type: record.StatePending, Envelope: env})
}

func settle(o *outbox.Outbox, t record.State, id string, cost int64) {
	o.Observe(context.Background(), notify.Event{Type: t,
		Receipt: &notify.Receipt{MessageID: id, Cost: notify.Money{Minor: cost, Currency: record.INR()}, Provider: "sms-log"}})
}

func TestStatusFollowsEvents(t *testing.T) {
	o := newOutbox(t)
	accept(o, smsEnvelope("m1", "9876543210", "hello", ""))
	if m, _ := o.Message("m1"); m.Status != outbox.StatusSending || m.Cost.Minor != 25 {
		t.Fatalf("after accept: %s %d", m.Status, m.Cost.Minor)
	}
	for _, step := range []struct {
		ev   record.State
		cost int64
		want outbox.Status
	}{
		{record.StateSent, 25, outbox.StatusSent},
		{record.StateRead, 25, outbox.StatusRead},
		{record.StateDelivered, 25, outbox.StatusRead}, // a late report does not move it back
		{record.StateFailed, 0, outbox.StatusFailed},
	} {
		settle(o, step.ev, "m1", step.cost)
		if m, _ := o.Message("m1"); m.Status != step.want || m.Cost.Minor != step.cost {
			t.Fatalf("after %s: %s cost %d, want %s cost %d", step.ev, m.Status, m.Cost.Minor, step.want, step.cost)
		}
	}
	settle(o, record.StateSent, "nobody", 1) // ignored
	if n := len(o.Messages(outbox.Filter{})); n != 1 {
		t.Fatalf("%d messages", n)
	}
}

func TestFilterAndOrder(t *testing.T) {
	o := newOutbox(t)
	accept(o, smsEnvelope("a", "9876543210", "one", ""))
	accept(o, &notify.Envelope{ID: "b", Kind: email.Kind, To: "Ravi@Example.com", Content: &email.Message{Subject: "hi"}})
	accept(o, smsEnvelope("c", "9123456789", "three", ""))
	ids := func(f outbox.Filter) string {
		var s []string
		for _, m := range o.Messages(f) {
			s = append(s, m.ID)
		}
		return strings.Join(s, ",")
	}
	for f, want := range map[outbox.Filter]string{
		{}:                        "c,b,a",
		{Kind: sms.Kind}:          "c,a",
		{To: "ravi@"}:             "b",
		{To: "98765"}:             "a",
		{Limit: 2}:                "c,b",
		{Kind: chat.Kind}:         "",
		{To: "zz", Kind: "email"}: "",
	} {
		if got := ids(f); got != want {
			t.Errorf("%+v: %q, want %q", f, got, want)
		}
	}
}

func TestCapacityAndByteBudget(t *testing.T) {
	o := newOutbox(t, outbox.WithCapacity(3))
	for i := range 5 {
		accept(o, smsEnvelope(fmt.Sprint(i), "9876543210", "x", ""))
	}
	if got := o.Messages(outbox.Filter{}); len(got) != 3 || got[0].ID != "4" || got[2].ID != "2" {
		t.Fatalf("kept %v", got)
	}

	o = newOutbox(t, outbox.WithMaxBytes(10_000))
	big := strings.Repeat("x", 4000)
	for i := range 4 {
		accept(o, smsEnvelope(fmt.Sprint(i), "9876543210", big, ""))
	}
	if got := o.Messages(outbox.Filter{}); len(got) != 2 || got[0].ID != "3" {
		t.Fatalf("kept %d messages under a 10 kB budget", len(got))
	}
	// The newest is kept even when it alone is over the budget.
	accept(o, smsEnvelope("huge", "9876543210", strings.Repeat("y", 20_000), ""))
	if got := o.Messages(outbox.Filter{}); len(got) != 1 || got[0].ID != "huge" {
		t.Fatalf("kept %d messages", len(got))
	}
}

func TestOptionsRefused(t *testing.T) {
	for name, opt := range map[string]outbox.Option{
		"capacity": outbox.WithCapacity(0),
		"bytes":    outbox.WithMaxBytes(-1),
		"base":     outbox.WithBasePath("outbox/"),
		"clock":    outbox.WithClock(nil),
	} {
		if _, err := outbox.New(opt); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// receivedMail is a message as provider/smtp writes it: HTML and text
// alternatives, an attachment, encoded words.
const receivedMail = "Date: Mon, 23 Nov 2026 10:00:00 +0000\r\n" +
	"Message-ID: <m2@example.com>\r\n" +
	"From: =?utf-8?q?Acme_St=C3=B6re?= <notify@example.com>\r\n" +
	"To: ravi@example.com\r\n" +
	"Subject: =?utf-8?q?Your_code_=E2=9C=93?=\r\n" +
	"X-Long: first\r\n second\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=OUT\r\n\r\n" +
	"--OUT\r\nContent-Type: multipart/alternative; boundary=ALT\r\n\r\n" +
	"--ALT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
	"Your code is 482915=\r\n.\r\n" +
	"--ALT\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
	"PHAgc3R5bGU9ImNvbG9yOiMxMjM0NTYiPllvdXIgY29kZSBpcyA8Yj40ODI5MTU8L2I+PC9wPg==\r\n" +
	"--ALT--\r\n" +
	"--OUT\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
	"JVBERi0x\r\n" +
	"--OUT--\r\n"

func TestAddMailMatchesItsMessage(t *testing.T) {
	o := newOutbox(t)
	accept(o, &notify.Envelope{ID: "m2", Kind: email.Kind, To: "ravi@example.com", CarriesOTP: true,
		Content: &email.Message{Subject: "Your code", HTML: "<p>prepared</p>", Text: "prepared"}})
	if err := o.AddMail([]byte(receivedMail), []string{"ravi@example.com"}); err != nil {
		t.Fatal(err)
	}
	m, ok := o.Message("m2")
	if !ok || m.Email == nil || !m.Email.Received {
		t.Fatalf("not matched: %+v", m)
	}
	e := m.Email
	if e.Subject != "Your code ✓" || e.FromName != "Acme Störe" {
		t.Errorf("subject %q from %q", e.Subject, e.FromName)
	}
	if e.Text != "Your code is 482915." || e.HTML != `<p style="color:#123456">Your code is <b>482915</b></p>` {
		t.Errorf("text %q html %q", e.Text, e.HTML)
	}
	if len(e.Attachments) != 1 || e.Attachments[0] != (outbox.Attachment{FileName: "invoice.pdf", ContentType: "application/pdf", Size: 6}) {
		t.Errorf("attachments %+v", e.Attachments)
	}
	var names []string
	for _, h := range e.Headers {
		names = append(names, h.Name)
		if h.Name == "X-Long" && h.Value != "first second" {
			t.Errorf("folded header %q", h.Value)
		}
	}
	if strings.Join(names, ",") != "Date,Message-ID,From,To,Subject,X-Long,MIME-Version,Content-Type" {
		t.Errorf("headers in order: %v", names)
	}

	// Mail nobody sent through the Notifier is kept on its own.
	other := strings.Replace(receivedMail, "<m2@example.com>", "<elsewhere@example.com>", 1)
	if err := o.AddMail([]byte(other), []string{"a@example.com", "b@example.com"}); err != nil {
		t.Fatal(err)
	}
	if m, ok := o.Message("elsewhere"); !ok || m.Status != outbox.StatusReceived || m.To != "a@example.com, b@example.com" {
		t.Fatalf("unmatched mail: %+v", m)
	}
	if err := o.AddMail([]byte("not a message"), nil); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestAddMailBoundsNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("Message-ID: <deep@x>\r\nContent-Type: multipart/mixed; boundary=B0\r\n\r\n")
	for i := 1; i < 20; i++ {
		fmt.Fprintf(&b, "--B%d\r\nContent-Type: multipart/mixed; boundary=B%d\r\n\r\n", i-1, i)
	}
	if err := newOutbox(t).AddMail([]byte(b.String()), nil); err == nil {
		t.Fatal("20 levels of nesting accepted")
	}
}

func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestPageMasksCodes(t *testing.T) {
	o := newOutbox(t)
	accept(o, smsEnvelope("otp1", "9876543210", "482915 is your code. Ref 12", "482915"))
	accept(o, &notify.Envelope{ID: "m2", Kind: email.Kind, To: "ravi@example.com", CarriesOTP: true, Provider: "smtp",
		Content: &email.Message{Subject: "Your code", HTML: "x", Text: "x"}})
	if err := o.AddMail([]byte(receivedMail), nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(o)
	defer srv.Close()

	res, page := get(t, srv, "/outbox?id=otp1")
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	// The code is in the page only as the value the click reveals.
	if strings.Count(page, "482915") != strings.Count(page, `data-code="482915"`) || !strings.Contains(page, ">••••••</button> is your code. Ref 12") {
		t.Fatalf("code shown:\n%s", page)
	}

	res, html := get(t, srv, "/outbox/mail/m2")
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("mail CSP %q", csp)
	}
	if html != `<p style="color:#123456">Your code is <b>••••••</b></p>` {
		t.Fatalf("masked mail %q", html)
	}
	if _, html := get(t, srv, "/outbox/mail/m2?reveal=1"); !strings.Contains(html, "<b>482915</b>") {
		t.Fatalf("revealed mail %q", html)
	}
	for path, want := range map[string]int{
		"/outbox/mail/otp1":             404, // not an e-mail
		"/outbox/mail/nope":             404,
		"/outbox/nope":                  404,
		"/elsewhere":                    404,
		"/outbox/assets/outbox.css":     200,
		"/outbox/assets/../outbox.go":   404,
		"/outbox/list?kind=sms&to=9876": 200,
	} {
		if res, _ := get(t, srv, path); res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
	res, err := srv.Client().Post(srv.URL+"/outbox", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 {
		t.Fatalf("POST: %d", res.StatusCode)
	}
}

func TestEventStream(t *testing.T) {
	o := newOutbox(t)
	srv := httptest.NewServer(o)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/outbox/events", nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- ev
			}
		}
	}()
	next := func() string {
		select {
		case ev := <-events:
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
			return ""
		}
	}
	if ev := next(); ev != "ready" {
		t.Fatalf("first event %q", ev)
	}
	accept(o, smsEnvelope("m1", "9876543210", "hi", ""))
	if ev := next(); ev != "change" {
		t.Fatalf("event %q", ev)
	}
	// Close ends the stream (a server's Shutdown waits for it) and later
	// streams are refused with 204, on which EventSource stops.
	o.Close()
	if _, ok := <-events; ok {
		t.Fatal("stream went on after Close")
	}
	if res, _ := get(t, srv, "/outbox/events"); res.StatusCode != http.StatusNoContent {
		t.Fatalf("after Close: %d", res.StatusCode)
	}
}

// TestPageHidesCodesOnly: the page hides a message's code, and in a
// message that carries one every run of OTP-length digits, in every field
// alike (a template may put the code anywhere); a chat template without a
// code shows its order number and year as sent, as does plain text.
func TestPageHidesCodesOnly(t *testing.T) {
	o := newOutbox(t)
	order := func(id string, carriesOTP bool, vars ...string) *notify.Envelope {
		return &notify.Envelope{ID: id, Kind: chat.Kind, To: "9876543210", CarriesOTP: carriesOTP, Provider: "chat-log",
			Content: &chat.Message{Gateway: chat.GatewayCloud, Text: "Order 4711 of 2019 has shipped",
				Template: &chat.Template{Name: "order_update", Params: vars,
					Buttons: []chat.Button{{Index: 0, Kind: chat.ButtonURL, Value: "o/4711"}}}}}
	}
	accept(o, order("tpl", false, "4711", "2019"))
	accept(o, order("tpl-code", true, "4711", "2019", "482913"))
	accept(o, &notify.Envelope{ID: "txt", Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayQR, Text: "Order 4711 of 2019 has shipped"}})
	srv := httptest.NewServer(o)
	defer srv.Close()
	for id, hidden := range map[string]bool{"tpl": false, "tpl-code": true, "txt": false} {
		_, page := get(t, srv, "/outbox?id="+id)
		detail := page[strings.Index(page, `<article`):]
		for _, digits := range []string{"4711", "2019"} {
			all, asCode := strings.Count(detail, digits), strings.Count(detail, `data-code="`+digits+`"`)
			if hidden && (all == 0 || all != asCode) || !hidden && (all == 0 || asCode != 0) {
				t.Errorf("%s: %s appears %d times, %d of them hidden; want all hidden: %v\n%s", id, digits, all, asCode, hidden, detail)
			}
		}
	}
}

// TestRealVendorCodesNeverReachThePage: a message a real vendor sent
// (a provider not named by WithDevelopmentProviders) has its codes masked
// on the server: no page, fragment or mail frame carries them, ?reveal=1
// included, and the page says why. A message that fell over from a
// development provider to a real one loses its reveal.
func TestRealVendorCodesNeverReachThePage(t *testing.T) {
	o := newOutbox(t)
	real := smsEnvelope("real", "+919876543210", "451575 is your code. Ref 12", "451575")
	real.Provider = "msg91"
	accept(o, real)
	accept(o, &notify.Envelope{ID: "mail", Kind: email.Kind, To: "ravi@example.com", CarriesOTP: true, Provider: "ses",
		Content: &email.Message{Subject: "Your code 451575", HTML: `<p>Code <b>451575</b>, <a href="/v?code=451575">link</a></p>`, Text: "Code 451575"}})
	fellOver := smsEnvelope("over", "+919876543211", "451575 is your code", "451575")
	accept(o, fellOver)
	o.Observe(context.Background(), notify.Event{Type: record.StateSent,
		Receipt: &notify.Receipt{MessageID: "over", Provider: "msg91", Cost: fellOver.Price}})
	srv := httptest.NewServer(o)
	defer srv.Close()
	for _, path := range []string{"/outbox", "/outbox/list", "/outbox?id=real", "/outbox?id=mail", "/outbox?id=over",
		"/outbox/mail/mail", "/outbox/mail/mail?reveal=1"} {
		_, body := get(t, srv, path)
		if strings.Contains(body, "451575") {
			t.Errorf("%s carries a real vendor's code:\n%s", path, body)
		}
	}
	for _, id := range []string{"real", "mail", "over"} {
		_, page := get(t, srv, "/outbox?id="+id)
		if !strings.Contains(page, "One-time codes are masked") || strings.Contains(page, "Show codes") || !strings.Contains(page, "••••••") {
			t.Errorf("%s: the page does not say its codes are masked, or offers to show them:\n%s", id, page)
		}
	}
	if m, ok := o.Message("over"); !ok || m.Development {
		t.Errorf("a message a real vendor took after a development one is %+v; want Development false", m)
	}
}
