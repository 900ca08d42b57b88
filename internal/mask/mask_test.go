package mask_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/mask"
)

func TestReplace(t *testing.T) {
	for _, c := range []struct {
		text, otp string
		digits    bool
		want      string
	}{
		{"code 482915 ok", "482915", false, "code # ok"},
		{"code 482915, order 4711", "", true, "code #, order #"},
		{"order 4711", "", false, "order 4711"},
		{"call 9876543210 or 123", "", true, "call 9876543210 or 123"}, // 10 and 3 digits: not codes
		{"9912345", "1234", false, "99#5"},                             // the code inside a longer run
		{"99123455", "1234", true, "99#55"},                            // runs split by the code are too short
		{"1234123456789", "1234", true, "###"},                         // what is left after the codes, 56789, is a run of 5
		{"", "1234", true, ""},
	} {
		if got := mask.Replace(c.text, c.otp, c.digits, "#"); got != c.want {
			t.Errorf("Replace(%q, %q, %v) = %q, want %q", c.text, c.otp, c.digits, got, c.want)
		}
	}
}

func TestDigits(t *testing.T) {
	for name, c := range map[string]struct {
		env  notify.Envelope
		want bool
	}{
		"carries a code":  {notify.Envelope{CarriesOTP: true, Content: &sms.Message{}}, true},
		"sms text":        {notify.Envelope{Content: &sms.Message{Route: sms.RouteSMS}}, false},
		"sms dlt":         {notify.Envelope{Content: &sms.Message{Route: sms.RouteDLT}}, true},
		"chat text":       {notify.Envelope{Content: &chat.Message{Text: "hi"}}, false},
		"chat template":   {notify.Envelope{Content: &chat.Message{Template: &chat.Template{Name: "order"}}}, true},
		"e-mail":          {notify.Envelope{Content: &email.Message{Purpose: email.PurposeNotification}}, false},
		"e-mail otp":      {notify.Envelope{Content: &email.Message{Purpose: email.PurposeOTP}}, true},
		"nothing to show": {notify.Envelope{}, false},
	} {
		if got := mask.Digits(&c.env); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

func TestDeclared(t *testing.T) {
	for name, c := range map[string]struct {
		env  *notify.Envelope
		want string
	}{
		"sms":             {&notify.Envelope{Content: &sms.Message{OTP: "482913"}}, "482913"},
		"chat":            {&notify.Envelope{Content: &chat.Message{OTP: "4829"}}, "4829"},
		"e-mail, 10":      {&notify.Envelope{Content: &email.Message{OTP: "4829135521"}}, "4829135521"},
		"e-mail, none":    {&notify.Envelope{Content: &email.Message{Purpose: email.PurposeOTP}}, ""},
		"nil content":     {&notify.Envelope{Content: (*email.Message)(nil)}, ""},
		"nothing to show": {&notify.Envelope{}, ""},
		"nil envelope":    {nil, ""},
	} {
		if got := mask.Declared(c.env); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	// A declared code is hidden whatever its length; an undeclared run
	// of 10 digits is not.
	text := "4829135521 is your code; call 9876543210"
	if got := mask.Replace(text, "4829135521", true, "#"); got != "# is your code; call 9876543210" {
		t.Errorf("Replace = %q", got)
	}
}
