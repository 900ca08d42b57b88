package memprovider_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/providertest"
)

func TestConformance(t *testing.T) {
	p := memprovider.New("mem")
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: func(i int) *notify.Envelope { return otpEnvelope("482915") },
		Secrets:  []string{"482915"},
		FailNext: func(f providertest.Failure) bool {
			switch f {
			case providertest.Temporary:
				p.FailNext(1, notify.CodeUnavailable)
			case providertest.RateLimited:
				p.FailNext(1, notify.CodeRateLimited)
			case providertest.Permanent:
				p.FailNext(1, notify.CodeRejected)
			default:
				return false
			}
			return true
		},
		SetLatency: p.SetLatency,
		Received:   p.Len,
	})
}

func otpEnvelope(code string) *notify.Envelope {
	return &notify.Envelope{
		Kind:     sms.Kind,
		To:       "9876543210",
		Provider: "mem",
		Units:    1,
		Account:  &notify.Account{ID: "acct-1", Settings: sms.Settings{SenderID: "NTFYKT"}.Map()},
		Content: &sms.Message{
			Route:    sms.RouteOTP,
			OTP:      code,
			Text:     code + " is your verification code.",
			Encoding: sms.GSM7,
			Segments: 1,
		},
	}
}
