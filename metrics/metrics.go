package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultLatencyBuckets are the buckets of
// notify_delivery_latency_seconds, in seconds: from half a second, for a
// chat message delivered at once, to an hour, for an SMS to a phone that
// was off.
var DefaultLatencyBuckets = []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// Option configures an Observer.
type Option func(*config) error

type config struct {
	buckets []float64
	now     func() time.Time
	known   Known
}

// Known names the label values a deployment will see, so that New can
// create their series at zero: a scrape then shows every documented
// series from the start, and a rate or an alert over one has a baseline
// before its first event.
type Known struct {
	// Providers are the providers of each channel ("sms": "msg91",
	// "twilio"), by their names (notify.Provider.Name).
	Providers map[notify.Kind][]string
	// RefusalKinds are the request kinds a limit may refuse, as
	// notify_refusals_total labels them: the channels', and "otp" for the
	// dual OTP. Default: the channels of Providers.
	RefusalKinds []notify.Kind
	// Currencies are the accounts' currency codes ("INR").
	Currencies []string
}

// WithKnown creates the series of k at zero: notify_sends_total for each
// channel, its providers and each outcome; notify_delivery_latency_seconds
// for each channel and its providers; notify_charged_minor_total and
// notify_refunded_minor_total for each currency;
// notify_webhook_reports_total for each provider and status;
// notify_refusals_total for each refusal kind and reason;
// notify_provider_calls_total for each provider and outcome; and
// notify_provider_breaker_open (0) for each provider. Default: a series
// appears at its first event.
func WithKnown(k Known) Option {
	return func(c *config) error {
		for kind, ps := range k.Providers {
			for _, p := range ps {
				if p == "" {
					return fmt.Errorf("WithKnown: an empty provider name of %s", kind)
				}
			}
		}
		c.known = k
		return nil
	}
}

// WithLatencyBuckets sets the upper bounds, in seconds, of the delivery
// latency histogram's buckets; they must increase. Default:
// DefaultLatencyBuckets.
func WithLatencyBuckets(b []float64) Option {
	return func(c *config) error {
		if len(b) == 0 {
			return errors.New("WithLatencyBuckets: no buckets")
		}
		for i := 1; i < len(b); i++ {
			if b[i] <= b[i-1] {
				return fmt.Errorf("WithLatencyBuckets: %v does not increase", b)
			}
		}
		c.buckets = append([]float64(nil), b...)
		return nil
	}
}

// WithClock sets the clock that dates a delivery report that carries no
// time of its own (DeliveryReport.At zero), for tests; it must be the
// Notifier's (notify.WithClock). Default: time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errors.New("WithClock: nil clock")
		}
		c.now = now
		return nil
	}
}

// Observer turns a Notifier's events into Prometheus metrics (see the
// package documentation for what each one counts). It is a
// notify.Observer, safe for concurrent use; build it with New.
type Observer struct {
	now      func() time.Time
	sends    series[prometheus.Counter]  // kind, provider, outcome
	latency  series[prometheus.Observer] // kind, provider
	charged  series[prometheus.Counter]  // currency
	refunded series[prometheus.Counter]  // currency
	reports  series[prometheus.Counter]  // provider, status
	refusals series[prometheus.Counter]  // kind, reason
	calls    series[prometheus.Counter]  // provider, outcome
	breakers series[prometheus.Gauge]    // provider
}

// New returns an Observer whose metrics are registered on reg, which must
// not hold metrics of the same names (a second Observer needs a registry
// of its own). An error says which option was bad or which registration
// failed.
func New(reg prometheus.Registerer, opts ...Option) (*Observer, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil Registerer")
	}
	c := config{buckets: DefaultLatencyBuckets, now: time.Now}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	sends := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_sends_total",
		Help: "Messages settled by the send pipeline, by kind, provider and outcome (sent, failed, unknown).",
	}, []string{"kind", "provider", "outcome"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "notify_delivery_latency_seconds",
		Help:    "Time from a message's creation to its delivery, as delivery reports date it.",
		Buckets: c.buckets,
	}, []string{"kind", "provider"})
	charged := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_charged_minor_total",
		Help: "Money charged for messages accepted for sending, in minor units of the currency.",
	}, []string{"currency"})
	refunded := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_refunded_minor_total",
		Help: "Money credited back (refunds, failover price cuts), in minor units of the currency.",
	}, []string{"currency"})
	reports := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_webhook_reports_total",
		Help: "Delivery reports that moved a message, by reporting provider and reported status.",
	}, []string{"provider", "status"})
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_refusals_total",
		Help: "Sends refused by a limit before any charge, by request kind and reason (rate_limited, otp_throttled).",
	}, []string{"kind", "reason"})
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notify_provider_calls_total",
		Help: "Provider calls of messages that had several providers to try (failover), by provider and outcome (sent, failed, unknown).",
	}, []string{"provider", "outcome"})
	breakers := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "notify_provider_breaker_open",
		Help: "1 while a provider's circuit breaker is open (notify.WithBreaker), 0 once it closed again.",
	}, []string{"provider"})
	for _, col := range []prometheus.Collector{sends, latency, charged, refunded, reports, refusals, calls, breakers} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	o := &Observer{
		now:      c.now,
		sends:    newSeries(3, func(lv ...string) prometheus.Counter { return sends.WithLabelValues(lv...) }),
		latency:  newSeries(2, func(lv ...string) prometheus.Observer { return latency.WithLabelValues(lv...) }),
		charged:  newSeries(1, func(lv ...string) prometheus.Counter { return charged.WithLabelValues(lv...) }),
		refunded: newSeries(1, func(lv ...string) prometheus.Counter { return refunded.WithLabelValues(lv...) }),
		reports:  newSeries(2, func(lv ...string) prometheus.Counter { return reports.WithLabelValues(lv...) }),
		refusals: newSeries(2, func(lv ...string) prometheus.Counter { return refusals.WithLabelValues(lv...) }),
		calls:    newSeries(2, func(lv ...string) prometheus.Counter { return calls.WithLabelValues(lv...) }),
		breakers: newSeries(1, func(lv ...string) prometheus.Gauge { return breakers.WithLabelValues(lv...) }),
	}
	o.zero(c.known)
	return o, nil
}

