package twiliotest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// TestSignKnownVector checks Sign against the example that Twilio's
// request-validation documentation and its Node library's tests sign with
// auth token 12345.
func TestSignKnownVector(t *testing.T) {
	params := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675309"}, "Digits": {"1234"},
		"From": {"+14158675309"}, "To": {"+18005551212"}}
	const want = "RSOYDt4T1cUTdK1PDd93/VVr8B8="
	if got := twiliotest.Sign("12345", "https://mycompany.com/myapp.php?foo=1&bar=2", params); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	// A repeated value counts once; the values of a name are sorted.
	a := twiliotest.Sign("k", "https://h/p", url.Values{"A": {"2", "1", "2"}})
	b := twiliotest.Sign("k", "https://h/p", url.Values{"A": {"1", "2"}})
	if a != b {
		t.Fatalf("repeated values: %q != %q", a, b)
	}
}

// rawAnswer is the fake's answer to a request: its status and body.
type rawAnswer struct {
	status int
	body   string
}

// send sends a raw request to the fake at path, with basic authentication
// unless user is "" and a Content-Type unless contentType is "", and
// returns the answer.
func send(t *testing.T, s *twiliotest.Server, method, path, user, pass, contentType, body string) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	var a rawAnswer
	a.status, a.body = vendorhttptest.Exchange(t, s.Client(), req)
	return a
}

// post posts body to the fake's Messages endpoint as send does, and
// returns the status and the answer, which must be JSON, decoded.
func post(t *testing.T, s *twiliotest.Server, user, pass, contentType, body string) (int, map[string]any) {
	t.Helper()
	a := send(t, s, http.MethodPost, s.MessagesPath(), user, pass, contentType, body)
	var out map[string]any
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		t.Fatalf("HTTP %d: answer %q is not JSON", a.status, a.body)
	}
	return a.status, out
}

const form = "application/x-www-form-urlencoded"

