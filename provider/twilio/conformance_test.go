package twilio_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/record"
)

const (
	testSID   = twiliotest.DefaultAccountSID
	testToken = twiliotest.DefaultAuthToken
	testFrom  = twiliotest.DefaultFrom
	testMG    = twiliotest.DefaultMessagingServiceSID
	testOTP   = "482913"
	// An API key of the account.
	testKeySID    = "SK00112233445566778899aabbccddeeff"
	testKeySecret = "api-key-secret-Qm9vbGVhbnM"
)

// newVendor starts the fake Twilio for t, with the test API key.
func newVendor(t *testing.T, cfg twiliotest.Config) *twiliotest.Server {
	t.Helper()
	if cfg.APIKeys == nil {
		cfg.APIKeys = map[string]string{testKeySID: testKeySecret}
	}
	v := twiliotest.NewServer(cfg)
	t.Cleanup(v.Close)
	return v
}

// newProvider returns a provider sending to v from testFrom with the
// account's auth token; change, when not nil, changes its Config first.
func newProvider(t *testing.T, v *twiliotest.Server, change func(*twilio.Config)) *twilio.Provider {
	t.Helper()
	cfg := twilio.Config{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: v.URL, HTTPClient: v.Client()}
	if change != nil {
		change(&cfg)
	}
	p, err := twilio.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// envelope returns a valid envelope as the SMS channel prepares it,
// alternately a text to an Indian number and an OTP to a US one.
func envelope(i int) *notify.Envelope {
	env := &notify.Envelope{Kind: sms.Kind, Provider: twilio.DefaultName, Units: 1, Class: record.Transactional,
		Account: &notify.Account{ID: "acme"}}
	if i%2 == 0 {
		env.To, env.Country = fmt.Sprintf("+9198765%05d", i), "IN"
		env.Content = &sms.Message{Route: sms.RouteSMS, Text: fmt.Sprintf("Order %d has shipped.", i), Encoding: sms.GSM7, Segments: 1}
	} else {
		env.To, env.Country = fmt.Sprintf("+1415555%04d", i%10000), "US"
		env.Content = &sms.Message{Route: sms.RouteOTP, OTP: testOTP, Text: testOTP + " is your Acme verification code.",
			Encoding: sms.GSM7, Segments: 1}
	}
	return env
}

// TestConformance runs the suite with the auth token and a number, and
// with an API key and a Messaging Service instead.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*twilio.Config)
		faults func(v *twiliotest.Server) providertest.Injectors
		slow   bool // whether the suite makes the fake slow
	}{
		{"auth token", func(c *twilio.Config) { c.StatusCallback = "https://hooks.example.com/twilio/status" },
			func(v *twiliotest.Server) providertest.Injectors {
				return providertest.Injectors{
					// Twilio's own 20503 answer: it created nothing. A
					// bare 503 would not prove that.
					providertest.Temporary:   func() { v.FailNext(twiliotest.ServiceUnavailable) },
					providertest.Permanent:   func() { v.FailNext(twiliotest.InvalidTo) },
					providertest.RateLimited: func() { v.FailNext(twiliotest.TooManyRequests) },
					providertest.AnswerLost:  v.BreakNext,
					// Twilio's error object with a code not known here.
					providertest.VendorErrorOn5xx: func() { v.FailNextWith(http.StatusBadGateway, 20599, "Service is busy") },
				}
			}, true},
		{"API key", func(c *twilio.Config) {
			c.AuthToken, c.APIKeySID, c.APIKeySecret = "", testKeySID, testKeySecret
			c.From, c.MessagingServiceSID = "", testMG
		}, func(v *twiliotest.Server) providertest.Injectors {
			return providertest.Injectors{
				providertest.Temporary:   func() { v.FailNext(twiliotest.InternalServerError) },
				providertest.Permanent:   func() { v.FailNext(twiliotest.Unsubscribed) },
				providertest.RateLimited: func() { v.FailNext(twiliotest.QueueFull) },
				providertest.AnswerLost:  func() { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) },
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, twiliotest.Config{})
			h := providertest.Harness{
				Provider: newProvider(t, v, c.change),
				Envelope: envelope,
				Secrets:  []string{testToken, testKeySecret, testOTP},
				FailNext: c.faults(v).Inject,
				Received: v.Accepted,
			}
			if c.slow {
				h.SetLatency = v.SetLatency
			}
			providertest.Run(t, h)
		})
	}
}
