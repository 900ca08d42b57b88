package smsgateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

func TestSendWireFormat(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	hindi := &notify.Envelope{Kind: sms.Kind, To: "9123456789",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "आपका ऑर्डर भेज दिया गया है।"}} // no Encoding: the provider works it out
	long := &notify.Envelope{Kind: sms.Kind, To: "9123456789",
		Content: &sms.Message{Route: sms.RouteSMS, Text: strings.Repeat("a", 161), Encoding: sms.GSM7, Segments: 2}}
	byMessageID := envelope(2)
	sms.MessageOf(byMessageID).DLTMessageID = tplMessageID
	tests := []struct {
		name string
		env  *notify.Envelope
		want smsgatewaytest.Sent
	}{
		{"sms route", envelope(0), smsgatewaytest.Sent{Route: "q", Numbers: []string{"9876500000"},
			Message: "Order 0 has shipped.", Language: "english", Parts: 1, Cost: 25}},
		{"otp route sends only the code", envelope(1), smsgatewaytest.Sent{Route: "otp", Numbers: []string{"9876500001"},
			VariablesValues: testOTP, Parts: 1, Cost: 25}},
		{"dlt route", envelope(2), smsgatewaytest.Sent{Route: "dlt_manual", Numbers: []string{"9876500002"},
			Message: "Your OTP for login is 482913. - ACMECO", SenderID: "ACMECO", TemplateID: tplID, EntityID: entityID,
			Parts: 1, Cost: 25}},
		{"dlt route by the vendor's message ID", byMessageID, smsgatewaytest.Sent{Route: "dlt", Numbers: []string{"9876500002"},
			Message: "Your OTP for login is 482913. - ACMECO", VariablesValues: "login|" + testOTP, SenderID: "ACMECO", TemplateID: tplID,
			Parts: 1, Cost: 25}},
		{"Hindi goes as unicode", hindi, smsgatewaytest.Sent{Route: "q", Numbers: []string{"9123456789"},
			Message: "आपका ऑर्डर भेज दिया गया है।", Language: "unicode", Parts: 1, Cost: 25}},
		{"two segments cost two parts", long, smsgatewaytest.Sent{Route: "q", Numbers: []string{"9123456789"},
			Message: strings.Repeat("a", 161), Language: "english", Parts: 2, Cost: 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(v.Sent())
			res, err := p.Send(t.Context(), tt.env)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			sent := v.Sent()
			if len(sent) != before+1 {
				t.Fatalf("vendor has %d messages, want %d", len(sent), before+1)
			}
			got := sent[before]
			if res.ProviderMessageID != got.RequestID || res.Provider != smsgateway.DefaultName {
				t.Errorf("Result = %+v, vendor request_id %q", res, got.RequestID)
			}
			got.RequestID = ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("vendor got %+v\nwant          %+v", got, tt.want)
			}
		})
	}
}

func TestFlash(t *testing.T) {
	v := newVendor(t)
	p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: v.URL + "/", HTTPClient: v.Client(), Flash: true, Name: "f2s"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Send(t.Context(), envelope(0))
	if err != nil || res.Provider != "f2s" || p.Name() != "f2s" {
		t.Fatalf("Send = %+v, %v", res, err)
	}
	if sent := v.Sent(); len(sent) != 1 || !sent[0].Flash {
		t.Fatalf("vendor got %+v, want a flash SMS", sent)
	}
}

