package smsgateway_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
)

const (
	testKey    = "f2s-test-key-QmV5b25kIGtleXM"
	tplID      = "1107161234567890123"
	entityID   = "1101456789012345678"
	tplContent = "Your OTP for {#var#} is {#var#}. - ACMECO"
	testOTP    = "482913"
	// tplMessageID is the template's ID in the vendor's DLT manager.
	tplMessageID = "164725"
)

func newVendor(t *testing.T) *smsgatewaytest.Server {
	t.Helper()
	v := smsgatewaytest.NewServer(smsgatewaytest.Config{
		APIKey:    testKey,
		Balance:   500000,
		PartPrice: 25,
		Templates: []smsgatewaytest.Template{{ID: tplID, EntityID: entityID, Sender: "ACMECO", Content: tplContent, MessageID: tplMessageID}},
	})
	t.Cleanup(v.Close)
	return v
}

func newProvider(t *testing.T, v *smsgatewaytest.Server, key string) *smsgateway.Provider {
	t.Helper()
	p, err := smsgateway.New(smsgateway.Config{APIKey: key, BaseURL: v.URL, HTTPClient: v.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// envelope returns a valid envelope of each route in turn.
func envelope(i int) *notify.Envelope {
	env := &notify.Envelope{Kind: sms.Kind, To: fmt.Sprintf("98765%05d", i), Provider: smsgateway.DefaultName, Units: 1,
		Class: record.Transactional}
	switch i % 3 {
	case 0:
		env.Content = &sms.Message{Route: sms.RouteSMS, Text: fmt.Sprintf("Order %d has shipped.", i),
			SenderID: "ACMECO", Encoding: sms.GSM7, Segments: 1}
	case 1:
		env.Content = &sms.Message{Route: sms.RouteOTP, OTP: testOTP, SenderID: "ACMECO",
			Text: testOTP + " is your Acme verification code.", Encoding: sms.GSM7, Segments: 1}
	default:
		env.Content = &sms.Message{Route: sms.RouteDLT, Text: "Your OTP for login is " + testOTP + ". - ACMECO",
			SenderID: "ACMECO", DLTTemplateID: tplID, DLTEntityID: entityID, DLTValues: []string{"login", testOTP},
			Encoding: sms.GSM7, Segments: 1}
	}
	return env
}

func TestConformance(t *testing.T) {
	v := newVendor(t)
	providertest.Run(t, providertest.Harness{
		Provider: newProvider(t, v, testKey),
		Envelope: envelope,
		Secrets:  []string{testKey, testOTP},
		FailNext: func(f providertest.Failure) bool {
			fail, ok := map[providertest.Failure]func(){
				// The vendor's wallet is empty: it says so with its own
				// error code, so the message certainly was not taken. A
				// bare 503 would not prove that.
				providertest.Temporary:   func() { v.FailNext(smsgatewaytest.LowBalance) },
				providertest.Permanent:   func() { v.FailNext(smsgatewaytest.InvalidNumbers) },
				providertest.RateLimited: func() { v.FailNext(smsgatewaytest.Spamming) },
				providertest.AnswerLost:  v.BreakNext,
				// The vendor sheds load: its own body, a code it does not
				// document, on a 503.
				providertest.VendorErrorOn5xx: func() { v.RefuseNext(1, http.StatusServiceUnavailable, 503, "busy") },
			}[f]
			if ok {
				fail()
			}
			return ok
		},
		SetLatency: v.SetLatency,
		Received:   v.Accepted,
	})
}
