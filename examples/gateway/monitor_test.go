package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// monGet sends a request to path at the server's root (not under the
// API) and returns the status, the headers and the body.
func (g *gateway) monGet(t *testing.T, method, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	a := g.send(t, method, g.root()+path, hdr, "")
	return a.status, a.header, a.raw
}

// monJSON is monGet for a JSON answer.
func (g *gateway) monJSON(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	status, hdr, raw := g.monGet(t, http.MethodGet, path, nil)
	var body map[string]any
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q: %s", path, ct, raw)
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("GET %s: not JSON: %s", path, raw)
	}
	return status, body
}

// scrape reads /metrics with the Prometheus text parser.
func (g *gateway) scrape(t *testing.T, hdr map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	status, h, raw := g.monGet(t, http.MethodGet, metricsPath, hdr)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", status, raw)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("GET /metrics does not parse: %v\n%s", err, raw)
	}
	return fams
}

// sample returns the value of the counter name{labels}, and whether the
// series exists.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m.GetCounter().GetValue(), true
	}
	return 0, false
}

func wantSample(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels map[string]string) {
	t.Helper()
	if got, ok := sample(fams, name, labels); !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}

func TestMonitorHealthReadyAndMetrics(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_OTP_LIMIT": "1/1h"})
	if status, body := g.monJSON(t, healthzPath); status != 200 || body["status"] != "ok" {
		t.Fatalf("healthz: %d %v", status, body)
	}
	status, body := g.monJSON(t, readyzPath)
	if status != 200 || body["status"] != "ready" {
		t.Fatalf("readyz: %d %v", status, body)
	}
	// Every documented series of the configured providers is there
	// before the first event, at zero.
	fams := g.scrape(t, nil)
	wantSample(t, fams, 0, "notify_sends_total", map[string]string{"kind": "sms", "provider": "sms-log", "outcome": "unknown"})
	wantSample(t, fams, 0, "notify_sends_total", map[string]string{"kind": "email", "provider": "smtp", "outcome": "failed"})
	wantSample(t, fams, 0, "notify_refunded_minor_total", map[string]string{"currency": "INR"})
	wantSample(t, fams, 0, "notify_refusals_total", map[string]string{"kind": "otp", "reason": "rate_limited"})
	wantSample(t, fams, 0, "notify_webhook_reports_total", map[string]string{"provider": "qr-log", "status": "delivered"})
	wantSample(t, fams, 0, "notify_provider_breaker_open", map[string]string{"provider": "cloud-log"})

	before := g.balanceMinor(t)
	if a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"hello"}`); a.status != 200 {
		t.Fatalf("sms: %d %s", a.status, a.raw)
	}
	if a := g.post(t, "/send-otp", g.key, `{"to":"9876543210","otp":"482913"}`); a.status != 200 {
		t.Fatalf("otp: %d %s", a.status, a.raw)
	}
	if a := g.post(t, "/send-otp", g.key, `{"to":"9876543210","otp":"482913"}`); a.status != 429 {
		t.Fatalf("second otp: %d %s", a.status, a.raw)
	}
	spent := before - g.balanceMinor(t)

	fams = g.scrape(t, nil)
	wantSample(t, fams, 2, "notify_sends_total", map[string]string{"kind": "sms", "provider": "sms-log", "outcome": "sent"})
	wantSample(t, fams, 1, "notify_sends_total", map[string]string{"kind": "chat", "provider": "cloud-log", "outcome": "sent"})
	wantSample(t, fams, float64(spent), "notify_charged_minor_total", map[string]string{"currency": "INR"})
	wantSample(t, fams, 1, "notify_refusals_total", map[string]string{"kind": "otp", "reason": "otp_throttled"})
	if spent <= 0 {
		t.Errorf("the balance dropped by %d", spent)
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go collector metrics")
	}
	if f := fams["notify_delivery_latency_seconds"]; f != nil && f.GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("notify_delivery_latency_seconds is a %v", f.GetType())
	}

	if status, hdr, _ := g.monGet(t, http.MethodPost, metricsPath, nil); status != 405 || hdr.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics: %d, Allow %q", status, hdr.Get("Allow"))
	}
	// The API's own paths are untouched.
	if a := g.curl(t, http.MethodGet, "/healthz", nil, ""); a.status != 404 {
		t.Errorf("GET %s/healthz: %d, want the API's 404", httpapi.BasePath, a.status)
	}
}

// TestMonitorReadyzNamesAFailingProvider: the SMS vendor down makes the
// gateway unready, and the answer names it without its key; up again, it
// is ready.
func TestMonitorReadyzNamesAFailingProvider(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-secret-1"})
	t.Cleanup(vendor.Close)
	g := start(t, map[string]string{"NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": "vendor-key-secret-1"})
	status, body := g.monJSON(t, readyzPath)
	if checks, _ := body["checks"].(map[string]any); status != 200 || checks["provider smsgateway"] != "ok" {
		t.Fatalf("readyz with the vendor up: %d %v", status, body)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // nothing listens there any more
	g = start(t, map[string]string{"NOTIFY_SMS_URL": downURL, "NOTIFY_SMS_KEY": "vendor-key-secret-1"})
	status, _, raw := g.monGet(t, http.MethodGet, readyzPath, nil)
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("readyz: not JSON: %s", raw)
	}
	checks, _ := body["checks"].(map[string]any)
	if status != 503 || body["status"] != "unavailable" || checks["provider smsgateway"] == "ok" || checks["provider smsgateway"] == nil {
		t.Fatalf("readyz with the vendor down: %d %s", status, raw)
	}
	if strings.Contains(raw, "vendor-key-secret-1") || strings.Contains(raw, downURL) {
		t.Errorf("readyz shows a secret or the vendor's URL: %s", raw)
	}
	if status, _ := g.monJSON(t, healthzPath); status != 200 {
		t.Errorf("healthz while unready: %d", status)
	}
}

func TestMonitorMetricsToken(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_METRICS_TOKEN": "scrape-token-0001"})
	status, hdr, raw := g.monGet(t, http.MethodGet, metricsPath, map[string]string{"Authorization": "Bearer wrong"})
	if status != 401 || hdr.Get("WWW-Authenticate") == "" || strings.Contains(raw, "notify_") {
		t.Fatalf("GET /metrics with a wrong token: %d %s", status, raw)
	}
	if status, _, _ := g.monGet(t, http.MethodGet, metricsPath, nil); status != 401 {
		t.Fatalf("GET /metrics without a token: %d", status)
	}
	g.scrape(t, map[string]string{"Authorization": "Bearer scrape-token-0001"})
	// The probes stay open.
	if status, _ := g.monJSON(t, readyzPath); status != 200 {
		t.Errorf("readyz with a metrics token: %d", status)
	}
}

// TestMonitorReadyzOnPostgres: the database is checked. Skipped without a
// PostgreSQL server (see pgstoretest).
func TestMonitorReadyzOnPostgres(t *testing.T) {
	t.Parallel()
	g := start(t, map[string]string{"NOTIFY_DATABASE_URL": schemaURL(t)})
	status, body := g.monJSON(t, readyzPath)
	if checks, _ := body["checks"].(map[string]any); status != 200 || checks["database"] != "ok" {
		t.Fatalf("readyz on PostgreSQL: %d %v", status, body)
	}
}
