package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The monitoring endpoints, at the server's root beside the API. They
// take no API key: an orchestrator's probes and a Prometheus server call
// them. /metrics takes a bearer token when NOTIFY_METRICS_TOKEN is set.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
	metricsPath = "/metrics"
)

// checkTimeout bounds each readiness check: a probe answers within it
// even when a vendor hangs.
const checkTimeout = 2 * time.Second

// monitor holds the gateway's health and metrics endpoints: the metrics
// registry of its own (never the global one), the Observer that feeds
// it, and the optional token /metrics asks for.
type monitor struct {
	reg    *prometheus.Registry
	obs    *metrics.Observer
	token  string
	logger *slog.Logger
}

// newMonitor reads the monitoring configuration: NOTIFY_METRICS_TOKEN,
// when set, is the bearer token GET /metrics requires; unset, /metrics is
// open, as a Prometheus endpoint usually is on a private port (it shows
// counts by kind, provider and currency, never a recipient or an account).
func newMonitor(cfg *config, logger *slog.Logger, known metrics.Known) (*monitor, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	obs, err := metrics.New(reg, metrics.WithKnown(known))
	if err != nil {
		return nil, err
	}
	return &monitor{reg: reg, obs: obs, token: cfg.metricsToken, logger: logger}, nil
}

// knownSeries names the channels' providers (nil ones left out) and the
// gateway's currency, whose metric series then show at zero from the
// first scrape (metrics.WithKnown).
func knownSeries(currencies []string, smsProviders, chatProviders, mailProviders, pushProviders []notify.Provider) metrics.Known {
	names := func(ps []notify.Provider) []string {
		var out []string
		for _, p := range ps {
			if p != nil && !slices.Contains(out, p.Name()) {
				out = append(out, p.Name())
			}
		}
		return out
	}
	return metrics.Known{
		Providers: map[notify.Kind][]string{sms.Kind: names(smsProviders), chat.Kind: names(chatProviders),
			email.Kind: names(mailProviders), push.Kind: names(pushProviders)},
		RefusalKinds: []notify.Kind{sms.Kind, chat.Kind, email.Kind, push.Kind, otp.Kind},
		Currencies:   currencies,
	}
}

// options are the Notifier options that feed the metrics.
func (m *monitor) options() []notify.Option { return []notify.Option{notify.WithObserver(m.obs)} }

// routes are /healthz, /readyz and /metrics. smsProviders are the SMS
// channel's providers, the others those of the other channels.
func (m *monitor) routes(st *stores, smsProviders, others []notify.Provider) []route {
	checks := readinessChecks(st, smsProviders, others)
	prom := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn)})
	return []route{
		{healthzPath, getOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeMonitorJSON(w, http.StatusOK, map[string]any{"status": "ok"})
		}))},
		{readyzPath, getOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.ready(w, r, checks)
		}))},
		{metricsPath, getOnly(m.authorized(prom))},
	}
}

// healthChecker is a store or a provider that can tell whether it
// answers (notify.Provider's CheckHealth).
type healthChecker interface {
	CheckHealth(ctx context.Context) error
}

// check is one readiness check: a store or a provider that can tell
// whether it answers.
type check struct {
	name string
	hc   healthChecker
	// soft: its failure is shown, but leaves the gateway ready (degraded):
	// an SMS provider that others can stand in for.
	soft bool
}

// readinessChecks lists what /readyz asks: each distinct store that has
// a CheckHealth (PostgreSQL; the memory stores are always ready) and each
// provider that has one (a provider without it is assumed healthy, as
// notify.Provider says). When the SMS channel has
// several providers, theirs are soft: its messages fail over from one
// that is down, whose breaker soon rests it.
func readinessChecks(st *stores, smsProviders, others []notify.Provider) []check {
	var out []check
	seen := map[healthChecker]bool{}
	for _, s := range []any{st.accounts, st.ledger, st.idem, st.templates, st.rate, st.otp} {
		if hc, ok := s.(healthChecker); ok && !seen[hc] {
			seen[hc] = true
			out = append(out, check{name: "database", hc: hc})
		}
	}
	soft := len(smsProviders) > 1
	for i, p := range append(append([]notify.Provider(nil), smsProviders...), others...) {
		if hc, ok := p.(healthChecker); ok && p != nil && !seen[hc] {
			seen[hc] = true
			out = append(out, check{name: "provider " + p.Name(), hc: hc, soft: soft && i < len(smsProviders)})
		}
	}
	return out
}

