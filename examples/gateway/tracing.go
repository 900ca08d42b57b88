package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/otelnotify"
)

// defaultServiceName is the service.name of the gateway's spans without
// OTEL_SERVICE_NAME.
const defaultServiceName = "notify-gateway"

// traceFlushTimeout bounds the export of the spans still buffered when
// the gateway stops: a collector that is gone must not hold up the exit.
const traceFlushTimeout = 5 * time.Second

// tracing is the gateway's OpenTelemetry traces: the Notifier's spans
// (otelnotify.WithTracerProvider) exported over OTLP/HTTP when the standard
// variables name a collector, and nothing otherwise.
type tracing struct {
	tp       trace.TracerProvider // nil: not traced
	shutdown func(context.Context) error
}

// newTracing sets up the traces by the standard OpenTelemetry variables,
// read through env: on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full
// URL of the traces endpoint) or OTEL_EXPORTER_OTLP_ENDPOINT (a base URL,
// to which /v1/traces is added) is set, unless OTEL_SDK_DISABLED is true
// or OTEL_TRACES_EXPORTER is none. OTEL_SERVICE_NAME names the service
// (default notify-gateway). The exporter and the SDK read the other
// variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, OTEL_TRACES_SAMPLER,
// OTEL_RESOURCE_ATTRIBUTES, ...) from the process's environment
// themselves. given, a test's provider, takes the place of all this.
func newTracing(ctx context.Context, env func(string) string, given trace.TracerProvider, logger *slog.Logger) (*tracing, error) {
	if given != nil {
		return &tracing{tp: given, shutdown: func(context.Context) error { return nil }}, nil
	}
	off := &tracing{shutdown: func(context.Context) error { return nil }}
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(env("OTEL_TRACES_EXPORTER")), "none") {
		return off, nil
	}
	endpoint := strings.TrimSpace(env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		base := strings.TrimSpace(env("OTEL_EXPORTER_OTLP_ENDPOINT"))
		if base == "" {
			return off, nil
		}
		endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
	}
	// Named here rather than left to the exporter's own reading of the
	// environment, so that what turned tracing on is what it sends to.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	name := strings.TrimSpace(env("OTEL_SERVICE_NAME"))
	if name == "" {
		name = defaultServiceName
	}
	// The later source wins: OTEL_RESOURCE_ATTRIBUTES, then the service name.
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", name)))
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	logger.Info("traces exported over OTLP/HTTP", "endpoint", redactURL(endpoint), "service", name)
	return &tracing{tp: tp, shutdown: tp.Shutdown}, nil
}

// options are the Notifier options of the traces: none when off.
func (t *tracing) options() []notify.Option {
	if t.tp == nil {
		return nil
	}
	return []notify.Option{otelnotify.WithTracerProvider(t.tp)}
}

// close flushes the spans still buffered and stops the exporter, within
// traceFlushTimeout.
func (t *tracing) close() {
	ctx, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	_ = t.shutdown(ctx)
}

// redactURL is u without its user information and query, which may carry
// credentials, for the log.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}
