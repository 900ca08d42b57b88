package chat_test

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
)

// BenchmarkDualOTPLatency measures the dual-channel OTP with an SMS
// provider of 20ms latency and a chat provider of 30ms: the target is the
// slower leg, not the sum (x30ms <= 1.1). ChatLegAlone is the baseline in
// the same run: one chat send through the same pipeline at 30ms.
//
//	go test -run XXX -bench DualOTPLatency -benchtime 20x -count 6 ./channel/chat/
func BenchmarkDualOTPLatency(b *testing.B) {
	const smsLatency, chatLatency = 20 * time.Millisecond, 30 * time.Millisecond
	s := newStack(b, chat.GatewayCloud)
	s.smsP.SetLatency(smsLatency)
	s.cloudP.SetLatency(chatLatency)
	ctx := context.Background()
	report := func(b *testing.B, start time.Time) {
		per := time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(per)/float64(chatLatency), "x30ms")
	}
	b.Run("DualOTP", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			r, err := s.n.Send(ctx, otpReq())
			if err != nil || r.Legs[0].Status != record.StateSent || r.Legs[1].Status != record.StateSent {
				b.Fatalf("SendOTP: %v", err)
			}
		}
		report(b, start)
	})
	b.Run("ChatLegAlone", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if _, err := s.n.Send(ctx, &chat.Request{Account: "acme", To: "9876543210", OTP: "482915"}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, start)
	})
}
