package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// The secrets of the traced gateway: none may reach a span.
const (
	traceVendorKey = "vendor-key-trace-5c1e9a"
	traceHookToken = "sms-dlr-token-trace-77b0c4"
	traceOTP       = "582917"
	traceNumber    = "9876543210"
	traceAddress   = "asha.rao@example.com"
	traceText      = "Parcel 77-ALPHA is out for delivery"
)

// tracedGateway is a gateway whose Notifier records its spans in memory,
// with the Indian SMS vendor (a fake) and its delivery reports.
func tracedGateway(t *testing.T) (*gateway, *smsgatewaytest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: traceVendorKey})
	t.Cleanup(vendor.Close)
	g := startWith(t, map[string]string{"NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": traceVendorKey,
		"NOTIFY_SMS_WEBHOOK_TOKEN": traceHookToken, "NOTIFY_OTP_LIMIT": "off"},
		deps{resolver: staticDNS{}, tracer: tp})
	return g, vendor, exp
}

func spanAttr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func childrenOf(spans tracetest.SpanStubs, p tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.SpanID() == p.SpanContext.SpanID() && s.Parent.TraceID() == p.SpanContext.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

func spanNames(ss []tracetest.SpanStub) []string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// TestGatewayTracesASend: a send through the API, carrying the caller's
// traceparent, is one span under the caller's with the pipeline's steps
// under it; its delivery report's span links to it.
func TestGatewayTracesASend(t *testing.T) {
	g, vendor, exp := tracedGateway(t)
	const (
		callerTrace = "0af7651916cd43dd8448eb211c80319c"
		callerSpan  = "b7ad6b7169203331"
	)
	a := g.curl(t, http.MethodPost, "/sms", map[string]string{"Authorization": g.key, "Content-Type": "application/json",
		"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"},
		`{"to":"`+traceNumber+`","message":"`+traceText+`"}`)
	if a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	id, pm := a.body["message_id"].(string), a.body["provider_message_id"].(string)

	spans := exp.GetSpans()
	var send tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "notify.send" {
			send = s
		}
	}
	if send.Name == "" {
		t.Fatalf("no notify.send span among %v", spanNames(spans))
	}
	if got := send.Parent; got.TraceID().String() != callerTrace || got.SpanID().String() != callerSpan || !got.IsRemote() {
		t.Errorf("the send's parent is %s/%s (remote %v), want the caller's %s/%s", got.TraceID(), got.SpanID(), got.IsRemote(), callerTrace, callerSpan)
	}
	if v, _ := spanAttr(send, "notify.message.id"); v.AsString() != id {
		t.Errorf("the send's message ID = %q, want %q", v.AsString(), id)
	}
	if v, _ := spanAttr(send, "notify.state"); v.AsString() != "sent" {
		t.Errorf("the send's state = %q", v.AsString())
	}
	if v, _ := spanAttr(send, "notify.provider"); v.AsString() != "smsgateway" {
		t.Errorf("the send's provider = %q", v.AsString())
	}
	kids := childrenOf(spans, send)
	if got, want := spanNames(kids), []string{"notify.attempt", "notify.charge", "notify.prepare", "notify.settle"}; !slices.Equal(got, want) {
		t.Fatalf("the send's children = %v, want %v", got, want)
	}
	for _, k := range kids {
		if k.Name == "notify.attempt" {
			if v, _ := spanAttr(k, "notify.attempt.outcome"); v.AsString() != "accepted" {
				t.Errorf("the attempt's outcome = %q, want accepted", v.AsString())
			}
			if v, _ := spanAttr(k, "notify.attempt.number"); v.AsInt64() != 1 {
				t.Errorf("the attempt's number = %d", v.AsInt64())
			}
		}
		if k.Name == "notify.charge" {
			if v, ok := spanAttr(k, "notify.price.minor"); !ok || v.AsInt64() <= 0 {
				t.Errorf("the charge's price = %v", v.String())
			}
		}
	}

	hook := strings.TrimSuffix(g.base, "/api/v1") + "/webhooks/smsgateway/" + traceHookToken
	if err := vendor.Report(context.Background(), hook, pm, "DELIVERED", "", ""); err != nil {
		t.Fatal(err)
	}
	var report tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "notify.report" {
			report = s
		}
	}
	if len(report.Links) != 1 || !report.Links[0].SpanContext.Equal(send.SpanContext) {
		t.Errorf("the report's links = %+v, want the send's span %v", report.Links, send.SpanContext)
	}
	if v, _ := spanAttr(report, "notify.state"); v.AsString() != "delivered" {
		t.Errorf("the report's state = %q", v.AsString())
	}
}

