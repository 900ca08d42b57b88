package msg91_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// checkBalanceErr fails t unless err is code and holds want, and not the
// auth key.
func checkBalanceErr(t *testing.T, err error, code notify.Code, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("err = nil, want %s (%q)", code, want)
	case notify.CodeOf(err) != code || !strings.Contains(err.Error(), want):
		t.Fatalf("err = %s %q, want %s holding %q", notify.CodeOf(err), err, code, want)
	case strings.Contains(err.Error(), testKey):
		t.Fatalf("%q holds the auth key", err)
	case notify.OutcomeOf(err) == record.StateUnknown:
		t.Fatalf("%v is of unknown outcome: the balance call sends nothing", err)
	}
}

// TestBalance: the wallet's balance in rupees, exactly; any balance,
// zero included, is healthy.
func TestBalance(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	for _, paise := range []int64{123456, 0, -310, 1 << 40} {
		v.SetBalance(paise)
		m, err := p.Balance(t.Context())
		if err != nil || m.Minor != paise || m.Currency != record.INR() {
			t.Fatalf("Balance of %d paise = %+v, %v", paise, m, err)
		}
		if err := p.CheckHealth(t.Context()); err != nil {
			t.Fatalf("CheckHealth with %d paise: %v", paise, err)
		}
	}
	if v.Requests() != 0 {
		t.Fatalf("%d requests reached the flow endpoint", v.Requests())
	}
}

// TestCheckHealthWrongKey: a key MSG91 refuses is unhealthy, and the error
// says so without the key.
func TestCheckHealthWrongKey(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, "not-"+testKey)
	err := p.CheckHealth(t.Context())
	checkBalanceErr(t, err, notify.CodeRejected, "MSG91 refused the auth key: check msg91 Config.AuthKey")
	var me *msg91.Error
	if !errors.As(err, &me) || me.Code != "401" || me.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("%v does not reach MSG91's error", err)
	}
	if strings.Contains(err.Error(), "not-"+testKey) {
		t.Fatalf("%q holds the key", err)
	}
}

// balanceCapture is a server that records the balance calls and answers
// what the test set.
type balanceCapture struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
	status int
	body   string
}

func (c *balanceCapture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs, c.bodies = append(c.reqs, r), append(c.bodies, string(body))
	w.WriteHeader(c.status)
	_, _ = io.WriteString(w, c.body)
}

func (c *balanceCapture) answer(status int, body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status, c.body = status, body
}

// TestBalanceAnswers: the request as sent, the figures MSG91 may answer,
// and its refusals, in JSON or in words.
func TestBalanceAnswers(t *testing.T) {
	c := &balanceCapture{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	// BaseURL may be the flow endpoint: the balance API is beside it.
	p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: srv.URL + "/api/v5/flow/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for body, want := range map[string]int64{
		"1234.56": 123456, "1234.5678": 123456, " 42\n": 4200, `"99.5"`: 9950, "-3.10": -310, "0": 0, "0.009": 0,
	} {
		c.answer(http.StatusOK, body)
		m, err := p.Balance(t.Context())
		if err != nil || m.Minor != want || m.Currency != record.INR() {
			t.Errorf("%q: Balance = %+v, %v; want %d paise", body, m, err, want)
		}
	}
	c.mu.Lock()
	r, sent := c.reqs[0], c.bodies[0]
	c.mu.Unlock()
	if r.Method != http.MethodGet || r.URL.Path != "/api/balance.php" || r.URL.RawQuery != "authkey="+testKey+"&type=0" ||
		sent != "" || r.Header.Get("Content-Type") != "" {
		t.Fatalf("request %s %s?%s, body %q, Content-Type %q", r.Method, r.URL.Path, r.URL.RawQuery, sent, r.Header.Get("Content-Type"))
	}

	tests := []struct {
		status int
		body   string
		code   notify.Code
		want   string
	}{
		{200, "Invalid authkey " + testKey, notify.CodeRejected, "msg91: Invalid authkey [redacted] (HTTP 200) (MSG91 refused the auth key"},
		{200, `"Authentication failure"`, notify.CodeRejected, "MSG91 refused the auth key"},
		{200, `{"msgType":"error","msg":"Authentication failure","code":"201"}`, notify.CodeRejected, "(code 201, HTTP 200) (MSG91 refused the auth key"},
		{401, `{"type":"error","message":"AuthenticationFailure","code":"401"}`, notify.CodeRejected, "MSG91 refused the auth key"},
		{200, `{"type":"error","message":"IP not whitelisted","code":"418"}`, notify.CodeRejected, "whitelist it for the auth key"},
		{200, `{"type":"error","message":"Missing Authentication Key","code":106}`, notify.CodeRejected, "check msg91 Config.AuthKey"},
		{500, `{"type":"error","message":"Internal error","code":"601"}`, notify.CodeUnavailable, "MSG91's own error"},
		{429, `{"type":"error","message":"Too many requests"}`, notify.CodeRateLimited, "Too many requests"},
		{200, "", notify.CodeUnavailable, "HTTP 200, and the answer is not a balance"},
		{200, "<html>ok</html>", notify.CodeUnavailable, "HTTP 200, and the answer is not a balance"},
		{200, `{"type":"success","message":"1234"}`, notify.CodeUnavailable, "is not a balance"},
		{502, "<html>bad gateway</html>", notify.CodeUnavailable, "HTTP 502, and the answer is not a balance"},
		{500, "12.50", notify.CodeUnavailable, "HTTP 500"},
		{404, "Not Found", notify.CodeRejected, "HTTP 404, and the answer is not a balance"},
	}
	for _, tt := range tests {
		c.answer(tt.status, tt.body)
		checkBalanceErr(t, p.CheckHealth(t.Context()), tt.code, tt.want)
	}
}

// TestCheckHealthFailures: MSG91's and a proxy's errors, a context that
// ended before or during the call, and a vendor that is not there are
// errors, none of unknown outcome and none with the key (which is in the
// request's URL).
func TestCheckHealthFailures(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)

	v.FailNext(msg91test.InternalError)
	checkBalanceErr(t, p.CheckHealth(t.Context()), notify.CodeUnavailable, "code 601, HTTP 500")
	v.FailNext(msg91test.IPNotWhitelisted)
	checkBalanceErr(t, p.CheckHealth(t.Context()), notify.CodeRejected, "code 418, HTTP 200")
	v.FailNextHTTP(http.StatusBadGateway)
	checkBalanceErr(t, p.CheckHealth(t.Context()), notify.CodeUnavailable, "HTTP 502")

	vendorhttptest.CheckReadOnlyContext(t, p.CheckHealth, v.SetLatency, testKey)
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth once MSG91 answers again: %v", err)
	}

	// Nothing listens at the address: the dial is refused.
	q, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: "http://" + vendorhttptest.ClosedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	checkBalanceErr(t, q.CheckHealth(t.Context()), notify.CodeUnavailable, "request not sent")
}
