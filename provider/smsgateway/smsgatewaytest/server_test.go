package smsgatewaytest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

const key = "fake-key-1"

// TestVendorChecks sends raw requests and checks the fake answers as the
// vendor does, in its order of checks.
func TestVendorChecks(t *testing.T) {
	s := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key, Balance: 100,
		Templates: []smsgatewaytest.Template{{ID: "11", EntityID: "22", Sender: "ACMECO", Content: "Code {#var#}. - ACMECO"}}})
	defer s.Close()
	tests := []struct {
		name string
		key  string
		body string
		code int // 0 for success
	}{
		{"no key", "", `{"route":"q","message":"hi","language":"english","numbers":"9876543210"}`, 412},
		{"wrong key", "x", `{"route":"q","message":"hi","language":"english","numbers":"9876543210"}`, 412},
		{"not JSON", key, `route=q`, 403},
		{"no route", key, `{"message":"hi","numbers":"9876543210"}`, 403},
		{"bad route", key, `{"route":"p","message":"hi","numbers":"9876543210"}`, 408},
		{"no numbers", key, `{"route":"q","message":"hi","language":"english"}`, 405},
		{"9-digit number", key, `{"route":"q","message":"hi","language":"english","numbers":"987654321"}`, 411},
		{"number with +91", key, `{"route":"q","message":"hi","language":"english","numbers":"+919876543210"}`, 411},
		{"one bad number of two", key, `{"route":"q","message":"hi","language":"english","numbers":"9876543210,5876543210"}`, 411},
		{"q without message", key, `{"route":"q","language":"english","numbers":"9876543210"}`, 402},
		{"q without language", key, `{"route":"q","message":"hi","numbers":"9876543210"}`, 404},
		{"q with a bad language", key, `{"route":"q","message":"hi","language":"hindi","numbers":"9876543210"}`, 410},
		{"q english with Hindi", key, `{"route":"q","message":"नमस्ते","language":"english","numbers":"9876543210"}`, 417},
		{"q unicode with Hindi", key, `{"route":"q","message":"नमस्ते","language":"unicode","flash":0,"numbers":"9876543210"}`, 0},
		{"otp without code", key, `{"route":"otp","numbers":"9876543210"}`, 402},
		{"otp with letters", key, `{"route":"otp","variables_values":"12ab","numbers":"9876543210"}`, 997},
		{"otp", key, `{"route":"otp","variables_values":"1234","numbers":"9876543210"}`, 0},
		{"dlt without sender", key, `{"route":"dlt_manual","message":"Code 1. - ACMECO","template_id":"11","numbers":"9876543210"}`, 401},
		{"dlt with another sender", key, `{"route":"dlt_manual","sender_id":"OTHERS","message":"Code 1. - ACMECO","template_id":"11","numbers":"9876543210"}`, 406},
		{"dlt without template", key, `{"route":"dlt_manual","sender_id":"ACMECO","message":"Code 1. - ACMECO","numbers":"9876543210"}`, 425},
		{"dlt with a wrong entity", key, `{"route":"dlt_manual","sender_id":"ACMECO","message":"Code 1. - ACMECO","template_id":"11","entity_id":"9","numbers":"9876543210"}`, 425},
		{"dlt text off the template", key, `{"route":"dlt_manual","sender_id":"ACMECO","message":"Code: 1","template_id":"11","numbers":"9876543210"}`, 425},
		{"dlt", key, `{"route":"dlt_manual","sender_id":"ACMECO","message":"Code 1. - ACMECO","template_id":"11","entity_id":"22","numbers":"9876543210"}`, 0},
		{"wallet empty after 4 parts", key, `{"route":"otp","variables_values":"1234","numbers":"9876543210,9876543211"}`, 416},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.URL+"/dev/bulkV2", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("authorization", tt.key)
			req.Header.Set("Content-Type", "application/json")
			ret, code, status := do(t, s, req)
			switch {
			case tt.code == 0 && (!ret || status != 200):
				t.Fatalf("HTTP %d, return %v, status_code %d; want success", status, ret, code)
			case tt.code != 0 && (ret || code != tt.code):
				t.Fatalf("HTTP %d, return %v, status_code %d; want %d", status, ret, code, tt.code)
			case tt.code == 412 && status != 401, tt.code != 0 && tt.code != 412 && status != 400:
				t.Fatalf("HTTP %d for vendor code %d", status, tt.code)
			}
		})
	}
	if got := s.Accepted(); got != 3 {
		t.Fatalf("accepted %d, want 3", got)
	}
	if got := s.Balance(); got != 100-3*25 {
		t.Fatalf("balance %d", got)
	}
}

