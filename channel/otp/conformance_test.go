package otp_test

import (
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
)

// The dual OTP has no channel of its own: the kit runs where it applies,
// on the SMS and chat channels, with the parts of dual OTP requests as
// their requests, so that every part the dual OTP makes is one its
// channel takes, queues (its codec) and delivers by the contract.

var dualOTPs = []*otp.Request{
	{Account: "acme", To: "98765 43210", OTP: "482913"},
	{Account: "acme", To: "+919876543210", OTP: "5739", BrandName: "Acme", Action: "login", Language: "hi",
		Domain: "shop.example.in", IdempotencyKey: "signup-17"},
	{Account: "acme", To: "9876543210", OTP: "91827364", BrandName: "Acme Bank", Action: "transaction",
		WebOTPHost: "bank.example.in", AppHash: "FA+9qCX9VSu"},
}

var dualSecrets = []string{"482913", "5739", "91827364", "12ab"}

// part returns part i of each request.
func part(i int, reqs ...*otp.Request) []notify.Request {
	var out []notify.Request
	for _, r := range reqs {
		out = append(out, r.Parts()[i])
	}
	return out
}

func dualAccount() *notify.Account {
	a := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	_ = sms.SetSettings(a, sms.Settings{SenderID: "ACMEIN"})
	return a
}

func TestConformanceSMSPart(t *testing.T) {
	p := memprovider.New("sms")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	bad := part(0, &otp.Request{Account: "acme", To: "9876543210", OTP: "12ab"}, &otp.Request{Account: "acme", OTP: "482913"})
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: dualAccount(),
		Valid:   part(0, dualOTPs...),
		Invalid: []channeltest.Invalid{
			{Name: "bad code", Request: bad[0], Fields: []string{"message"}},
			{Name: "no number", Request: bad[1], Fields: []string{"to"}},
		},
		Providers: []channeltest.Fake{p},
		Secrets:   dualSecrets,
		Codec:     ch,
		Reports:   ch,
	})
}

func TestConformanceChatPart(t *testing.T) {
	cloud, qr := memprovider.New("cloud"), memprovider.New("qr")
	ch, err := chat.New(chat.Config{Cloud: cloud, QR: qr, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	bad := part(1, &otp.Request{Account: "acme", To: "9876543210", OTP: "12ab"}, &otp.Request{Account: "acme", OTP: "482913"})
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: dualAccount(),
		Valid:   part(1, dualOTPs...),
		Invalid: []channeltest.Invalid{
			{Name: "bad code", Request: bad[0], Fields: []string{"otp"}},
			{Name: "no number", Request: bad[1], Fields: []string{"to"}},
		},
		Providers: []channeltest.Fake{cloud, qr},
		Secrets:   dualSecrets,
		Codec:     ch,
		Reports:   ch,
	})
}
