package sms_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
)

// benchSink keeps the baseline's envelope on the heap, as Prepare's is.
var benchSink *notify.Envelope

// BenchmarkPrepare measures Prepare on each route; the baseline is the
// least any channel does, building an envelope for a fixed request.
func BenchmarkPrepare(b *testing.B) {
	ch, err := sms.New(sms.Config{Provider: memprovider.New("mem")})
	if err != nil {
		b.Fatal(err)
	}
	acct := testAccount()
	reqs := []struct {
		name string
		req  sms.Request
	}{
		{"sms", sms.Request{To: "+91 98765 43210", Message: "Your parcel is out for delivery today."}},
		{"otp", sms.Request{To: "9876543210", Message: "482913", Route: sms.RouteOTP, Brand: "ShopKart"}},
		{"dlt", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
			Message: "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"}},
	}
	for _, r := range reqs {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ch.Prepare(b.Context(), acct, &r.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = &notify.Envelope{Kind: sms.Kind, To: "9876543210", Provider: "mem", Units: 1,
				Content: &sms.Message{Route: sms.RouteSMS, Text: reqs[0].req.Message}}
		}
	})
}
