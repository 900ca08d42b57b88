package bench

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/metrics"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
	"github.com/prometheus/client_golang/prometheus"
)

// newPipeline wires what one send through the whole pipeline costs:
// validation and normalisation by the SMS channel, pricing, the record
// opened attempting with its debit in a memstore.Ledger and moved to sent
// after the vendor call, delivery to memprovider and a receipt.
func newPipeline(b *testing.B, opts ...notify.Option) (*notify.Notifier, *memprovider.Provider) {
	b.Helper()
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}); err != nil {
		b.Fatal(err)
	}
	// Remember the last 65,536 refs: retries of a charge arrive within
	// seconds, and an ever-growing ref table would measure cache misses.
	w := memstore.NewWallet(memstore.WithRefRetention(1 << 16))
	if err := w.Open("acme", notify.Money{Minor: 1 << 60, Currency: record.INR()}); err != nil {
		b.Fatal(err)
	}
	// Keep as many settled records as the wallet keeps refs.
	ledger := memstore.NewLedger(w, memstore.WithMessageCapacity(1<<16))
	p := memprovider.New("mem")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		b.Fatal(err)
	}
	all := append([]notify.Option{notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR())}, opts...)
	n, err := notify.New(accounts, ledger, all...)
	if err != nil {
		b.Fatal(err)
	}
	return n, p
}

// pipelineRequest is the request BenchmarkPipelineSendSMS sends.
func pipelineRequest() *sms.Request {
	return &sms.Request{Account: "acme", To: "+91 98765 43210", Message: "Your order 4411 has shipped."}
}

// BenchmarkPipelineSendSMS sends one SMS through newPipeline: its record
// and its money move together in memstore's Ledger, as every send's do.
func BenchmarkPipelineSendSMS(b *testing.B) {
	benchmarkPipeline(b, nil)
}

// BenchmarkPipelineSendSMSMetrics is BenchmarkPipelineSendSMS with the
// Prometheus Observer of package metrics counting every send and charge.
func BenchmarkPipelineSendSMSMetrics(b *testing.B) {
	obs, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPipeline(b, nil, notify.WithObserver(obs))
}

// BenchmarkPipelineSendSMSOutbox is BenchmarkPipelineSendSMS with the
// development outbox keeping every message (its newest 500).
func BenchmarkPipelineSendSMSOutbox(b *testing.B) {
	box, err := outbox.New()
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPipeline(b, nil, notify.WithObserver(box))
}

// benchmarkPipeline sends pipelineRequest through newPipeline with opts,
// calling reset (when not nil) every 64 sends: an exporter's captured
// spans (tracing_test.go) must not grow without end either, and a real
// exporter ships them in small batches.
func benchmarkPipeline(b *testing.B, reset func(), opts ...notify.Option) {
	n, p := newPipeline(b, opts...)
	ctx := context.Background()
	req := pipelineRequest()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := n.Send(ctx, req); err != nil {
			b.Fatal(err)
		}
		i++
		if reset != nil && i%64 == 0 {
			reset()
		}
		if i%4096 == 0 {
			p.Reset() // the capture buffer is for tests; keep memory flat
		}
	}
}

// BenchmarkRequestRulesSMS is the part of each send that checks the
// request's validator tags (the shared validator/v10 instance), on the
// pipeline's request: its share of BenchmarkPipelineSendSMS is what the
// declared rules cost.
func BenchmarkRequestRulesSMS(b *testing.B) {
	req := pipelineRequest()
	b.ReportAllocs()
	for b.Loop() {
		var fe record.FieldErrors
		rules.Check(&fe, req)
		if len(fe) > 0 {
			b.Fatal(notify.InvalidFields(fe))
		}
	}
}