// TestChecks sends raw requests and checks that the fake answers as
// Twilio does, in its order of checks.
func TestChecks(t *testing.T) {
	const keySID, keySecret = "SK00112233445566778899aabbccddeeff", "key-secret-1"
	s := twiliotest.NewServer(twiliotest.Config{APIKeys: map[string]string{keySID: keySecret}})
	defer s.Close()
	ok := url.Values{"To": {"+919876543210"}, "From": {twiliotest.DefaultFrom}, "Body": {"hi"}}
	with := func(k, v string) string {
		q := url.Values{}
		for name, vs := range ok {
			q[name] = vs
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q.Encode()
	}
	sid, token := twiliotest.DefaultAccountSID, twiliotest.DefaultAuthToken
	tests := []struct {
		name, user, pass, ct, body string
		code                       int // 0 for success
	}{
		{"no credentials", "", "", form, ok.Encode(), twiliotest.Authenticate},
		{"wrong token", sid, "nope", form, ok.Encode(), twiliotest.Authenticate},
		{"API key", keySID, keySecret, form, ok.Encode(), 0},
		{"API key, wrong secret", keySID, token, form, ok.Encode(), twiliotest.Authenticate},
		{"JSON body", sid, token, "application/json", `{"To":"+919876543210"}`, twiliotest.ToRequired},
		{"no To", sid, token, form, with("To", ""), twiliotest.ToRequired},
		{"To without +", sid, token, form, with("To", "919876543210"), twiliotest.InvalidTo},
		{"To too short", sid, token, form, with("To", "+12345"), twiliotest.InvalidTo},
		{"no sender", sid, token, form, with("From", ""), twiliotest.FromRequired},
		{"unknown From", sid, token, form, with("From", "+15005550001"), twiliotest.InvalidFrom},
		{"unknown service", sid, token, form, with("MessagingServiceSid", "MGffffffffffffffffffffffffffffffff"), twiliotest.NotFound},
		{"service", sid, token, form, with("MessagingServiceSid", twiliotest.DefaultMessagingServiceSID), 0},
		{"no Body", sid, token, form, with("Body", ""), twiliotest.BodyRequired},
		{"blank Body", sid, token, form, with("Body", "  "), twiliotest.BodyRequired},
		{"1,600 characters", sid, token, form, with("Body", strings.Repeat("é", 1600)), 0},
		{"1,601 characters", sid, token, form, with("Body", strings.Repeat("e", 1601)), twiliotest.BodyTooLong},
		{"relative callback", sid, token, form, with("StatusCallback", "/status"), twiliotest.InvalidCallback},
		{"callback", sid, token, form, with("StatusCallback", "https://example.com/status?x=1"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := post(t, s, tt.user, tt.pass, tt.ct, tt.body)
			if tt.code == 0 {
				sid, _ := out["sid"].(string)
				if status != http.StatusCreated || len(sid) != 34 || !strings.HasPrefix(sid, "SM") {
					t.Fatalf("HTTP %d, %v; want 201 with a message sid", status, out)
				}
				return
			}
			code, _ := out["code"].(float64)
			if int(code) != tt.code || status != twiliotest.ErrorStatus(tt.code) || out["status"] != float64(status) ||
				out["more_info"] != fmt.Sprintf("https://www.twilio.com/docs/errors/%d", tt.code) {
				t.Fatalf("HTTP %d, %v; want code %d on HTTP %d", status, out, tt.code, twiliotest.ErrorStatus(tt.code))
			}
		})
	}
	msgs := s.Messages()
	if len(msgs) != 4 {
		t.Fatalf("accepted %d, want 4", len(msgs))
	}
	if msgs[0].User != keySID || msgs[1].Status != "accepted" || msgs[0].Status != "queued" || msgs[3].StatusCallback != "https://example.com/status?x=1" {
		t.Fatalf("messages = %+v", msgs)
	}
	if n := len(s.Requests()); n != len(tests) {
		t.Fatalf("%d requests recorded, want %d", n, len(tests))
	}
}

// TestWrongPathAndMethod: another account's path is 20404, another method
// 20004 (405).
func TestWrongPathAndMethod(t *testing.T) {
	s := twiliotest.NewServer(twiliotest.Config{})
	defer s.Close()
	sid, token := twiliotest.DefaultAccountSID, twiliotest.DefaultAuthToken
	other := "/2010-04-01/Accounts/ACffffffffffffffffffffffffffffffff/Messages.json"
	if a := send(t, s, http.MethodPost, other, sid, token, "", "To=%2B15005550009"); a.status != http.StatusNotFound {
		t.Fatalf("another account's path: HTTP %d", a.status)
	}
	if a := send(t, s, http.MethodGet, s.MessagesPath(), sid, token, "", ""); a.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET: HTTP %d", a.status)
	}
}

// TestInjectedFailures: each injected failure applies to one request.
func TestInjectedFailures(t *testing.T) {
	s := twiliotest.NewServer(twiliotest.Config{})
	defer s.Close()
	body := url.Values{"To": {"+919876543210"}, "From": {twiliotest.DefaultFrom}, "Body": {"hi"}}.Encode()
	sid, token := twiliotest.DefaultAccountSID, twiliotest.DefaultAuthToken

	s.FailNext(twiliotest.TooManyRequests)
	if status, out := post(t, s, sid, token, form, body); status != 429 || out["code"] != float64(20429) {
		t.Fatalf("FailNext: HTTP %d %v", status, out)
	}
	s.FailNextWith(503, 20599, "busy")
	if status, out := post(t, s, sid, token, form, body); status != 503 || out["code"] != float64(20599) || out["message"] != "busy" {
		t.Fatalf("FailNextWith: HTTP %d %v", status, out)
	}
	if s.Accepted() != 0 {
		t.Fatal("a refused request was accepted")
	}

	s.FailNextHTTP(502)
	resp := send(t, s, http.MethodPost, s.MessagesPath(), sid, token, form, body)
	if resp.status != 502 || !strings.Contains(resp.body, "<html>") || s.Accepted() != 0 {
		t.Fatalf("FailNextHTTP: %+v, accepted %d", resp, s.Accepted())
	}
	s.FailNextHTTPAfterAccept(504)
	if resp := send(t, s, http.MethodPost, s.MessagesPath(), sid, token, form, body); resp.status != 504 || s.Accepted() != 1 {
		t.Fatalf("FailNextHTTPAfterAccept: %+v, accepted %d", resp, s.Accepted())
	}
	s.BreakNext()
	req, _ := http.NewRequest(http.MethodPost, s.URL+s.MessagesPath(), strings.NewReader(body))
	req.SetBasicAuth(sid, token)
	req.Header.Set("Content-Type", form)
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("BreakNext: an answer came")
	}
	if s.Accepted() != 2 {
		t.Fatalf("BreakNext: accepted %d, want 2", s.Accepted())
	}
	if status, _ := post(t, s, sid, token, form, body); status != 201 {
		t.Fatalf("after the failures: HTTP %d", status)
	}
}

