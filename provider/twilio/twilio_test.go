package twilio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/record"
)

// capture is a server that records each request and answers with the
// answer the test set.
type capture struct {
	mu      sync.Mutex
	reqs    []*http.Request
	forms   []url.Values
	status  int
	header  http.Header
	body    string
	handled int
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, r)
	c.forms = append(c.forms, form)
	c.handled++
	for k, vs := range c.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(c.status)
	_, _ = io.WriteString(w, c.body)
}

func (c *capture) answer(status int, header http.Header, body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.header, c.body = status, header, body
}

func (c *capture) last() (*http.Request, url.Values, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		return nil, nil, 0
	}
	return c.reqs[len(c.reqs)-1], c.forms[len(c.forms)-1], c.handled
}

// newCapture starts a capturing server that answers a created message.
func newCapture(t *testing.T) (*capture, *httptest.Server) {
	t.Helper()
	c := &capture{}
	c.answer(http.StatusCreated, nil, created("SM"+strings.Repeat("a", 32)))
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return c, srv
}

func created(sid string) string {
	return `{"sid": "` + sid + `", "status": "queued", "account_sid": "` + testSID + `", "api_version": "2010-04-01", "error_code": null}`
}

func twilioErr(status, code int, msg string) string {
	return fmt.Sprintf(`{"code": %d, "message": %q, "more_info": "https://www.twilio.com/docs/errors/%d", "status": %d}`, code, msg, code, status)
}

