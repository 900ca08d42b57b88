package otelnotify

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
)

// ScopeName is the instrumentation scope of the Notifier's spans: the
// notify module's path, as OpenTelemetry asks of instrumentation
// libraries.
const ScopeName = "github.com/notifykit/notify"

// WithTracerProvider makes the Notifier record OpenTelemetry spans through
// tp (see the package doc). The default, without it, is no tracing, never
// otel's global provider: a library does not trace unless told to. A
// noop.TracerProvider given here is the same as none, and costs a send
// nothing. A nil tp is refused when the Notifier is made.
func WithTracerProvider(tp trace.TracerProvider) notify.Option {
	if nilness.Is(tp) {
		return func(*notify.Notifier) error {
			return errors.New("otelnotify.WithTracerProvider: nil TracerProvider")
		}
	}
	switch tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return func(*notify.Notifier) error { return nil }
	}
	return notify.WithTracer(NewTracer(tp))
}

// NewTracer returns the notify.Tracer of tp's tracer for ScopeName, for a
// program that wires notify.WithTracer itself. tp must not be nil.
func NewTracer(tp trace.TracerProvider) notify.Tracer {
	return tracer{tp.Tracer(ScopeName)}
}

// tracer adapts a trace.Tracer to notify.Tracer.
type tracer struct{ t trace.Tracer }

func (t tracer) Start(ctx context.Context, name string, root bool) (context.Context, notify.Span) {
	if !root && !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	ctx, s := t.t.Start(ctx, name)
	return ctx, &span{s: s}
}

// Link returns the trace.SpanContext of ctx's span, or nil when it is
// not valid.
func (t tracer) Link(ctx context.Context) any {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc
	}
	return nil
}

// span adapts a trace.Span to notify.Span. It converts the attributes of
// each SetAttributes call into kv, its own buffer, rather than a new
// slice each time: OpenTelemetry's SDK copies the attributes it is given
// (sdk/trace recordingSpan.SetAttributes), so the buffer is free again
// when the call returns, and a traced send allocates one wrapper per
// span, not one more slice per call. No call of the Notifier's carries
// more than len(kv) attributes; a longer one gets a slice of its own.
type span struct {
	s  trace.Span
	kv [7]attribute.KeyValue
}

func (s *span) IsRecording() bool { return s.s.IsRecording() }

func (s *span) SetAttributes(attrs ...notify.SpanAttr) {
	if len(attrs) > len(s.kv) {
		s.s.SetAttributes(keyValues(attrs)...)
		return
	}
	kv := s.kv[:len(attrs)]
	for i, a := range attrs {
		kv[i] = keyValue(a)
	}
	s.s.SetAttributes(kv...)
}

func (s *span) Fail(code notify.Code) { s.s.SetStatus(codes.Error, string(code)) }

func (s *span) AddLink(link any, attrs ...notify.SpanAttr) {
	sc, ok := link.(trace.SpanContext)
	if !ok {
		return
	}
	l := trace.Link{SpanContext: sc}
	if len(attrs) > 0 {
		l.Attributes = keyValues(attrs)
	}
	s.s.AddLink(l)
}

func (s *span) End() { s.s.End() }

// keyValue is a's attribute.KeyValue.
func keyValue(a notify.SpanAttr) attribute.KeyValue {
	if a.IsInt {
		return attribute.Int64(a.Key, a.Int)
	}
	return attribute.String(a.Key, a.Str)
}

// keyValues is attrs as attribute.KeyValues.
func keyValues(attrs []notify.SpanAttr) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		kv[i] = keyValue(a)
	}
	return kv
}

// Interface guards.
var (
	_ notify.Tracer = tracer{}
	_ notify.Span   = (*span)(nil)
)
