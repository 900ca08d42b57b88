package rules_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
)

// requests are the types whose tags Check reads.
var requests = []any{&sms.Request{}, &email.Request{}, &chat.Request{}}

// Every tag in use parses (the validator panics on an unknown one) and has
// a message of its own, not the fallback.
func TestEveryTagHasAMessage(t *testing.T) {
	for _, req := range requests {
		typ := reflect.TypeOf(req).Elem()
		for i := range typ.NumField() {
			f := typ.Field(i)
			for _, tag := range strings.Split(f.Tag.Get("validate"), ",") {
				name, _, _ := strings.Cut(tag, "=")
				switch name { // dive applies the rules after it to each element
				case "", "omitempty", "required", "required_without", "oneof", "max", "hostname_rfc1123", "dive":
					continue
				}
				if _, ok := rules.Custom[name]; !ok {
					if _, ok := rules.Aliases[name]; !ok {
						t.Errorf("%s.%s: tag %q has no message in rules.message", typ.Name(), f.Name, name)
					}
				}
			}
		}
		var fe record.FieldErrors
		rules.Check(&fe, req) // parses the tags
	}
}

func TestCheckNamesFieldsAndRules(t *testing.T) {
	long := strings.Repeat("a", 254)
	for _, tc := range []struct {
		name string
		req  any
		want map[string]string // field -> part of its message
	}{
		{"sms", &sms.Request{To: "12345", Route: "promo", Domain: long, Brand: "A\u202eB"},
			map[string]string{"route": `must be sms, otp or dlt, not "promo"`,
				"domain": "at most 253 characters", "brand": "bidirectional"}},
		{"email required unless", &email.Request{To: "Desk <d@example.com>", FromName: "x\r\nBcc: y"},
			map[string]string{"to": "bare address", "subject": "is required unless template_slug is given",
				"message": "is required unless template_slug is given", "from_name": "control characters (U+000D"}},
		{"email blank subject", &email.Request{To: "a@example.com", Subject: "  ", Message: "hi", ReplyTo: "x@localhost"},
			map[string]string{"subject": "must not be blank", "reply_to": "domain name such as example.com"}},
		{"chat", &chat.Request{To: "9876543210", OTP: "12ab", Gateway: "sms", Type: "bulk", TemplateName: "Bad Name", FileName: "../x.pdf", Domain: "a\nb"},
			map[string]string{"otp": "must be 4 to 8 digits", "gateway": "must be cloud, qr or auto", "type": "must be otp or promotional",
				"template_name": "lower-case", "file_name": "without a path", "domain": "control characters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fe record.FieldErrors
			rules.Check(&fe, tc.req)
			got := map[string]string{}
			for _, f := range fe {
				if _, dup := got[f.Field]; dup {
					t.Errorf("field %s reported twice", f.Field)
				}
				got[f.Field] = f.Message
			}
			for field, part := range tc.want {
				if !strings.Contains(got[field], part) {
					t.Errorf("field %s: %q, want it to contain %q", field, got[field], part)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("fields %v, want exactly %v", got, tc.want)
			}
		})
	}
}

func TestCheckNeverEchoesACode(t *testing.T) {
	var fe record.FieldErrors
	rules.Check(&fe, &chat.Request{To: "9876543210", OTP: "9876543" + "x"})
	for _, f := range fe {
		if strings.Contains(f.Message, "9876543x") {
			t.Errorf("%s: %q echoes the code", f.Field, f.Message)
		}
	}
}

func TestValidRequestsPass(t *testing.T) {
	for _, req := range []any{
		&sms.Request{To: "+91 98765 43210", Message: "hi", Route: sms.RouteSMS, Domain: "shop.example"},
		&email.Request{To: " a@example.com ", Subject: "Hi", Message: "Body", FromName: "Shop", Purpose: email.PurposeInvoice},
		&email.Request{To: "a@example.com", TemplateSlug: "welcome"},
		&chat.Request{To: "9876543210", OTP: "4829", Gateway: chat.GatewayQR, TemplateName: "order_update_2", FileName: "Invoice 7.pdf"},
	} {
		var fe record.FieldErrors
		if rules.Check(&fe, req); len(fe) > 0 {
			t.Errorf("%T: %v", req, notify.InvalidFields(fe))
		}
	}
}

func BenchmarkCheckSMS(b *testing.B) {
	req := &sms.Request{To: "9876543210", Message: "Your order has shipped", Domain: "shop.example"}
	b.ReportAllocs()
	for b.Loop() {
		var fe record.FieldErrors
		rules.Check(&fe, req)
	}
}