// TestSendWireFormat checks each request as sent: the endpoint, basic
// authentication, the form's content type and its parameters.
func TestSendWireFormat(t *testing.T) {
	c, srv := newCapture(t)
	tests := []struct {
		name       string
		cfg        twilio.Config
		env        *notify.Envelope
		user, pass string
		want       url.Values
	}{
		{"number, auth token", twilio.Config{From: testFrom, AuthToken: testToken},
			envelope(0), testSID, testToken,
			url.Values{"To": {"+919876500000"}, "From": {testFrom}, "Body": {"Order 0 has shipped."}}},
		{"E.164 kept, OTP text", twilio.Config{From: "ACMEIN", AuthToken: testToken},
			envelope(1), testSID, testToken,
			url.Values{"To": {"+14155550001"}, "From": {"ACMEIN"}, "Body": {testOTP + " is your Acme verification code."}}},
		{"service, API key", twilio.Config{MessagingServiceSID: testMG, APIKeySID: testKeySID, APIKeySecret: testKeySecret},
			envelope(2), testKeySID, testKeySecret,
			url.Values{"To": {"+919876500002"}, "MessagingServiceSid": {testMG}, "Body": {"Order 2 has shipped."}}},
		{"both senders", twilio.Config{From: "12345", MessagingServiceSID: testMG, AuthToken: testToken},
			&notify.Envelope{To: "+14155550100", Content: &sms.Message{Text: "hi"}}, testSID, testToken,
			url.Values{"To": {"+14155550100"}, "From": {"12345"}, "MessagingServiceSid": {testMG}, "Body": {"hi"}}},
		{"callback without a reference", twilio.Config{From: testFrom, AuthToken: testToken, StatusCallback: "https://h.example/s?x=1"},
			&notify.Envelope{To: "+447700900123", Content: &sms.Message{Text: "hi"}}, testSID, testToken,
			url.Values{"To": {"+447700900123"}, "From": {testFrom}, "Body": {"hi"}, "StatusCallback": {"https://h.example/s?x=1"}}},
		{"callback with a reference", twilio.Config{From: testFrom, AuthToken: testToken, StatusCallback: "https://h.example/s?"},
			&notify.Envelope{ID: "m1", Account: &notify.Account{ID: "acme"}, To: "+447700900123", Content: &sms.Message{Text: "hi"}}, testSID, testToken,
			url.Values{"To": {"+447700900123"}, "From": {testFrom}, "Body": {"hi"}, "StatusCallback": {"https://h.example/s?notify_ref=a%3Dacme%26m%3Dm1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.AccountSID, cfg.BaseURL = testSID, srv.URL+"/"
			p, err := twilio.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			res, err := p.Send(context.Background(), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProviderMessageID != "SM"+strings.Repeat("a", 32) || res.Provider != "twilio" {
				t.Errorf("result = %+v", res)
			}
			r, form, _ := c.last()
			user, pass, ok := r.BasicAuth()
			switch {
			case r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+testSID+"/Messages.json":
				t.Errorf("%s %s", r.Method, r.URL.Path)
			case !ok || user != tt.user || pass != tt.pass:
				t.Errorf("basic auth %q (ok %v), want the %s credentials", user, ok, tt.user[:2])
			case r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.Header.Get("Accept") != "application/json":
				t.Errorf("Content-Type %q, Accept %q", r.Header.Get("Content-Type"), r.Header.Get("Accept"))
			}
			if fmt.Sprint(form) != fmt.Sprint(tt.want) {
				t.Errorf("form = %v\nwant %v", form, tt.want)
			}
		})
	}
}

// TestSendRefusesWhatTwilioCannotTake: an envelope Twilio could not take
// is CodeInvalidArgument naming the field, and nothing is sent.
func TestSendRefusesWhatTwilioCannotTake(t *testing.T) {
	c, srv := newCapture(t)
	p, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	text := func(to, s string) *notify.Envelope {
		return &notify.Envelope{To: to, Content: &sms.Message{Text: s}}
	}
	tests := []struct {
		name  string
		env   *notify.Envelope
		field string
	}{
		{"nil envelope", nil, "message"},
		{"no content", &notify.Envelope{To: "+14155550100"}, "message"},
		{"other content", &notify.Envelope{To: "+14155550100", Content: "hi"}, "message"},
		{"10 digits, national", text("9876543210", "hi"), "to"},
		{"9 digits", text("987654321", "hi"), "to"},
		{"11 digits without +", text("14155550100", "hi"), "to"},
		{"+ and a 0", text("+04155550100", "hi"), "to"},
		{"spaces", text("+1 415 555 0100", "hi"), "to"},
		{"16 digits", text("+1234567890123456", "hi"), "to"},
		{"empty text", text("+14155550100", " "), "message"},
		{"1,601 characters", text("+14155550100", strings.Repeat("x", 1601)), "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Send(context.Background(), tt.env)
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != tt.field {
				t.Fatalf("err = %v, want invalid_argument on %s", err, tt.field)
			}
		})
	}
	if _, err := p.Send(context.Background(), text("+14155550100", strings.Repeat("é", 1600))); err != nil {
		t.Fatalf("1,600 characters: %v", err)
	}
	if _, _, n := c.last(); n != 1 {
		t.Fatalf("%d requests reached the vendor, want 1", n)
	}
}

// TestNewChecksConfig: every bad Config is refused, naming its field and
// never repeating a secret.
func TestNewChecksConfig(t *testing.T) {
	ok := twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom}
	const secret = "s3cret\nline"
	tests := []struct {
		name   string
		change func(*twilio.Config)
		field  string
	}{
		{"no account", func(c *twilio.Config) { c.AccountSID = "" }, "AccountSID"},
		{"account of 31 digits", func(c *twilio.Config) { c.AccountSID = testSID[:33] }, "AccountSID"},
		{"account not AC", func(c *twilio.Config) { c.AccountSID = "SK" + testSID[2:] }, "AccountSID"},
		{"no token", func(c *twilio.Config) { c.AuthToken = "" }, "AuthToken"},
		{"token with a line break", func(c *twilio.Config) { c.AuthToken = secret }, "AuthToken"},
		{"token and key", func(c *twilio.Config) { c.APIKeySID, c.APIKeySecret = testKeySID, testKeySecret }, "AuthToken"},
		{"key without secret", func(c *twilio.Config) { c.AuthToken, c.APIKeySID = "", testKeySID }, "APIKeySecret"},
		{"secret without key", func(c *twilio.Config) { c.AuthToken, c.APIKeySecret = "", testKeySecret }, "APIKeySID"},
		{"key not SK", func(c *twilio.Config) { c.AuthToken, c.APIKeySID, c.APIKeySecret = "", testSID, testKeySecret }, "APIKeySID"},
		{"secret with a line break", func(c *twilio.Config) { c.AuthToken, c.APIKeySID, c.APIKeySecret = "", testKeySID, secret }, "APIKeySecret"},
		{"no sender", func(c *twilio.Config) { c.From = "" }, "From"},
		{"From of 12 letters", func(c *twilio.Config) { c.From = "ACMECORPORAT" }, "From"},
		{"From of digits only", func(c *twilio.Config) { c.From = "123456789" }, "From"},
		{"From with a dot", func(c *twilio.Config) { c.From = "ACME.IN" }, "From"},
		{"service not MG", func(c *twilio.Config) { c.MessagingServiceSID = testSID }, "MessagingServiceSID"},
		{"relative callback", func(c *twilio.Config) { c.StatusCallback = "/status" }, "StatusCallback"},
		{"callback host with _", func(c *twilio.Config) { c.StatusCallback = "https://my_host.example/s" }, "StatusCallback"},
		{"base URL with a key", func(c *twilio.Config) { c.BaseURL = "https://AC:tok@api.twilio.com" }, "BaseURL"},
		{"base URL ftp", func(c *twilio.Config) { c.BaseURL = "ftp://api.twilio.com" }, "BaseURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.change(&cfg)
			_, err := twilio.New(cfg)
			if err == nil {
				t.Fatal("New succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, "Config."+tt.field) {
				t.Errorf("error %q does not name Config.%s", msg, tt.field)
			}
			for _, s := range []string{testToken, testKeySecret, secret, "tok@"} {
				if strings.Contains(msg, s) {
					t.Errorf("error %q repeats a secret", msg)
				}
			}
		})
	}
	for _, from := range []string{"+14155550100", "12345", "ACME IN", "A-1_b+&", "1A"} {
		cfg := ok
		cfg.From = from
		if _, err := twilio.New(cfg); err != nil {
			t.Errorf("From %q: %v", from, err)
		}
	}
	cfg := ok
	cfg.BaseURL = "https://api.twilio.com/2010-04-01/"
	if _, err := twilio.New(cfg); err != nil {
		t.Errorf("a base URL with the version: %v", err)
	}
}

