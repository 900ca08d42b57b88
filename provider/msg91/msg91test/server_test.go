package msg91test_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

const key = "fake-key-0123456789"

func newServer(t *testing.T, cfg msg91test.Config) *msg91test.Server {
	t.Helper()
	cfg.AuthKey = key
	cfg.Templates = append(cfg.Templates,
		msg91test.Template{ID: "tpl", DLTTemplateID: "1107161234567890123", Sender: "ACMECO", Content: "Order ##VAR1## ships ##VAR2##. - ACMECO"},
		msg91test.Template{ID: "pending", Content: "Hello. - ACMECO", Pending: true})
	s := msg91test.NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

type answer struct {
	status int
	body   map[string]any
	raw    string
}

// post sends a request to the fake as a client would.
func post(t *testing.T, s *msg91test.Server, method, path, authkey, contentType, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if authkey != "" {
		req.Header.Set("authkey", authkey)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	var a answer
	a.status, a.raw = vendorhttptest.Exchange(t, s.Client(), req)
	_ = json.Unmarshal([]byte(a.raw), &a.body)
	return a
}

const good = `{"template_id":"tpl","short_url":"0","recipients":[{"mobiles":"919876543210","VAR1":"A-17","VAR2":"today"}]}`

// TestStrict: the fake refuses, as MSG91 would or more strictly, every
// request that is not exactly right.
func TestStrict(t *testing.T) {
	s := newServer(t, msg91test.Config{})
	with := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	tests := []struct {
		name, method, path, key, contentType, body string
		status                                     int
		code, says                                 string
	}{
		{"GET", http.MethodGet, "/api/v5/flow", key, "application/json", "", 405, "", ""},
		{"another path", http.MethodPost, "/api/v5/flows", key, "application/json", good, 404, "", ""},
		{"no auth key", http.MethodPost, "/api/v5/flow", "", "application/json", good, 401, "106", "Missing Authentication Key"},
		{"a wrong auth key", http.MethodPost, "/api/v5/flow", "wrong", "application/json", good, 401, "401", "AuthenticationFailure"},
		{"not JSON", http.MethodPost, "/api/v5/flow", key, "application/x-www-form-urlencoded", good, 400, "", "Content-Type"},
		{"a body not JSON", http.MethodPost, "/api/v5/flow", key, "application/json", "template_id=tpl", 400, "", "not a JSON object"},
		{"an unknown parameter", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"short_url"`, `"sender":"ACMECO","short_url"`), 400, "", "Unknown parameter sender"},
		{"the old flow_id", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"template_id"`, `"flow_id"`), 400, "", "Unknown parameter flow_id"},
		{"an unknown template", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"tpl"`, `"other"`), 400, "", "Template ID is invalid"},
		{"a pending template", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"tpl"`, `"pending"`), 400, "", "not approved"},
		{"a bad short_url", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"0"`, `"yes"`), 400, "", "short_url"},
		{"no recipients", http.MethodPost, "/api/v5/flow", key, "application/json", `{"template_id":"tpl","recipients":[]}`, 400, "", "recipients"},
		{"a 10-digit number", http.MethodPost, "/api/v5/flow", key, "application/json", with("919876543210", "9876543210"), 400, "202", "Invalid mobile"},
		{"a plus", http.MethodPost, "/api/v5/flow", key, "application/json", with("919876543210", "+919876543210"), 400, "202", "Invalid mobile"},
		{"a number as a number", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"919876543210"`, `919876543210`), 400, "202", ""},
		{"a missing variable", http.MethodPost, "/api/v5/flow", key, "application/json", with(`,"VAR2":"today"`, ``), 400, "", "VAR2 is missing"},
		{"a variable in another case", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"VAR2"`, `"var2"`), 400, "", "Unknown variable var2"},
		{"a variable too long", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"today"`, `"`+strings.Repeat("x", 31)+`"`), 400, "", "over 30"},
		{"a variable not a string", http.MethodPost, "/api/v5/flow", key, "application/json", with(`"today"`, `7`), 400, "", "must be a string"},
		{"accepted", http.MethodPost, "/api/v5/flow", key, "application/json", good, 200, "", ""},
		{"accepted with a trailing slash, numbers for short_url, ignored options", http.MethodPost, "/api/v5/flow/", key, "application/json; charset=utf-8",
			with(`"short_url":"0"`, `"short_url":1,"short_url_expiry":3600,"realTimeResponse":"1"`), 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := post(t, s, tt.method, tt.path, tt.key, tt.contentType, tt.body)
			if a.status != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", a.status, tt.status, a.raw)
			}
			switch {
			case tt.status == 200:
				if a.body["type"] != "success" || len(a.body["message"].(string)) != 24 {
					t.Errorf("success %s", a.raw)
				}
			case tt.status == 400 || tt.status == 401:
				if a.body["type"] != "error" || !strings.Contains(a.body["message"].(string), tt.says) {
					t.Errorf("error %s, want it to say %q", a.raw, tt.says)
				}
				if c, _ := a.body["code"].(string); c != tt.code {
					t.Errorf("code %q, want %q", c, tt.code)
				}
			}
		})
	}
	sent := s.Sent()
	if s.Accepted() != 2 || len(sent) != 2 || s.Requests() != len(tests)-2 { // the GET and the other path are not counted
		t.Fatalf("accepted %d, requests %d: %+v", s.Accepted(), s.Requests(), sent)
	}
	want := msg91test.Recipient{Mobile: "919876543210", Vars: map[string]string{"VAR1": "A-17", "VAR2": "today"}, Text: "Order A-17 ships today. - ACMECO"}
	if r := sent[0].Recipients[0]; r.Mobile != want.Mobile || r.Text != want.Text || len(r.Vars) != 2 ||
		sent[0].DLTTemplateID != "1107161234567890123" || sent[0].Sender != "ACMECO" || sent[0].ShortURL || !sent[1].ShortURL {
		t.Errorf("sent %+v", sent)
	}
}

