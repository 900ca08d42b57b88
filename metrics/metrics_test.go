package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/metrics"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// kit is a notifytest Kit whose Notifier reports to an Observer on a
// registry of its own.
func kit(t *testing.T, opts ...notifytest.Option) (*notifytest.Kit, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return notifytest.New(t, append(opts, notifytest.WithNotifierOptions(notify.WithObserver(obs)))...), reg
}

// value returns the value of the series of name with exactly labels (a
// counter's value, or a histogram's sample count), and whether it exists.
func value(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				if h := m.GetHistogram(); h != nil {
					return float64(h.GetSampleCount()), true
				}
				if g := m.GetGauge(); g != nil {
					return g.GetValue(), true
				}
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func matches(m *dto.Metric, labels []string) bool {
	if len(m.GetLabel())*2 != len(labels) {
		return false
	}
	for i, l := range m.GetLabel() {
		if l.GetName() != labels[2*i] || l.GetValue() != labels[2*i+1] {
			return false
		}
	}
	return true
}

func want(t *testing.T, reg prometheus.Gatherer, v float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(t, reg, name, labels...)
	if !ok || got != v {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, v)
	}
}

func smsReq(msg string) *sms.Request {
	return &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: msg}
}

func TestSendsAndMoney(t *testing.T) {
	k, reg := kit(t)
	ctx := context.Background()
	if _, err := k.Notifier.Send(ctx, smsReq("hello")); err != nil {
		t.Fatal(err)
	}
	k.SMS.FailNext(1, notify.CodeRejected)
	if _, err := k.Notifier.Send(ctx, smsReq("refused")); err == nil {
		t.Fatal("a refused send succeeded")
	}
	// A dual OTP: one sms and one chat message, not a third for the pair.
	if _, err := k.Notifier.Send(ctx, &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913"}); err != nil {
		t.Fatal(err)
	}
	want(t, reg, 2, "notify_sends_total", "kind", "sms", "outcome", "sent", "provider", "sms")
	want(t, reg, 1, "notify_sends_total", "kind", "sms", "outcome", "failed", "provider", "sms")
	want(t, reg, 1, "notify_sends_total", "kind", "chat", "outcome", "sent", "provider", "cloudchat")
	if _, ok := value(t, reg, "notify_sends_total", "kind", "otp", "outcome", "sent", "provider", "none"); ok {
		t.Error("the dual OTP's combined receipt was counted as a send")
	}
	charged, _ := value(t, reg, "notify_charged_minor_total", "currency", "INR")
	refunded, _ := value(t, reg, "notify_refunded_minor_total", "currency", "INR")
	spent := float64(notifytest.DefaultBalance - k.Balance(t))
	if refunded == 0 || charged-refunded != spent {
		t.Errorf("charged %v, refunded %v; the wallet spent %v", charged, refunded, spent)
	}
}