// TestVendorErrors checks the classification of each vendor error code
// as the fake answers it, and that no error carries the key.
func TestVendorErrors(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	tests := []struct {
		code int
		want notify.Code
		text string
	}{
		{smsgatewaytest.InvalidKey, notify.CodeRejected, "vendor status 412: Invalid Authentication, Check Authorization Key (check smsgateway.Config.APIKey)"},
		{smsgatewaytest.DisabledKey, notify.CodeRejected, "Authorization Key Disabled (check smsgateway.Config.APIKey)"},
		{smsgatewaytest.LowBalance, notify.CodeUnavailable, "sufficient wallet balance (the vendor wallet needs a top-up)"},
		{smsgatewaytest.InvalidNumbers, notify.CodeRejected, "vendor status 411: Invalid Numbers"},
		{smsgatewaytest.InvalidSender, notify.CodeRejected, "vendor status 406: Invalid Sender ID"},
		{424, notify.CodeRejected, "vendor status 424: Invalid Message ID"},
		{smsgatewaytest.InvalidTemplate, notify.CodeRejected, "vendor status 425: Invalid Template"},
		{smsgatewaytest.Spamming, notify.CodeRateLimited, "vendor status 995: Spamming detected"},
		{smsgatewaytest.NumericOTPOnly, notify.CodeRejected, "vendor status 997"},
		{500, notify.CodeRejected, "Template/Sender id blacklisted at DLT"},
		{415, notify.CodeRejected, "Account Disabled (the vendor account's settings)"},
		{777, notify.CodeRejected, "vendor status 777: Unknown error"},
	}
	for _, tt := range tests {
		v.FailNext(tt.code)
		_, err := p.Send(t.Context(), envelope(1))
		if got := notify.CodeOf(err); got != tt.want {
			t.Errorf("vendor %d: code %q (%v), want %q", tt.code, got, err, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), "smsgateway: "+tt.text) && !strings.Contains(err.Error(), tt.text) {
			t.Errorf("vendor %d: error %q, want it to contain %q", tt.code, err, tt.text)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testOTP) {
			t.Errorf("vendor %d: error holds a secret: %v", tt.code, err)
		}
		var e *notify.Error
		errors.As(err, &e)
		if tt.code == smsgatewaytest.Spamming && e.RetryAfter != time.Minute {
			t.Errorf("spam RetryAfter = %v", e.RetryAfter)
		}
	}
	if n := v.Accepted(); n != 0 {
		t.Fatalf("vendor accepted %d failed messages", n)
	}
}

func TestWrongKey(t *testing.T) {
	v := newVendor(t)
	const wrong = "not-the-key-8c1d"
	p := newProvider(t, v, wrong)
	_, err := p.Send(t.Context(), envelope(0))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "check smsgateway.Config.APIKey") {
		t.Fatalf("Send with a wrong key: %v", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatalf("the error holds the key: %v", err)
	}
	if _, err := p.Balance(t.Context()); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("Balance with a wrong key: %v", err)
	}
}

func TestVendorChecks(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	bad := func(mod func(*notify.Envelope)) *notify.Envelope {
		env := envelope(2)
		mod(env)
		return env
	}
	tests := []struct {
		name string
		env  *notify.Envelope
		want string
	}{
		{"unapproved sender", bad(func(e *notify.Envelope) { sms.MessageOf(e).SenderID = "OTHERS" }), "406"},
		{"unknown template", bad(func(e *notify.Envelope) { sms.MessageOf(e).DLTTemplateID = "1107000000000000000" }), "425"},
		{"text off the template", bad(func(e *notify.Envelope) { sms.MessageOf(e).Text = "Your OTP is 1234. - ACMECO" }), "425"},
		{"english text that needs unicode", &notify.Envelope{To: "9876543210",
			Content: &sms.Message{Route: sms.RouteSMS, Text: "नमस्ते", Encoding: sms.GSM7}}, "417"},
	}
	for _, tt := range tests {
		_, err := p.Send(t.Context(), tt.env)
		if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "vendor status "+tt.want) {
			t.Errorf("%s: %v, want rejected with vendor status %s", tt.name, err, tt.want)
		}
	}
	v.SetBalance(10)
	_, err := p.Send(t.Context(), envelope(0))
	if notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), "416") {
		t.Errorf("empty vendor wallet: %v", err)
	}
	if v.Accepted() != 0 {
		t.Errorf("vendor accepted %d bad messages", v.Accepted())
	}
}

