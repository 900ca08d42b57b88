package vonage_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
	"github.com/notifykit/notify/record"
)

const dlrPath = "/webhooks/vonage/dlr"

// clock is the time of the fake's receipts and of the receiver's checks.
var clock = time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC)

// hookLoop is a Webhook on a server of its own, behind a recording
// Reporter, and the fake Vonage whose receipts reach it.
type hookLoop struct {
	hook     *vonage.Webhook
	rec      *providertest.Reports
	receiver *httptest.Server
	callback string // the callback Vonage is given
	vendor   *vonagetest.Server
	p        *vonage.Provider
}

// newHookLoop starts the loop: the fake sends receipts in vcfg's method
// and signature, the receiver checks them as change (when not nil) makes
// its configuration.
func newHookLoop(t *testing.T, vcfg vonagetest.Config, change func(*vonage.WebhookConfig)) *hookLoop {
	t.Helper()
	l := &hookLoop{rec: &providertest.Reports{}}
	mux := http.NewServeMux()
	l.receiver = httptest.NewServer(mux)
	t.Cleanup(l.receiver.Close)
	l.callback = l.receiver.URL + dlrPath
	cfg := vonage.WebhookConfig{Reporter: l.rec, SignatureSecret: testSig, SignatureMethod: vcfg.SignatureMethod,
		APIKey: testKey, Now: func() time.Time { return clock }}
	if change != nil {
		change(&cfg)
	}
	var err error
	if l.hook, err = vonage.NewWebhook(cfg); err != nil {
		t.Fatal(err)
	}
	mux.Handle(dlrPath, l.hook)
	vcfg.Now = func() time.Time { return clock }
	l.vendor = newVendor(t, vcfg)
	l.p = newProvider(t, l.vendor, func(c *vonage.Config) { c.Callback = l.callback })
	return l
}

// send sends envelope i with an ID, and returns its message-id.
func (l *hookLoop) send(t *testing.T, i int) string {
	t.Helper()
	env := envelope(i)
	env.ID = "msg-" + strconv.Itoa(i)
	res, err := l.p.Send(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	return res.ProviderMessageID
}

// status returns the receiver's answer to err, the error of a receipt
// the fake sent: 200 for none, the status of a *CallbackError.
func status(t *testing.T, err error) int {
	t.Helper()
	if ce := (*vonagetest.CallbackError)(nil); errors.As(err, &ce) {
		return ce.StatusCode
	} else if err != nil {
		t.Fatal(err)
	}
	return http.StatusOK
}

// TestWebhookStatuses: each receipt status, in each of Vonage's webhook
// methods and signed by each method, becomes the report of its state,
// named by the message-id and by the client-ref; statuses that say
// nothing final are acknowledged and ignored.
func TestWebhookStatuses(t *testing.T) {
	for _, c := range []struct {
		receipts string
		sig      vonage.SignatureMethod
	}{
		{vonagetest.MethodGET, vonage.MD5Hash},
		{vonagetest.MethodPOST, vonage.SHA256HMAC},
		{vonagetest.MethodPOSTJSON, vonage.SHA512HMAC},
		{vonagetest.MethodGET, vonage.MD5HMAC},
		{vonagetest.MethodPOST, vonage.SHA1HMAC},
	} {
		t.Run(c.receipts+" "+string(c.sig), func(t *testing.T) {
			l := newHookLoop(t, vonagetest.Config{ReceiptMethod: c.receipts, SignatureSecret: testSig, SignatureMethod: c.sig}, nil)
			id := l.send(t, 0)
			tests := []struct {
				status, code string
				want         *notify.DeliveryReport
			}{
				{"buffered", "0", nil},
				{"unknown", "1", nil},
				{"accepted", "0", &notify.DeliveryReport{State: record.StateSent}},
				{"delivered", "0", &notify.DeliveryReport{State: record.StateDelivered}},
				{"expired", "2", &notify.DeliveryReport{State: record.StateFailed, VendorCode: "2",
					Error: "vonage: the message was expired: absent subscriber, temporary (err-code 2)"}},
				{"rejected", "6", &notify.DeliveryReport{State: record.StateFailed, VendorCode: "6",
					Error: "vonage: the message was rejected: anti-spam rejection (err-code 6)"}},
				{"failed", "99", &notify.DeliveryReport{State: record.StateFailed, VendorCode: "99",
					Error: "vonage: the message was failed (err-code 99)"}},
				{"failed", "", &notify.DeliveryReport{State: record.StateFailed, VendorCode: "failed",
					Error: "vonage: the message was failed"}},
			}
			var want []notify.DeliveryReport
			for _, tt := range tests {
				if err := l.vendor.Report(t.Context(), id, tt.status, tt.code); err != nil {
					t.Fatalf("%s: %v", tt.status, err)
				}
				if tt.want != nil {
					r := *tt.want
					r.Provider, r.ProviderMessageID, r.Account, r.MessageID = "vonage", id, "acme", "msg-0"
					want = append(want, r)
				}
			}
			if got := l.rec.Take(); !slices.Equal(got, want) {
				t.Errorf("reported %+v\nwant %+v", got, want)
			}
			ignored := uint64(len(tests) - len(want))
			if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: uint64(len(want)), Ignored: ignored}) {
				t.Fatalf("stats = %+v", s)
			}
		})
	}
}

