package providertest_test

// This file is a reference harness for providers that speak HTTP: a small
// provider for an imaginary vendor ("acme"), a fake of that vendor on an
// httptest.Server with every hook of providertest.Harness, and the test
// that runs the suite. Provider authors can follow its shape.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/providertest"
)

const acmeKey = "acme-key-5b1e77"

// acmeProvider sends SMS through the acme API: POST /v1/sms with the key in
// Authorization, {"to","text"} in, {"id"} out. Errors answer {"error",
// "code"}. That body is acme's own answer: it took nothing, so it is a
// certain refusal whatever the status and code (as notify.Provider says).
// So: 429 = rate limited; a 5xx with acme's error body = unavailable
// (temporary, retried); a 5xx without it (a proxy's page, an empty or cut
// body) proves nothing and is an unknown outcome; 4xx = rejected.
type acmeProvider struct {
	base   string
	key    string
	client *http.Client
}

func (p *acmeProvider) Name() string { return "acme" }

func (p *acmeProvider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if sms.MessageOf(env) == nil {
		return nil, notify.InvalidField("message", "acme sends SMS only")
	}
	if err := ctx.Err(); err != nil {
		// Nothing was sent, for certain: say so, keeping the context's
		// error for errors.Is.
		return nil, &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("acme: not sent: %w", err)}
	}
	body, err := json.Marshal(map[string]string{"to": env.To, "text": sms.MessageOf(env).Text})
	if err != nil {
		// Before any I/O: certainly not accepted.
		return nil, notify.Errorf(notify.CodeInvalidArgument, "acme: the envelope cannot be encoded: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/sms", bytes.NewReader(body))
	if err != nil {
		return nil, notify.Errorf(notify.CodeRejected, "acme: the request cannot be built: check the base URL")
	}
	req.Header.Set("Authorization", p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		// The vendor may have the message: an unknown outcome, never
		// retried. A real provider tells failures before the request was
		// written (httptrace.ClientTrace's GotConn and WroteRequest) apart
		// and returns those as CodeUnavailable.
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "acme: no answer: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		ID    string `json:"id"`
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	decodeErr := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<16)).Decode(&out)
	if decodeErr != nil && resp.StatusCode < 300 {
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "acme: HTTP %d with an unreadable answer", resp.StatusCode)
	}
	own := decodeErr == nil && out.Error != "" // acme's own error body
	switch {
	case resp.StatusCode == http.StatusOK && out.ID != "":
		return &notify.Result{Provider: p.Name(), ProviderMessageID: out.ID}, nil
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "acme: HTTP %d without a message ID", resp.StatusCode)
	case resp.StatusCode == http.StatusTooManyRequests:
		e := notify.Errorf(notify.CodeRateLimited, "acme: rate limited: %s", out.Error)
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, e
	case resp.StatusCode >= 500 && own:
		return nil, notify.Errorf(notify.CodeUnavailable, "acme: HTTP %d: %s (%s)", resp.StatusCode, out.Error, out.Code)
	case resp.StatusCode >= 500:
		return nil, notify.Errorf(notify.CodeOutcomeUnknown, "acme: HTTP %d without acme's error body, which does not say the message was refused", resp.StatusCode)
	default:
		return nil, notify.Errorf(notify.CodeRejected, "acme: HTTP %d: %s", resp.StatusCode, out.Error)
	}
}

// fakeAcme is the vendor's fake: it checks the key, counts what it accepts
// and fails or slows down on request. For AnswerLost it accepts the
// message and then drops the connection without an answer.
type fakeAcme struct {
	*httptest.Server
	mu       sync.Mutex
	accepted int
	fail     providertest.Failure
	latency  time.Duration
}

func newFakeAcme(t *testing.T) *fakeAcme {
	f := &fakeAcme{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAcme) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	latency, fail := f.latency, f.fail
	f.fail = 0
	f.mu.Unlock()
	// Read the body before waiting: net/http notices that a client has
	// gone, and cancels r.Context(), only once the body has been read.
	var in struct{ To, Text string }
	decodeErr := json.NewDecoder(r.Body).Decode(&in)
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-r.Context().Done(): // the client gave up: answer nothing
			t.Stop()
			return
		case <-t.C:
		}
	}
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.Header.Get("Authorization") != acmeKey {
		reply(http.StatusUnauthorized, map[string]string{"error": "bad key"})
		return
	}
	if decodeErr != nil || in.To == "" {
		reply(http.StatusBadRequest, map[string]string{"error": "bad body"})
		return
	}
	switch fail {
	case providertest.Temporary:
		reply(http.StatusServiceUnavailable, map[string]string{"error": "maintenance", "code": "unavailable"})
		return
	case providertest.RateLimited:
		w.Header().Set("Retry-After", "1")
		reply(http.StatusTooManyRequests, map[string]string{"error": "slow down"})
		return
	case providertest.Permanent:
		reply(http.StatusBadRequest, map[string]string{"error": "number barred"})
		return
	case providertest.VendorErrorOn5xx:
		// A code acme's documentation does not list.
		reply(http.StatusInternalServerError, map[string]string{"error": "overloaded", "code": "E_BUSY"})
		return
	}
	f.mu.Lock()
	f.accepted++
	id := "acme-" + strconv.Itoa(f.accepted)
	f.mu.Unlock()
	if fail == providertest.AnswerLost {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler) // net/http drops the connection
		}
		conn.Close()
		return
	}
	reply(http.StatusOK, map[string]string{"id": id})
}

func (f *fakeAcme) failNext(kind providertest.Failure) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = kind
	return true
}

func (f *fakeAcme) setLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

func (f *fakeAcme) received() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accepted
}

func TestHTTPReferenceHarness(t *testing.T) {
	vendor := newFakeAcme(t)
	p := &acmeProvider{base: vendor.URL, key: acmeKey, client: vendor.Client()}
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: func(i int) *notify.Envelope {
			return &notify.Envelope{
				Kind: sms.Kind, To: "9876543210", Provider: "acme", Units: 1,
				Content: &sms.Message{Route: sms.RouteOTP, OTP: "482915", Text: "482915 is your code."},
			}
		},
		Secrets:    []string{acmeKey, "482915"},
		FailNext:   vendor.failNext,
		SetLatency: vendor.setLatency,
		Received:   vendor.received,
	})
}

// The reference provider refuses a wrong key for good, without the key in
// the error.
func TestHTTPReferenceWrongKey(t *testing.T) {
	vendor := newFakeAcme(t)
	p := &acmeProvider{base: vendor.URL, key: "wrong-key", client: vendor.Client()}
	_, err := p.Send(t.Context(), &notify.Envelope{To: "9876543210", Content: &sms.Message{Text: "hi"}})
	if notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("wrong key: %v, want rejected", err)
	}
	if strings.Contains(err.Error(), "wrong-key") {
		t.Errorf("the error holds the key: %v", err)
	}
}