func TestGETAndForm(t *testing.T) {
	s := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key})
	defer s.Close()
	q := url.Values{"authorization": {key}, "route": {"q"}, "message": {"hi"}, "language": {"english"}, "numbers": {"9876543210"}}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/dev/bulkV2?"+q.Encode(), nil)
	if ret, code, _ := do(t, s, req); !ret {
		t.Fatalf("GET: status_code %d", code)
	}
	q.Del("authorization")
	req, _ = http.NewRequest(http.MethodPost, s.URL+"/dev/bulkV2", strings.NewReader(q.Encode()))
	req.Header.Set("authorization", key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if ret, code, _ := do(t, s, req); !ret {
		t.Fatalf("form POST: status_code %d", code)
	}
	req, _ = http.NewRequest(http.MethodGet, s.URL+"/dev/wallet?authorization="+key, nil)
	var w struct {
		Return   bool   `json:"return"`
		Wallet   string `json:"wallet"`
		SMSCount int64  `json:"sms_count"`
	}
	if status := decode(t, s, req, &w); status != http.StatusOK || !w.Return || w.Wallet != "999.50" || w.SMSCount != 3998 {
		t.Fatalf("wallet = HTTP %d, %+v", status, w)
	}
	for _, id := range []string{s.Sent()[0].RequestID, s.Sent()[1].RequestID} {
		if len(id) != 15 {
			t.Errorf("request_id %q is not 15 characters", id)
		}
	}
}

// do sends req and returns the answer's return and status_code, and its
// HTTP status.
func do(t *testing.T, s *smsgatewaytest.Server, req *http.Request) (ret bool, code, status int) {
	t.Helper()
	var out struct {
		Return     bool `json:"return"`
		StatusCode int  `json:"status_code"`
	}
	status = decode(t, s, req, &out)
	return out.Return, out.StatusCode, status
}

// decode sends req, reads the JSON answer into out and returns its HTTP
// status.
func decode(t *testing.T, s *smsgatewaytest.Server, req *http.Request, out any) int {
	t.Helper()
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("answer is not JSON: %v", err)
	}
	return resp.StatusCode
}

// TestInjectedFailures checks the fake's failures as a client sees them on
// the wire.
func TestInjectedFailures(t *testing.T) {
	s := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key, Balance: 100})
	defer s.Close()
	send := func() (*http.Response, error) { return s.Client().Do(mustRequest(t, s)) }
	page := func(resp *http.Response, status int) {
		t.Helper()
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || resp.Header.Get("Content-Type") != "text/html" ||
			!strings.Contains(string(body), fmt.Sprintf("<title>%d %s</title>", status, http.StatusText(status))) {
			t.Fatalf("HTTP %d %q: %s, want a proxy's %d page", resp.StatusCode, resp.Header.Get("Content-Type"), body, status)
		}
	}

	// A proxy's 502: the vendor never sees the message.
	s.FailNextHTTP(http.StatusBadGateway)
	resp, err := send()
	if err != nil {
		t.Fatal(err)
	}
	page(resp, http.StatusBadGateway)
	if s.Accepted() != 0 || s.Requests() != 1 || s.Balance() != 100 {
		t.Fatalf("after a proxy 502: accepted %d of %d, balance %d", s.Accepted(), s.Requests(), s.Balance())
	}

	// A proxy's 504 after the vendor took the message and charged it.
	s.FailNextHTTPAfterAccept(http.StatusGatewayTimeout)
	resp, err = send()
	if err != nil {
		t.Fatal(err)
	}
	page(resp, http.StatusGatewayTimeout)
	if s.Accepted() != 1 || s.Requests() != 2 || s.Balance() != 75 {
		t.Fatalf("after a proxy 504: accepted %d of %d, balance %d", s.Accepted(), s.Requests(), s.Balance())
	}

	// The vendor takes the message and the connection drops.
	s.BreakNext()
	if resp, err := send(); err == nil {
		resp.Body.Close()
		t.Fatalf("BreakNext: got HTTP %d, want a dropped connection", resp.StatusCode)
	}
	if s.Accepted() != 2 || s.Requests() != 3 || s.Balance() != 50 {
		t.Fatalf("after BreakNext: accepted %d of %d, balance %d", s.Accepted(), s.Requests(), s.Balance())
	}

	// The vendor's own refusals on a 503: for two requests, then for
	// every one until told to stop. Nothing is taken or charged.
	s.RefuseNext(2, http.StatusServiceUnavailable, 503, "busy")
	for i := range 2 {
		if ret, code, status := do(t, s, mustRequest(t, s)); ret || code != 503 || status != http.StatusServiceUnavailable {
			t.Fatalf("RefuseNext(2), request %d: return %v, status_code %d, HTTP %d; want false, 503, 503", i, ret, code, status)
		}
	}
	if ret, code, _ := do(t, s, mustRequest(t, s)); !ret {
		t.Fatalf("the third request after RefuseNext(2): status_code %d, want it taken", code)
	}
	s.RefuseNext(-1, http.StatusServiceUnavailable, 503, "busy")
	for i := range 3 {
		if ret, code, _ := do(t, s, mustRequest(t, s)); ret || code != 503 {
			t.Fatalf("RefuseNext(-1), request %d: return %v, status_code %d", i, ret, code)
		}
	}
	s.RefuseNext(0, 0, 0, "")
	if s.Accepted() != 3 || s.Requests() != 9 || s.Balance() != 25 {
		t.Fatalf("after the refusals: accepted %d of %d, balance %d", s.Accepted(), s.Requests(), s.Balance())
	}

	// Each failure was for one request only.
	ret, code, _ := do(t, s, mustRequest(t, s))
	if !ret {
		t.Fatalf("after the failures: status_code %d", code)
	}
}

