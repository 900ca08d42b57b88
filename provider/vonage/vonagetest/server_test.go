package vonagetest_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
)

const (
	key    = vonagetest.DefaultAPIKey
	secret = vonagetest.DefaultAPISecret
	form   = "application/x-www-form-urlencoded"
)

func newServer(t *testing.T, cfg vonagetest.Config) *vonagetest.Server {
	t.Helper()
	s := vonagetest.NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

// answer is the fake's answer to a send, decoded.
type answer struct {
	Count    string              `json:"message-count"`
	Messages []map[string]string `json:"messages"`
}

// send posts body to the fake's send endpoint as contentType, and returns
// the HTTP status and the answer, which must be JSON.
func send(t *testing.T, s *vonagetest.Server, contentType, body string) (int, answer) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+vonage.SendPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	status, raw := vendorhttptest.Exchange(t, s.Client(), req)
	var a answer
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("HTTP %d: answer %q is not JSON", status, raw)
	}
	return status, a
}

// params returns a valid send's form with changes applied ("" deletes).
func params(changes map[string]string) string {
	v := url.Values{"api_key": {key}, "api_secret": {secret}, "from": {vonagetest.DefaultFrom}, "to": {"447700900000"},
		"text": {"Hello"}, "type": {"text"}}
	for k, x := range changes {
		if x == "" {
			v.Del(k)
		} else {
			v.Set(k, x)
		}
	}
	return v.Encode()
}

// TestChecks sends raw requests and checks that the fake refuses each as
// its documentation says, with Vonage's answer, on HTTP 200.
func TestChecks(t *testing.T) {
	s := newServer(t, vonagetest.Config{MaxTextLen: 200})
	tests := []struct {
		name    string
		changes map[string]string
		status  string
		text    string // in the error-text
	}{
		{"no api_key", map[string]string{"api_key": ""}, "2", "Missing api_key"},
		{"no api_secret", map[string]string{"api_secret": ""}, "2", "Missing api_secret"},
		{"wrong secret", map[string]string{"api_secret": "wrong"}, "4", "Bad Credentials"},
		{"another key", map[string]string{"api_key": "e5f6a7b8"}, "4", "Bad Credentials"},
		{"no from", map[string]string{"from": ""}, "2", "Missing from param"},
		{"no to", map[string]string{"to": ""}, "2", "Missing to param"},
		{"no text", map[string]string{"text": ""}, "2", "Missing text param"},
		{"binary", map[string]string{"type": "binary"}, "3", "type"},
		{"to with +", map[string]string{"to": "+447700900000"}, "3", "to"},
		{"to too short", map[string]string{"to": "123456"}, "3", "to"},
		{"to with a 0", map[string]string{"to": "07700900000"}, "3", "to"},
		{"another sender", map[string]string{"from": "Other"}, "15", "Illegal Sender Address"},
		{"sender with +", map[string]string{"from": "+" + vonagetest.DefaultNumber}, "15", "Illegal Sender Address"},
		{"too long", map[string]string{"text": strings.Repeat("x", 201)}, "12", "Message too long"},
		{"UCS-2 as text", map[string]string{"text": "こんにちは"}, "3", "unicode"},
		{"client-ref too long", map[string]string{"client-ref": strings.Repeat("r", 101)}, "3", "client-ref"},
		{"callback not a URL", map[string]string{"callback": "hooks/dlr"}, "23", "Invalid callback url"},
		{"callback too long", map[string]string{"callback": "https://h.example/" + strings.Repeat("x", 90)}, "23", "Invalid callback url"},
		{"entity-id alone", map[string]string{"entity-id": "1101456789012345678"}, "3", "entity-id"},
		{"content-id not digits", map[string]string{"entity-id": "1101", "content-id": "T-1"}, "3", "content-id"},
	}
	for _, tt := range tests {
		status, a := send(t, s, form, params(tt.changes))
		if status != http.StatusOK || a.Count != "1" || len(a.Messages) != 1 || a.Messages[0]["status"] != tt.status ||
			!strings.Contains(a.Messages[0]["error-text"], tt.text) {
			t.Errorf("%s: HTTP %d %+v, want status %s with %q", tt.name, status, a, tt.status, tt.text)
		}
	}
	s.SetBalance(100)
	if _, a := send(t, s, form, params(nil)); a.Messages[0]["status"] != "9" {
		t.Errorf("no credit: %+v", a)
	}
	if s.Accepted() != 0 || len(s.Requests()) != len(tests)+1 {
		t.Fatalf("%d taken, %d requests", s.Accepted(), len(s.Requests()))
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+vonage.SendPath, nil)
	if status, _ := vendorhttptest.Exchange(t, s.Client(), req); status != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", status)
	}
}

