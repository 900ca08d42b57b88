package email_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// A code of 10 digits, as package verify sends by e-mail: longer than the
// runs of digits the logs take for codes by themselves.
const longCode = "4829135521"

func TestPrepareDeclaredOTP(t *testing.T) {
	c := newChannel(t)
	for name, req := range map[string]*email.Request{
		"in the body": {To: "a@example.com", Subject: "Your code", OTP: longCode,
			Message: "<p>Your code is <b>" + longCode + "</b>.</p>"},
		"in the subject only": {To: "a@example.com", Subject: longCode + " is your code", OTP: longCode,
			Message: "Sign in with the code in the subject."},
		"four digits": {To: "a@example.com", Subject: "Code", OTP: "0042", Message: "Code: 0042"},
		"in a rendered template": {To: "a@example.com", TemplateSlug: "standard-otp", OTP: "48291355",
			Variables: record.Vars{"OTP": "48291355"}},
	} {
		t.Run(name, func(t *testing.T) {
			env := prepare(t, c, req)
			m := email.MessageOf(env)
			if m.OTP != req.OTP {
				t.Errorf("Message.OTP = %q, want %q", m.OTP, req.OTP)
			}
			if !env.CarriesOTP {
				t.Error("an e-mail that declares a code does not carry one")
			}
			if m.Purpose != "" {
				t.Errorf("purpose %q: declaring a code changes no other field", m.Purpose)
			}
		})
	}
	// Without a declared code there is none, and a plain e-mail carries
	// none.
	env := prepare(t, c, &email.Request{To: "a@example.com", Subject: "Order", Message: "Order " + longCode + " shipped"})
	if email.MessageOf(env).OTP != "" || env.CarriesOTP {
		t.Errorf("undeclared: OTP %q, CarriesOTP %v", email.MessageOf(env).OTP, env.CarriesOTP)
	}
}

func TestPrepareBadOTP(t *testing.T) {
	ok := email.Request{To: "a@example.com", Subject: "Your code", Message: "Your code is 4829135521, not 48291355211"}
	for _, tc := range []struct {
		name, otp string
		edit      func(r *email.Request)
		want      []string
	}{
		{"not in the text", "7777777777", nil, []string{"otp"}},
		{"only inside a longer number", "48291355", nil, []string{"otp"}},
		{"only inside longer numbers", "829135521", nil, []string{"otp"}},
		{"letters", "48291a", nil, []string{"otp"}},
		{"a sign", "+4829135", nil, []string{"otp"}},
		{"spaces", " 482913 ", nil, []string{"otp"}},
		{"non-ASCII digits", "४८२९१३", nil, []string{"otp"}},
		{"too short", "482", nil, []string{"otp"}},
		{"too long", "48291355211", nil, []string{"otp"}},
		{"not in the rendered template", "4829135521", func(r *email.Request) {
			r.Subject, r.Message, r.TemplateSlug, r.Variables = "", "", "standard-otp", record.Vars{"OTP": "482913"}
		}, []string{"otp"}},
		// The text is not searched when it was refused: its field says why.
		{"refused body", "4829135521", func(r *email.Request) { r.Message = "a\x00b" }, []string{"message"}},
		{"refused subject", "4829135521", func(r *email.Request) { r.Subject = "a\nb" }, []string{"subject"}},
		{"refused variables", "4829135521", func(r *email.Request) {
			r.Subject, r.Message, r.TemplateSlug, r.Variables = "", "", "standard-otp", nil
		}, []string{"variables.OTP"}},
		// A bad shape is reported with the other fields.
		{"bad shape with a bad body", "12ab", func(r *email.Request) { r.Message = "a\x00b" }, []string{"message", "otp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			req.OTP = tc.otp
			if tc.edit != nil {
				tc.edit(&req)
			}
			env, err := newChannel(t).Prepare(context.Background(), testAcct, &req)
			if err == nil {
				t.Fatalf("Prepare succeeded: %+v", email.MessageOf(env))
			}
			if got := fields(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("bad fields %v, want %v (%v)", got, tc.want, err)
			}
			if strings.TrimSpace(tc.otp) != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.otp)) {
				t.Errorf("the error echoes the code: %v", err)
			}
		})
	}
	// The code that stands on its own passes.
	req := ok
	req.OTP = "4829135521"
	prepare(t, newChannel(t), &req)
}

// The declared code reaches the provider with the message.
func TestDeclaredOTPReachesTheProvider(t *testing.T) {
	mp := memprovider.New("capture")
	c, err := email.New(email.Config{Provider: mp})
	if err != nil {
		t.Fatal(err)
	}
	env := prepare(t, c, &email.Request{To: "a@example.com", Subject: "Code", Message: "Code " + longCode, OTP: longCode})
	env.ID = "msg-1"
	if _, err := c.Deliver(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if sent := mp.Sent(); len(sent) != 1 || email.MessageOf(sent[0]).OTP != longCode {
		t.Errorf("provider got %+v", sent)
	}
}

// A request without a code keeps the fingerprint it had before the field
// existed; one with a code differs by it.
func TestFingerprintOfOTP(t *testing.T) {
	fp := func(r *email.Request) string {
		h := sha256.New()
		r.Fingerprint(h)
		return hex.EncodeToString(h.Sum(nil))
	}
	base := email.Request{To: "a@example.com", Subject: "S", Message: "m 48291355", Variables: record.Vars{"A": "1"}}
	// The fingerprint of base before OTP was added to email.Request.
	const before = "8e601df47a7bc7cae6e5700f99ace56c82b10732529e0d91d540a9ecfbe7c900"
	if got := fp(&base); got != before {
		t.Errorf("the fingerprint of a request without a code changed: %s", got)
	}
	withCode := base
	withCode.OTP = "48291355"
	other := base
	other.OTP = "48291356"
	if fp(&withCode) == fp(&base) || fp(&withCode) == fp(&other) {
		t.Error("the declared code does not change the fingerprint")
	}
}