// ready runs every check at once, each bounded by checkTimeout, and
// answers 200 when all pass, else 503 naming each failure by its error
// code (the error itself, which may carry a vendor's URL, goes to the
// log); when only soft checks fail, 200 "degraded", naming them.
func (m *monitor) ready(w http.ResponseWriter, r *http.Request, checks []check) {
	results := make(map[string]string, len(checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			defer cancel()
			res := "ok"
			if err := safeCheck(ctx, c.hc); err != nil {
				res = string(notify.CodeOf(err))
				m.logger.WarnContext(r.Context(), "readiness check failed", "check", c.name, "error", err)
			}
			mu.Lock()
			results[c.name] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	status, word := http.StatusOK, "ready"
	for _, c := range checks {
		switch {
		case results[c.name] == "ok":
		case !c.soft:
			status, word = http.StatusServiceUnavailable, "unavailable"
		case status == http.StatusOK:
			word = "degraded"
		}
	}
	writeMonitorJSON(w, status, map[string]any{"status": word, "checks": results})
}

// safeCheck runs one check; a panic is a failure, not a dead probe.
func safeCheck(ctx context.Context, hc healthChecker) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = notify.Errorf(notify.CodeInternal, "health check panicked: %v", p)
		}
	}()
	return hc.CheckHealth(ctx)
}

// authorized asks for the token when one is configured.
func (m *monitor) authorized(next http.Handler) http.Handler {
	if m.token == "" {
		return next
	}
	return requireKey(m.token, "NOTIFY_METRICS_TOKEN", "metrics", next)
}

// getOnly answers 405 to anything but GET and HEAD.
func getOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeMonitorJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": map[string]string{
				"code": "method_not_allowed", "message": r.Method + " is not allowed here; use GET"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeMonitorJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// breakers returns p telling each change of a provider's circuit
// breaker to the metrics (notify_provider_breaker_open) and the log: a
// provider put to rest after repeated failures, and one back in service.
func (m *monitor) breakers(p notify.BreakerPolicy, logger *slog.Logger) notify.BreakerPolicy {
	p.OnChange = func(ctx context.Context, provider string, open bool, cause error) {
		m.obs.BreakerChanged(ctx, provider, open, cause)
		if open {
			logger.WarnContext(ctx, "provider resting after repeated failures (circuit breaker open): its messages go to their next provider, or are refused",
				"provider", provider, "error", cause)
			return
		}
		logger.InfoContext(ctx, "provider back in service (circuit breaker closed)", "provider", provider)
	}
	return p
}

// countWebhooks exports the receivers' counts (notify.WebhookStats) as
// notify_webhook_requests_total{webhook,result}, read at each scrape:
// reports, unmatched, ignored, refused, malformed, failed and held (a
// refusal answered late, its source over its share: a flood).
func (m *monitor) countWebhooks(stats webhookStats) error {
	if len(stats) == 0 {
		return nil
	}
	return m.reg.Register(webhookCollector{stats: stats, desc: prometheus.NewDesc("notify_webhook_requests_total",
		"Requests and report entries of each delivery-report receiver, by result (its WebhookStats).",
		[]string{"webhook", "result"}, nil)})
}

// webhookCollector is notify_webhook_requests_total.
type webhookCollector struct {
	stats webhookStats
	desc  *prometheus.Desc
}

func (c webhookCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c webhookCollector) Collect(ch chan<- prometheus.Metric) {
	for name, read := range c.stats {
		s := read()
		for _, r := range []struct {
			result string
			n      uint64
		}{{"reports", s.Reports}, {"unmatched", s.Unmatched}, {"ignored", s.Ignored}, {"refused", s.Refused},
			{"malformed", s.Malformed}, {"failed", s.Failed}, {"held", s.Held}} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(r.n), name, r.result)
		}
	}
}
