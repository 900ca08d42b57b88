package qrchat_test

import (
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/record"
)

func TestConformance(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: func(i int) *notify.Envelope {
			otp := fmt.Sprintf("%06d", 482915+i)
			return &notify.Envelope{
				Kind: chat.Kind, To: "9876543210", Provider: p.Name(), Units: 1, Class: record.Transactional,
				Content: &chat.Message{Gateway: chat.GatewayQR, Type: chat.TypeOTP, OTP: otp,
					Text: otp + " is your Acme login code. Do not share it."},
			}
		},
		Secrets: []string{testKey, "482915"},
		// The fake fails the next message for Temporary (the session
		// dropped out: 422 with its status), RateLimited (429), Permanent
		// (400) and AnswerLost (the engine took the message, then the
		// connection dropped).
		FailNext:   gw.failNext,
		SetLatency: gw.SetLatency,
		Received:   gw.count,
	})
}

// newProvider returns a provider on gw; cfg's zero fields are filled for
// the fake.
func newProvider(t *testing.T, gw *fakeWAHA, cfg qrchat.Config) *qrchat.Provider {
	t.Helper()
	cfg.BaseURL = gw.URL
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = gw.Client()
	}
	p, err := qrchat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