// callbackSink records the callbacks it receives and answers status.
type callbackSink struct {
	mu     sync.Mutex
	got    []*http.Request
	forms  []url.Values
	status int
}

func (c *callbackSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, r)
	c.forms = append(c.forms, r.PostForm)
	if c.status != 0 {
		w.WriteHeader(c.status)
	}
}

func (c *callbackSink) take() ([]*http.Request, []url.Values) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got, c.forms
}

func (c *callbackSink) answer(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = status
}

// TestCallbacks: Report and Flush post signed callbacks to a message's
// StatusCallback, without its fragment, signed over the URL as requested.
func TestCallbacks(t *testing.T) {
	sink := &callbackSink{}
	receiver := httptest.NewServer(sink)
	defer receiver.Close()
	s := twiliotest.NewServer(twiliotest.Config{AutoStatus: []string{"sent", "undelivered"}})
	defer s.Close()
	callback := receiver.URL + "/status?ref=a%3D1#rc=2"
	body := url.Values{"To": {"+919876543210"}, "From": {twiliotest.DefaultFrom}, "Body": {"hi"}, "StatusCallback": {callback}}.Encode()
	status, out := post(t, s, twiliotest.DefaultAccountSID, twiliotest.DefaultAuthToken, form, body)
	if status != 201 {
		t.Fatalf("HTTP %d %v", status, out)
	}
	sid := out["sid"].(string)
	ctx := context.Background()
	if err := s.Report(ctx, sid, "delivered", 0); err != nil {
		t.Fatal(err)
	}
	if s.Pending() != 2 {
		t.Fatalf("pending %d, want 2", s.Pending())
	}
	if n, err := s.Flush(ctx); n != 2 || err != nil {
		t.Fatalf("Flush = %d, %v", n, err)
	}
	got, forms := sink.take()
	if len(got) != 3 {
		t.Fatalf("%d callbacks, want 3", len(got))
	}
	for i, want := range []string{"delivered", "sent", "undelivered"} {
		r, f := got[i], forms[i]
		if f.Get("MessageStatus") != want || f.Get("MessageSid") != sid || f.Get("AccountSid") != twiliotest.DefaultAccountSID ||
			f.Get("To") != "+919876543210" || f.Get("From") != twiliotest.DefaultFrom {
			t.Errorf("callback %d: %v", i, f)
		}
		if (want == "undelivered") != (f.Get("ErrorCode") == "30003") {
			t.Errorf("callback %d: ErrorCode %q", i, f.Get("ErrorCode"))
		}
		if r.URL.RawQuery != "ref=a%3D1" {
			t.Errorf("callback %d: query %q", i, r.URL.RawQuery)
		}
		signed := receiver.URL + r.URL.RequestURI()
		if got := r.Header.Get("X-Twilio-Signature"); got != twiliotest.Sign(twiliotest.DefaultAuthToken, signed, f) {
			t.Errorf("callback %d: signature %q does not sign %s", i, got, signed)
		}
	}
	// An error answer stops Flush and is a *CallbackError.
	sink.answer(http.StatusUnauthorized)
	err := s.Report(ctx, sid, "read", 0)
	var ce *twiliotest.CallbackError
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Report to a refusing receiver: %v", err)
	}
	if err := s.Report(ctx, "SMnope", "sent", 0); err == nil {
		t.Fatal("Report of an unknown message succeeded")
	}
}

