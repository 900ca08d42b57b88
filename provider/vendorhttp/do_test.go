package vendorhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

func TestDo(t *testing.T) {
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Key") != "k" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"id":"m1"}`))
		case "/hang":
			select { // hold the answer until the client gives up
			case <-r.Context().Done():
			case <-release:
			}
		case "/hangup": // read the request, then drop the connection
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/cut": // promise 100 bytes, send 10, then drop the connection
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"id":"m1"`))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2048)))
		}
	}))
	defer srv.Close()
	defer close(release)

	closed := "http://" + vendorhttptest.ClosedAddr(t)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	// patience is how long the impatient client and the short context
	// wait: long enough to write the request on a loaded machine, so that
	// the vendor has it when they give up.
	const patience = 500 * time.Millisecond
	short := context.WithValue(context.Background(), shortKey{}, true) // made a deadline in the subtest
	impatient := &http.Client{Transport: srv.Client().Transport, Timeout: patience}

	cases := []struct {
		name    string
		ctx     context.Context
		client  *http.Client
		url     string
		code    notify.Code // "" : success
		outcome record.State
		is      error
		text    string
		reached int64 // requests the server saw
	}{
		{name: "answer", url: srv.URL + "/ok", outcome: record.StateSent, reached: 1},
		{name: "connection refused", url: closed + "/x?token=SECRET", code: notify.CodeUnavailable,
			outcome: record.StateFailed, text: "request not sent"},
		{name: "context ended before", ctx: canceled, url: srv.URL + "/ok", code: notify.CodeUnavailable,
			outcome: record.StateFailed, is: context.Canceled, text: "request not sent"},
		{name: "bad URL from the configuration", url: "http://vendor.example:port/x?token=SECRET", code: notify.CodeRejected,
			outcome: record.StateFailed, text: "check acme Config.BaseURL"},
		{name: "no answer in time", ctx: short, url: srv.URL + "/hang?token=SECRET", code: notify.CodeOutcomeUnknown,
			outcome: record.StateUnknown, is: context.DeadlineExceeded, text: "may have accepted the message", reached: 1},
		{name: "client timeout after the request", client: impatient, url: srv.URL + "/hang", code: notify.CodeOutcomeUnknown,
			outcome: record.StateUnknown, text: "timed out", reached: 1},
		{name: "connection dropped after the request", url: srv.URL + "/hangup", code: notify.CodeOutcomeUnknown,
			outcome: record.StateUnknown, text: "no answer", reached: 1},
		{name: "answer cut short", url: srv.URL + "/cut", code: notify.CodeOutcomeUnknown,
			outcome: record.StateUnknown, text: "HTTP 200, and its answer could not be read whole", reached: 1},
		{name: "answer too long", url: srv.URL + "/big", code: notify.CodeOutcomeUnknown,
			outcome: record.StateUnknown, text: "answer over 1024 bytes", reached: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, client := c.ctx, c.client
			if ctx == nil {
				ctx = context.Background()
			}
			if ctx.Value(shortKey{}) != nil { // the deadline runs from here, not from the table
				var stop context.CancelFunc
				ctx, stop = context.WithTimeout(ctx, patience)
				defer stop()
			}
			if client == nil {
				client = srv.Client()
			}
			before := hits.Load()
			ans, err := Do(ctx, client, Request{Name: "acme", Method: http.MethodPost, URL: c.url, URLConfig: "acme Config.BaseURL",
				Body: []byte(`{}`), Header: http.Header{"X-Key": {"k"}}, Limit: 1024})
			if got := hits.Load() - before; got != c.reached {
				t.Errorf("the server saw %d requests, want %d", got, c.reached)
			}
			if c.code == "" {
				if err != nil || ans.Status != 200 || string(ans.Body) != `{"id":"m1"}` {
					t.Fatalf("Do = %+v, %v", ans, err)
				}
				return
			}
			if ans != nil {
				t.Errorf("Do returned an Answer with its error")
			}
			if got := notify.CodeOf(err); got != c.code {
				t.Fatalf("code = %q (%v), want %q", got, err, c.code)
			}
			if got := notify.OutcomeOf(err); got != c.outcome {
				t.Errorf("outcome = %v, want %v", got, c.outcome)
			}
			if want := c.code == notify.CodeUnavailable; notify.IsRetryable(err) != want {
				t.Errorf("IsRetryable = %v for %v", !want, err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, c.is)
			}
			msg := err.Error()
			if strings.Contains(msg, "SECRET") || !strings.Contains(msg, "acme: ") || !strings.Contains(msg, c.text) {
				t.Errorf("message %q leaks the URL, lacks the name or lacks %q", msg, c.text)
			}
		})
	}
}

// roundTripper is a transport made of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWriteTracking: only a transport that says, through the client trace,
// that it never wrote the request whole gets a retryable error.
func TestWriteTracking(t *testing.T) {
	failed := errors.New("transport failed")
	cases := []struct {
		name string
		// trace replays what the transport reports before it fails.
		trace   func(*httptrace.ClientTrace)
		outcome record.State
	}{
		{"reports nothing", func(*httptrace.ClientTrace) {}, record.StateUnknown},
		{"no connection", func(tr *httptrace.ClientTrace) { tr.GetConn("vendor:443") }, record.StateFailed},
		{"write failed", func(tr *httptrace.ClientTrace) {
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{Err: failed})
		}, record.StateFailed},
		{"written, then failed", func(tr *httptrace.ClientTrace) {
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{})
		}, record.StateUnknown},
		{"write never reported", func(tr *httptrace.ClientTrace) {
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
		}, record.StateUnknown},
		{"written once, retry failed to write", func(tr *httptrace.ClientTrace) {
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{})
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{Err: failed})
		}, record.StateUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
				c.trace(httptrace.ContextClientTrace(r.Context()))
				return nil, failed
			})}
			_, err := Do(context.Background(), client, Request{Name: "acme", Method: http.MethodPost, URL: "http://vendor/x", Body: []byte(`{}`)})
			if got := notify.OutcomeOf(err); got != c.outcome {
				t.Fatalf("outcome %v (%v), want %v", got, err, c.outcome)
			}
			if notify.IsRetryable(err) != (c.outcome == record.StateFailed) {
				t.Errorf("IsRetryable = %v", notify.IsRetryable(err))
			}
		})
	}
}

// TestWriteSettlesLate: the transport fails while its writer is still
// finishing; Do waits for the writer's word.
func TestWriteSettlesLate(t *testing.T) {
	failed := errors.New("connection closed")
	for _, whole := range []bool{false, true} {
		client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			tr := httptrace.ContextClientTrace(r.Context())
			tr.GetConn("vendor:443")
			tr.GotConn(httptrace.GotConnInfo{})
			done := make(chan struct{})
			go func() { // the writer reports after RoundTrip has returned
				<-done
				info := httptrace.WroteRequestInfo{Err: failed}
				if whole {
					info.Err = nil
				}
				tr.WroteRequest(info)
			}()
			defer close(done)
			return nil, failed
		})}
		_, err := Do(context.Background(), client, Request{Name: "acme", Method: http.MethodPost, URL: "http://vendor/x", Body: []byte(`{}`)})
		want := record.StateFailed
		if whole {
			want = record.StateUnknown
		}
		if got := notify.OutcomeOf(err); got != want {
			t.Errorf("written whole %v: outcome %v (%v), want %v", whole, got, err, want)
		}
	}
}

func TestUnknownfAndReadOnly(t *testing.T) {
	e := Unknownf("acme", "HTTP %d without the vendor's error body", 502)
	if notify.OutcomeOf(e) != record.StateUnknown || notify.IsRetryable(e) ||
		e.Error() != "outcome_unknown: acme: HTTP 502 without the vendor's error body (the vendor may have accepted the message, so it is not retried)" {
		t.Fatalf("Unknownf = %q", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lost := Unknown(ctx, "acme", "no answer", errors.New("reset"))
	ro := ReadOnly(lost)
	if notify.CodeOf(ro) != notify.CodeUnavailable || !notify.IsRetryable(ro) || !errors.Is(ro, context.Canceled) {
		t.Fatalf("ReadOnly(%v) = %v", lost, ro)
	}
	if msg := ro.Error(); msg != "unavailable: acme: no answer: context canceled" {
		t.Errorf("ReadOnly message %q", msg)
	}
	if ro := ReadOnly(errors.New("bare")); notify.CodeOf(ro) != notify.CodeUnavailable {
		t.Errorf("ReadOnly of a bare error = %v", ro)
	}
	rejected := notify.Errorf(notify.CodeRejected, "acme: bad key")
	if ReadOnly(rejected) != rejected || ReadOnly(nil) != nil {
		t.Errorf("ReadOnly changed a certain error or nil")
	}
}

// TestBadHeaderIsRejected: a credential with a line break would make
// net/http fail before any I/O; that is a configuration problem, refused
// for certain, not an unknown outcome.
func TestBadHeaderIsRejected(t *testing.T) {
	called := false
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		called = true
		return nil, errors.New("unreachable")
	})}
	_, err := Do(context.Background(), client, Request{Name: "acme", Method: http.MethodPost, URL: "http://vendor/x",
		Header: http.Header{"Authorization": {"Bearer SECRET\n"}}})
	if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed || called {
		t.Fatalf("bad header: %v (transport called: %v), want rejected before any I/O", err, called)
	}
	if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "Authorization") {
		t.Errorf("message %q leaks the value or does not name the header", err)
	}
}

// shortKey marks the context of a case that must time out after the
// request was written.
type shortKey struct{}

// TestRefusedBeforeIO: what net/http's own transport refuses before it
// asks for a connection (a header name HTTP forbids, a URL it cannot
// send to) is a certain refusal naming the problem, not an unknown
// outcome: nothing left the process.
func TestRefusedBeforeIO(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{}}
	cases := []struct {
		name, url string
		header    http.Header
		want      string
	}{
		{"header name", "http://127.0.0.1:1/x", http.Header{"X Bad": {"v"}}, `"X Bad" is not a valid HTTP header name`},
		{"scheme", "ftp://vendor.example/x", nil, "not an http(s) URL with a host"},
		{"no host", "http:///x", nil, "not an http(s) URL with a host"},
	}
	for _, c := range cases {
		_, err := Do(context.Background(), client, Request{Name: "acme", Method: http.MethodPost, URL: c.url, Body: []byte(`{}`), Header: c.header})
		if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("%s: %v, want a certain refusal saying %q", c.name, err, c.want)
		}
	}
}
