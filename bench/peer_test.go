package bench

import (
	"context"
	"testing"

	nikoksr "github.com/nikoksr/notify"
)

type noopService struct{}

func (noopService) Send(context.Context, string, string) error { return nil }

func BenchmarkPeerNikoksrSend(b *testing.B) {
	n := nikoksr.New()
	n.UseServices(noopService{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := n.Send(ctx, "subject", "Your code is 123456"); err != nil {
			b.Fatal(err)
		}
	}
}
