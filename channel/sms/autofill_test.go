package sms_test

import (
	"context"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// TestAutofill checks the WebOTP line and the SMS Retriever app hash:
// where they go in the text, that they count towards its segments, that
// they need a code, and that on the dlt route the whole text, lines
// included, must match the registered template.
func TestAutofill(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	ctx := context.Background()
	text := func(t *testing.T, r *sms.Request, acct *notify.Account) string {
		t.Helper()
		env, err := ch.Prepare(ctx, acct, r)
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		return env.Content.(*sms.Message).Text
	}
	otp := sms.DefaultOTPText("482913", "Acme")

	got := text(t, &sms.Request{To: "9876543210", Message: "482913", Route: sms.RouteOTP, Brand: "Acme",
		WebOTPHost: "Login.Example.com"}, testAccount())
	if want := otp + "\n\n@login.example.com #482913"; got != want {
		t.Errorf("WebOTP text:\n%q\nwant\n%q", got, want)
	}
	got = text(t, &sms.Request{To: "9876543210", Message: "482913", Route: sms.RouteOTP, Brand: "Acme",
		WebOTPHost: "example.com", AppHash: "FA+9qCX9VSu"}, testAccount())
	if want := otp + "\n\nFA+9qCX9VSu\n@example.com #482913"; got != want {
		t.Errorf("WebOTP and app hash text:\n%q\nwant\n%q", got, want)
	}

	// On the dlt route the lines must be in the registered template.
	acct := testAccount()
	const tplID = "1107160000000000001"
	changeSettings(t, acct, func(s *sms.Settings) {
		s.DLTTemplates = append(s.DLTTemplates, sms.DLTTemplate{ID: tplID, EntityID: entityID,
			Content: "{#var#} is your code. - ACMECO\n\n@{#var#} #{#var#}"})
	})
	dlt := &sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: tplID,
		Message: "482913 is your code. - ACMECO", Variables: record.Vars{"OTP": "482913"}, WebOTPHost: "example.com"}
	if got, want := text(t, dlt, acct), "482913 is your code. - ACMECO\n\n@example.com #482913"; got != want {
		t.Errorf("dlt text %q, want %q", got, want)
	}
	dlt.DLTTemplateID = otpTplID // a template without the line
	dlt.Message = "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"
	if _, err := ch.Prepare(ctx, acct, dlt); !strings.Contains(fieldOf(err, "message"), "does not match DLT template") {
		t.Errorf("dlt text with a WebOTP line its template lacks: %v", err)
	}

	for _, tc := range []struct {
		name  string
		req   sms.Request
		field string
		want  string
	}{
		{"no code", sms.Request{To: "9876543210", Message: "hello", WebOTPHost: "example.com"}, "webotp_host", "needs a one-time code"},
		{"no code for the hash", sms.Request{To: "9876543210", Message: "hello", AppHash: "FA+9qCX9VSu"}, "app_hash", "needs a one-time code"},
		{"short hash", sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP, AppHash: "FA+9qCX9VS"}, "app_hash", "11-character"},
		{"hash with a space", sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP, AppHash: "FA+9qCX9VS "}, "app_hash", "11-character"},
		{"host with a scheme", sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP, WebOTPHost: "https://example.com"}, "webotp_host", ""},
	} {
		_, err := ch.Prepare(ctx, testAccount(), &tc.req)
		if msg := fieldOf(err, tc.field); msg == "" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v, want %s naming %q", tc.name, err, tc.field, tc.want)
		}
	}
}

// fieldOf returns the message err gives for field, or "".
func fieldOf(err error, field string) string {
	if e, ok := err.(*notify.Error); ok {
		for _, f := range e.Fields {
			if f.Field == field {
				return f.Message
			}
		}
	}
	return ""
}