func mustRequest(t *testing.T, s *smsgatewaytest.Server) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/dev/bulkV2",
		strings.NewReader(`{"route":"otp","variables_values":"1234","numbers":"9876543210"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("authorization", key)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// dlrReceiver stands in for the delivery-report receiver under test: it
// keeps what the fake posts and answers status.
type dlrReceiver struct {
	mu      sync.Mutex
	status  int
	reports []map[string]any
	types   []string
	srv     *httptest.Server
}

const dlrSecret = "receiver-token-7f3a9c2e51"

func newDLRReceiver(t *testing.T) (*dlrReceiver, string) {
	t.Helper()
	rc := &dlrReceiver{status: http.StatusOK}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if r.Method != http.MethodPost || r.URL.Path != "/dlr/"+dlrSecret || json.NewDecoder(r.Body).Decode(&m) != nil {
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.reports = append(rc.reports, m)
		rc.types = append(rc.types, r.Header.Get("Content-Type"))
		w.WriteHeader(rc.status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc, rc.srv.URL + "/dlr/" + dlrSecret
}

func (rc *dlrReceiver) answer(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

func (rc *dlrReceiver) taken() []map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]map[string]any(nil), rc.reports...)
}

// send makes the fake accept a message to numbers and returns its request
// ID.
func send(t *testing.T, s *smsgatewaytest.Server, numbers string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/dev/bulkV2",
		strings.NewReader(`{"route":"q","message":"Sale today","language":"english","numbers":"`+numbers+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("authorization", key)
	req.Header.Set("Content-Type", "application/json")
	if ret, code, _ := do(t, s, req); !ret {
		t.Fatalf("send: status_code %d", code)
	}
	sent := s.Sent()
	return sent[len(sent)-1].RequestID
}

var dlrClock = time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC) // 14:00:05 IST