func TestReportsAndLatency(t *testing.T) {
	clock := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg, metrics.WithLatencyBuckets([]float64{1, 10, 100}))
	if err != nil {
		t.Fatal(err)
	}
	k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithObserver(obs),
		notify.WithClock(func() time.Time { return clock })))
	ctx := context.Background()
	chat, err := k.Notifier.Send(ctx, &chat.Request{Account: notifytest.AccountID, To: "9876543210", Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	text, err := k.Notifier.Send(ctx, smsReq("hello"))
	if err != nil {
		t.Fatal(err)
	}
	rep := func(p, id string, st record.State, at time.Time) {
		t.Helper()
		if _, err := k.Notifier.Report(ctx, &notify.DeliveryReport{Provider: p, ProviderMessageID: id, State: st, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	rep("sms", text.ProviderMessageID, record.StateDelivered, clock.Add(5*time.Second))
	rep("sms", text.ProviderMessageID, record.StateDelivered, clock.Add(6*time.Second)) // a repeat moves nothing
	rep("cloudchat", chat.ProviderMessageID, record.StateFailed, clock.Add(time.Second))
	want(t, reg, 1, "notify_webhook_reports_total", "provider", "sms", "status", "delivered")
	want(t, reg, 1, "notify_webhook_reports_total", "provider", "cloudchat", "status", "failed")
	want(t, reg, 1, "notify_delivery_latency_seconds", "kind", "sms", "provider", "sms")
	// The chat message failed by report is refunded (chat.Channel.Refund).
	want(t, reg, float64(chat.Cost.Minor), "notify_refunded_minor_total", "currency", "INR")

	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "notify_delivery_latency_seconds" {
			continue
		}
		h := f.GetMetric()[0].GetHistogram()
		if h.GetSampleSum() != 5 || h.GetBucket()[0].GetCumulativeCount() != 0 || h.GetBucket()[1].GetCumulativeCount() != 1 {
			t.Errorf("latency histogram: %v", h)
		}
	}
}

func window(t *testing.T, n int) *memstore.WindowLimit {
	t.Helper()
	l, err := memstore.NewWindowLimit(n, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRefusals(t *testing.T) {
	k, reg := kit(t, notifytest.WithNotifierOptions(
		notify.WithRateLimit(window(t, 1)), notify.WithOTPThrottle(window(t, 1))))
	ctx := context.Background()
	otp := &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913"}
	if _, err := k.Notifier.Send(ctx, otp); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Notifier.Send(ctx, smsReq("over the limit")); notify.CodeOf(err) != notify.CodeRateLimited {
		t.Fatalf("second send: %v", err)
	}
	want(t, reg, 1, "notify_refusals_total", "kind", "sms", "reason", "rate_limited")
	if _, ok := value(t, reg, "notify_refusals_total", "kind", "otp", "reason", "otp_throttled"); ok {
		t.Error("an OTP throttle refusal before any was refused")
	}
}

func TestOTPThrottleRefusal(t *testing.T) {
	k, reg := kit(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(window(t, 1))))
	ctx := context.Background()
	otp := &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913"}
	for range 2 {
		_, _ = k.Notifier.Send(ctx, otp)
	}
	want(t, reg, 1, "notify_refusals_total", "kind", "otp", "reason", "otp_throttled")
}

// TestObserveDoesNotAllocate: Observe runs on the sending goroutine of
// every message.
func TestObserveDoesNotAllocate(t *testing.T) {
	obs, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	env := &notify.Envelope{Kind: sms.Kind, Price: notify.Money{Minor: 25, Currency: record.INR()}}
	events := []notify.Event{
		{Type: record.StatePending, Envelope: env},
		{Type: record.StateSent, Envelope: env, Receipt: &notify.Receipt{Kind: sms.Kind, Provider: "sms"}},
		{Type: record.StateFailed, Envelope: env, Receipt: &notify.Receipt{Kind: sms.Kind, Provider: "sms"},
			Refund: notify.Money{Minor: 25, Currency: record.INR()}},
		{Type: record.StateDelivered, Receipt: &notify.Receipt{Kind: sms.Kind, Provider: "sms", CreatedAt: time.Now()},
			Report: &notify.DeliveryReport{Provider: "sms", State: record.StateDelivered, At: time.Now().Add(time.Second)}},
	}
	ctx := context.Background()
	for _, e := range events {
		obs.Observe(ctx, e) // the first of each series creates it
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, e := range events {
			obs.Observe(ctx, e)
		}
	}); n != 0 {
		t.Fatalf("Observe allocates %v times per round", n)
	}
}

func TestNewRefusesBadSetups(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	for name, build := range map[string]func() error{
		"nil registerer":   func() error { _, err := metrics.New(nil); return err },
		"registered twice": func() error { _, err := metrics.New(reg); return err },
		"no buckets": func() error {
			_, err := metrics.New(prometheus.NewRegistry(), metrics.WithLatencyBuckets(nil))
			return err
		},
		"buckets out of order": func() error {
			_, err := metrics.New(prometheus.NewRegistry(), metrics.WithLatencyBuckets([]float64{2, 1}))
			return err
		},
		"nil clock": func() error { _, err := metrics.New(prometheus.NewRegistry(), metrics.WithClock(nil)); return err },
	} {
		if err := build(); err == nil || !strings.HasPrefix(err.Error(), "metrics: ") {
			t.Errorf("%s: %v, want an error prefixed metrics:", name, err)
		}
	}
}

// TestProviderCallsAndBreakers: a message that failed over counts a call
// of each provider it tried; breakers show as a gauge per provider.
func TestProviderCallsAndBreakers(t *testing.T) {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	env := &notify.Envelope{Kind: sms.Kind, Provider: "smsgateway"}
	obs.Observe(ctx, notify.Event{Type: record.StateSent, Envelope: env, Receipt: &notify.Receipt{Kind: sms.Kind, Provider: "twilio",
		Tried: []record.Attempt{{Provider: "smsgateway", Outcome: record.StateFailed, ErrorCode: "unavailable"}, {Provider: "twilio", Outcome: record.StateSent}}}})
	want(t, reg, 1, "notify_provider_calls_total", "outcome", "failed", "provider", "smsgateway")
	want(t, reg, 1, "notify_provider_calls_total", "outcome", "sent", "provider", "twilio")
	want(t, reg, 1, "notify_sends_total", "kind", "sms", "outcome", "sent", "provider", "twilio")

	obs.BreakerChanged(ctx, "smsgateway", true, notify.Errorf(notify.CodeUnavailable, "down"))
	want(t, reg, 1, "notify_provider_breaker_open", "provider", "smsgateway")
	obs.BreakerChanged(ctx, "smsgateway", false, nil)
	want(t, reg, 0, "notify_provider_breaker_open", "provider", "smsgateway")
}

// TestKnownSeriesStartAtZero: with WithKnown, every documented series of
// the known channels, providers and currencies is there at zero before
// the first event, and only those: no channel paired with another's
// provider. Without it a series appears at its first event.
func TestKnownSeriesStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg, metrics.WithKnown(metrics.Known{
		Providers:    map[notify.Kind][]string{sms.Kind: {"msg91", "twilio"}, chat.Kind: {"cloudchat"}},
		RefusalKinds: []notify.Kind{sms.Kind, chat.Kind, otp.Kind},
		Currencies:   []string{"INR"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]string{
		{"notify_sends_total", "kind", "sms", "outcome", "unknown", "provider", "twilio"},
		{"notify_sends_total", "kind", "chat", "outcome", "sent", "provider", "cloudchat"},
		{"notify_delivery_latency_seconds", "kind", "sms", "provider", "msg91"},
		{"notify_charged_minor_total", "currency", "INR"},
		{"notify_refunded_minor_total", "currency", "INR"},
		{"notify_webhook_reports_total", "provider", "cloudchat", "status", "delivered"},
		{"notify_refusals_total", "kind", "otp", "reason", "otp_throttled"},
		{"notify_provider_calls_total", "outcome", "failed", "provider", "msg91"},
		{"notify_provider_breaker_open", "provider", "twilio"},
	} {
		want(t, reg, 0, s[0], s[1:]...)
	}
	if _, ok := value(t, reg, "notify_sends_total", "kind", "chat", "outcome", "sent", "provider", "msg91"); ok {
		t.Error("a series pairs chat with an SMS provider")
	}
	bare := prometheus.NewRegistry()
	if _, err := metrics.New(bare); err != nil {
		t.Fatal(err)
	}
	if _, ok := value(t, bare, "notify_charged_minor_total", "currency", "INR"); ok {
		t.Error("without WithKnown a series exists before its first event")
	}
	if _, err := metrics.New(prometheus.NewRegistry(), metrics.WithKnown(metrics.Known{Providers: map[notify.Kind][]string{sms.Kind: {""}}})); err == nil {
		t.Error("an empty provider name was taken")
	}
}
