package otelnotify

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// ContinueTrace continues the caller's W3C trace: a request with a
// traceparent header (and tracestate) gets that span context in the
// request's context before h serves it, so that the Notifier's spans
// (WithTracerProvider) are children of the caller's span, in the caller's
// trace. Without the header the request passes through untouched, and a
// send's span is a root. Wrap the httpapi handler with it:
//
//	api, err := httpapi.New(n, accounts)
//	...
//	mux.Handle(httpapi.BasePath+"/", otelnotify.ContinueTrace(api))
//
// It makes no span of its own; wrap it in turn with an HTTP
// instrumentation (such as otelhttp) for server spans.
func ContinueTrace(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		h.ServeHTTP(w, r)
	})
}