// TestWebhookRefusesForgeries: a receipt without a signature or a
// timestamp, signed with another secret or method, tampered with, too old
// or too far ahead, or of another API key is 401 and reports nothing.
func TestWebhookRefusesForgeries(t *testing.T) {
	l := newHookLoop(t, vonagetest.Config{ReceiptMethod: vonagetest.MethodPOST}, func(c *vonage.WebhookConfig) {
		c.SignatureMethod = vonage.SHA256HMAC
	})
	id := l.send(t, 0)
	at := func(ts time.Time) url.Values {
		return url.Values{"msisdn": {"447700900000"}, "to": {testFrom}, "messageId": {id}, "status": {"delivered"},
			"err-code": {"0"}, "api-key": {testKey}, "client-ref": {notify.MessageRef("acme", "msg-0")},
			"message-timestamp": {ts.Format(time.DateTime)}, "timestamp": {strconv.FormatInt(ts.Unix(), 10)}, "nonce": {"n-1"}}
	}
	signed := func(p url.Values, method vonage.SignatureMethod, secret string) url.Values {
		p.Set("sig", vonage.Sign(method, secret, p))
		return p
	}
	good := signed(at(clock), vonage.SHA256HMAC, testSig)
	change := func(k, v string) url.Values {
		p := url.Values{}
		for name, vals := range good {
			p[name] = vals
		}
		p.Set(k, v)
		return p
	}
	without := func(k string) url.Values {
		p := change("x", "")
		p.Del("x")
		p.Del(k)
		return p
	}
	tests := []struct {
		name   string
		params url.Values
	}{
		{"unsigned", without("sig")},
		{"no timestamp, signed without one", func() url.Values {
			p := at(clock)
			p.Del("timestamp")
			return signed(p, vonage.SHA256HMAC, testSig)
		}()},
		{"not hex", change("sig", "not a signature")},
		{"another secret", signed(at(clock), vonage.SHA256HMAC, "another-secret")},
		{"another method", signed(at(clock), vonage.MD5Hash, testSig)},
		{"tampered status", change("status", "failed")},
		{"tampered reference", change("client-ref", notify.MessageRef("other", "msg-0"))},
		{"a field added", change("err-code", "6")},
		{"over a day old", signed(at(clock.Add(-25*time.Hour)), vonage.SHA256HMAC, testSig)},
		{"ten minutes ahead", signed(at(clock.Add(10*time.Minute)), vonage.SHA256HMAC, testSig)},
		{"another API key", signed(change("api-key", "e5f6a7b8"), vonage.SHA256HMAC, testSig)},
	}
	for _, tt := range tests {
		if code := status(t, l.vendor.Send(t.Context(), l.callback, tt.params)); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", tt.name, code)
		}
	}
	if got := l.rec.Take(); len(got) != 0 {
		t.Fatalf("reported %+v", got)
	}
	// Vonage's HMACs are upper-case hex; either case is read.
	lower := change("sig", strings.ToLower(good.Get("sig")))
	for _, p := range []url.Values{good, lower, signed(at(clock.Add(-23*time.Hour)), vonage.SHA256HMAC, testSig)} {
		if code := status(t, l.vendor.Send(t.Context(), l.callback, p)); code != http.StatusOK {
			t.Fatalf("a genuine receipt: %d", code)
		}
	}
	if s := l.hook.Stats(); s.Refused != uint64(len(tests)) || s.Reports != 3 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookToken: without signed webhooks, the token in the path is the
// receiver's authentication, checked before the body is read.
func TestWebhookToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	l := newHookLoop(t, vonagetest.Config{ReceiptMethod: vonagetest.MethodPOSTJSON}, func(c *vonage.WebhookConfig) {
		c.SignatureSecret, c.Token = "", token
	})
	id := l.send(t, 0)
	params := url.Values{"messageId": {id}, "status": {"delivered"}, "err-code": {"0"}, "api-key": {testKey}}
	// The loop's mux serves dlrPath alone: mount the token's path too.
	mux := http.NewServeMux()
	mux.Handle("/webhooks/vonage/{token}", l.hook)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for name, target := range map[string]string{
		"no token":    l.callback,
		"wrong token": srv.URL + "/webhooks/vonage/" + strings.Repeat("x", 32),
	} {
		if code := status(t, l.vendor.Send(t.Context(), target, params)); code != http.StatusUnauthorized {
			t.Errorf("%s: %d", name, code)
		}
	}
	if code := status(t, l.vendor.Send(t.Context(), srv.URL+"/webhooks/vonage/"+token, params)); code != http.StatusOK {
		t.Fatalf("the right token: %d", code)
	}
	if got := l.rec.Take(); len(got) != 1 || got[0].State != record.StateDelivered || got[0].Account != "" {
		t.Fatalf("reported %+v", got)
	}
	if s := l.hook.Stats(); s.Refused != 2 || s.Reports != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookAnswers: what the receiver answers to a wrong method, an
