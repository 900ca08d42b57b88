package sms_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone/world"
)

// TestNumbersBeyondIndia: a number of another country goes out in
// E.164 form with its country, where the account may send there and the
// number can take an SMS; anything else is refused on "to", before a
// provider or the wallet hears of it.
func TestNumbersBeyondIndia(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{Numbers: world.Plan{}})
	abroad := testAccount()
	abroad.Countries = []string{"IN", "US", "GB"}
	american := testAccount()
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
		{"abroad by default", "+1 415 555 0100", testAccount(), "", "to", "is a number of US, and the account may send to IN only"},
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

// TestNumbersWithoutAPlan: a channel without Config.Numbers reads Indian
// numbers only, and says what reads the others.
func TestNumbersWithoutAPlan(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	acct := testAccount()
	acct.Countries = []string{"*"}
	_, err := ch.Prepare(t.Context(), acct, &sms.Request{To: "+1 415 555 0100", Message: "hello"})
	if !hasFieldRule(err, "to", "phone/world") {
		t.Errorf("Prepare = %v; want it to name phone/world", err)
	}
	env, err := ch.Prepare(t.Context(), acct, &sms.Request{To: "+91 98765 43210", Message: "hello"})
	if err != nil || env.To != "+919876543210" || env.Country != "IN" {
		t.Errorf("Prepare = %+v, %v", env, err)
	}
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

// TestFixedLineCountries: fixed lines of the countries the channel lists
// take SMS; those of others stay refused.
func TestFixedLineCountries(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{Numbers: world.Plan{}, FixedLineCountries: []string{"GB"}})
	acct := testAccount()
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