func TestEnvelopeChecks(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	tests := []struct {
		name  string
		env   *notify.Envelope
		field string
	}{
		{"no SMS content", &notify.Envelope{To: "9876543210"}, "message"},
		{"nil envelope", nil, "message"},
		{"short number", &notify.Envelope{To: "98765", Content: &sms.Message{Text: "hi"}}, "to"},
		{"empty text", &notify.Envelope{To: "9876543210", Content: &sms.Message{Route: sms.RouteSMS}}, "message"},
		{"otp route without a numeric code", &notify.Envelope{To: "9876543210", Content: &sms.Message{Route: sms.RouteOTP, OTP: "12ab"}}, "message"},
		{"dlt route without IDs", &notify.Envelope{To: "9876543210", Content: &sms.Message{Route: sms.RouteDLT, Text: "x", SenderID: "ACMECO"}}, "dlt_template_id"},
		{"unknown route", &notify.Envelope{To: "9876543210", Content: &sms.Message{Route: "voice", Text: "x"}}, "route"},
	}
	for _, tt := range tests {
		_, err := p.Send(t.Context(), tt.env)
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) == 0 || e.Fields[0].Field != tt.field {
			t.Errorf("%s: %v, want invalid_argument on %s", tt.name, err, tt.field)
		}
	}
	if v.Requests() != 0 {
		t.Fatalf("%d requests reached the vendor", v.Requests())
	}
}

// TestHTTPFailures covers answers that are not the vendor's JSON (unknown
// on a 5xx), and the vendor's error bodies on other statuses (certain
// refusals, whatever the status).
func TestHTTPFailures(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	v.FailNextHTTP(404)
	if _, err := p.Send(t.Context(), envelope(0)); notify.CodeOf(err) != notify.CodeRejected {
		t.Errorf("HTTP 404: %v, want rejected", err)
	}

	odd := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    notify.Code
		retry   time.Duration
		outcome record.State
	}{
		{"200 but return false", 200, nil, `{"return": false, "message": "Failed"}`, notify.CodeRejected, 0, record.StateFailed},
		{"200 success without request_id", 200, nil, `{"return": true, "message": ["SMS sent successfully."]}`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"200 with HTML", 200, nil, `<html>maintenance</html>`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"200 with an empty JSON object", 200, nil, `{}`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"429 with Retry-After", 429, map[string]string{"Retry-After": "3"}, `slow down`, notify.CodeRateLimited, 3 * time.Second, record.StateFailed},
		{"500 with an empty body", 500, nil, ``, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"503 with an empty JSON object", 503, nil, `{}`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"503 with the vendor's JSON cut short", 503, nil, `{"return": false, "status_code": 503, "mess`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"502 with JSON of another shape", 502, nil, `{"status": "error", "message": "bad gateway"}`, notify.CodeOutcomeUnknown, 0, record.StateUnknown},
		{"vendor's busy answer on a 503", 503, nil, `{"return": false, "status_code": 503, "message": "busy"}`, notify.CodeUnavailable, 0, record.StateFailed},
		{"vendor error with HTTP 500 and an unknown code", 500, nil, `{"return": false, "status_code": 888, "message": "busy"}`, notify.CodeUnavailable, 0, record.StateFailed},
		{"vendor error with HTTP 502 and no code", 502, nil, `{"return": false, "message": "busy"}`, notify.CodeUnavailable, 0, record.StateFailed},
		{"vendor error with HTTP 429 and an unknown code", 429, map[string]string{"Retry-After": "4"}, `{"return": false, "status_code": 429, "message": "slow down"}`, notify.CodeRateLimited, 4 * time.Second, record.StateFailed},
		{"vendor's documented wallet error on a 503", 503, nil, `{"return": false, "status_code": 416, "message": "You don't have sufficient wallet balance"}`, notify.CodeUnavailable, 0, record.StateFailed},
		{"vendor's documented refusal on a 500", 500, nil, `{"return": false, "status_code": 411, "message": "Invalid Numbers"}`, notify.CodeRejected, 0, record.StateFailed},
	}
	for _, tt := range odd {
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			for k, val := range tt.header {
				w.Header().Set(k, val)
			}
			w.WriteHeader(tt.status)
			_, _ = io.WriteString(w, tt.body)
		}))
		p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Send(t.Context(), envelope(0))
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != tt.want || e.RetryAfter != tt.retry {
			t.Errorf("%s: %v (retry after %v), want %q", tt.name, err, e.RetryAfter, tt.want)
		}
		if got := notify.OutcomeOf(err); got != tt.outcome {
			t.Errorf("%s: outcome %v, want %v", tt.name, got, tt.outcome)
		}
		if tt.outcome == record.StateUnknown && !strings.Contains(err.Error(), "may have accepted the message") {
			t.Errorf("%s: the message %q does not say why it is not retried", tt.name, err)
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("%s: the vendor got %d requests, want 1", tt.name, n)
		}
		_ = p.Close()
		srv.Close()
	}
}

