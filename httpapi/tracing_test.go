package httpapi_test

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/otelnotify"
)

// parentRecorder is a trace.TracerProvider that keeps the parent of each
// span started, by name; its spans do not record. The OpenTelemetry SDK
// is no dependency of the library, not even of its tests.
type parentRecorder struct {
	embedded.TracerProvider
	mu      sync.Mutex
	parents map[string][]trace.SpanContext
	next    byte
}

func (p *parentRecorder) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return parentTracer{p: p}
}

type parentTracer struct {
	embedded.Tracer
	p *parentRecorder
}

func (t parentTracer) Start(ctx context.Context, name string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	p := t.p
	parent := trace.SpanContextFromContext(ctx)
	p.mu.Lock()
	p.next++
	if p.parents == nil {
		p.parents = map[string][]trace.SpanContext{}
	}
	p.parents[name] = append(p.parents[name], parent)
	cfg := trace.SpanContextConfig{TraceID: parent.TraceID(), SpanID: trace.SpanID{1, p.next}, TraceFlags: trace.FlagsSampled}
	p.mu.Unlock()
	if !parent.IsValid() {
		cfg.TraceID = trace.TraceID{9, 9}
	}
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(cfg))
	return ctx, trace.SpanFromContext(ctx)
}

func (p *parentRecorder) of(name string) []trace.SpanContext {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]trace.SpanContext(nil), p.parents[name]...)
}

// An incoming W3C traceparent is the parent of the send's span; without
// one, the send's span is a root.
func TestTraceparentContinues(t *testing.T) {
	rec := &parentRecorder{}
	e := newTestEnvFull(t, openingBal, []notify.Option{otelnotify.WithTracerProvider(rec)})
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	r := e.post(t, "/api/v1/sms", `{"numbers":"9876543210","message":"Hello there"}`,
		map[string]string{"Traceparent": "00-" + traceID + "-" + spanID + "-01"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	r = e.post(t, "/api/v1/sms", `{"numbers":"9876543210","message":"Hello again"}`, nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	parents := rec.of("notify.send")
	if len(parents) != 2 {
		t.Fatalf("%d send spans, want 2", len(parents))
	}
	if p := parents[0]; p.TraceID().String() != traceID || p.SpanID().String() != spanID || !p.IsRemote() || !p.IsSampled() {
		t.Errorf("the send's parent = %s/%s remote %v sampled %v, want the caller's %s/%s",
			p.TraceID(), p.SpanID(), p.IsRemote(), p.IsSampled(), traceID, spanID)
	}
	if p := parents[1]; p.IsValid() {
		t.Errorf("a send without traceparent has parent %v", p)
	}
	// The pipeline's steps are the send's children, in the caller's trace.
	for _, name := range []string{"notify.prepare", "notify.charge", "notify.attempt", "notify.settle"} {
		ps := rec.of(name)
		if len(ps) != 2 || ps[0].TraceID().String() != traceID || ps[0].IsRemote() {
			t.Errorf("%s parents = %v, want the send's span in trace %s", name, ps, traceID)
		}
	}
}
