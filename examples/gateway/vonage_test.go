package main

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
)

// vonageEnv are Vonage's settings of the configuration tests: an account
// with signed webhooks; the secrets are strings no error may repeat.
var vonageEnv = map[string]string{
	"NOTIFY_VONAGE_API_KEY":          "a1b2c3d4",
	"NOTIFY_VONAGE_API_SECRET":       "vonage-secret-5b",
	"NOTIFY_VONAGE_FROM":             "+14155550199",
	"NOTIFY_VONAGE_CALLBACK_URL":     "https://notify.example.com/webhooks/vonage",
	"NOTIFY_VONAGE_SIGNATURE_SECRET": "vonage-sig-0123456789",
}

// vonageToken is the path token of the configuration tests.
const vonageToken = "hook-secret-0123456789"

// TestVonageSettings: Vonage needs its API key and secret and a sender;
// its receipts are taken when they can be told from forgeries (the
// signature secret, a path token, or both), and the callback URL, which
// needs one of them, is optional. Errors name the variable, never a
// secret.
func TestVonageSettings(t *testing.T) {
	with := func(kv ...string) map[string]string {
		env := maps.Clone(vonageEnv)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(env, kv[i])
			} else {
				env[kv[i]] = kv[i+1]
			}
		}
		return env
	}
	c, err := loadConfig(envOf(with("NOTIFY_VONAGE_URL", "http://127.0.0.1:9/", "NOTIFY_VONAGE_SIGNATURE_METHOD", "SHA256")))
	if err != nil || c.vonage == nil || !c.realVendors() || len(c.warnings) != 0 {
		t.Fatalf("%v %+v, warnings %q", err, c, c.warnings)
	}
	if v := c.vonage; v.apiKey != "a1b2c3d4" || v.apiSecret != "vonage-secret-5b" || v.from != "+14155550199" || v.baseURL != "http://127.0.0.1:9/" ||
		v.signatureMethod != vonage.SHA256HMAC || v.webhookToken != "" || !v.receiver() || v.webhookPath() != "/webhooks/vonage" {
		t.Errorf("read %+v", v)
	}
	if routesString(c.smsRoutes) != "vonage" {
		t.Errorf("routes %q", routesString(c.smsRoutes))
	}
	// The signature method defaults to Vonage's.
	if c, err := loadConfig(envOf(vonageEnv)); err != nil || c.vonage.signatureMethod != vonage.MD5Hash {
		t.Errorf("the default signature method: %v %+v", err, c)
	}
	// An unsigned account: the token authenticates, as the callback's
	// last segment; signed and with a token, both are checked.
	for _, env := range []map[string]string{
		with("NOTIFY_VONAGE_SIGNATURE_SECRET", "", "NOTIFY_VONAGE_WEBHOOK_TOKEN", vonageToken,
			"NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage/"+vonageToken),
		with("NOTIFY_VONAGE_WEBHOOK_TOKEN", vonageToken, "NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage/"+vonageToken+"/"),
	} {
		c, err := loadConfig(envOf(env))
		if err != nil || c.vonage.webhookToken != vonageToken || c.vonage.webhookPath() != "/webhooks/vonage/$NOTIFY_VONAGE_WEBHOOK_TOKEN" || len(c.warnings) != 0 {
			t.Errorf("with a token: %v %+v, warnings %q", err, c, c.warnings)
		}
	}

	// Warnings: a callback at another path (shown without the token), and
	// none at all, with and without a receiver.
	for name, tt := range map[string]struct {
		env  map[string]string
		says []string
	}{
		"another path": {with("NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/hooks/vg"),
			[]string{`NOTIFY_VONAGE_CALLBACK_URL's path is "/hooks/vg", not /webhooks/vonage`, "proxy"}},
		"another path, with a token": {with("NOTIFY_VONAGE_WEBHOOK_TOKEN", vonageToken, "NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/hooks/"+vonageToken),
			[]string{`"/hooks/$NOTIFY_VONAGE_WEBHOOK_TOKEN", not /webhooks/vonage/$NOTIFY_VONAGE_WEBHOOK_TOKEN`}},
		"no callback, signed": {with("NOTIFY_VONAGE_CALLBACK_URL", ""),
			[]string{"NOTIFY_VONAGE_CALLBACK_URL is unset: ", "default webhook", "/webhooks/vonage", "stay sent"}},
		"no callback, no receiver": {with("NOTIFY_VONAGE_CALLBACK_URL", "", "NOTIFY_VONAGE_SIGNATURE_SECRET", ""),
			[]string{"NOTIFY_VONAGE_CALLBACK_URL is unset: ", "not taken", "not mounted", "stay sent"}},
	} {
		c, err := loadConfig(envOf(tt.env))
		if err != nil || len(c.warnings) != 1 {
			t.Errorf("%s: %v, warnings %q", name, err, c.warnings)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(c.warnings[0], s) {
				t.Errorf("%s: warning %q does not say %q", name, c.warnings[0], s)
			}
		}
		if strings.Contains(c.warnings[0], vonageToken) {
			t.Errorf("%s: warning %q shows the token", name, c.warnings[0])
		}
	}

	for name, tt := range map[string]struct {
		env map[string]string
		say string
	}{
		"only the sender":        {map[string]string{"NOTIFY_VONAGE_FROM": "AcmeInc"}, "NOTIFY_VONAGE_API_KEY"},
		"no key":                 {with("NOTIFY_VONAGE_API_KEY", ""), "NOTIFY_VONAGE_API_KEY"},
		"no secret":              {with("NOTIFY_VONAGE_API_SECRET", ""), "NOTIFY_VONAGE_API_SECRET"},
		"key with a space":       {with("NOTIFY_VONAGE_API_KEY", "a1b2 c3d4"), "NOTIFY_VONAGE_API_KEY"},
		"secret with a space":    {with("NOTIFY_VONAGE_API_SECRET", "vonage-secret 1"), "NOTIFY_VONAGE_API_SECRET"},
		"no sender":              {with("NOTIFY_VONAGE_FROM", ""), "NOTIFY_VONAGE_FROM"},
		"bad sender":             {with("NOTIFY_VONAGE_FROM", "Acme Inc Ltd."), "NOTIFY_VONAGE_FROM"},
		"sender too long":        {with("NOTIFY_VONAGE_FROM", "AcmeIncorporated"), "NOTIFY_VONAGE_FROM"},
		"signature secret space": {with("NOTIFY_VONAGE_SIGNATURE_SECRET", "vonage-sig 0123456789"), "NOTIFY_VONAGE_SIGNATURE_SECRET"},
		"bad method":             {with("NOTIFY_VONAGE_SIGNATURE_METHOD", "sha384"), "NOTIFY_VONAGE_SIGNATURE_METHOD"},
		"method without secret": {with("NOTIFY_VONAGE_SIGNATURE_METHOD", "sha256", "NOTIFY_VONAGE_SIGNATURE_SECRET", "", "NOTIFY_VONAGE_CALLBACK_URL", ""),
			"NOTIFY_VONAGE_SIGNATURE_SECRET"},
		"short token":         {with("NOTIFY_VONAGE_WEBHOOK_TOKEN", "hook-secret"), "NOTIFY_VONAGE_WEBHOOK_TOKEN"},
		"token with a slash":  {with("NOTIFY_VONAGE_WEBHOOK_TOKEN", "hook-secret/0123456789"), "NOTIFY_VONAGE_WEBHOOK_TOKEN"},
		"API URL with a key":  {with("NOTIFY_VONAGE_URL", "https://rest.nexmo.com/?api_secret=vonage-secret-5b"), "NOTIFY_VONAGE_URL"},
		"API URL not http":    {with("NOTIFY_VONAGE_URL", "rest.nexmo.com"), "NOTIFY_VONAGE_URL"},
		"unauthenticated":     {with("NOTIFY_VONAGE_SIGNATURE_SECRET", ""), "NOTIFY_VONAGE_SIGNATURE_SECRET (with signed webhooks on for the account) or NOTIFY_VONAGE_WEBHOOK_TOKEN"},
		"relative callback":   {with("NOTIFY_VONAGE_CALLBACK_URL", "/webhooks/vonage"), "NOTIFY_VONAGE_CALLBACK_URL"},
		"callback with query": {with("NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage?k=1"), "NOTIFY_VONAGE_CALLBACK_URL"},
		"callback fragment":   {with("NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage#x"), "NOTIFY_VONAGE_CALLBACK_URL"},
		"callback with login": {with("NOTIFY_VONAGE_CALLBACK_URL", "https://u:vonage-secret-2@notify.example.com/webhooks/vonage"), "NOTIFY_VONAGE_CALLBACK_URL"},
		"callback too long": {with("NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage/"+strings.Repeat("x", 60)),
			"at most 100 characters"},
		"callback without the token": {with("NOTIFY_VONAGE_WEBHOOK_TOKEN", vonageToken, "NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage"),
			"its last segment NOTIFY_VONAGE_WEBHOOK_TOKEN"},
		"callback of another token": {with("NOTIFY_VONAGE_WEBHOOK_TOKEN", vonageToken, "NOTIFY_VONAGE_CALLBACK_URL", "https://notify.example.com/webhooks/vonage/hook-secret-9876543210"),
			"NOTIFY_VONAGE_CALLBACK_URL"},
	} {
		_, err := loadConfig(envOf(tt.env))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_") || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tt.say)
		}
		noSecret(t, name, err)
		if err != nil && strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: %q repeats the token", name, err)
		}
	}
}