// TestUnknownOutcomes: nothing in these answers proves that the vendor
// refused the message, so the outcome is unknown and the send is not
// retried (a retry could send the SMS twice):
//   - a proxy in front of the vendor answers 5xx with its own page, and
//     the vendor never saw the message;
//   - the vendor took the message and a proxy answered 504 for it;
//   - the vendor took the message and the connection broke before the
//     answer.
func TestUnknownOutcomes(t *testing.T) {
	type test struct {
		name     string
		fail     func(*smsgatewaytest.Server)
		accepted int    // messages the vendor took
		says     string // in the error
	}
	var tests []test
	for _, status := range []int{500, 502, 503, 504} {
		tests = append(tests, test{fmt.Sprintf("HTTP %d from a proxy", status),
			func(v *smsgatewaytest.Server) { v.FailNextHTTP(status) }, 0, fmt.Sprintf("HTTP %d", status)})
	}
	tests = append(tests,
		test{"504 after acceptance", func(v *smsgatewaytest.Server) { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) }, 1, "HTTP 504"},
		test{"lost answer", (*smsgatewaytest.Server).BreakNext, 1, "may have accepted the message"})
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	for _, tt := range tests {
		requests, accepted := v.Requests(), v.Accepted()
		tt.fail(v)
		_, err := p.Send(t.Context(), envelope(0))
		if notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeOutcomeUnknown {
			t.Errorf("%s: %v (code %q), want outcome_unknown", tt.name, err, notify.CodeOf(err))
			continue
		}
		if !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: the message %q does not say %q", tt.name, err, tt.says)
		}
		if got, took := v.Requests()-requests, v.Accepted()-accepted; got != 1 || took != tt.accepted {
			t.Errorf("%s: the vendor took %d of %d requests, want exactly %d of 1", tt.name, took, got, tt.accepted)
		}
	}
}

func TestSlowAnswerAfterWriteIsUnknown(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	v.SetLatency(10 * time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := p.Send(ctx, envelope(0))
	if notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow vendor: %v (code %q)", err, notify.CodeOf(err))
	}
}

// TestNotSentIsRetryable: failures before the request was written are
// temporary, attempt timeouts included.
func TestNotSentIsRetryable(t *testing.T) {
	// A closed port: the dial fails.
	addr := vendorhttptest.ClosedAddr(t)
	p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Send(t.Context(), envelope(0))
	if notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err) {
		t.Fatalf("refused connection: %v", err)
	}

	// A context that ended before Send.
	canceled, cancelNow := context.WithCancel(t.Context())
	cancelNow()
	_, err = p.Send(canceled, envelope(0))
	if !notify.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v (code %q), want unavailable wrapping context.Canceled", err, notify.CodeOf(err))
	}

	// A dial that hangs until the attempt's deadline.
	hang := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	p, err = smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: "http://" + addr, HTTPClient: hang})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = p.Send(ctx, envelope(0))
	if !notify.IsRetryable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung dial: %v (code %q), want unavailable wrapping the deadline", err, notify.CodeOf(err))
	}
}

func TestBalance(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	m, err := p.Balance(t.Context())
	if err != nil || m.Minor != 500000 || m.Currency != record.INR() {
		t.Fatalf("Balance = %v, %v", m, err)
	}
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	if m, _ := p.Balance(t.Context()); m.Minor != 500000-25 {
		t.Fatalf("Balance after a send = %v", m)
	}
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	v.Close()
	if err := p.CheckHealth(t.Context()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("CheckHealth of a stopped vendor: %v", err)
	}
}

