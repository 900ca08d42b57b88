package main

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/notifykit/notify/httpapi"
)

// accessLog logs and counts the requests of the routes the gateway serves
// beside the API (webhooks, admin, outbox, unsubscribe, health and
// metrics), as the API's handler logs its own (httpapi.WithLogger): one
// "http request" line each, with method, path, route, status, duration
// and request ID, and notify_http_requests_total{route,code}. A forged
// report refused unread leaves a line and a count as a genuine one does.
// A path that carries a secret (a webhook's token, an unsubscribe link's)
// is logged as its route's prefix alone.
type accessLog struct {
	logger   *slog.Logger
	requests *prometheus.CounterVec
	seq      atomic.Uint64
}

// newAccessLog returns the access log of the routes, whose counter reg
// registers.
func newAccessLog(logger *slog.Logger, reg prometheus.Registerer) (*accessLog, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_http_requests_total",
		Help: "Requests to the gateway's routes beside the API (webhooks, admin, outbox, unsubscribe, healthz, readyz, metrics), by route and status code.",
	}, []string{"route", "code"})
	if err := reg.Register(requests); err != nil {
		return nil, err
	}
	return &accessLog{logger: logger, requests: requests}, nil
}

// wrap returns rt with its handler logged and counted.
func (a *accessLog) wrap(rt route) route {
	name, secret := routeName(rt.prefix)
	next := rt.h
	rt.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-ID")
		if !httpapi.ValidRequestID(id) {
			id = "gw-" + strconv.FormatUint(a.seq.Add(1), 10)
		}
		w.Header().Set("X-Request-ID", id)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		id = w.Header().Get("X-Request-ID") // the admin API sets its own
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		a.requests.WithLabelValues(name, strconv.Itoa(status)).Inc()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		path := r.URL.Path
		if secret {
			path = rt.prefix + "..."
		}
		a.logger.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method), slog.String("path", path), slog.String("route", name),
			slog.Int("status", status), slog.Duration("duration", time.Since(start)), slog.String("request_id", id))
	})
	return rt
}

// routeName names the route of prefix for the log and the counter, and
// says whether the paths under it carry a secret.
func routeName(prefix string) (name string, secret bool) {
	switch prefix {
	case webhookPrefix:
		return "webhooks", true
	case unsubscribePath:
		return "unsubscribe", true
	}
	name, _, _ = strings.Cut(strings.TrimPrefix(prefix, "/"), "/")
	return name, false
}

// statusWriter records the status a route's handler writes. Unwrap lets
// http.ResponseController reach the connection's Flusher (the outbox's
// event stream).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // not an informational 1xx
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