// TestReportNumber: the fake posts the vendor's report of one number,
// over HTTP, in the shape of its Standard webhook, and says what the
// receiver answered, never naming the receiver's URL.
func TestReportNumber(t *testing.T) {
	rc, dlrURL := newDLRReceiver(t)
	s := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key, DLRURL: dlrURL, Now: func() time.Time { return dlrClock }})
	defer s.Close()
	ctx := context.Background()
	id := send(t, s, "9876543210,9812345678")
	if err := s.ReportNumber(ctx, id, "+91 98123 45678", "DELIVERED"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReportNumber(ctx, id, "9876543210", "dnd"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReportNumber(ctx, id, "9876543210", "dnd"); err != nil {
		t.Fatal(err)
	}
	got := rc.taken()
	want := []map[string]any{
		{"request_id": id, "route": "q", "channel": "sms", "mobile": "9812345678", "status": "delivered",
			"status_description": "Delivered successfully", "delivery_time": "2026-11-25 14:00:05",
			"delivery_timestamp": float64(dlrClock.Unix()), "sms_count": float64(1), "amount_debited": "0.25", "post_attempt": float64(1)},
		{"request_id": id, "route": "q", "channel": "sms", "mobile": "9876543210", "status": "dnd",
			"status_description": "dnd", "failure_reason": "Number is registered in DND", "delivery_time": "2026-11-25 14:00:05",
			"delivery_timestamp": float64(dlrClock.Unix()), "sms_count": float64(1), "amount_debited": "0.25", "post_attempt": float64(1)},
	}
	if len(got) != 3 || !reflect.DeepEqual(got[:2], want) || got[2]["post_attempt"] != float64(2) {
		t.Fatalf("posted:\n%v\nwant\n%v\nand the second dnd with post_attempt 2", got, want)
	}
	for _, ct := range rc.types {
		if ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
	}

	// Only what the fake accepted is reported.
	for name, err := range map[string]error{
		"an unknown request ID": s.ReportNumber(ctx, "not-issued", "9876543210", "delivered"),
		"another number":        s.ReportNumber(ctx, id, "9000000001", "delivered"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if len(rc.taken()) != 3 {
		t.Fatalf("posted %d reports, want 3", len(rc.taken()))
	}

	// An answer other than 2xx is a *CallbackError; no error names the URL.
	rc.answer(http.StatusUnauthorized)
	err := s.ReportNumber(ctx, id, "9876543210", "delivered")
	var ce *smsgatewaytest.CallbackError
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a 401: %v", err)
	}
	rc.answer(http.StatusNoContent)
	if err := s.ReportNumber(ctx, id, "9876543210", "delivered"); err != nil {
		t.Fatalf("a 204: %v", err)
	}
	rc.srv.Close()
	err = s.ReportNumber(ctx, id, "9876543210", "delivered")
	if err == nil || errors.As(err, &ce) {
		t.Fatalf("a closed receiver: %v", err)
	}
	for _, e := range []error{err, ce} {
		if strings.Contains(e.Error(), dlrSecret) {
			t.Fatalf("an error names the token: %v", e)
		}
	}

	plain := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key})
	defer plain.Close()
	if err := plain.ReportNumber(ctx, send(t, plain, "9876543210"), "9876543210", "delivered"); err == nil {
		t.Fatal("ReportNumber without DLRURL: no error")
	}
}

// TestAutoDLR: with AutoDLR the fake queues a report for each number of
// each message it accepts, lost answers included, and posts them only
// when FlushDLRs is called; a report the receiver refuses stays queued.
func TestAutoDLR(t *testing.T) {
	rc, dlrURL := newDLRReceiver(t)
	s := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: key, DLRURL: dlrURL, AutoDLR: "DELIVERED",
		Now: func() time.Time { return dlrClock }})
	defer s.Close()
	ctx := context.Background()
	first := send(t, s, "9876543210,9812345678")
	s.BreakNext()
	if resp, err := s.Client().Do(mustRequest(t, s)); err == nil {
		resp.Body.Close()
		t.Fatal("BreakNext: an answer")
	}
	lost := s.Sent()[1].RequestID
	s.FailNext(smsgatewaytest.InvalidNumbers) // refused: nothing to report
	if ret, _, _ := do(t, s, mustRequest(t, s)); ret {
		t.Fatal("FailNext: accepted")
	}
	if got := s.PendingDLRs(); got != 3 || len(rc.taken()) != 0 {
		t.Fatalf("%d queued, %d posted; want 3 queued, none posted", got, len(rc.taken()))
	}

	rc.answer(http.StatusServiceUnavailable)
	posted, err := s.FlushDLRs(ctx)
	var ce *smsgatewaytest.CallbackError
	if posted != 0 || !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable || s.PendingDLRs() != 3 {
		t.Fatalf("a 503: posted %d, %v, %d queued", posted, err, s.PendingDLRs())
	}
	rc.answer(http.StatusOK)
	if posted, err := s.FlushDLRs(ctx); posted != 3 || err != nil || s.PendingDLRs() != 0 {
		t.Fatalf("flush: posted %d, %v, %d queued", posted, err, s.PendingDLRs())
	}
	if posted, err := s.FlushDLRs(ctx); posted != 0 || err != nil {
		t.Fatalf("an empty flush: posted %d, %v", posted, err)
	}
	var got []string
	for _, r := range rc.taken() {
		got = append(got, fmt.Sprintf("%s %s %s %v", r["request_id"], r["mobile"], r["status"], r["post_attempt"]))
	}
	want := []string{
		first + " 9876543210 delivered 1", // refused with the 503
		first + " 9876543210 delivered 2",
		first + " 9812345678 delivered 1",
		lost + " 9876543210 delivered 1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("posted\n%v\nwant\n%v", got, want)
	}
}

func TestDLRConfigPanics(t *testing.T) {
	for name, cfg := range map[string]smsgatewaytest.Config{
		"a DLRURL that is not http": {APIKey: key, DLRURL: "ftp://example.com/dlr"},
		"a relative DLRURL":         {APIKey: key, DLRURL: "/dlr/token"},
		"AutoDLR without DLRURL":    {APIKey: key, AutoDLR: "delivered"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			smsgatewaytest.NewServer(cfg).Close()
		}()
	}
}
