package otelnotify_test

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// spanRecorder is a trace.TracerProvider that keeps every span it starts,
// for the library's tests, which may not depend on the OpenTelemetry SDK.
// Its spans record and are sampled.
type spanRecorder struct {
	embedded.TracerProvider
	mu    sync.Mutex
	spans []*recordedSpan
}

func (r *spanRecorder) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return recordingTracer{rec: r}
}

// ended returns the spans that ended, in the order they started.
func (r *spanRecorder) ended() []*recordedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*recordedSpan
	for _, s := range r.spans {
		if s.isEnded() {
			out = append(out, s)
		}
	}
	return out
}

// named returns the ended spans called name.
func (r *spanRecorder) named(name string) []*recordedSpan {
	var out []*recordedSpan
	for _, s := range r.ended() {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

// children returns the ended spans whose parent is p.
func (r *spanRecorder) children(p *recordedSpan) []*recordedSpan {
	var out []*recordedSpan
	for _, s := range r.ended() {
		if s.parent.SpanID() == p.sc.SpanID() && s.parent.TraceID() == p.sc.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

type recordingTracer struct {
	embedded.Tracer
	rec *spanRecorder
}

func (t recordingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	parent := trace.SpanContextFromContext(ctx)
	if cfg.NewRoot() {
		parent = trace.SpanContext{}
	}
	var tid trace.TraceID
	var sid trace.SpanID
	if parent.IsValid() {
		tid = parent.TraceID()
	} else {
		_, _ = rand.Read(tid[:])
	}
	_, _ = rand.Read(sid[:])
	s := &recordedSpan{
		name:   name,
		parent: parent,
		sc:     trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		attrs:  append([]attribute.KeyValue(nil), cfg.Attributes()...),
		links:  append([]trace.Link(nil), cfg.Links()...),
		rec:    t.rec,
	}
	t.rec.mu.Lock()
	t.rec.spans = append(t.rec.spans, s)
	t.rec.mu.Unlock()
	return trace.ContextWithSpan(ctx, s), s
}

type recordedSpan struct {
	embedded.Span
	rec    *spanRecorder
	name   string
	sc     trace.SpanContext
	parent trace.SpanContext

	mu     sync.Mutex
	attrs  []attribute.KeyValue
	links  []trace.Link
	events []string // names and attribute values
	status codes.Code
	desc   string
	ends   int
}

func (s *recordedSpan) End(...trace.SpanEndOption) {
	s.mu.Lock()
	s.ends++
	s.mu.Unlock()
}

func (s *recordedSpan) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ends > 0
}

func (s *recordedSpan) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, name)
	for _, kv := range cfg.Attributes() {
		s.events = append(s.events, string(kv.Key)+"="+kv.Value.String())
	}
}

func (s *recordedSpan) AddLink(l trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links = append(s.links, l)
}

func (s *recordedSpan) IsRecording() bool { return true }

func (s *recordedSpan) RecordError(err error, _ ...trace.EventOption) {
	s.AddEvent("exception", trace.WithAttributes(attribute.String("exception.message", err.Error())))
}

func (s *recordedSpan) SpanContext() trace.SpanContext { return s.sc }

func (s *recordedSpan) SetStatus(c codes.Code, desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.desc = c, desc
}

func (s *recordedSpan) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
}

func (s *recordedSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs = append(s.attrs, kv...)
}

func (s *recordedSpan) TracerProvider() trace.TracerProvider { return s.rec }

// attr returns the last value set for key, as text, and whether it was.
func (s *recordedSpan) attr(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.attrs) - 1; i >= 0; i-- {
		if string(s.attrs[i].Key) == key {
			return s.attrs[i].Value.String(), true
		}
	}
	return "", false
}

// texts returns every text a span carries outside its name: attribute
// values, event names and attributes, link attributes and the status.
func (s *recordedSpan) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{s.desc}
	for _, kv := range s.attrs {
		out = append(out, string(kv.Key)+"="+kv.Value.String())
	}
	out = append(out, s.events...)
	for _, l := range s.links {
		for _, kv := range l.Attributes {
			out = append(out, string(kv.Key)+"="+kv.Value.String())
		}
	}
	return out
}

// leaks returns the texts of every span that contain any of secrets.
func (r *spanRecorder) leaks(secrets ...string) []string {
	var out []string
	for _, s := range r.ended() {
		for _, t := range s.texts() {
			for _, sec := range secrets {
				if sec != "" && strings.Contains(t, sec) {
					out = append(out, s.name+": "+t)
				}
			}
		}
	}
	return out
}