// vonageWorld is worldSMS (the Indian vendor and Twilio) with Vonage, a
// strict fake sending from a US number, whose receipts reach the gateway
// through its public front.
type vonageWorld struct {
	*worldSMS
	vonage *vonagetest.Server
	hook   string // NOTIFY_VONAGE_CALLBACK_URL
}

// The sender of the Vonage account of the gateway tests, as given and as
// sent.
const (
	vonageFrom     = "+14155550199"
	vonageFromSent = "14155550199"
)

// startVonageWorld starts the gateway with the three vendors, Vonage's
// receipts signed by sha256 with the fake's secret; extra settings win.
func startVonageWorld(t *testing.T, extra map[string]string) *vonageWorld {
	t.Helper()
	v := vonagetest.NewServer(vonagetest.Config{SignatureSecret: vonagetest.DefaultSignatureSecret,
		SignatureMethod: vonage.SHA256HMAC, Senders: []string{vonageFromSent}})
	t.Cleanup(v.Close)
	w := &vonageWorld{vonage: v}
	w.worldSMS = startWorldSMSWith(t, func(f *front) map[string]string {
		w.hook = f.URL + "/webhooks/vonage"
		env := map[string]string{
			"NOTIFY_VONAGE_API_KEY": vonagetest.DefaultAPIKey, "NOTIFY_VONAGE_API_SECRET": vonagetest.DefaultAPISecret,
			"NOTIFY_VONAGE_FROM": vonageFrom, "NOTIFY_VONAGE_URL": v.URL, "NOTIFY_VONAGE_CALLBACK_URL": w.hook,
			"NOTIFY_VONAGE_SIGNATURE_SECRET": vonagetest.DefaultSignatureSecret, "NOTIFY_VONAGE_SIGNATURE_METHOD": "sha256",
		}
		maps.Copy(env, extra)
		return env
	})
	w.g.out.waitFor(t, "delivery reports: GET, POST /webhooks/vonage (signed, sha256)")
	return w
}

