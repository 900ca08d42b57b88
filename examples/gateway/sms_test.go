package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
)

// front is the public address of a gateway, as a proxy in front of it
// gives it: vendors are told its URL before the gateway (on a port of its
// own choosing) has started, and it forwards to the gateway once to has
// named it. Until then it answers 503.
type front struct {
	*httptest.Server
	target atomic.Pointer[url.URL]
}

func newFront(t *testing.T) *front {
	t.Helper()
	f := &front{}
	transport := &http.Transport{}
	proxy := &httputil.ReverseProxy{Transport: transport, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(f.target.Load())
	}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.target.Load() == nil {
			http.Error(w, "no gateway yet", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		f.Close()
		transport.CloseIdleConnections()
	})
	return f
}

// to makes f forward to g.
func (f *front) to(g *gateway) {
	u, _ := url.Parse(g.root())
	f.target.Store(u)
}

// recorder stands in front of a vendor and keeps the body of every
// request it passes on.
type recorder struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newRecorder(t *testing.T, vendorURL string) *recorder {
	t.Helper()
	target, _ := url.Parse(vendorURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	rc := &recorder{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, body)
		rc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *recorder) taken() [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies...)
}

// worldSMS is a gateway with the Indian vendor and Twilio, both fakes,
// routed by default (smsgateway: country=IN; twilio), and Twilio's status
// callbacks reaching it through its public front.
type worldSMS struct {
	g      *gateway
	indian *smsgatewaytest.Server
	twilio *twiliotest.Server
	front  *front
	hook   string // NOTIFY_TWILIO_CALLBACK_URL
}

func startWorldSMS(t *testing.T, extra map[string]string) *worldSMS {
	t.Helper()
	return startWorldSMSWith(t, func(*front) map[string]string { return extra })
}

// startWorldSMSWith is startWorldSMS with the extra settings of the
// gateway's public front, such as another vendor's callback URL.
func startWorldSMSWith(t *testing.T, extra func(*front) map[string]string) *worldSMS {
	t.Helper()
	w := &worldSMS{
		indian: smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"}),
		twilio: twiliotest.NewServer(twiliotest.Config{}),
		front:  newFront(t),
	}
	t.Cleanup(w.indian.Close)
	t.Cleanup(w.twilio.Close)
	w.hook = w.front.URL + "/webhooks/twilio"
	env := map[string]string{
		"NOTIFY_SMS_URL": w.indian.URL, "NOTIFY_SMS_KEY": "vendor-key-1",
		"NOTIFY_TWILIO_ACCOUNT_SID":  twiliotest.DefaultAccountSID,
		"NOTIFY_TWILIO_AUTH_TOKEN":   twiliotest.DefaultAuthToken,
		"NOTIFY_TWILIO_FROM":         twiliotest.DefaultFrom,
		"NOTIFY_TWILIO_URL":          w.twilio.URL,
		"NOTIFY_TWILIO_CALLBACK_URL": w.hook,
		"NOTIFY_SMS_PRICES":          "US=70,GB=60",
		"NOTIFY_COUNTRIES":           "IN,US,GB",
		"NOTIFY_BALANCE":             "10",
	}
	for k, v := range extra(w.front) {
		env[k] = v
	}
	w.g = start(t, env)
	w.g.out.waitFor(t, "delivery reports: POST /webhooks/twilio")
	w.front.to(w.g)
	return w
}