// The label values the Observer writes, for WithKnown.
var (
	outcomes      = []string{"sent", "failed", "unknown"}
	reportStates  = []string{string(record.StateSent), string(record.StateDelivered), string(record.StateRead), string(record.StateFailed)}
	refusalReason = []string{"rate_limited", "otp_throttled"}
)

// zero creates the series of k (WithKnown), each at zero.
func (o *Observer) zero(k Known) {
	for _, c := range k.Currencies {
		o.charged.get(c, "", "")
		o.refunded.get(c, "", "")
	}
	refused := k.RefusalKinds
	seen := map[string]bool{}
	for kind, ps := range k.Providers {
		if k.RefusalKinds == nil {
			refused = append(refused, kind)
		}
		for _, p := range ps {
			o.latency.get(string(kind), p, "")
			for _, out := range outcomes {
				o.sends.get(string(kind), p, out)
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			o.breakers.get(p, "", "").Set(0)
			for _, out := range outcomes {
				o.calls.get(p, out, "")
			}
			for _, st := range reportStates {
				o.reports.get(p, st, "")
			}
		}
	}
	for _, kind := range refused {
		for _, r := range refusalReason {
			o.refusals.get(string(kind), r, "")
		}
	}
}

// Observe counts e. It never blocks on I/O and, once a label combination
// has been seen, does not allocate.
func (o *Observer) Observe(_ context.Context, e notify.Event) {
	switch e.Type {
	case record.StatePending:
		if e.Envelope != nil && e.Envelope.Price.Minor > 0 {
			o.charged.get(currency(e.Envelope.Price), "", "").Add(float64(e.Envelope.Price.Minor))
		}
	case record.StateSent, record.StateFailed, record.StateUnknown:
		switch {
		case e.Report != nil:
			o.report(e)
		case e.Envelope != nil && e.Receipt != nil:
			// The pipeline's settlement of one message (a dual OTP's
			// combined receipt has no envelope: its legs counted).
			o.sends.get(string(e.Envelope.Kind), provider(e.Receipt.Provider), outcome(e.Type)).Inc()
			for _, a := range e.Receipt.Tried {
				o.calls.get(provider(a.Provider), outcome(a.Outcome), "").Inc()
			}
		}
	case record.StateDelivered:
		if e.Report != nil {
			o.report(e)
			o.observeLatency(e)
		}
	case record.StateRead:
		if e.Report != nil {
			o.report(e)
		}
	case notify.StateRefused:
		kind := ""
		if e.Receipt != nil {
			kind = string(e.Receipt.Kind)
		}
		reason := "rate_limited"
		if errors.Is(e.Err, notify.ErrOTPThrottled) {
			reason = "otp_throttled"
		}
		o.refusals.get(kind, reason, "").Inc()
	}
	if e.Refund.Minor > 0 {
		o.refunded.get(currency(e.Refund), "", "").Add(float64(e.Refund.Minor))
	}
}

func (o *Observer) report(e notify.Event) {
	o.reports.get(e.Report.Provider, string(e.Report.State), "").Inc()
}

func (o *Observer) observeLatency(e notify.Event) {
	if e.Receipt == nil || e.Receipt.CreatedAt.IsZero() {
		return
	}
	at := e.Report.At
	if at.IsZero() {
		at = o.now()
	}
	d := at.Sub(e.Receipt.CreatedAt)
	if d < 0 {
		return // the vendor's clock is behind ours: no honest figure
	}
	o.latency.get(string(e.Receipt.Kind), provider(e.Receipt.Provider), "").Observe(d.Seconds())
}

func outcome(t record.State) string {
	switch t {
	case record.StateSent:
		return "sent"
	case record.StateFailed:
		return "failed"
	}
	return "unknown"
}

func provider(name string) string {
	if name == "" {
		return "none"
	}
	return name
}

func currency(m notify.Money) string {
	if m.Currency.Code == "" {
		return "none"
	}
	return m.Currency.Code
}

// series caches the children of a metric vector by label values, so that
// Observe finds one under a read lock without allocating (the vector's
// own lookup hashes a variadic slice).
type series[T any] struct {
	n    int // how many labels the vector has, at most 3
	with func(lv ...string) T
	mu   sync.RWMutex
	m    map[[3]string]T
}

func newSeries[T any](n int, with func(lv ...string) T) series[T] {
	return series[T]{n: n, with: with, m: make(map[[3]string]T)}
}

func (s *series[T]) get(a, b, c string) T {
	k := [3]string{a, b, c}
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok = s.m[k]; !ok {
		lv := k // a copy, so that only this path allocates for the slice
		v = s.with(lv[:s.n]...)
		s.m[k] = v
	}
	return v
}

// BreakerChanged sets notify_provider_breaker_open of provider to 1 when
// its breaker opens and to 0 when it closes: give it to the Notifier as
// notify.BreakerPolicy.OnChange.
func (o *Observer) BreakerChanged(_ context.Context, p string, open bool, _ error) {
	v := 0.0
	if open {
		v = 1
	}
	o.breakers.get(provider(p), "", "").Set(v)
}

// Interface guards
var _ notify.Observer = (*Observer)(nil)