// TestGatewaySpansKeepNoSecret: every attribute, event, link and status
// of every span of an SMS, a dual OTP, an e-mail, a failed send and a
// report is free of the code, the keys, the token, the number, the
// address and the text.
func TestGatewaySpansKeepNoSecret(t *testing.T) {
	g, vendor, exp := tracedGateway(t)
	sends := []struct{ path, body string }{
		{"/sms", `{"to":"` + traceNumber + `","message":"` + traceText + `"}`},
		{"/sms", `{"to":"+91 ` + traceNumber + `","message":"` + traceOTP + `","route":"otp"}`},
		{"/send-otp", `{"to":"` + traceNumber + `","otp":"` + traceOTP + `","brand_name":"Acme","action":"login"}`},
		{"/email/send", `{"to":"` + traceAddress + `","subject":"Your code","message":"<p>Code ` + traceOTP + `</p>"}`},
	}
	var pm string
	for _, s := range sends {
		a := g.post(t, s.path, g.key, s.body)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", s.path, a.status, a.raw)
		}
		if s.path == "/sms" {
			pm, _ = a.body["provider_message_id"].(string)
		}
	}
	// A refusal, whose error text names the bad number.
	if a := g.post(t, "/sms", g.key, `{"to":"98765","message":"`+traceText+`"}`); a.status != 400 {
		t.Fatalf("a bad number: %d %s", a.status, a.raw)
	}
	hook := strings.TrimSuffix(g.base, "/api/v1") + "/webhooks/smsgateway/" + traceHookToken
	if err := vendor.Report(context.Background(), hook, pm, "UNDELIVERED", "DND", "do-not-disturb "+traceNumber); err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	count := map[string]int{}
	for _, s := range spans {
		count[s.Name]++
	}
	if count["notify.send"] != 5 || count["notify.part"] != 2 || count["notify.report"] != 1 || count["notify.attempt"] < 5 {
		t.Fatalf("spans: %v", count)
	}
	secrets := []string{traceOTP, g.key, traceVendorKey, traceHookToken, traceNumber, traceAddress, "asha.rao", traceText}
	check := func(span, where, text string) {
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("span %s, %s: %q holds a secret", span, where, text)
			}
		}
	}
	for _, s := range spans {
		check(s.Name, "name", s.Name)
		check(s.Name, "status", s.Status.Description)
		if s.Status.Code == codes.Error && strings.ContainsAny(s.Status.Description, " :") {
			t.Errorf("span %s: status %q is more than a code", s.Name, s.Status.Description)
		}
		for _, kv := range s.Attributes {
			check(s.Name, string(kv.Key), kv.Value.String())
		}
		for _, e := range s.Events {
			check(s.Name, "event", e.Name)
			for _, kv := range e.Attributes {
				check(s.Name, "event "+string(kv.Key), kv.Value.String())
			}
		}
		for _, l := range s.Links {
			for _, kv := range l.Attributes {
				check(s.Name, "link "+string(kv.Key), kv.Value.String())
			}
		}
	}
}

// otlpSink is a collector's OTLP/HTTP traces endpoint: it keeps the
// bodies posted to its path.
type otlpSink struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][][]byte // by path
}

func newOTLPSink(t *testing.T) *otlpSink {
	t.Helper()
	s := &otlpSink{bodies: map[string][][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies[r.URL.Path] = append(s.bodies[r.URL.Path], b)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *otlpSink) got(path string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[path]
}

// TestGatewayTracingByEnvironment: the OTEL_* variables turn the OTLP
// export on, to the endpoint they name, under the service name; the spans
// are flushed when the gateway stops; without them, or with the SDK
// disabled, nothing is set up.
func TestGatewayTracingByEnvironment(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	sink := newOTLPSink(t)
	for _, env := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "shop-notify"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL, "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL, "OTEL_TRACES_EXPORTER": "none"},
	} {
		tr, err := newTracing(ctx, func(k string) string { return env[k] }, nil, log)
		if err != nil || tr.tp != nil || len(tr.options()) != 0 {
			t.Errorf("%v: tracing %+v, %v; want none", env, tr, err)
		}
	}
	for _, c := range []struct {
		env        map[string]string
		path, name string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL + "/"}, "/v1/traces", defaultServiceName},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": sink.URL + "/collector/traces",
			"OTEL_SERVICE_NAME": "shop-notify"}, "/collector/traces", "shop-notify"},
	} {
		tr, err := newTracing(ctx, func(k string) string { return c.env[k] }, nil, log)
		if err != nil || tr.tp == nil || len(tr.options()) != 1 {
			t.Fatalf("%v: tracing %+v, %v", c.env, tr, err)
		}
		_, span := tr.tp.Tracer("test").Start(ctx, "marker-span", trace.WithAttributes(attribute.String("k", "v")))
		span.End()
		before := len(sink.got(c.path))
		tr.close() // the batcher holds the span until the flush
		bodies := sink.got(c.path)
		if len(bodies) <= before {
			t.Fatalf("%v: nothing was posted to %s", c.env, c.path)
		}
		last := bodies[len(bodies)-1]
		if !bytes.Contains(last, []byte("marker-span")) || !bytes.Contains(last, []byte(c.name)) {
			t.Errorf("%v: the export lacks the span or the service name %q", c.env, c.name)
		}
	}
}

// TestGatewayFlushesTracesOnExit: a gateway that stops exports what it
// traced, through the OTLP exporter the variables set up.
func TestGatewayFlushesTracesOnExit(t *testing.T) {
	sink := newOTLPSink(t)
	g := start(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL})
	if a := g.post(t, "/sms", g.key, `{"to":"`+traceNumber+`","message":"`+traceText+`"}`); a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	g.shutdown(t)
	var all []byte
	for _, b := range sink.got("/v1/traces") {
		all = append(all, b...)
	}
	for _, want := range []string{"notify.send", "notify.attempt", defaultServiceName} {
		if !bytes.Contains(all, []byte(want)) {
			t.Errorf("the export lacks %q", want)
		}
	}
	if bytes.Contains(all, []byte(traceNumber)) || bytes.Contains(all, []byte(g.key)) {
		t.Error("the export holds the number or the key")
	}
}
