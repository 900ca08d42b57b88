package bench

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/otelnotify"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// hiddenNoop is a no-op TracerProvider that WithTracerProvider does not
// recognise as one: every span is started (and is non-recording), as with
// otel's global provider before an SDK is installed.
type hiddenNoop struct{ noop.TracerProvider }

// BenchmarkTracedSendSMS is BenchmarkPipelineSendSMS without tracing
// (none: the baseline, measured in the same run), through a no-op
// TracerProvider (noop), through one WithTracerProvider cannot tell is a
// no-op (hidden-noop), and through the SDK recording every span into an
// in-memory exporter, synchronously (sdk) or through a batcher
// (sdk-batch). sdk-floor is the SDK's own cost of such a send's spans,
// without the send: five spans, the attributes set in one call each.
func BenchmarkTracedSendSMS(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchmarkPipeline(b, nil) })
	b.Run("noop", func(b *testing.B) {
		benchmarkPipeline(b, nil, otelnotify.WithTracerProvider(noop.NewTracerProvider()))
	})
	b.Run("hidden-noop", func(b *testing.B) {
		benchmarkPipeline(b, nil, otelnotify.WithTracerProvider(hiddenNoop{}))
	})
	b.Run("sdk", func(b *testing.B) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp)))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		benchmarkPipeline(b, exp.Reset, otelnotify.WithTracerProvider(tp))
	})
	b.Run("sdk-floor", func(b *testing.B) { benchmarkSDKFloor(b) })
	b.Run("sdk-batch", func(b *testing.B) {
		reset, opt := batchedTracing(b)
		benchmarkPipeline(b, reset, opt)
	})
}

// batchedTracing is the SDK with a batcher into an in-memory exporter,
// shut down when b ends, as WithTracerProvider's option, and the
// exporter's reset. The batcher blocks: a full queue waits rather than
// drops, so that every span is paid for.
func batchedTracing(b *testing.B) (reset func(), opt notify.Option) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBlocking()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return exp.Reset, otelnotify.WithTracerProvider(tp)
}

// benchmarkSDKFloor starts and ends what a traced send does, a root span
// and four children with a few attributes each, with nothing else.
func benchmarkSDKFloor(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(exp)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := tp.Tracer("floor")
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c, root := tr.Start(ctx, "send")
		root.SetAttributes(attribute.String("account", "acme"), attribute.String("kind", "sms"))
		for j := range 4 {
			_, s := tr.Start(c, "step")
			s.SetAttributes(attribute.String("provider", "mem"), attribute.Int("n", j))
			s.End()
		}
		root.SetAttributes(attribute.String("id", "m"), attribute.String("state", "sent"))
		root.End()
		if i++; i%64 == 0 {
			exp.Reset()
		}
	}
}

// BenchmarkTracedSendSMSVendor is the send users pay for: the pipeline of
// newPipeline delivering through the smsgateway provider to its fake
// vendor over loopback HTTP (one real request and answer per send),
// untraced (none: the baseline of the same run) and through the SDK with
// a batcher into an in-memory exporter (sdk-batch).
func BenchmarkTracedSendSMSVendor(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchmarkTracedVendor(b, nil) })
	b.Run("sdk-batch", func(b *testing.B) {
		reset, opt := batchedTracing(b)
		benchmarkTracedVendor(b, reset, opt)
	})
}

func benchmarkTracedVendor(b *testing.B, reset func(), opts ...notify.Option) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "bench-vendor-key", Balance: 1 << 50})
	defer vendor.Close()
	p, err := smsgateway.New(smsgateway.Config{APIKey: "bench-vendor-key", BaseURL: vendor.URL, HTTPClient: vendor.Client()})
	if err != nil {
		b.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPipeline(b, reset, append([]notify.Option{notify.WithChannel(ch)}, opts...)...)
}
