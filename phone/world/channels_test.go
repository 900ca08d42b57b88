package world_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone/world"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// The channels' tests of numbers beyond India, which need this plan: they
// moved here from channel/sms and channel/chat when phone/world became a
// module of its own, so that the library's tests need no numbering plan.

// orderTplID is a DLT template of smsAccount's (as channel/sms's tests).
const orderTplID = "1107169876543210987"

// smsAccount is channel/sms's test account: Indian, with a sender ID and
// two DLT templates.
func smsAccount() *notify.Account {
	const entityID = "1101456789012345678"
	return &notify.Account{
		ID: "acme", Name: "Acme", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "ACMECO", DLTTemplates: []sms.DLTTemplate{
			{ID: "1107161234567890123", EntityID: entityID, Content: "Your OTP for {#var#} is {#var#}. It is valid for 10 minutes. - ACMECO"},
			{ID: orderTplID, EntityID: entityID, Content: "Dear {#var#}, your order {#var#} has shipped. - ACMECO"},
		}}.Map(),
	}
}

// newSMSChannel is an SMS channel of cfg over an in-memory provider.
func newSMSChannel(t *testing.T, cfg sms.Config) *sms.Channel {
	t.Helper()
	if cfg.Provider == nil {
		cfg.Provider = memprovider.New("mem")
	}
	ch, err := sms.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// hasFieldRule reports whether err is an InvalidArgument error whose
// field's message contains rule.
func hasFieldRule(err error, field, rule string) bool {
	var e *notify.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, f := range e.Fields {
		if f.Field == field && strings.Contains(f.Message, rule) {
			return true
		}
	}
	return false
}

// noDNS resolves nothing: the chat tests here send no media.
type noDNS struct{}

func (noDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errors.New("no DNS in this test")
}

// newChatChannel is a chat channel reading numbers with world.Plan, over
// two in-memory gateways.
func newChatChannel(t *testing.T) *chat.Channel {
	t.Helper()
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := chat.New(chat.Config{Cloud: memprovider.New("cloud-mem"), QR: memprovider.New("qr-mem"),
		Renderer: renderer, Resolver: noDNS{}, CloudOTPTemplate: "otp_code", Numbers: world.Plan{}})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// chatAccount is channel/chat's test account, on the cloud gateway.
func chatAccount() *notify.Account {
	a := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	_ = sms.SetSettings(a, sms.Settings{SenderID: "ACMEIN"})
	_ = chat.SetSettings(a, chat.Settings{PrimaryGateway: chat.GatewayCloud})
	return a
}

// TestSMSNumbersBeyondIndia: a number of another country goes out in
// E.164 form with its country, where the account may send there and the
// number can take an SMS; anything else is refused on "to", before a
// provider or the wallet hears of it.
func TestSMSNumbersBeyondIndia(t *testing.T) {
	ch := newSMSChannel(t, sms.Config{Numbers: world.Plan{}})
	abroad := smsAccount()
	abroad.Countries = []string{"IN", "US", "GB"}
	american := smsAccount()
	american.Region = "US" // and no list: the US only

	good := []struct {
		name, to, e164, country string
		acct                    *notify.Account
	}{
		{"a US number", "+1 415 555 0100", "+14155550100", "US", abroad},
		{"a UK mobile", "+44 7400 123456", "+447400123456", "GB", abroad},
		{"an Indian number, as ever", "98765 43210", "+919876543210", "IN", abroad},
		{"a US account's national form", "(415) 555-0100", "+14155550100", "US", american},
	}
	for _, tt := range good {
		env, err := ch.Prepare(t.Context(), tt.acct, &sms.Request{To: tt.to, Message: "Your parcel ships today"})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if env.To != tt.e164 || env.Country != tt.country {
			t.Errorf("%s: To %q, Country %q; want %s, %s", tt.name, env.To, env.Country, tt.e164, tt.country)
		}
	}

	bad := []struct {
		name, to string
		acct     *notify.Account
		route    sms.Route
		field    string
		rule     string
	}{
		{"outside the allow list", "+49 1512 3456789", abroad, "", "to", "is a number of DE, which is not among the account's countries (IN, US, GB)"},
		{"abroad by default", "+1 415 555 0100", smsAccount(), "", "to", "is a number of US, and the account may send to IN only"},
		{"India, for a US account", "+91 98765 43210", american, "", "to", "is a number of IN, and the account may send to US only"},
		{"premium-rate", "+1 900 555 0100", abroad, "", "to", "is a premium-rate number, which cannot take an SMS"},
		{"premium-rate in the UK", "+44 909 876 5432", abroad, "", "to", "premium-rate"},
		{"a UK fixed line", "+44 20 7946 0958", abroad, "", "to", "is a fixed-line number, which cannot take an SMS"},
		{"toll-free", "+1 800 555 0100", abroad, "", "to", "toll-free"},
		{"too short", "+1 415 555", abroad, "", "to", "too short"},
		{"too long", "+1 415 555 0100 99", abroad, "", "to", "too long"},
		{"no such range", "+44 7700 900123", abroad, "", "to", "not a valid number of +44"},
		{"an Indian number too short", "98765 4321", abroad, "", "to", "must be 10 digits, found 9"},
		{"DLT abroad", "+1 415 555 0100", abroad, sms.RouteDLT, "route", "dlt is India's scheme, for +91 numbers only, and the number is of US"},
	}
	for _, tt := range bad {
		req := &sms.Request{To: tt.to, Message: "Your parcel ships today", Route: tt.route}
		if tt.route == sms.RouteDLT {
			req.DLTTemplateID, req.SenderID = orderTplID, "ACMECO"
			req.Message = "Dear Asha, your order 4711 has shipped. - ACMECO"
		}
		_, err := ch.Prepare(t.Context(), tt.acct, req)
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !hasFieldRule(err, tt.field, tt.rule) {
			t.Errorf("%s: %v; want %s: %s", tt.name, err, tt.field, tt.rule)
		}
	}
}

// TestSMSFixedLineCountries: fixed lines of the countries the channel lists
// take SMS; those of others stay refused.
func TestSMSFixedLineCountries(t *testing.T) {
	ch := newSMSChannel(t, sms.Config{Numbers: world.Plan{}, FixedLineCountries: []string{"GB"}})
	acct := smsAccount()
	acct.Countries = []string{"*"}
	env, err := ch.Prepare(t.Context(), acct, &sms.Request{To: "+44 20 7946 0958", Message: "hello"})
	if err != nil || env.To != "+442079460958" {
		t.Fatalf("a UK fixed line: %+v, %v", env, err)
	}
	_, err = ch.Prepare(t.Context(), acct, &sms.Request{To: "+91 22 2345 6789", Message: "hello"})
	if !hasFieldRule(err, "to", "start with 6, 7, 8 or 9") {
		t.Errorf("an Indian fixed line: %v", err)
	}
	_, err = ch.Prepare(t.Context(), acct, &sms.Request{To: "+49 30 1234567", Message: "hello"})
	if !hasFieldRule(err, "to", "is a fixed-line number") {
		t.Errorf("a German fixed line: %v", err)
	}
}

// TestChatNumbersBeyondIndia: chat takes numbers of the countries the
// account may send to, in E.164 form, on any kind of line (a business
// may chat from a fixed line); the allow list still holds.
func TestChatNumbersBeyondIndia(t *testing.T) {
	ch := newChatChannel(t)
	acct := chatAccount()
	acct.Countries = []string{"IN", "GB"}
	for to, want := range map[string]string{
		"+44 7400 123456":  "+447400123456",
		"+44 20 7946 0958": "+442079460958", // a fixed line: refused for SMS, not for chat
		"9876543210":       "+919876543210",
	} {
		env, err := ch.Prepare(t.Context(), acct, &chat.Request{To: to, OTP: "482913"})
		if err != nil || env.To != want {
			t.Errorf("Prepare(%s) = %+v, %v; want To %s", to, env, err, want)
			continue
		}
		if wantCountry := map[bool]string{true: "IN", false: "GB"}[strings.HasPrefix(want, "+91")]; env.Country != wantCountry {
			t.Errorf("Prepare(%s): Country %q", to, env.Country)
		}
	}
	_, err := ch.Prepare(t.Context(), acct, &chat.Request{To: "+1 415 555 0100", OTP: "482913"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "is a number of US, which is not among the account's countries (IN, GB)") {
		t.Errorf("a US number: %v", err)
	}
}