// TestAccountResource: the fake serves the Account resource as Twilio
// does, to the auth token and Main keys only, with the status a test sets,
// and refuses the messages of an account that is not active.
func TestAccountResource(t *testing.T) {
	const std, stdSecret = "SK00112233445566778899aabbccddeeff", "standard-secret"
	const main, mainSecret = "SKffeeddccbbaa99887766554433221100", "main-secret"
	s := twiliotest.NewServer(twiliotest.Config{APIKeys: map[string]string{std: stdSecret, main: mainSecret}, MainKeys: []string{main}})
	defer s.Close()
	sid, token := twiliotest.DefaultAccountSID, twiliotest.DefaultAuthToken
	get := func(path, user, pass string) (int, map[string]any) {
		t.Helper()
		a := send(t, s, http.MethodGet, path, user, pass, "", "")
		var out map[string]any
		if err := json.Unmarshal([]byte(a.body), &out); err != nil {
			t.Fatalf("HTTP %d: answer %q is not JSON", a.status, a.body)
		}
		return a.status, out
	}
	if s.AccountPath() != "/2010-04-01/Accounts/"+sid+".json" || s.AccountStatus() != "active" {
		t.Fatalf("AccountPath %s, status %s", s.AccountPath(), s.AccountStatus())
	}
	for _, who := range [][2]string{{sid, token}, {main, mainSecret}} {
		status, out := get(s.AccountPath(), who[0], who[1])
		if status != http.StatusOK || out["sid"] != sid || out["owner_account_sid"] != sid || out["status"] != "active" ||
			out["type"] != "Full" || out["auth_token"] != token || out["uri"] != s.AccountPath() {
			t.Fatalf("%s: HTTP %d %v", who[0][:2], status, out)
		}
	}
	for _, tt := range []struct {
		name, method, path, user, pass string
		code                           int
	}{
		{"no credentials", http.MethodGet, s.AccountPath(), "", "", twiliotest.Authenticate},
		{"wrong token", http.MethodGet, s.AccountPath(), sid, "nope", twiliotest.Authenticate},
		{"Standard key", http.MethodGet, s.AccountPath(), std, stdSecret, twiliotest.Authenticate},
		{"another account", http.MethodGet, "/2010-04-01/Accounts/ACffffffffffffffffffffffffffffffff.json", sid, token, twiliotest.NotFound},
		{"POST", http.MethodPost, s.AccountPath(), sid, token, 20004},
	} {
		a := send(t, s, tt.method, tt.path, tt.user, tt.pass, "", "")
		var out struct{ Code, Status int }
		if err := json.Unmarshal([]byte(a.body), &out); err != nil || out.Code != tt.code || out.Status != a.status {
			t.Errorf("%s: HTTP %d %s, want code %d", tt.name, a.status, a.body, tt.code)
		}
	}

	// Every key reads the numbers, a page of PageSize.
	s2 := twiliotest.NewServer(twiliotest.Config{Senders: []string{"+15005550009", "ACME", "+15005550006"}, APIKeys: map[string]string{std: stdSecret}})
	defer s2.Close()
	a := send(t, s2, http.MethodGet, s2.NumbersPath()+"?PageSize=1", std, stdSecret, "", "")
	var page struct {
		Numbers []struct {
			PhoneNumber string `json:"phone_number"`
		} `json:"incoming_phone_numbers"`
		PageSize int `json:"page_size"`
	}
	if err := json.Unmarshal([]byte(a.body), &page); err != nil || a.status != http.StatusOK || page.PageSize != 1 ||
		len(page.Numbers) != 1 || page.Numbers[0].PhoneNumber != "+15005550006" {
		t.Fatalf("numbers: HTTP %d %s", a.status, a.body)
	}

	// A suspended account: its status, and no message.
	s.SetAccountStatus("suspended")
	if _, out := get(s.AccountPath(), sid, token); out["status"] != "suspended" {
		t.Fatalf("status %v, want suspended", out["status"])
	}
	body := url.Values{"To": {"+919876543210"}, "From": {twiliotest.DefaultFrom}, "Body": {"hi"}}.Encode()
	if status, out := post(t, s, sid, token, form, body); status != twiliotest.ErrorStatus(twiliotest.AccountNotActive) ||
		out["code"] != float64(twiliotest.AccountNotActive) || out["message"] != "Account is not active" {
		t.Fatalf("a send of a suspended account: HTTP %d %v", status, out)
	}
	// FailNext falls on the account's fetch too.
	s.FailNext(twiliotest.InternalServerError)
	if a := send(t, s, http.MethodGet, s.AccountPath(), sid, token, "", ""); a.status != http.StatusInternalServerError {
		t.Fatalf("FailNext: HTTP %d", a.status)
	}
	if s.Accepted() != 0 {
		t.Fatalf("accepted %d", s.Accepted())
	}
}