// TestGatewayTwilioAbroad: a US number the account may send to goes
// through Twilio at its NOTIFY_SMS_PRICES price; Twilio's signed status
// callback, through the gateway's public front, moves it to delivered;
// forged callbacks are 401 and change nothing.
func TestGatewayTwilioAbroad(t *testing.T) {
	w := startWorldSMS(t, nil)
	g := w.g
	if out := g.out.text(); !strings.Contains(out, "\nsms: smsgateway: country=IN; twilio (failover in the rules' order; circuit breakers 5/30s)\n") {
		t.Errorf("banner:\n%s", out)
	}
	before := g.balanceMinor(t)
	a := g.post(t, "/sms", g.key, `{"to":"+1 415 555 0100","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "twilio" || !strings.Contains(a.raw, `"to":"+14155550100","country":"US"`) {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if a.body["cost_minor"] != 70.0 || g.balanceMinor(t) != before-70 {
		t.Fatalf("charged %v, balance %d (was %d): want the US price, 70", a.body["cost_minor"], g.balanceMinor(t), before)
	}
	msgs := w.twilio.Messages()
	if len(msgs) != 1 || msgs[0].To != "+14155550100" || msgs[0].From != twiliotest.DefaultFrom || msgs[0].Body != "Your order has shipped" ||
		!strings.HasPrefix(msgs[0].StatusCallback, w.hook+"?"+twilio.RefParam+"=") {
		t.Fatalf("Twilio got %+v", msgs)
	}
	if n := w.indian.Requests(); n != 0 {
		t.Errorf("the Indian vendor got %d requests", n)
	}
	id, sid := a.body["message_id"].(string), msgs[0].SID
	if rec := g.record(t, id); rec["status"] != "sent" || rec["country"] != "US" || rec["to"] != "+14155550100" || rec["tried"] != nil {
		t.Fatalf("record: %v", rec)
	}

	ctx := context.Background()
	forged := url.Values{"MessageSid": {sid}, "MessageStatus": {"failed"}, "ErrorCode": {"30003"},
		"AccountSid": {twiliotest.DefaultAccountSID}, "To": {"+14155550100"}}
	target := msgs[0].StatusCallback
	for name, sig := range map[string]string{
		"guessed signature":      "bm90IHR3aWxpbydzIHNpZ25hdHVyZQ==",
		"another account's key":  twiliotest.Sign("0123456789abcdef0123456789abcdef", target, forged),
		"signed for another URL": twiliotest.Sign(twiliotest.DefaultAuthToken, "https://evil.example/webhooks/twilio", forged),
	} {
		var ce *twiliotest.CallbackError
		if err := w.twilio.Post(ctx, target, sig, forged); !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s: %v, want 401", name, err)
		}
	}
	if rec := g.record(t, id); rec["status"] != "sent" {
		t.Fatalf("a forged callback moved the record: %v", rec)
	}

	if err := w.twilio.Report(ctx, sid, "delivered", 0); err != nil {
		t.Fatalf("signed callback: %v", err)
	}
	rec := g.record(t, id)
	if rec["status"] != "delivered" || historyStates(rec) != "pending,attempting,sent,delivered" || rec["cost_minor"] != 70.0 {
		t.Fatalf("record after the callback: %v", rec)
	}
	forged.Set("MessageStatus", "undelivered")
	if err := w.twilio.Post(ctx, target, "bm90IHR3aWxpbydzIHNpZ25hdHVyZQ==", forged); err == nil {
		t.Fatal("a forged callback after delivery was taken")
	}
	if rec := g.record(t, id); rec["status"] != "delivered" || g.balanceMinor(t) != before-70 {
		t.Fatalf("after a forgery: %v, balance %d", rec, g.balanceMinor(t))
	}
	if strings.Contains(g.out.text(), twiliotest.DefaultAuthToken) {
		t.Error("stdout shows the auth token")
	}
}

// TestGatewayIndianSMSAsBefore: with Twilio configured beside it, Indian
// SMS still go to the Indian vendor, each request byte for byte what the
// gateway sent it with that vendor alone (the 10-digit number, the same
// body), on the sms, otp and dlt routes; answers show the 10-digit
// number.
func TestGatewayIndianSMSAsBefore(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1", Templates: []smsgatewaytest.Template{{
		ID: demoDLTTemplate, EntityID: demoDLTEntity, Sender: demoDLTHeader, Content: "Dear {#var#}, your order {#var#} has shipped."}}})
	t.Cleanup(vendor.Close)
	sends := []string{
		`{"to":"9876543210","message":"Your order has shipped"}`,
		`{"to":"+91 98765 43210","message":"482915","route":"otp"}`,
		`{"to":"9876543210","route":"dlt","sender_id":"ACMEIN","dlt_template_id":"` + demoDLTTemplate + `","message":"Dear Asha, your order 4711 has shipped."}`,
		`{"to":"09876543210","message":"नमस्ते","sender_id":"ACMEIN"}`,
	}
	run := func(env map[string]string) ([][]byte, []*answer) {
		rec := newRecorder(t, vendor.URL)
		env["NOTIFY_SMS_URL"], env["NOTIFY_SMS_KEY"], env["NOTIFY_OTP_LIMIT"] = rec.URL, "vendor-key-1", "off"
		g := start(t, env)
		var answers []*answer
		for _, body := range sends {
			a := g.post(t, "/sms", g.key, body)
			if a.status != 200 || a.body["provider"] != "smsgateway" {
				t.Fatalf("%s: %d %s", body, a.status, a.raw)
			}
			answers = append(answers, a)
		}
		return rec.taken(), answers
	}
	alone, _ := run(map[string]string{})
	tw := twiliotest.NewServer(twiliotest.Config{})
	t.Cleanup(tw.Close)
	both, answers := run(map[string]string{
		"NOTIFY_TWILIO_ACCOUNT_SID": twiliotest.DefaultAccountSID, "NOTIFY_TWILIO_AUTH_TOKEN": twiliotest.DefaultAuthToken,
		"NOTIFY_TWILIO_FROM": twiliotest.DefaultFrom, "NOTIFY_TWILIO_URL": tw.URL,
		"NOTIFY_TWILIO_CALLBACK_URL": "https://notify.example.com/webhooks/twilio", "NOTIFY_COUNTRIES": "*"})
	if len(alone) != len(sends) || len(both) != len(sends) {
		t.Fatalf("the vendor got %d requests alone, %d beside Twilio; want %d each", len(alone), len(both), len(sends))
	}
	for i := range sends {
		if !bytes.Equal(alone[i], both[i]) {
			t.Errorf("send %d: beside Twilio the vendor got\n%s\nwhere alone it got\n%s", i, both[i], alone[i])
		}
		var body map[string]any
		if err := json.Unmarshal(both[i], &body); err != nil || body["numbers"] != "9876543210" {
			t.Errorf("send %d: the vendor got %s, want the 10 digits", i, both[i])
		}
		if a := answers[i]; a.body["to"] != "9876543210" || a.body["country"] != "IN" {
			t.Errorf("send %d: answer %s", i, a.raw)
		}
	}
	if n := len(tw.Requests()); n != 0 {
		t.Errorf("Twilio got %d requests", n)
	}
}

// TestGatewaySMSFailsOver: the Indian vendor refusing with its own body on
// a 503 (it certainly took nothing), the message goes through Twilio at
// once, charged once; its record lists both calls. The vendor down
// altogether leaves the gateway ready but degraded, and messages still
// go.
func TestGatewaySMSFailsOver(t *testing.T) {
	w := startWorldSMS(t, nil)
	g := w.g
	before := g.balanceMinor(t)
	w.indian.RefuseNext(1, http.StatusServiceUnavailable, 503, "busy")
	a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "twilio" || a.body["cost_minor"] != 25.0 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != before-25 {
		t.Fatalf("balance %d, want %d: charged once", got, before-25)
	}
	if w.indian.Requests() != 1 || w.indian.Accepted() != 0 {
		t.Fatalf("the Indian vendor: %d requests, %d accepted", w.indian.Requests(), w.indian.Accepted())
	}
	if m := w.twilio.Messages(); len(m) != 1 || m[0].To != "+919876543210" || m[0].Body != "Your order has shipped" {
		t.Fatalf("Twilio got %+v", m)
	}
	rec := g.record(t, a.body["message_id"].(string))
	tried, _ := rec["tried"].([]any)
	if rec["status"] != "sent" || rec["provider"] != "twilio" || rec["charged_minor"] != 25.0 || len(tried) != 2 {
		t.Fatalf("record: %v", rec)
	}
	wantTried(t, tried, []map[string]any{
		{"provider": "smsgateway", "outcome": "failed", "error_code": "unavailable"},
		{"provider": "twilio", "outcome": "sent"},
	})
	fams := g.scrape(t, nil)
	wantSample(t, fams, 1, "notify_provider_calls_total", map[string]string{"provider": "smsgateway", "outcome": "failed"})
	wantSample(t, fams, 1, "notify_provider_calls_total", map[string]string{"provider": "twilio", "outcome": "sent"})
	wantSample(t, fams, 1, "notify_sends_total", map[string]string{"kind": "sms", "provider": "twilio", "outcome": "sent"})

	// The Indian vendor gone: readiness names it but holds, as its
	// messages fail over.
	w.indian.Close()
	status, body := g.monJSON(t, readyzPath)
	checks, _ := body["checks"].(map[string]any)
	if status != 200 || body["status"] != "degraded" || checks["provider smsgateway"] == "ok" || checks["provider smsgateway"] == nil {
		t.Fatalf("readyz with the Indian vendor down: %d %v", status, body)
	}
	if a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order is out for delivery"}`); a.status != 200 || a.body["provider"] != "twilio" {
		t.Fatalf("send with the Indian vendor down: %d %s", a.status, a.raw)
	}
}