func TestBalanceFormats(t *testing.T) {
	tests := []struct {
		body  string
		minor int64
		bad   bool
	}{
		{`{"return": true, "wallet": "1234.5000", "sms_count": 4938}`, 123450, false},
		{`{"return": true, "wallet": "2.5"}`, 250, false},
		{`{"return": true, "wallet": 99.999}`, 9999, false},
		{`{"return": true, "wallet": "12"}`, 1200, false},
		{`{"return": true, "wallet": "-3.10"}`, -310, false},
		{`{"return": true, "wallet": "abc"}`, 0, true},
		{`{"return": true, "wallet": null}`, 0, true},
		{`{"return": true}`, 0, true},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/dev/wallet" || r.Header.Get("authorization") != testKey {
				http.Error(w, "wrong call", http.StatusTeapot)
				return
			}
			_, _ = io.WriteString(w, tt.body)
		}))
		p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: srv.URL, HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.Balance(t.Context())
		switch {
		case tt.bad && notify.CodeOf(err) != notify.CodeInternal:
			t.Errorf("%s: %v, %v; want an internal error", tt.body, m, err)
		case !tt.bad && (err != nil || m.Minor != tt.minor):
			t.Errorf("%s: %v, %v; want %d paise", tt.body, m, err, tt.minor)
		}
		srv.Close()
	}
}

// TestBalanceBehindProxy: the wallet call sends nothing, so a proxy's 502
// for it is a certain, temporary failure.
func TestBalanceBehindProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
	}))
	defer srv.Close()
	p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Balance(t.Context())
	if notify.CodeOf(err) != notify.CodeUnavailable || strings.Contains(err.Error(), "may have accepted") {
		t.Fatalf("Balance behind a failing proxy: %v", err)
	}
}

func TestNewConfig(t *testing.T) {
	bad := []smsgateway.Config{
		{},
		{APIKey: "k\r\nX-Evil: 1"},
		{APIKey: "k\x00"},
		{APIKey: "k", BaseURL: "ftp://vendor"},
		{APIKey: "k", BaseURL: "https://user:pw@vendor"},
		{APIKey: "k", BaseURL: "https://vendor?x=1"},
		{APIKey: "k", BaseURL: "://"},
	}
	for _, cfg := range bad {
		if _, err := smsgateway.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted it", cfg)
		} else if cfg.APIKey != "" && strings.Contains(err.Error(), cfg.APIKey) {
			t.Errorf("New error holds the key: %v", err)
		}
	}
	p, err := smsgateway.New(smsgateway.Config{APIKey: "k"})
	if err != nil || p.Name() != smsgateway.DefaultName {
		t.Fatalf("New with defaults: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBaseURLForms: Config.BaseURL may be the vendor's base URL or the
// bulk SMS endpoint the vendor documents; either way the vendor sees
// /dev/bulkV2 for a send and /dev/wallet for the balance, under whatever
// path prefix the URL has (a proxy's), and never the endpoint twice.
func TestBaseURLForms(t *testing.T) {
	srv, paths := vendorhttptest.Paths(t, 1, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/dev/wallet") {
			_, _ = io.WriteString(w, `{"return": true, "wallet": "12.50"}`)
			return
		}
		_, _ = io.WriteString(w, `{"return": true, "request_id": "r1", "message": ["SMS sent successfully."]}`)
	})
	for _, tt := range []struct{ base, prefix string }{
		{srv.URL, ""},
		{srv.URL + "/", ""},
		{srv.URL + "/dev/bulkV2", ""},
		{srv.URL + "/dev/bulkV2/", ""},
		{srv.URL + "/DEV/BULKV2", ""},
		{srv.URL + "/sms-proxy", "/sms-proxy"},
		{srv.URL + "/sms-proxy/dev/bulkV2", "/sms-proxy"},
	} {
		p, err := smsgateway.New(smsgateway.Config{APIKey: testKey, BaseURL: tt.base, HTTPClient: srv.Client()})
		if err != nil {
			t.Fatalf("%s: %v", tt.base, err)
		}
		if _, err := p.Send(t.Context(), envelope(0)); err != nil {
			t.Fatalf("%s: Send: %v", tt.base, err)
		}
		if got := <-paths; got != tt.prefix+"/dev/bulkV2" {
			t.Errorf("BaseURL %s: the send went to %s, want %s/dev/bulkV2", tt.base, got, tt.prefix)
		}
		if _, err := p.Balance(t.Context()); err != nil {
			t.Fatalf("%s: Balance: %v", tt.base, err)
		}
		if got := <-paths; got != tt.prefix+"/dev/wallet" {
			t.Errorf("BaseURL %s: the wallet call went to %s, want %s/dev/wallet", tt.base, got, tt.prefix)
		}
	}
}