// TestInjected: each injected failure applies to the next request only.
func TestInjected(t *testing.T) {
	s := newServer(t, msg91test.Config{})
	for _, k := range []msg91test.Kind{msg91test.IPNotWhitelisted, msg91test.InsufficientBalance, msg91test.Duplicate,
		msg91test.TooManyRequests, msg91test.InternalError, msg91test.InvalidMobile} {
		s.FailNext(k)
		a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", good)
		if a.status != k.Status() || a.body["type"] != "error" || a.body["message"] != k.Message() {
			t.Errorf("%d: HTTP %d %s", k, a.status, a.raw)
		}
		if c, _ := a.body["code"].(string); c != k.Code() {
			t.Errorf("%d: code %q, want %q", k, c, k.Code())
		}
	}
	if s.Accepted() != 0 {
		t.Fatalf("accepted %d", s.Accepted())
	}
	s.FailNextHTTP(http.StatusBadGateway)
	if a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", good); a.status != 502 || !strings.Contains(a.raw, "<html>") {
		t.Errorf("proxy page: %d %s", a.status, a.raw)
	}
	s.FailNextHTTPAfterAccept(http.StatusGatewayTimeout)
	if a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", good); a.status != 504 || s.Accepted() != 1 {
		t.Errorf("proxy page after accepting: %d, accepted %d", a.status, s.Accepted())
	}
	s.BreakNext()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v5/flow", strings.NewReader(good))
	req.Header.Set("authkey", key)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Error("the connection did not break")
	}
	if s.Accepted() != 2 {
		t.Errorf("accepted %d after the break", s.Accepted())
	}
	if a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", good); a.status != 200 || s.Accepted() != 3 {
		t.Errorf("after the failures: %d %s", a.status, a.raw)
	}

	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v5/flow", strings.NewReader(good))
	req.Header.Set("authkey", key)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := s.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			resp.Body.Close()
		}
		t.Errorf("a slow fake answered: %v", err)
	}
	s.SetLatency(0)
}

