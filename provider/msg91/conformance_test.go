package msg91_test

import (
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/record"
)

const (
	testKey = "msg91-test-key-4f8d285d378b4567"
	// dltID and entityID are the template's DLT IDs; tplContent its DLT
	// text, and msgContent the same in the MSG91 panel.
	dltID      = "1107161234567890123"
	entityID   = "1101456789012345678"
	tplContent = "Your OTP for {#var#} is {#var#}. - ACMECO"
	msgContent = "Your OTP for ##VAR1## is ##VAR2##. - ACMECO"
	// tplID is the template's ID in the MSG91 panel: the DLT template's
	// message_id.
	tplID = "6808ca80d6fc054bef421352"
	// otpTplID is the MSG91 OTP template.
	otpTplID = "66bd07f7d6fc054f8a6ad8f1"
	testOTP  = "482913"
)

// templates are the fake's: the DLT template, and the OTP template.
var templates = []msg91test.Template{
	{ID: tplID, DLTTemplateID: dltID, Sender: "ACMECO", Content: msgContent},
	{ID: otpTplID, DLTTemplateID: "1107169876543210987", Sender: "ACMECO", Content: "##OTP## is your Acme verification code. - ACMECO"},
}

func newVendor(t *testing.T) *msg91test.Server {
	t.Helper()
	v := msg91test.NewServer(msg91test.Config{AuthKey: testKey, Templates: templates})
	t.Cleanup(v.Close)
	return v
}

func newProvider(t *testing.T, v *msg91test.Server, key string) *msg91.Provider {
	t.Helper()
	p, err := msg91.New(msg91.Config{AuthKey: key, BaseURL: v.URL, HTTPClient: v.Client(), OTPTemplateID: otpTplID})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// dltEnvelope returns a dlt-route envelope to +9198765<i>, as the SMS
// channel prepares it from the account's DLT template.
func dltEnvelope(i int) *notify.Envelope {
	return &notify.Envelope{Kind: sms.Kind, To: fmt.Sprintf("+9198765%05d", i), Provider: msg91.DefaultName, Units: 1,
		Class: record.Transactional, Route: string(sms.RouteDLT), CarriesOTP: true,
		Content: &sms.Message{Route: sms.RouteDLT, Text: "Your OTP for login is " + testOTP + ". - ACMECO",
			SenderID: "ACMECO", DLTTemplateID: dltID, DLTEntityID: entityID, DLTMessageID: tplID,
			DLTValues: []string{"login", testOTP}, Encoding: sms.GSM7, Segments: 1}}
}

// otpEnvelope returns an otp-route envelope to +9198765<i>.
func otpEnvelope(i int) *notify.Envelope {
	return &notify.Envelope{Kind: sms.Kind, To: fmt.Sprintf("+9198765%05d", i), Provider: msg91.DefaultName, Units: 1,
		Class: record.Transactional, Route: string(sms.RouteOTP), CarriesOTP: true,
		Content: &sms.Message{Route: sms.RouteOTP, OTP: testOTP, SenderID: "ACMECO",
			Text: testOTP + " is your Acme verification code.", Encoding: sms.GSM7, Segments: 1}}
}

// envelope returns a valid envelope of the dlt and otp routes in turn.
func envelope(i int) *notify.Envelope {
	if i%2 == 1 {
		return otpEnvelope(i)
	}
	return dltEnvelope(i)
}

func TestConformance(t *testing.T) {
	v := newVendor(t)
	faults := providertest.Injectors{
		// MSG91 says, with its own body, that the balance is too low: the
		// message certainly was not taken. A bare 503 would not prove that.
		providertest.Temporary:   func() { v.FailNext(msg91test.InsufficientBalance) },
		providertest.Permanent:   func() { v.FailNext(msg91test.InvalidMobile) },
		providertest.RateLimited: func() { v.FailNext(msg91test.TooManyRequests) },
		providertest.AnswerLost:  v.BreakNext,
		// MSG91's own error body on an HTTP 500.
		providertest.VendorErrorOn5xx: func() { v.FailNext(msg91test.InternalError) },
	}
	providertest.Run(t, providertest.Harness{
		Provider:   newProvider(t, v, testKey),
		Envelope:   envelope,
		Secrets:    []string{testKey, testOTP},
		FailNext:   faults.Inject,
		SetLatency: v.SetLatency,
		Received:   v.Accepted,
	})
}