// vonageReceipt is a receipt of m's first part with status, as a forger
// would write it: unsigned, for a test to sign as it pleases.
func vonageReceipt(m vonagetest.Message, status string, at time.Time) url.Values {
	return url.Values{"msisdn": {m.To}, "to": {m.From}, "messageId": {m.IDs[0]}, "status": {status}, "err-code": {"0"},
		"api-key": {vonagetest.DefaultAPIKey}, "client-ref": {m.ClientRef}, "message-timestamp": {at.UTC().Format(time.DateTime)},
		"timestamp": {strconv.FormatInt(at.Unix(), 10)}, "nonce": {"6c1ae5f0-0d4b-4f0e-a7a4-3c1f0d2e9b11"}}
}

// TestGatewayVonageFailover: a US number with Twilio and Vonage both
// configured, Twilio refusing for now (its 20503), goes to Vonage at
// once, from NOTIFY_VONAGE_FROM, charged once at the US price; the record
// lists both calls. Vonage's signed receipt, through the public front,
// moves it to delivered; forged, unsigned, stale and other keys'
// receipts are 401 and change nothing.
func TestGatewayVonageFailover(t *testing.T) {
	w := startVonageWorld(t, nil)
	g := w.g
	if out := g.out.text(); !strings.Contains(out, "\nsms: smsgateway: country=IN; twilio; vonage (failover in the rules' order; circuit breakers 5/30s)\n") {
		t.Errorf("banner:\n%s", out)
	}
	for _, secret := range []string{vonagetest.DefaultAPISecret, vonagetest.DefaultSignatureSecret} {
		if strings.Contains(g.out.text(), secret) {
			t.Errorf("stdout shows a secret:\n%s", g.out.text())
		}
	}
	// Vonage's series are there from the start.
	fams := g.scrape(t, nil)
	wantSample(t, fams, 0, "notify_sends_total", map[string]string{"kind": "sms", "provider": "vonage", "outcome": "sent"})
	wantSample(t, fams, 0, "notify_webhook_requests_total", map[string]string{"webhook": "vonage", "result": "reports"})

	before := g.balanceMinor(t)
	w.twilio.FailNext(twiliotest.ServiceUnavailable)
	a := g.post(t, "/sms", g.key, `{"to":"+1 415 555 0100","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "vonage" || a.body["cost_minor"] != 70.0 || !strings.Contains(a.raw, `"to":"+14155550100","country":"US"`) {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != before-70 {
		t.Fatalf("balance %d, want %d: charged once, the US price", got, before-70)
	}
	if n, m := len(w.twilio.Requests()), w.twilio.Accepted(); n != 1 || m != 0 {
		t.Fatalf("Twilio: %d requests, %d accepted; want its one refusal", n, m)
	}
	msgs := w.vonage.Messages()
	if len(msgs) != 1 || msgs[0].To != "14155550100" || msgs[0].From != vonageFromSent || msgs[0].Text != "Your order has shipped" ||
		msgs[0].Callback != w.hook || msgs[0].ClientRef == "" || len(msgs[0].IDs) != 1 {
		t.Fatalf("Vonage got %+v", msgs)
	}
	id := a.body["message_id"].(string)
	rec := g.record(t, id)
	tried, _ := rec["tried"].([]any)
	if rec["status"] != "sent" || rec["provider"] != "vonage" || rec["provider_message_id"] != msgs[0].IDs[0] || rec["charged_minor"] != 70.0 || len(tried) != 2 {
		t.Fatalf("record: %v", rec)
	}
	wantTried(t, tried, []map[string]any{
		{"provider": "twilio", "outcome": "failed", "error_code": "unavailable"},
		{"provider": "vonage", "outcome": "sent"},
	})

	ctx := context.Background()
	now := time.Now()
	// A receipt failing the message, of a time, signed with secret by
	// method ("" for none).
	failed := func(at time.Time, apiKey string, method vonage.SignatureMethod, secret string) url.Values {
		p := vonageReceipt(msgs[0], "failed", at)
		p.Set("api-key", apiKey)
		if secret != "" {
			p.Set("sig", vonage.Sign(method, secret, p))
		}
		return p
	}
	key, secret := vonagetest.DefaultAPIKey, vonagetest.DefaultSignatureSecret
	guessed := failed(now, key, "", "")
	guessed.Set("sig", strings.Repeat("ab", 32))
	forgeries := map[string]url.Values{
		"unsigned":            failed(now, key, "", ""),
		"guessed signature":   guessed,
		"another secret":      failed(now, key, vonage.SHA256HMAC, "sig-secret-of-someone-else-000"),
		"md5hash, not sha256": failed(now, key, vonage.MD5Hash, secret),
		"a day old":           failed(now.Add(-25*time.Hour), key, vonage.SHA256HMAC, secret),
		"another API key":     failed(now, "e5f6a7b8", vonage.SHA256HMAC, secret),
	}
	for name, p := range forgeries {
		var ce *vonagetest.CallbackError
		if err := w.vonage.Send(ctx, w.hook, p); !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s: %v, want 401", name, err)
		}
	}
	if rec := g.record(t, id); rec["status"] != "sent" {
		t.Fatalf("a forged receipt moved the record: %v", rec)
	}

	if err := w.vonage.Report(ctx, msgs[0].IDs[0], "delivered", "0"); err != nil {
		t.Fatalf("signed receipt: %v", err)
	}
	rec = g.record(t, id)
	// Each provider's attempt shows in the history: Twilio's, then Vonage's.
	if rec["status"] != "delivered" || historyStates(rec) != "pending,attempting,pending,attempting,sent,delivered" || rec["cost_minor"] != 70.0 {
		t.Fatalf("record after the receipt: %v", rec)
	}
	if err := w.vonage.Send(ctx, w.hook, vonageReceipt(msgs[0], "failed", time.Now())); err == nil {
		t.Fatal("an unsigned receipt after delivery was taken")
	}
	if rec := g.record(t, id); rec["status"] != "delivered" || g.balanceMinor(t) != before-70 {
		t.Fatalf("after a forgery: %v, balance %d", rec, g.balanceMinor(t))
	}

	fams = g.scrape(t, nil)
	wantSample(t, fams, 1, "notify_provider_calls_total", map[string]string{"provider": "twilio", "outcome": "failed"})
	wantSample(t, fams, 1, "notify_provider_calls_total", map[string]string{"provider": "vonage", "outcome": "sent"})
	wantSample(t, fams, 1, "notify_sends_total", map[string]string{"kind": "sms", "provider": "vonage", "outcome": "sent"})
	wantSample(t, fams, 1, "notify_webhook_requests_total", map[string]string{"webhook": "vonage", "result": "reports"})
	wantSample(t, fams, float64(len(forgeries)+1), "notify_webhook_requests_total", map[string]string{"webhook": "vonage", "result": "refused"})
}

// TestGatewayVonageNotAfterAPermanentRefusal: Twilio refusing a message
// for good (21610, the recipient replied STOP) ends it: Vonage is not
// called, the charge is refunded, and the record says who refused it.
func TestGatewayVonageNotAfterAPermanentRefusal(t *testing.T) {
	w := startVonageWorld(t, nil)
	g := w.g
	before := g.balanceMinor(t)
	w.twilio.FailNext(twiliotest.Unsubscribed)
	a := g.post(t, "/sms", g.key, `{"to":"+1 415 555 0100","message":"Your order has shipped"}`)
	if a.status != http.StatusBadGateway || errCode(a) != "rejected" {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if n := len(w.vonage.Requests()); n != 0 {
		t.Fatalf("Vonage got %d requests after a permanent refusal", n)
	}
	if got := g.balanceMinor(t); got != before {
		t.Fatalf("balance %d, want %d: refunded", got, before)
	}
	fams := g.scrape(t, nil)
	wantSample(t, fams, 1, "notify_sends_total", map[string]string{"kind": "sms", "provider": "twilio", "outcome": "failed"})
	wantSample(t, fams, 0, "notify_provider_calls_total", map[string]string{"provider": "vonage", "outcome": "sent"})
}

// TestGatewayVonageByToken: an account without signed webhooks; its
// receipts come to /webhooks/vonage/<token>, in a POST of JSON, and a
// wrong token is 401. The token is never printed. NOTIFY_SMS_ROUTES sends
// everything through Vonage alone: an Indian DLT template goes from its
// DLT header, with its entity and template IDs.
func TestGatewayVonageByToken(t *testing.T) {
	const token = "vonage-dlr-token-0a9c7e55"
	v := vonagetest.NewServer(vonagetest.Config{ReceiptMethod: vonagetest.MethodPOSTJSON, Senders: []string{vonagetest.DefaultFrom, demoDLTHeader}})
	t.Cleanup(v.Close)
	f := newFront(t)
	g := start(t, map[string]string{"NOTIFY_VONAGE_API_KEY": vonagetest.DefaultAPIKey, "NOTIFY_VONAGE_API_SECRET": vonagetest.DefaultAPISecret,
		"NOTIFY_VONAGE_FROM": vonagetest.DefaultFrom, "NOTIFY_VONAGE_URL": v.URL, "NOTIFY_VONAGE_CALLBACK_URL": f.URL + "/webhooks/vonage/" + token,
		"NOTIFY_VONAGE_WEBHOOK_TOKEN": token, "NOTIFY_SMS_ROUTES": "vonage", "NOTIFY_COUNTRIES": "IN,GB", "NOTIFY_SMS_PRICES": "GB=60"})
	g.out.waitFor(t, "delivery reports: GET, POST /webhooks/vonage/$NOTIFY_VONAGE_WEBHOOK_TOKEN (unsigned: the token authenticates)")
	f.to(g)
	if strings.Contains(g.out.text(), token) {
		t.Fatalf("stdout shows the token:\n%s", g.out.text())
	}
	a := g.post(t, "/sms", g.key, `{"to":"+44 7400 123456","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "vonage" || a.body["cost_minor"] != 60.0 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	msgs := v.Messages()
	if len(msgs) != 1 || msgs[0].To != "447400123456" || msgs[0].From != vonagetest.DefaultFrom || !strings.HasSuffix(msgs[0].Callback, "/"+token) {
		t.Fatalf("Vonage got %+v", msgs)
	}
	id := a.body["message_id"].(string)
	ctx := context.Background()
	var ce *vonagetest.CallbackError
	if err := v.Send(ctx, f.URL+"/webhooks/vonage/vonage-dlr-token-guessed1", vonageReceipt(msgs[0], "failed", time.Now())); !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %v, want 401", err)
	}
	if rec := g.record(t, id); rec["status"] != "sent" {
		t.Fatalf("a receipt with a wrong token moved the record: %v", rec)
	}
	if err := v.Report(ctx, msgs[0].IDs[0], "delivered", "0"); err != nil {
		t.Fatalf("receipt: %v", err)
	}
	if rec := g.record(t, id); rec["status"] != "delivered" {
		t.Fatalf("record after the receipt: %v", rec)
	}
	// A callback written with a slash after the token reaches the
	// receiver too (the settings take it without a warning).
	if err := v.Send(ctx, f.URL+"/webhooks/vonage/"+token+"/", vonageReceipt(msgs[0], "delivered", time.Now())); err != nil {
		t.Fatalf("a receipt at the token and a slash: %v", err)
	}

	a = g.post(t, "/sms", g.key, `{"to":"9876543210","route":"dlt","sender_id":"`+demoDLTHeader+`","dlt_template_id":"`+demoDLTTemplate+
		`","message":"Dear Asha, your order 4711 has shipped."}`)
	if a.status != 200 || a.body["provider"] != "vonage" {
		t.Fatalf("dlt: %d %s", a.status, a.raw)
	}
	if msgs = v.Messages(); len(msgs) != 2 || msgs[1].To != "919876543210" || msgs[1].From != demoDLTHeader ||
		msgs[1].EntityID != demoDLTEntity || msgs[1].ContentID != demoDLTTemplate || msgs[1].Text != "Dear Asha, your order 4711 has shipped." {
		t.Fatalf("Vonage got %+v", msgs)
	}
}

// TestGatewayWithoutCallbacks: Twilio and Vonage configured without
// their callback URLs start with a warning each, and send: Twilio is
// given no status callback, Vonage no callback, no receiver is mounted,
// and the messages stay sent.
func TestGatewayWithoutCallbacks(t *testing.T) {
	tw := twiliotest.NewServer(twiliotest.Config{})
	t.Cleanup(tw.Close)
	v := vonagetest.NewServer(vonagetest.Config{})
	t.Cleanup(v.Close)
	g := start(t, map[string]string{
		"NOTIFY_TWILIO_ACCOUNT_SID": twiliotest.DefaultAccountSID, "NOTIFY_TWILIO_AUTH_TOKEN": twiliotest.DefaultAuthToken,
		"NOTIFY_TWILIO_FROM": twiliotest.DefaultFrom, "NOTIFY_TWILIO_URL": tw.URL,
		"NOTIFY_VONAGE_API_KEY": vonagetest.DefaultAPIKey, "NOTIFY_VONAGE_API_SECRET": vonagetest.DefaultAPISecret,
		"NOTIFY_VONAGE_FROM": vonagetest.DefaultFrom, "NOTIFY_VONAGE_URL": v.URL,
		"NOTIFY_SMS_ROUTES": "twilio: country=US; vonage: country=GB", "NOTIFY_COUNTRIES": "US,GB"})
	out := g.out.text()
	for _, s := range []string{
		"NOTIFY_TWILIO_CALLBACK_URL is unset: Twilio is given no status callback, so it sends no status updates: its messages stay sent",
		"NOTIFY_VONAGE_CALLBACK_URL is unset: Vonage's delivery receipts are not taken",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("no warning %q in:\n%s", s, out)
		}
	}
	if strings.Contains(out, "delivery reports:") {
		t.Errorf("a receiver is mounted:\n%s", out)
	}
	for _, tt := range []struct{ to, provider string }{{"+1 415 555 0100", "twilio"}, {"+44 7400 123456", "vonage"}} {
		a := g.post(t, "/sms", g.key, `{"to":"`+tt.to+`","message":"Your order has shipped"}`)
		if a.status != 200 || a.body["provider"] != tt.provider {
			t.Fatalf("%s: %d %s", tt.to, a.status, a.raw)
		}
		if rec := g.record(t, a.body["message_id"].(string)); rec["status"] != "sent" {
			t.Errorf("%s: record %v", tt.to, rec)
		}
	}
	if m := tw.Messages(); len(m) != 1 || m[0].StatusCallback != "" {
		t.Errorf("Twilio got %+v, want no status callback", m)
	}
	if m := v.Messages(); len(m) != 1 || m[0].Callback != "" || m[0].Params.Has("callback") {
		t.Errorf("Vonage got %+v, want no callback", m)
	}
	for _, path := range []string{"/webhooks/twilio", "/webhooks/vonage"} {
		if a := g.send(t, http.MethodPost, g.root()+path, nil, ""); a.status != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, a.status)
		}
	}
}