// receiver is a webhook receiver that keeps what it is posted.
type receiver struct {
	mu     sync.Mutex
	posts  []*http.Request
	bodies []string
	status int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.posts = append(rc.posts, r)
	rc.bodies = append(rc.bodies, string(body))
	if rc.status != 0 {
		w.WriteHeader(rc.status)
	}
}

func TestReport(t *testing.T) {
	at := time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC)
	for _, version := range []msg91test.Version{msg91test.V2, msg91test.V3} {
		t.Run(string(version), func(t *testing.T) {
			rc := &receiver{}
			hook := httptest.NewServer(rc)
			defer hook.Close()
			s := newServer(t, msg91test.Config{ReportURL: hook.URL + "/webhooks/msg91/secret-token-0123456789", ReportVersion: version,
				Now: func() time.Time { return at }})
			two := `{"template_id":"tpl","recipients":[{"mobiles":"919876543210","VAR1":"A","VAR2":"B"},{"mobiles":"919876543211","VAR1":"A","VAR2":"B"}]}`
			a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", two)
			id, _ := a.body["message"].(string)
			ctx := context.Background()
			if err := s.Report(ctx, id, msg91test.Rejected); err != nil {
				t.Fatal(err)
			}
			var reports []map[string]any
			rc.mu.Lock()
			if version == msg91test.V2 {
				if len(rc.posts) != 1 || rc.posts[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
					t.Fatalf("%d posts", len(rc.posts))
				}
				form, err := url.ParseQuery(rc.bodies[0])
				if err != nil {
					t.Fatal(err)
				}
				var requests []struct {
					SenderID  string           `json:"senderId"`
					RequestID string           `json:"requestId"`
					Report    []map[string]any `json:"report"`
				}
				if err := json.Unmarshal([]byte(form.Get("data")), &requests); err != nil || len(requests) != 1 ||
					requests[0].RequestID != id || requests[0].SenderID != "ACMECO" {
					t.Fatalf("data %q: %v", form.Get("data"), err)
				}
				reports = requests[0].Report
			} else {
				if len(rc.posts) != 2 || rc.posts[0].Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%d posts", len(rc.posts))
				}
				for _, b := range rc.bodies {
					var r map[string]any
					if err := json.Unmarshal([]byte(b), &r); err != nil || r["requestId"] != id {
						t.Fatalf("%s: %v", b, err)
					}
					reports = append(reports, r)
				}
			}
			rc.mu.Unlock()
			if len(reports) != 2 {
				t.Fatalf("%d reports", len(reports))
			}
			for i, r := range reports {
				if r["number"] != []string{"919876543210", "919876543211"}[i] || r["status"] != "16" || r["desc"] != "REJECTED" ||
					r["date"] != "2026-11-25 14:00:05" || r["failedReason"] == "" {
					t.Errorf("report %d: %v", i, r)
				}
			}

			// One number, by its last ten digits.
			if err := s.Report(ctx, id, msg91test.Delivered, "9876543211"); err != nil {
				t.Fatal(err)
			}
			rc.mu.Lock()
			last := rc.bodies[len(rc.bodies)-1]
			rc.mu.Unlock()
			if strings.Contains(last, "919876543210") || !strings.Contains(last, "919876543211") {
				t.Errorf("report of one number: %s", last)
			}

			if err := s.Report(ctx, "no-such-request", msg91test.Delivered); err == nil {
				t.Error("a report of no request")
			}
			if err := s.Report(ctx, id, msg91test.Delivered, "9123456789"); err == nil {
				t.Error("a report of a number not in the request")
			}
			rc.mu.Lock()
			rc.status = http.StatusServiceUnavailable
			rc.mu.Unlock()
			var ce *msg91test.CallbackError
			if err := s.Report(ctx, id, msg91test.Delivered); !errors.As(err, &ce) || ce.StatusCode != 503 {
				t.Errorf("a receiver answering 503: %v", err)
			}
		})
	}
}

