package smsgateway_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
)

// BenchmarkBulkSMS sends one text to 1,000 numbers through the Notifier,
// the provider and the fake vendor over loopback, with wallet and message
// records: as one bulk send (one vendor call) and, the baseline, as 1,000
// SendSMS calls. It reports wall time per 1,000 recipients (ns/op) and the
// vendor calls each took (calls/op).
func BenchmarkBulkSMS(b *testing.B) {
	const recipients = 1000
	to := make([]string, recipients)
	for i := range to {
		to[i] = fmt.Sprintf("98%08d", i)
	}
	setup := func(b *testing.B) (*notify.Notifier, *smsgatewaytest.Server) {
		vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: testKey, Balance: 1 << 50})
		b.Cleanup(vendor.Close)
		p, err := smsgateway.New(smsgateway.Config{BaseURL: vendor.URL, APIKey: testKey, HTTPClient: vendor.Client()})
		if err != nil {
			b.Fatal(err)
		}
		w := memstore.NewWallet()
		if err := w.Open("acme", notify.Money{Minor: 1 << 50, Currency: record.INR()}); err != nil {
			b.Fatal(err)
		}
		n := newNotifier(b, p, memstore.NewLedger(w), nil)
		return n, vendor
	}
	ctx := context.Background()
	b.Run("bulk", func(b *testing.B) {
		n, vendor := setup(b)
		for b.Loop() {
			r, err := n.Send(ctx, &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale ends tonight"}, To: to})
			if err != nil || r.Status != record.StateSent {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(vendor.Requests())/float64(b.N), "calls/op")
	})
	b.Run("singles", func(b *testing.B) {
		n, vendor := setup(b)
		for b.Loop() {
			for _, number := range to {
				if _, err := n.Send(ctx, &sms.Request{Account: "acme", To: number, Message: "Sale ends tonight"}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(vendor.Requests())/float64(b.N), "calls/op")
	})
}