// oversized, unreadable or incomplete body, an inbound SMS, and a
// Reporter that cannot take the report now or knows no such message.
func TestWebhookAnswers(t *testing.T) {
	l := newHookLoop(t, vonagetest.Config{}, func(c *vonage.WebhookConfig) {
		c.SignatureSecret, c.Token, c.APIKey = "", strings.Repeat("t", 16), ""
	})
	mux := http.NewServeMux()
	mux.Handle(dlrPath+"/{token}", l.hook)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	target := srv.URL + dlrPath + "/" + strings.Repeat("t", 16)
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	post := func(body string, h http.Header) int {
		return vendorhttptest.Do(t, srv.Client(), http.MethodPost, target, []byte(body), h).StatusCode
	}
	if r := vendorhttptest.Do(t, srv.Client(), http.MethodPut, target, nil, nil); r.StatusCode != http.StatusMethodNotAllowed ||
		r.Header.Get("Allow") != "GET, POST" {
		t.Fatalf("PUT: %d, Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
	for name, c := range map[string]struct {
		body   string
		h      http.Header
		status int
	}{
		"too large":       {"messageId=a&status=delivered&x=" + strings.Repeat("x", vonage.DefaultMaxBody), form, http.StatusRequestEntityTooLarge},
		"bad JSON":        {`{"messageId": "a",`, nil, http.StatusBadRequest},
		"JSON array":      {`[{"messageId": "a"}]`, http.Header{"Content-Type": {"application/json"}}, http.StatusBadRequest},
		"bad form":        {"messageId=%zz", form, http.StatusBadRequest},
		"no messageId":    {"status=delivered", form, http.StatusBadRequest},
		"an inbound SMS":  {`{"msisdn":"447700900001","to":"447700900000","messageId":"0B000000","text":"hi","type":"text"}`, nil, http.StatusOK},
		"JSON with types": {`{"messageId":"0C000000","status":"delivered","err-code":0,"concat":true,"x":null}`, nil, http.StatusOK},
	} {
		if got := post(c.body, c.h); got != c.status {
			t.Errorf("%s: %d, want %d", name, got, c.status)
		}
	}
	if got := l.rec.Take(); len(got) != 1 || got[0].ProviderMessageID != "0C000000" {
		t.Fatalf("reported %+v", got)
	}
	l.rec.Fail(notify.Errorf(notify.CodeUnavailable, "store down"))
	if got := post("messageId=a&status=delivered", form); got != http.StatusServiceUnavailable {
		t.Fatalf("a report the Reporter cannot take now: %d", got)
	}
	l.rec.Fail(notify.Errorf(notify.CodeNotFound, "no such message"))
	if r := vendorhttptest.Do(t, srv.Client(), http.MethodGet, target+"?messageId=a&status=delivered", nil, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("an unmatched report: %d", r.StatusCode)
	}
	want := notify.WebhookStats{Reports: 1, Unmatched: 1, Ignored: 1, Malformed: 5, Failed: 1}
	if s := l.hook.Stats(); s != want {
		t.Fatalf("stats = %+v\nwant %+v", s, want)
	}
}

// TestNewWebhookChecksConfig: a configuration that would take forgeries
// or refuse everything is refused, naming the field and never repeating
// a secret.
func TestNewWebhookChecksConfig(t *testing.T) {
	rec := &providertest.Reports{}
	for name, c := range map[string]struct {
		cfg  vonage.WebhookConfig
		says string
	}{
		"no reporter":       {vonage.WebhookConfig{SignatureSecret: testSig}, "Reporter"},
		"no authentication": {vonage.WebhookConfig{Reporter: rec}, "SignatureSecret"},
		"nothing":           {vonage.WebhookConfig{}, "Reporter"},
		"secret line break": {vonage.WebhookConfig{Reporter: rec, SignatureSecret: "s3cret\n"}, "SignatureSecret"},
		"short token":       {vonage.WebhookConfig{Reporter: rec, Token: "s3cret"}, "Token"},
		"unknown method":    {vonage.WebhookConfig{Reporter: rec, SignatureSecret: testSig, SignatureMethod: "sha3"}, "SignatureMethod"},
	} {
		_, err := vonage.NewWebhook(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
