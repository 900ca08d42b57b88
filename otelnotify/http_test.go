package otelnotify_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/otelnotify"
)

// An incoming W3C traceparent, through ContinueTrace in front of the
// httpapi handler, is the parent of the send's span; without one, the
// send's span is a root.
func TestContinueTraceThroughHTTPAPI(t *testing.T) {
	rec := &spanRecorder{}
	// Midday in India: a send window holds nothing.
	noon := time.Date(2026, 3, 2, 6, 30, 0, 0, time.UTC)
	kit := notifytest.New(t,
		notifytest.WithClock(func() time.Time { return noon }),
		notifytest.WithNotifierOptions(otelnotify.WithTracerProvider(rec)))
	api, err := httpapi.New(kit.Notifier, kit.Accounts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(otelnotify.ContinueTrace(api))
	defer srv.Close()
	post := func(body string, header map[string]string) {
		t.Helper()
		req, err := http.NewRequest("POST", srv.URL+httpapi.BasePath+"/sms", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+notifytest.APIKey)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
	}
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	post(`{"numbers":"9876543210","message":"Hello there"}`,
		map[string]string{"Traceparent": "00-" + traceID + "-" + spanID + "-01"})
	post(`{"numbers":"9876543210","message":"Hello again"}`, nil)

	sends := rec.named("notify.send")
	if len(sends) != 2 {
		t.Fatalf("%d send spans, want 2", len(sends))
	}
	if p := sends[0].parent; p.TraceID().String() != traceID || p.SpanID().String() != spanID || !p.IsRemote() || !p.IsSampled() {
		t.Errorf("the send's parent = %s/%s remote %v sampled %v, want the caller's %s/%s",
			p.TraceID(), p.SpanID(), p.IsRemote(), p.IsSampled(), traceID, spanID)
	}
	if p := sends[1].parent; p.IsValid() {
		t.Errorf("a send without traceparent has parent %v", p)
	}
	// The pipeline's steps are the send's children: the first send's in
	// the caller's trace.
	for _, name := range []string{"notify.prepare", "notify.charge", "notify.attempt", "notify.settle"} {
		ps := rec.named(name)
		if len(ps) != 2 {
			t.Errorf("%d %s spans, want 2", len(ps), name)
			continue
		}
		for i, s := range ps {
			if !s.parent.Equal(sends[i].sc) {
				t.Errorf("%s #%d has parent %v, want send %d's span %v", name, i, s.parent, i, sends[i].sc)
			}
		}
		if ps[0].sc.TraceID().String() != traceID || ps[0].parent.IsRemote() {
			t.Errorf("%s is in trace %s (parent remote %v), want the caller's %s", name, ps[0].sc.TraceID(), ps[0].parent.IsRemote(), traceID)
		}
	}
}