// TestTaken: what the fake takes, and its answer: a part per segment,
// each with a fresh message-id, the price and the balance left.
func TestTaken(t *testing.T) {
	s := newServer(t, vonagetest.Config{})
	long := strings.Repeat("Your order has shipped. ", 15) // 360 characters: 3 parts
	status, a := send(t, s, form, params(map[string]string{"text": long, "client-ref": "a=acme&m=m1"}))
	if status != http.StatusOK || a.Count != "3" || len(a.Messages) != 3 {
		t.Fatalf("HTTP %d %+v", status, a)
	}
	seen := map[string]bool{}
	for i, m := range a.Messages {
		if m["status"] != "0" || !vonage.ValidMessageID(m["message-id"]) || seen[m["message-id"]] || m["to"] != "447700900000" ||
			m["message-price"] != "0.03330000" || m["network"] != "23410" || m["client-ref"] != "a=acme&m=m1" {
			t.Errorf("part %d: %v", i, m)
		}
		seen[m["message-id"]] = true
	}
	if a.Messages[2]["remaining-balance"] != "10.18010000" || s.Balance() != vonagetest.DefaultBalance-3*vonagetest.DefaultPrice {
		t.Errorf("balance left %s, %d", a.Messages[2]["remaining-balance"], s.Balance())
	}
	// A JSON body, and basic authentication in place of the form's.
	req, _ := http.NewRequest(http.MethodPost, s.URL+vonage.SendPath,
		strings.NewReader(`{"from":"AcmeInc","to":"919876543210","text":"नमस्ते","type":"unicode","entity-id":"1101","content-id":"1107"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(key, secret)
	if status, raw := vendorhttptest.Exchange(t, s.Client(), req); status != http.StatusOK || !strings.Contains(raw, `"status":"0"`) {
		t.Fatalf("JSON: HTTP %d %s", status, raw)
	}
	ms := s.Messages()
	if len(ms) != 2 || len(ms[0].IDs) != 3 || ms[0].ClientRef != "a=acme&m=m1" || ms[1].EntityID != "1101" || ms[1].ContentID != "1107" ||
		ms[1].Type != "unicode" || ms[0].Params.Get("api_secret") != "" {
		t.Fatalf("messages %+v", ms)
	}
}

// TestFaults: each injected failure falls on the next send only, and
// the fake takes the message where the documentation says.
func TestFaults(t *testing.T) {
	s := newServer(t, vonagetest.Config{})
	s.FailNextWith(http.StatusServiceUnavailable, 99, "Service busy")
	if status, a := send(t, s, form, params(nil)); status != http.StatusServiceUnavailable || a.Messages[0]["status"] != "99" {
		t.Fatalf("FailNextWith: HTTP %d %+v", status, a)
	}
	s.FailNext(vonage.StatusThrottled)
	if _, a := send(t, s, form, params(nil)); a.Messages[0]["error-text"] != "Throttled" {
		t.Fatalf("FailNext: %+v", a)
	}
	s.FailNextHTTP(http.StatusBadGateway)
	req, _ := http.NewRequest(http.MethodPost, s.URL+vonage.SendPath, strings.NewReader(params(nil)))
	req.Header.Set("Content-Type", form)
	if status, raw := vendorhttptest.Exchange(t, s.Client(), req); status != http.StatusBadGateway || !strings.Contains(raw, "<html>") {
		t.Fatalf("FailNextHTTP: %d %q", status, raw)
	}
	if s.Accepted() != 0 {
		t.Fatalf("%d taken", s.Accepted())
	}
	s.FailNextHTTPAfterAccept(http.StatusGatewayTimeout)
	req, _ = http.NewRequest(http.MethodPost, s.URL+vonage.SendPath, strings.NewReader(params(nil)))
	req.Header.Set("Content-Type", form)
	if status, _ := vendorhttptest.Exchange(t, s.Client(), req); status != http.StatusGatewayTimeout || s.Accepted() != 1 {
		t.Fatalf("FailNextHTTPAfterAccept: %d, %d taken", status, s.Accepted())
	}
	s.BreakNext()
	req, _ = http.NewRequest(http.MethodPost, s.URL+vonage.SendPath, strings.NewReader(params(nil)))
	req.Header.Set("Content-Type", form)
	if _, err := s.Client().Do(req); err == nil || s.Accepted() != 2 {
		t.Fatalf("BreakNext: %v, %d taken", err, s.Accepted())
	}
	if status, a := send(t, s, form, params(nil)); status != http.StatusOK || a.Messages[0]["status"] != "0" {
		t.Fatalf("after the faults: HTTP %d %+v", status, a)
	}
}

// TestBalance: the account's balance to its credentials, in basic
// authentication or in the query; 401 otherwise.
func TestBalance(t *testing.T) {
	s := newServer(t, vonagetest.Config{Balance: 123456})
	get := func(u string, basic bool, user string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+vonage.BalancePath+u, nil)
		if basic {
			req.SetBasicAuth(user, secret)
		}
		return vendorhttptest.Exchange(t, s.Client(), req)
	}
	for name, c := range map[string]struct {
		query  string
		basic  bool
		user   string
		status int
	}{
		"basic":         {"", true, key, http.StatusOK},
		"query":         {"?api_key=" + key + "&api_secret=" + secret, false, "", http.StatusOK},
		"another key":   {"", true, "e5f6a7b8", http.StatusUnauthorized},
		"no credential": {"", false, "", http.StatusUnauthorized},
	} {
		status, raw := get(c.query, c.basic, c.user)
		if status != c.status || status == http.StatusOK && raw != "{\"autoReload\":false,\"value\":12.3456}\n" {
			t.Errorf("%s: HTTP %d %s", name, status, raw)
		}
	}
}

// capture is a receiver that keeps the fields of each receipt, wherever
// its method put them, and answers with the status the test set.
type capture struct {
	mu       sync.Mutex
	receipts []url.Values
	status   int
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fields := r.URL.Query()
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Content-Type") == "application/json" {
		var obj map[string]string
		_ = json.Unmarshal(body, &obj)
		fields = url.Values{}
		for k, x := range obj {
			fields.Set(k, x)
		}
	} else if len(body) > 0 {
		fields, _ = url.ParseQuery(string(body))
	}
	c.mu.Lock()
	c.receipts = append(c.receipts, fields)
	c.mu.Unlock()
	w.WriteHeader(max(c.status, http.StatusOK))
}

// fields returns the fields of receipt i.
func (c *capture) fields(i int) url.Values {
	return vendorhttptest.Locked(&c.mu, func() url.Values { return c.receipts[i] })
}

// TestReceipts: Report sends a part's receipt to its callback in each
// method, with Vonage's fields, signed so that vonage.Sign verifies it;
// AutoReceipts queue receipts that Flush sends.
func TestReceipts(t *testing.T) {
	clock := time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC)
	for _, method := range []string{vonagetest.MethodGET, vonagetest.MethodPOST, vonagetest.MethodPOSTJSON} {
		c := &capture{}
		receiver := httptest.NewServer(c)
		s := newServer(t, vonagetest.Config{ReceiptMethod: method, SignatureSecret: "sig-secret", SignatureMethod: vonage.SHA256HMAC,
			AutoReceipts: []string{"accepted", "rejected"}, Now: func() time.Time { return clock }})
		callback := receiver.URL + "/dlr?tenant=acme"
		if _, a := send(t, s, form, params(map[string]string{"callback": callback, "client-ref": "a=acme&m=m1"})); a.Messages[0]["status"] != "0" {
			t.Fatalf("%s: %+v", method, a)
		}
		id := s.Messages()[0].IDs[0]
		if err := s.Report(t.Context(), id, "delivered", "0"); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		got := c.fields(0)
		sig := got.Get("sig")
		if method == vonagetest.MethodGET {
			if got.Get("tenant") != "acme" {
				t.Errorf("%s: the callback's query was lost: %v", method, got)
			}
			got.Del("tenant") // the callback's own query, not the receipt's
		}
		want := url.Values{"msisdn": {"447700900000"}, "to": {"AcmeInc"}, "network-code": {"23410"}, "messageId": {id},
			"price": {"0.03330000"}, "status": {"delivered"}, "scts": {"2611250830"}, "err-code": {"0"}, "api-key": {key},
			"client-ref": {"a=acme&m=m1"}, "message-timestamp": {"2026-11-25 08:30:05"}, "timestamp": {strconv.FormatInt(clock.Unix(), 10)},
			"nonce": {got.Get("nonce")}, "sig": {sig}}
		if got.Encode() != want.Encode() || len(got.Get("nonce")) != 32 || sig != vonage.Sign(vonage.SHA256HMAC, "sig-secret", got) {
			t.Errorf("%s: receipt %v\nwant %v", method, got, want)
		}
		if n, err := s.Flush(t.Context()); n != 2 || err != nil || s.Pending() != 0 {
			t.Errorf("%s: Flush = %d, %v", method, n, err)
		}
		if f := c.fields(2); f.Get("status") != "rejected" || f.Get("err-code") != "6" {
			t.Errorf("%s: the second queued receipt %v", method, f)
		}
		receiver.Close()
	}
}

// TestReportErrors: a receipt of a part the fake did not take, of a
// message without a callback, and one the receiver refuses.
func TestReportErrors(t *testing.T) {
	c := &capture{status: http.StatusUnauthorized}
	receiver := httptest.NewServer(c)
	defer receiver.Close()
	s := newServer(t, vonagetest.Config{})
	send(t, s, form, params(nil))
	id := s.Messages()[0].IDs[0]
	if err := s.Report(t.Context(), "0A00000000000000", "delivered", "0"); err == nil {
		t.Fatal("a receipt of a part never taken was sent")
	}
	if err := s.Report(t.Context(), id, "delivered", "0"); err == nil || !strings.Contains(err.Error(), "no callback") {
		t.Fatalf("no callback: %v", err)
	}
	s = newServer(t, vonagetest.Config{DefaultCallback: receiver.URL + "/dlr"})
	send(t, s, form, params(nil))
	var ce *vonagetest.CallbackError
	if err := s.Report(t.Context(), s.Messages()[0].IDs[0], "delivered", "0"); !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a refused receipt: %v", err)
	}
	if err := s.Send(t.Context(), "http://"+vendorhttptest.ClosedAddr(t)+"/secret-token", url.Values{"x": {"1"}}); err == nil ||
		strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("a receipt to a closed port: %v", err)
	}
}
