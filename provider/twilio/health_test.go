package twilio_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// A Main API key of the account, which reads the Account resource.
const (
	mainKeySID    = "SKffeeddccbbaa99887766554433221100"
	mainKeySecret = "main-key-secret-Zm9vYmFy"
)

// newHealthVendor starts the fake with the Standard test key and a Main
// key.
func newHealthVendor(t *testing.T) *twiliotest.Server {
	t.Helper()
	return newVendor(t, twiliotest.Config{APIKeys: map[string]string{testKeySID: testKeySecret, mainKeySID: mainKeySecret},
		MainKeys: []string{mainKeySID}})
}

// withKey makes a Config use the API key sid and secret.
func withKey(sid, secret string) func(*twilio.Config) {
	return func(c *twilio.Config) { c.AuthToken, c.APIKeySID, c.APIKeySecret = "", sid, secret }
}

// checkHealthErr fails t unless err is code and holds want, and no secret.
func checkHealthErr(t *testing.T, err error, code notify.Code, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("CheckHealth = nil, want %s (%q)", code, want)
	case notify.CodeOf(err) != code || !strings.Contains(err.Error(), want):
		t.Fatalf("CheckHealth = %s %q, want %s holding %q", notify.CodeOf(err), err, code, want)
	}
	for _, secret := range []string{testToken, testKeySecret, mainKeySecret} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("%q holds a secret", err)
		}
	}
}

// TestCheckHealth: the account is fetched, once, with the send's
// credentials, and only an active account is healthy.
func TestCheckHealth(t *testing.T) {
	v := newHealthVendor(t)
	p := newProvider(t, v, nil)
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth of an active account: %v", err)
	}
	reqs := v.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Path != v.AccountPath() ||
		reqs[0].User != testSID || !reqs[0].Password || reqs[0].Accept != "application/json" || len(reqs[0].Body) != 0 {
		t.Fatalf("requests = %+v, want one GET of %s", reqs, v.AccountPath())
	}

	for status, want := range map[string]string{
		"suspended": "the Twilio account is suspended",
		"closed":    "the Twilio account is closed",
		"frozen":    `the Twilio account's status is "frozen", not active`,
	} {
		v.SetAccountStatus(status)
		checkHealthErr(t, p.CheckHealth(t.Context()), notify.CodeRejected, want)
	}
	// The fake refuses sends too, as Twilio does an inactive account's.
	var te *twilio.Error
	if _, err := p.Send(t.Context(), envelope(0)); !errors.As(err, &te) || te.Code != twiliotest.AccountNotActive {
		t.Fatalf("Send from a frozen account: %v", err)
	}
	v.SetAccountStatus("active")
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth of the account active again: %v", err)
	}
	if v.Accepted() != 0 {
		t.Fatalf("the fake accepted %d messages", v.Accepted())
	}
}

// TestCheckHealthCredentials: refused credentials say so, without the
// secret; a Standard API key, which may not read the account, is checked
// on the account's numbers instead.
func TestCheckHealthCredentials(t *testing.T) {
	v := newHealthVendor(t)
	const refused = "Twilio refused the credentials: check twilio Config.AccountSID and AuthToken, or APIKeySID and APIKeySecret"
	tests := []struct {
		name     string
		change   func(*twilio.Config)
		requests int
		want     string // "" for healthy
	}{
		{"auth token", nil, 1, ""},
		{"wrong auth token", func(c *twilio.Config) { c.AuthToken = "0123456789abcdef0123456789abcdef" }, 1, refused},
		{"Main API key", withKey(mainKeySID, mainKeySecret), 1, ""},
		{"Standard API key", withKey(testKeySID, testKeySecret), 2, ""},
		{"wrong API key secret", withKey(testKeySID, mainKeySecret), 2, refused},
		{"unknown API key", withKey("SK0123456789abcdef0123456789abcdef", testKeySecret), 2, refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, v, tt.change)
			before := len(v.Requests())
			err := p.CheckHealth(t.Context())
			if tt.want == "" && err != nil {
				t.Fatalf("CheckHealth: %v", err)
			}
			if tt.want != "" {
				checkHealthErr(t, err, notify.CodeRejected, tt.want)
				var te *twilio.Error
				if !errors.As(err, &te) || te.Code != twiliotest.Authenticate || te.Status != http.StatusUnauthorized {
					t.Fatalf("%v does not reach Twilio's error 20003", err)
				}
			}
			reqs := v.Requests()[before:]
			if len(reqs) != tt.requests || reqs[0].Path != v.AccountPath() || (tt.requests == 2 && reqs[1].Path != v.NumbersPath()) {
				t.Fatalf("requests = %+v", reqs)
			}
		})
	}
}