// TestErrorClassification sends against each answer and checks the code,
// the outcome, RetryAfter and the *twilio.Error it carries.
func TestErrorClassification(t *testing.T) {
	c, srv := newCapture(t)
	p, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	retry7 := http.Header{"Retry-After": {"7"}}
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		code       notify.Code
		retryAfter time.Duration
		vendorCode int    // the *twilio.Error's code; 0 for none
		text       string // in the error's text
	}{
		{"invalid To", 400, nil, twilioErr(400, 21211, "The 'To' number +1555 is not a valid phone number."), notify.CodeRejected, 0, 21211, "not a valid phone number"},
		{"region not enabled", 400, nil, twilioErr(400, 21408, "Permission to send an SMS has not been enabled"), notify.CodeRejected, 0, 21408, "Geographic Permissions"},
		{"unsubscribed", 400, nil, twilioErr(400, 21610, "Attempt to send to unsubscribed recipient"), notify.CodeRejected, 0, 21610, "STOP"},
		{"not mobile", 400, nil, twilioErr(400, 21614, "'To' number is not a valid mobile number"), notify.CodeRejected, 0, 21614, "not a mobile number"},
		{"not reachable", 400, nil, twilioErr(400, 21612, "not currently reachable"), notify.CodeRejected, 0, 21612, "cannot be reached"},
		{"bad From", 400, nil, twilioErr(400, 21606, "not a valid message-capable Twilio phone number"), notify.CodeRejected, 0, 21606, "Config.From"},
		{"no body", 400, nil, twilioErr(400, 21602, "Message body is required."), notify.CodeRejected, 0, 21602, "empty"},
		{"too long", 400, nil, twilioErr(400, 21617, "exceeds the 1600 character limit"), notify.CodeRejected, 0, 21617, "1,600"},
		{"credentials", 401, nil, twilioErr(401, 20003, "Authenticate"), notify.CodeRejected, 0, 20003, "check twilio Config.AccountSID and AuthToken"},
		{"unknown 4xx code", 400, nil, twilioErr(400, 21999, "Something new"), notify.CodeRejected, 0, 21999, "Something new"},
		{"too many requests", 429, retry7, twilioErr(429, 20429, "Too Many Requests"), notify.CodeRateLimited, 7 * time.Second, 20429, ""},
		{"20429 on a 400", 400, nil, twilioErr(400, 20429, "Too Many Requests"), notify.CodeRateLimited, 0, 20429, ""},
		{"queue full", 400, retry7, twilioErr(400, 21611, "exceeded the maximum number of queued messages"), notify.CodeRateLimited, 7 * time.Second, 21611, "queue is full"},
		{"unknown code on a 429", 429, nil, twilioErr(429, 29999, "slow down"), notify.CodeRateLimited, 0, 29999, ""},
		{"internal error", 500, nil, twilioErr(500, 20500, "Internal Server Error"), notify.CodeUnavailable, 0, 20500, ""},
		{"unavailable", 503, nil, twilioErr(503, 20503, "Service Unavailable"), notify.CodeUnavailable, 0, 20503, ""},
		{"unknown code on a 502", 502, nil, twilioErr(502, 20599, "busy"), notify.CodeUnavailable, 0, 20599, "busy"},
		{"error object on a 201", 201, nil, twilioErr(400, 21211, "invalid"), notify.CodeRejected, 0, 21211, ""},
		{"bare 429", 429, retry7, "", notify.CodeRateLimited, 7 * time.Second, 0, "HTTP 429"},
		{"proxy 502 page", 502, nil, "<html>bad gateway</html>", notify.CodeOutcomeUnknown, 0, 0, "may have accepted"},
		{"empty 503", 503, nil, "", notify.CodeOutcomeUnknown, 0, 0, "HTTP 503"},
		{"JSON of another shape on a 500", 500, nil, `{"message": "upstream failed"}`, notify.CodeOutcomeUnknown, 0, 0, "not Twilio's error object"},
		{"code not Twilio's on a 503", 503, nil, `{"code": 503, "message": "Service Unavailable"}`, notify.CodeOutcomeUnknown, 0, 0, ""},
		{"201 without a sid", 201, nil, `{"status": "queued"}`, notify.CodeOutcomeUnknown, 0, 0, "no message sid"},
		{"201 with another sid", 201, nil, created("CA" + strings.Repeat("a", 32)), notify.CodeOutcomeUnknown, 0, 0, "no message sid"},
		{"200 cut short", 200, nil, created("SM" + strings.Repeat("a", 32))[:20], notify.CodeOutcomeUnknown, 0, 0, "not Twilio's JSON"},
		{"proxy 404 page", 404, nil, "<html>not found</html>", notify.CodeRejected, 0, 0, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.answer(tt.status, tt.header, tt.body)
			_, err := p.Send(context.Background(), envelope(1))
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Fatalf("err = %v (code %q), want %q", err, notify.CodeOf(err), tt.code)
			}
			if want := record.StateFailed; tt.code == notify.CodeOutcomeUnknown && notify.OutcomeOf(err) != record.StateUnknown ||
				tt.code != notify.CodeOutcomeUnknown && notify.OutcomeOf(err) != want {
				t.Errorf("outcome %v for code %q", notify.OutcomeOf(err), tt.code)
			}
			if e.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			var te *twilio.Error
			switch {
			case tt.vendorCode == 0 && errors.As(err, &te):
				t.Errorf("a *twilio.Error (%v) from an answer that is not Twilio's", te)
			case tt.vendorCode != 0 && (!errors.As(err, &te) || te.Code != tt.vendorCode || te.Status != tt.status ||
				te.MoreInfo != fmt.Sprintf("https://www.twilio.com/docs/errors/%d", tt.vendorCode)):
				t.Errorf("*twilio.Error = %+v, want code %d on HTTP %d", te, tt.vendorCode, tt.status)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.text) {
				t.Errorf("error %q does not say %q", msg, tt.text)
			}
			if strings.Contains(msg, testToken) || strings.Contains(msg, testOTP) {
				t.Errorf("error %q has a secret", msg)
			}
		})
	}
}

