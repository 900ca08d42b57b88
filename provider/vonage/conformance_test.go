package vonage_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
	"github.com/notifykit/notify/record"
)

const (
	testKey    = vonagetest.DefaultAPIKey
	testSecret = vonagetest.DefaultAPISecret
	testSig    = vonagetest.DefaultSignatureSecret
	testFrom   = vonagetest.DefaultFrom
	testOTP    = "482913"
	// The DLT registration of the Indian template, and its header.
	dltEntity   = "1101456789012345678"
	dltTemplate = "1107161234567890123"
	dltHeader   = "ACMEIN"
)

// newVendor starts the fake Vonage for t, with the DLT header among its
// senders unless cfg names its own.
func newVendor(t *testing.T, cfg vonagetest.Config) *vonagetest.Server {
	t.Helper()
	if cfg.Senders == nil {
		cfg.Senders = []string{testFrom, vonagetest.DefaultNumber, dltHeader}
	}
	v := vonagetest.NewServer(cfg)
	t.Cleanup(v.Close)
	return v
}

// newProvider returns a provider sending to v from testFrom; change, when
// not nil, changes its Config first.
func newProvider(t *testing.T, v *vonagetest.Server, change func(*vonage.Config)) *vonage.Provider {
	t.Helper()
	cfg := vonage.Config{APIKey: testKey, APISecret: testSecret, From: testFrom, BaseURL: v.URL, HTTPClient: v.Client()}
	if change != nil {
		change(&cfg)
	}
	p, err := vonage.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// envelope returns a valid envelope as the SMS channel prepares it, in
// turn a text to a UK number, an OTP to a US one and a DLT template to an
// Indian one.
func envelope(i int) *notify.Envelope {
	env := &notify.Envelope{Kind: sms.Kind, Provider: vonage.DefaultName, Units: 1, Class: record.Transactional,
		Account: &notify.Account{ID: "acme"}}
	switch i % 3 {
	case 0:
		env.To, env.Country = fmt.Sprintf("+4477009%05d", i%100000), "GB"
		env.Content = &sms.Message{Route: sms.RouteSMS, Text: fmt.Sprintf("Order %d has shipped.", i), Encoding: sms.GSM7, Segments: 1}
	case 1:
		env.To, env.Country, env.CarriesOTP = fmt.Sprintf("+1415555%04d", i%10000), "US", true
		env.Content = &sms.Message{Route: sms.RouteOTP, OTP: testOTP, Text: testOTP + " is your Acme verification code.",
			Encoding: sms.GSM7, Segments: 1}
	default:
		env.To, env.Country, env.CarriesOTP = fmt.Sprintf("+9198765%05d", i%100000), "IN", true
		env.Route = string(sms.RouteDLT)
		env.Content = &sms.Message{Route: sms.RouteDLT, Text: "Your OTP for login is " + testOTP + ". - ACMEIN", SenderID: dltHeader,
			DLTEntityID: dltEntity, DLTTemplateID: dltTemplate, DLTValues: []string{"login", testOTP}, Encoding: sms.GSM7, Segments: 1}
	}
	return env
}

// TestConformance runs the suite against the fake, with Vonage's
// refusals and the network's faults, a lost answer being a dropped
// connection or a proxy's 504 after Vonage took the message.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults func(v *vonagetest.Server) providertest.Injectors
		slow   bool // whether the suite makes the fake slow
	}{
		{"refusals", func(v *vonagetest.Server) providertest.Injectors {
			return providertest.Injectors{
				// Vonage's own status 5: it took nothing. A bare 503 would
				// not prove that.
				providertest.Temporary:   func() { v.FailNext(vonage.StatusInternalError) },
				providertest.Permanent:   func() { v.FailNext(vonage.StatusNumberBarred) },
				providertest.RateLimited: func() { v.FailNext(vonage.StatusThrottled) },
				providertest.AnswerLost:  v.BreakNext,
				// Vonage's answer with a status not known here, on a 503.
				providertest.VendorErrorOn5xx: func() { v.FailNextWith(http.StatusServiceUnavailable, 99, "Service busy") },
			}
		}, true},
		{"quota and proxy", func(v *vonagetest.Server) providertest.Injectors {
			return providertest.Injectors{
				providertest.Temporary:   func() { v.FailNext(vonage.StatusPartnerQuotaViolation) },
				providertest.Permanent:   func() { v.FailNext(vonage.StatusInvalidMessage) },
				providertest.RateLimited: func() { v.FailNext(vonage.StatusTooManyExistingBinds) },
				providertest.AnswerLost:  func() { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) },
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, vonagetest.Config{Balance: 1 << 40})
			h := providertest.Harness{
				Provider: newProvider(t, v, func(c *vonage.Config) { c.Callback = "https://hooks.example.com/vonage/dlr" }),
				Envelope: envelope,
				Secrets:  []string{testSecret, testOTP},
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