// wantTried checks a record's tried, call by call: each has the fields
// of its want.
func wantTried(t *testing.T, tried []any, want []map[string]any) {
	t.Helper()
	if len(tried) != len(want) {
		t.Fatalf("tried %v, want %d calls", tried, len(want))
	}
	for i, w := range want {
		got := tried[i].(map[string]any)
		for k, v := range w {
			if got[k] != v {
				t.Errorf("tried[%d].%s = %v, want %v (%v)", i, k, got[k], v, got)
			}
		}
	}
}

// TestGatewaySMSUnknownDoesNotFailOver: the Indian vendor takes the
// request and answers too late: the outcome is unknown (202), the charge
// stands, and Twilio is never called, which could send it twice.
func TestGatewaySMSUnknownDoesNotFailOver(t *testing.T) {
	t.Parallel()
	w := startWorldSMS(t, map[string]string{"NOTIFY_ATTEMPT_TIMEOUT": "1s"})
	g := w.g
	before := g.balanceMinor(t)
	w.indian.SetLatency(time.Minute) // until the gateway gives up
	a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order has shipped"}`)
	if a.status != http.StatusAccepted || errCode(a) != "outcome_unknown" || a.body["status"] != "unknown" {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if n := len(w.twilio.Requests()); n != 0 {
		t.Fatalf("Twilio got %d requests after an unknown outcome", n)
	}
	if got := g.balanceMinor(t); got != before-25 {
		t.Fatalf("balance %d, want %d: an unknown outcome stays charged", got, before-25)
	}
	rec := g.record(t, a.body["message_id"].(string))
	tried, _ := rec["tried"].([]any)
	if rec["status"] != "unknown" || len(tried) != 1 || tried[0].(map[string]any)["provider"] != "smsgateway" ||
		tried[0].(map[string]any)["outcome"] != "unknown" {
		t.Fatalf("record: %v", rec)
	}
}

// TestGatewaySMSRefusedNumbers: a number outside the account's countries,
// a premium-rate one, a fixed line, and numbers too short or too long are
// 400s naming "to", before anything is charged or sent.
func TestGatewaySMSRefusedNumbers(t *testing.T) {
	w := startWorldSMS(t, nil)
	g := w.g
	before := g.balanceMinor(t)
	for _, tt := range []struct{ to, says string }{
		{"+49 1512 3456789", "DE"},          // a German mobile: not among IN, US, GB
		{"+1 900 555 0100", "premium-rate"}, // SMS pumping's favourite
		{"+44 20 7946 0958", "fixed-line"},  // a London landline
		{"+1 800 555 0100", "toll-free"},    //
		{"+1 415 555 01", "too short"},      //
		{"+1 415 555 0100 99", "too long"},  //
		{"98765", "10 digits"},              // an Indian number cut short
		{"+91 98765 432101", ""},            // and one too long
		{"+999 1234 5678", ""},              // no such country
	} {
		a := g.post(t, "/sms", g.key, `{"to":"`+tt.to+`","message":"Your order has shipped"}`)
		fields, _ := a.body["error"].(map[string]any)["fields"].(map[string]any)
		msg, _ := fields["to"].(string)
		if a.status != 400 || errCode(a) != "invalid_argument" || msg == "" {
			t.Errorf("%s: %d %s", tt.to, a.status, a.raw)
			continue
		}
		if !strings.Contains(msg, tt.says) {
			t.Errorf("%s: to %q, want it to say %q", tt.to, msg, tt.says)
		}
	}
	if got := g.balanceMinor(t); got != before {
		t.Errorf("refused numbers moved the balance by %d", before-got)
	}
	if n, m := w.indian.Requests(), len(w.twilio.Requests()); n+m != 0 {
		t.Errorf("the vendors got %d and %d requests", n, m)
	}

	// Without NOTIFY_COUNTRIES the account sends to India only.
	home := startWorldSMS(t, map[string]string{"NOTIFY_COUNTRIES": ""})
	a := home.g.post(t, "/sms", home.g.key, `{"to":"+1 415 555 0100","message":"Your order has shipped"}`)
	if a.status != 400 || !strings.Contains(a.raw, "may send to IN only") {
		t.Fatalf("a US number by default: %d %s", a.status, a.raw)
	}
}

// TestGatewayMSG91: with MSG91 configured beside the Indian bulk vendor,
// the default routes send codes through MSG91's OTP template and plain
// text through the bulk vendor; MSG91's delivery report reaches
// /webhooks/msg91/{token}, and a wrong token is 401.
func TestGatewayMSG91(t *testing.T) {
	const token, otpTemplate = "msg91-dlr-token-5c1e9a", "6808ca80d6fc054bef421399"
	f := newFront(t)
	m := msg91test.NewServer(msg91test.Config{AuthKey: "msg91-key-1", ReportURL: f.URL + "/webhooks/msg91/" + token,
		Templates: []msg91test.Template{{ID: otpTemplate, DLTTemplateID: "1107161234567890999", Sender: "ACMEIN",
			Content: "##OTP## is your Acme code. - ACME"}}})
	t.Cleanup(m.Close)
	bulk := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(bulk.Close)
	g := start(t, map[string]string{"NOTIFY_SMS_URL": bulk.URL, "NOTIFY_SMS_KEY": "vendor-key-1",
		"NOTIFY_MSG91_AUTH_KEY": "msg91-key-1", "NOTIFY_MSG91_URL": m.URL, "NOTIFY_MSG91_OTP_TEMPLATE": otpTemplate,
		"NOTIFY_MSG91_WEBHOOK_TOKEN": token})
	g.out.waitFor(t, "delivery reports: POST /webhooks/msg91/$NOTIFY_MSG91_WEBHOOK_TOKEN")
	f.to(g)
	if strings.Contains(g.out.text(), token) || strings.Contains(g.out.text(), "msg91-key-1") {
		t.Fatalf("stdout shows a secret:\n%s", g.out.text())
	}
	if !strings.Contains(g.out.text(), "sms: msg91: country=IN route=dlt,otp; smsgateway: country=IN (failover") {
		t.Errorf("banner:\n%s", g.out.text())
	}

	a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"482915","route":"otp"}`)
	if a.status != 200 || a.body["provider"] != "msg91" {
		t.Fatalf("otp: %d %s", a.status, a.raw)
	}
	sent := m.Sent()
	if len(sent) != 1 || sent[0].TemplateID != otpTemplate || sent[0].Recipients[0].Mobile != "919876543210" ||
		sent[0].Recipients[0].Vars["OTP"] != "482915" {
		t.Fatalf("MSG91 got %+v", sent)
	}
	if a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order has shipped"}`); a.status != 200 || a.body["provider"] != "smsgateway" {
		t.Fatalf("plain text: %d %s", a.status, a.raw)
	}

	ctx := context.Background()
	resp, err := g.client.Post(f.URL+"/webhooks/msg91/not-the-token-0123456", "application/json",
		strings.NewReader(`{"requestId":"`+sent[0].RequestID+`","status":"2"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", resp.StatusCode)
	}
	if err := m.Report(ctx, sent[0].RequestID, msg91test.Delivered); err != nil {
		t.Fatal(err)
	}
	if rec := g.record(t, a.body["message_id"].(string)); rec["status"] != "delivered" {
		t.Fatalf("record: %v", rec)
	}
}

// TestGatewayCountriesOnPostgres: on PostgreSQL, NOTIFY_COUNTRIES sets
// the demo account's allow list at every start it is given; a start
// without it keeps the list as it stands, the admin API's included.
func TestGatewayCountriesOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	us := `{"to":"+1 415 555 0100","message":"Your order has shipped"}`
	run := func(countries string) *gateway {
		env := map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_ADMIN_KEY": testAdminKey, "NOTIFY_API_KEY": "chosen-key-0123456789"}
		if countries != "" {
			env["NOTIFY_COUNTRIES"] = countries
		}
		g := start(t, env)
		g.key = "chosen-key-0123456789"
		return g
	}
	g := run("IN,US")
	if a := g.post(t, "/sms", g.key, us); a.status != 200 || a.body["country"] != "US" {
		t.Fatalf("NOTIFY_COUNTRIES=IN,US: %d %s", a.status, a.raw)
	}
	g.shutdown(t)

	g = run("")
	if a := g.post(t, "/sms", g.key, us); a.status != 200 {
		t.Fatalf("a restart without NOTIFY_COUNTRIES: %d %s", a.status, a.raw)
	}
	if a := g.admin(t, "PUT", "/admin/v1/accounts/demo/countries", `{"countries":["IN"]}`); a.status != 200 {
		t.Fatalf("PUT countries: %d %s", a.status, a.raw)
	}
	g.shutdown(t)

	g = run("")
	if a := g.post(t, "/sms", g.key, us); a.status != 400 {
		t.Fatalf("after the admin API's IN only and a restart: %d %s", a.status, a.raw)
	}
	g.shutdown(t)

	g = run("*")
	if a := g.post(t, "/sms", g.key, us); a.status != 200 {
		t.Fatalf("NOTIFY_COUNTRIES=*: %d %s", a.status, a.raw)
	}
	g.shutdown(t)

	// NOTIFY_REGION replaces the stored region the same way, alone.
	env := map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_API_KEY": "chosen-key-0123456789", "NOTIFY_REGION": "US"}
	g = start(t, env)
	g.key = "chosen-key-0123456789"
	if a := g.post(t, "/sms", g.key, `{"to":"(415) 555-0100","message":"hi"}`); a.status != 200 || a.body["country"] != "US" {
		t.Fatalf("NOTIFY_REGION=US: %d %s", a.status, a.raw)
	}
	g.shutdown(t)
	g = run("")
	if a := g.post(t, "/sms", g.key, `{"to":"(415) 555-0100","message":"hi"}`); a.status != 200 {
		t.Fatalf("a restart without NOTIFY_REGION keeps US: %d %s", a.status, a.raw)
	}
}

// TestGatewayBreakerRestsAVendor: after NOTIFY_BREAKER's failures in a
// row, the Indian vendor rests: its messages go straight to Twilio
// without calling it, the log says so, and
// notify_provider_breaker_open shows it.
func TestGatewayBreakerRestsAVendor(t *testing.T) {
	w := startWorldSMS(t, map[string]string{"NOTIFY_BREAKER": "2/1h"})
	g := w.g
	w.indian.RefuseNext(-1, http.StatusServiceUnavailable, 503, "busy")
	for i := range 3 {
		if a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order has shipped"}`); a.status != 200 || a.body["provider"] != "twilio" {
			t.Fatalf("send %d: %d %s", i, a.status, a.raw)
		}
	}
	if n := w.indian.Requests(); n != 2 {
		t.Fatalf("the Indian vendor got %d requests, want 2: resting after the second refusal", n)
	}
	if line := g.out.waitFor(t, "circuit breaker open"); !strings.Contains(line, "provider=smsgateway") {
		t.Errorf("log: %s", line)
	}
	f := g.scrape(t, nil)["notify_provider_breaker_open"]
	open := -1.0
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == "smsgateway" {
			open = m.GetGauge().GetValue()
		}
	}
	if open != 1 {
		t.Errorf("notify_provider_breaker_open{provider=smsgateway} = %v, want 1", open)
	}
}