// TestCheckHealthAnswers: answers that are not an account, a bare 401 or
// 403, Twilio's errors and a proxy's pages. The read sends nothing, so
// nothing is of unknown outcome.
func TestCheckHealthAnswers(t *testing.T) {
	c, srv := newCapture(t)
	p, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		status int
		body   string
		code   notify.Code // "" for healthy
		want   string
	}{
		{200, `{"sid": "` + testSID + `", "status": "active", "type": "Trial", "auth_token": "` + testToken + `"}`, "", ""},
		{200, `{"sid": "` + testSID + `", "status": "closed", "auth_token": "` + testToken + `"}`, notify.CodeRejected, "closed"},
		{200, `{"sid": "` + testSID + `", "auth_token": "` + testToken + `"}`, notify.CodeUnavailable, `has no account "status"`},
		{200, `{"status": 200}`, notify.CodeUnavailable, `has no account "status"`},
		{200, `<html>ok</html>`, notify.CodeUnavailable, "is not Twilio's JSON"},
		{401, ``, notify.CodeRejected, "HTTP 401, and the answer is not Twilio's JSON (Twilio refused the credentials"},
		{403, `<html>Forbidden</html>`, notify.CodeRejected, "HTTP 403, and the answer is not Twilio's JSON (Twilio refused the credentials"},
		{403, twilioErr(403, 20403, "Forbidden"), notify.CodeRejected, "Forbidden (code 20403, HTTP 403; https://www.twilio.com/docs/errors/20403) (Twilio refused the credentials"},
		{404, twilioErr(404, 20404, "The requested resource was not found"), notify.CodeRejected, "check twilio Config.AccountSID"},
		{429, twilioErr(429, 20429, "Too Many Requests"), notify.CodeRateLimited, "Too Many Requests"},
		{500, twilioErr(500, 20500, "Internal Server Error"), notify.CodeUnavailable, "Internal Server Error (code 20500"},
		{502, `<html>bad gateway</html>`, notify.CodeUnavailable, "HTTP 502, and the answer is not Twilio's JSON"},
		{503, ``, notify.CodeUnavailable, "HTTP 503"},
	}
	for _, tt := range tests {
		c.answer(tt.status, nil, tt.body)
		err := p.CheckHealth(t.Context())
		if tt.code == "" {
			if err != nil {
				t.Errorf("HTTP %d %s: %v", tt.status, tt.body, err)
			}
			continue
		}
		if err == nil || notify.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testToken) ||
			strings.Contains(err.Error(), "may have accepted") {
			t.Errorf("HTTP %d %s: %s %v, want %s holding %q", tt.status, tt.body, notify.CodeOf(err), err, tt.code, tt.want)
		}
	}
	r, _, n := c.last()
	if n != len(tests) || r.Method != http.MethodGet || r.URL.Path != "/2010-04-01/Accounts/"+testSID+".json" || r.Header.Get("Content-Type") != "" {
		t.Fatalf("%d requests, the last %s %s", n, r.Method, r.URL.Path)
	}
}

// TestCheckHealthFailures: Twilio's and a proxy's errors, a context that
// ended before or during the call, and a vendor that is not there are
// errors, none of unknown outcome.
func TestCheckHealthFailures(t *testing.T) {
	v := newHealthVendor(t)
	p := newProvider(t, v, nil)

	v.FailNext(twiliotest.ServiceUnavailable)
	checkHealthErr(t, p.CheckHealth(t.Context()), notify.CodeUnavailable, "Service Unavailable (code 20503, HTTP 503")
	v.FailNextHTTP(http.StatusBadGateway)
	checkHealthErr(t, p.CheckHealth(t.Context()), notify.CodeUnavailable, "HTTP 502")

	vendorhttptest.CheckReadOnlyContext(t, p.CheckHealth, v.SetLatency, testToken)
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth once Twilio answers again: %v", err)
	}

	// Nothing listens at the address: the dial is refused.
	q, err := twilio.New(twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom,
		BaseURL: "http://" + vendorhttptest.ClosedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	checkHealthErr(t, q.CheckHealth(t.Context()), notify.CodeUnavailable, "request not sent")
}