// TestErrorRedactsTheOTP: Twilio's text quoting the message's code keeps
// it out of the error.
func TestErrorRedactsTheOTP(t *testing.T) {
	c, srv := newCapture(t)
	p, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c.answer(400, nil, twilioErr(400, 30007, "Message '"+testOTP+" is your code' was filtered\nby the carrier"))
	_, err = p.Send(context.Background(), envelope(1))
	var te *twilio.Error
	if !errors.As(err, &te) || strings.Contains(err.Error(), testOTP) || !strings.Contains(te.Message, "[otp] is your code") ||
		strings.ContainsAny(te.Message, "\n") {
		t.Fatalf("err = %v", err)
	}
}

// TestTransportFailures: a refused connection is a certain refusal, a
// connection that breaks after the request or an error page after Twilio
// created the message an unknown outcome, and a context that ended before
// the send keeps its error visible.
func TestTransportFailures(t *testing.T) {
	v := newVendor(t, twiliotest.Config{})
	p := newProvider(t, v, nil)

	v.BreakNext()
	_, err := p.Send(context.Background(), envelope(0))
	if notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) {
		t.Errorf("a broken connection: %v, want an unknown outcome", err)
	}
	v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout)
	if _, err := p.Send(context.Background(), envelope(0)); notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Errorf("a 504 page after Twilio took it: %v", err)
	}
	v.FailNextHTTP(http.StatusBadGateway)
	if _, err := p.Send(context.Background(), envelope(0)); notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Errorf("a 502 page: %v", err)
	}
	if v.Accepted() != 2 {
		t.Fatalf("accepted %d, want 2", v.Accepted())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Send(ctx, envelope(0)); !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("a canceled context: %v", err)
	}

	// Nothing listens at a closed server's address: the dial is refused.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	q, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: closed.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Send(context.Background(), envelope(0))
	if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("a refused dial: %v, want a retryable unavailable", err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultClientFollowsNoRedirect: a redirect is answered as it is, a
// refusal, with the message sent nowhere else.
func TestDefaultClientFollowsNoRedirect(t *testing.T) {
	c, srv := newCapture(t)
	c.answer(http.StatusTemporaryRedirect, http.Header{"Location": {"/elsewhere"}}, "")
	p, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Send(context.Background(), envelope(0))
	if notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("a redirect: %v", err)
	}
	if r, _, n := c.last(); n != 1 || r.URL.Path == "/elsewhere" {
		t.Fatalf("%d requests, the last to %s", n, r.URL.Path)
	}
	// Close releases the connections; Send still works.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c.answer(http.StatusCreated, nil, created("SM"+strings.Repeat("b", 32)))
	if _, err := p.Send(context.Background(), envelope(0)); err != nil {
		t.Fatalf("Send after Close: %v", err)
	}
}
