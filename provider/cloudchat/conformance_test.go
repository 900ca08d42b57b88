package cloudchat_test

import (
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/cloudchat/cloudchattest"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/record"
)

func TestConformance(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: func(i int) *notify.Envelope {
			otp := fmt.Sprintf("%06d", 482915+i)
			return &notify.Envelope{
				Kind: chat.Kind, To: "9876543210", Provider: p.Name(), Units: 1,
				Class: record.Transactional,
				Content: &chat.Message{Gateway: chat.GatewayCloud, Type: chat.TypeOTP, OTP: otp,
					Text: otp + " is your Acme login code. Do not share it."},
			}
		},
		Secrets: []string{testToken, "482915"},
		FailNext: func(f providertest.Failure) bool {
			switch f {
			case providertest.Temporary:
				// 131016 is documented as the service being down for a
				// while: certainly not taken.
				vendor.FailNextWith(serviceUnavailable)
			case providertest.RateLimited:
				vendor.FailNextWith(throughputHit)
			case providertest.Permanent:
				vendor.FailNextWith(undeliverable)
			case providertest.AnswerLost:
				// Take the message, then drop the connection.
				vendor.FailNextWithFault(fault{Lose: true})
			case providertest.VendorErrorOn5xx:
				// The vendor's error object with a code not known here.
				vendor.FailNextWith(gerr(503, 999999, "Service busy", ""))
			default:
				return false
			}
			return true
		},
		SetLatency: vendor.SetLatency,
		Received:   vendor.Count,
	})
}

func newProvider(t *testing.T, vendor *cloudchattest.Server, token string) *cloudchat.Provider {
	t.Helper()
	p, err := cloudchat.New(cloudchat.Config{
		BaseURL: vendor.URL, PhoneNumberID: testPhoneID, Token: token, HTTPClient: vendor.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
