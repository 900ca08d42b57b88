package httpapi

import (
	"context"
	"log/slog"
)

// RequestID returns the request ID (X-Request-ID) of the API request whose
// send ctx is, or derives from; "" for any other context. The Handler
// gives every send a context that carries it, detached from the client's
// connection, so that providers and observers logging with that context
// (slog's *Context methods, LogAttrs) can be traced to the request.
func RequestID(ctx context.Context) string {
	if s, ok := ctx.Value(sendScopeKey{}).(*sendScope); ok {
		return s.requestID
	}
	return ""
}

// NewLogHandler returns a slog.Handler that passes every record to next,
// adding a "request_id" attribute (RequestID of the record's context) to
// each record logged within a send that has no attribute of that name
// already. Give it to the logger of the providers and observers, so that
// each line of a request names it; the Handler's own access log names it
// in any case.
func NewLogHandler(next slog.Handler) slog.Handler {
	return &logHandler{next: next}
}

type logHandler struct{ next slog.Handler }

// Enabled reports next's answer.
func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle adds request_id, when ctx carries one and r has none, and passes
// r on. Under a group (WithGroup) the attribute is qualified by it, as
// every attribute of the record is.
func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" && !hasAttr(r, "request_id") {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a handler with attrs on next.
func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{next: h.next.WithAttrs(attrs)}
}

// WithGroup returns a handler with a group on next.
func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name)}
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

// Interface guards
var _ slog.Handler = (*logHandler)(nil)
