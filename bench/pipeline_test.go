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
	"github.com/notifykit/notify/wallet"
	"github.com/prometheus/client_golang/prometheus"
)

// newPipeline wires what one send through the whole pipeline costs:
// validation and normalisation by the SMS channel, pricing, a debit on
// memstore, delivery to memprovider and a receipt.
func newPipeline(b *testing.B, opts ...func(*memstore.Wallet) notify.Option) (*notify.Notifier, *memprovider.Provider) {
	b.Helper()
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", VendorID: "ACMEIN", Currency: notify.INR()}); err != nil {
		b.Fatal(err)
	}
	// Remember the last 65,536 refs: retries of a charge arrive within
	// seconds, and an ever-growing ref table would measure cache misses.
	w := memstore.NewWallet(memstore.WithRefRetention(1 << 16))
	if err := w.Open("acme", notify.Money{Minor: 1 << 60, Currency: notify.INR()}); err != nil {
		b.Fatal(err)
	}
	p := memprovider.New("mem")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		b.Fatal(err)
	}
	all := []notify.Option{notify.WithChannel(ch), notify.WithWallet(w, wallet.DefaultINR())}
	for _, o := range opts {
		all = append(all, o(w))
	}
	n, err := notify.New(accounts, all...)
	if err != nil {
		b.Fatal(err)
	}
	return n, p
}

// pipelineRequest is the request BenchmarkPipelineSendSMS sends.
func pipelineRequest() *sms.Request {
	return &sms.Request{Account: "acme", To: "+91 98765 43210", Message: "Your order 4411 has shipped."}
}

func BenchmarkPipelineSendSMS(b *testing.B) {
	benchmarkPipeline(b, newPipeline)
}

// BenchmarkPipelineSendSMSRecords is BenchmarkPipelineSendSMS with a
// memstore.Messages: each send's record opened with its charge, moved to
// attempting before the vendor call and to sent after it.
func BenchmarkPipelineSendSMSRecords(b *testing.B) {
	benchmarkPipeline(b, func(b *testing.B, _ ...func(*memstore.Wallet) notify.Option) (*notify.Notifier, *memprovider.Provider) {
		return newPipeline(b, func(w *memstore.Wallet) notify.Option {
			// Keep as many settled records as the wallet keeps refs.
			return notify.WithMessageStore(memstore.NewMessages(w, memstore.WithMessageCapacity(1<<16)))
		})
	})
}

// BenchmarkPipelineSendSMSMetrics is BenchmarkPipelineSendSMS with the
// Prometheus Observer of package metrics counting every send and charge.
func BenchmarkPipelineSendSMSMetrics(b *testing.B) {
	obs, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPipeline(b, func(b *testing.B, _ ...func(*memstore.Wallet) notify.Option) (*notify.Notifier, *memprovider.Provider) {
		return newPipeline(b, func(*memstore.Wallet) notify.Option { return notify.WithObserver(obs) })
	})
}

// BenchmarkPipelineSendSMSOutbox is BenchmarkPipelineSendSMS with the
// development outbox keeping every message (its newest 500).
func BenchmarkPipelineSendSMSOutbox(b *testing.B) {
	box, err := outbox.New()
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPipeline(b, func(b *testing.B, _ ...func(*memstore.Wallet) notify.Option) (*notify.Notifier, *memprovider.Provider) {
		return newPipeline(b, func(*memstore.Wallet) notify.Option { return notify.WithObserver(box) })
	})
}

func benchmarkPipeline(b *testing.B, build func(*testing.B, ...func(*memstore.Wallet) notify.Option) (*notify.Notifier, *memprovider.Provider)) {
	n, p := build(b)
	ctx := context.Background()
	req := pipelineRequest()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := n.Send(ctx, req); err != nil {
			b.Fatal(err)
		}
		if i++; i%4096 == 0 {
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
		var fe notify.FieldErrors
		rules.Check(&fe, req)
		if len(fe) > 0 {
			b.Fatal(fe.Err())
		}
	}
}