// TestGatewayReadyzNamesFailingSMSVendors: /readyz probes Twilio (its
// Account) and Vonage (its balance); with several SMS vendors one that
// fails leaves the gateway ready but degraded, naming it, and Vonage
// alone failing makes it unready, without showing its secret or URL.
func TestGatewayReadyzNamesFailingSMSVendors(t *testing.T) {
	w := startVonageWorld(t, nil)
	g := w.g
	status, body := g.monJSON(t, readyzPath)
	checks, _ := body["checks"].(map[string]any)
	if status != 200 || body["status"] != "ready" || checks["provider twilio"] != "ok" || checks["provider vonage"] != "ok" || checks["provider smsgateway"] != "ok" {
		t.Fatalf("readyz: %d %v", status, body)
	}
	w.twilio.SetAccountStatus("suspended")
	w.vonage.FailNextHTTP(http.StatusBadGateway) // a proxy's page in front of Vonage, once
	status, body = g.monJSON(t, readyzPath)
	checks, _ = body["checks"].(map[string]any)
	if status != 200 || body["status"] != "degraded" || checks["provider vonage"] != "unavailable" ||
		checks["provider twilio"] == "ok" || checks["provider twilio"] == nil || checks["provider smsgateway"] != "ok" {
		t.Fatalf("readyz with Twilio suspended and Vonage behind a failing proxy: %d %v", status, body)
	}
	status, body = g.monJSON(t, readyzPath)
	if checks, _ := body["checks"].(map[string]any); status != 200 || body["status"] != "degraded" || checks["provider vonage"] != "ok" || checks["provider twilio"] == "ok" {
		t.Fatalf("readyz with Twilio still suspended: %d %v", status, body)
	}

	v := vonagetest.NewServer(vonagetest.Config{})
	t.Cleanup(v.Close)
	alone := start(t, map[string]string{"NOTIFY_VONAGE_API_KEY": vonagetest.DefaultAPIKey, "NOTIFY_VONAGE_API_SECRET": "vonage-secret-wrong",
		"NOTIFY_VONAGE_FROM": vonagetest.DefaultFrom, "NOTIFY_VONAGE_URL": v.URL})
	status, _, raw := alone.monGet(t, http.MethodGet, readyzPath, nil)
	if status != 503 || !strings.Contains(raw, `"provider vonage":"rejected"`) || !strings.Contains(raw, `"status":"unavailable"`) {
		t.Fatalf("readyz with Vonage refusing the credentials: %d %s", status, raw)
	}
	if strings.Contains(raw, "vonage-secret-wrong") || strings.Contains(raw, v.URL) {
		t.Errorf("readyz shows the secret or the vendor's URL: %s", raw)
	}
}