func TestReportErrors(t *testing.T) {
	s := newServer(t, msg91test.Config{})
	if err := s.Report(context.Background(), "x", msg91test.Delivered); err == nil || !strings.Contains(err.Error(), "ReportURL") {
		t.Errorf("no ReportURL: %v", err)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	hookURL := gone.URL + "/webhooks/msg91/secret-token-0123456789"
	gone.Close()
	s = newServer(t, msg91test.Config{ReportURL: hookURL})
	a := post(t, s, http.MethodPost, "/api/v5/flow", key, "application/json", good)
	err := s.Report(context.Background(), a.body["message"].(string), msg91test.Delivered)
	if err == nil || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("a receiver that is not there: %v", err)
	}
	for name, cfg := range map[string]msg91test.Config{
		"no key":        {},
		"a bad URL":     {AuthKey: key, ReportURL: "ftp://x"},
		"a bad version": {AuthKey: key, ReportVersion: "v4"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewServer did not panic", name)
				}
			}()
			msg91test.NewServer(cfg).Close()
		}()
	}
}

// TestBalanceAPI: the balance API answers the wallet as plain text to the
// auth key, for a type MSG91 knows, on GET only; FailNext and the proxy's
// faults fall on it too.
func TestBalanceAPI(t *testing.T) {
	s := newServer(t, msg91test.Config{Balance: 123456})
	get := func(method, query string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+msg91test.BalancePath+"?"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range header {
			req.Header.Set("authkey", k)
		}
		return vendorhttptest.Exchange(t, s.Client(), req)
	}
	ok := url.Values{"authkey": {key}, "type": {"0"}}.Encode()
	if status, body := get(http.MethodGet, ok); status != http.StatusOK || body != "1234.56" || s.Balance() != 123456 {
		t.Fatalf("HTTP %d %q", status, body)
	}
	s.SetBalance(-5)
	if status, body := get(http.MethodGet, url.Values{"authkey": {key}, "type": {"4"}}.Encode()); status != http.StatusOK || body != "-0.05" {
		t.Fatalf("type 4: HTTP %d %q", status, body)
	}
	if status, body := get(http.MethodGet, "type=0", key); status != http.StatusUnauthorized || !strings.Contains(body, `"106"`) {
		t.Fatalf("the key in a header only: HTTP %d %s", status, body)
	}
	for _, tt := range []struct {
		name, method, query string
		status              int
		code                string
	}{
		{"no key", http.MethodGet, "type=0", http.StatusUnauthorized, "106"},
		{"wrong key", http.MethodGet, url.Values{"authkey": {"nope"}, "type": {"0"}}.Encode(), http.StatusUnauthorized, "401"},
		{"no type", http.MethodGet, url.Values{"authkey": {key}}.Encode(), http.StatusBadRequest, ""},
		{"unknown type", http.MethodGet, url.Values{"authkey": {key}, "type": {"7"}}.Encode(), http.StatusBadRequest, ""},
		{"POST", http.MethodPost, ok, http.StatusMethodNotAllowed, ""},
	} {
		status, body := get(tt.method, tt.query)
		var out map[string]string
		_ = json.Unmarshal([]byte(body), &out)
		if status != tt.status || (tt.code != "" && (out["type"] != "error" || out["code"] != tt.code)) {
			t.Errorf("%s: HTTP %d %s, want %d code %q", tt.name, status, body, tt.status, tt.code)
		}
	}
	s.FailNext(msg91test.InternalError)
	if status, body := get(http.MethodGet, ok); status != http.StatusInternalServerError || !strings.Contains(body, `"601"`) {
		t.Fatalf("FailNext: HTTP %d %s", status, body)
	}
	s.FailNextHTTP(http.StatusBadGateway)
	if status, body := get(http.MethodGet, ok); status != http.StatusBadGateway || !strings.Contains(body, "<html>") {
		t.Fatalf("FailNextHTTP: HTTP %d %s", status, body)
	}
	if status, _ := get(http.MethodGet, ok); status != http.StatusOK || s.Requests() != 0 {
		t.Fatalf("afterwards: HTTP %d, %d flow requests", status, s.Requests())
	}
}
