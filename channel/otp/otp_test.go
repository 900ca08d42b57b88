package otp_test

import (
	"crypto/sha256"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
)

// The dual OTP is a request, not a channel: a notify.Composite whose parts
// go through the SMS and chat channels.
var _ notify.Composite = (*otp.Request)(nil)

func full() *otp.Request {
	return &otp.Request{Account: "acme", To: "+91 98765 43210", OTP: "482913", BrandName: "Acme", Action: "login",
		Domain: "shop.example.in", WebOTPHost: "shop.example.in", AppHash: "FA+9qCX9VSu", Language: "hi",
		IdempotencyKey: "signup-17"}
}

func TestRequest(t *testing.T) {
	r := full()
	if r.Kind() != otp.Kind || otp.Kind != "otp" || r.AccountID() != "acme" || r.Key() != "signup-17" {
		t.Fatalf("Kind %q, AccountID %q, Key %q", r.Kind(), r.AccountID(), r.Key())
	}
}

// TestParts: the SMS part on the otp route, then the chat part, each a
// request of its own channel with the composite's account, key and every
// field that part takes (notify.Composite.Parts).
func TestParts(t *testing.T) {
	r := full()
	parts := r.Parts()
	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	wantSMS := &sms.Request{Account: "acme", To: r.To, Message: "482913", Route: sms.RouteOTP, Brand: "Acme",
		Domain: "shop.example.in", WebOTPHost: "shop.example.in", AppHash: "FA+9qCX9VSu", IdempotencyKey: "signup-17"}
	if !reflect.DeepEqual(parts[0], notify.Request(wantSMS)) {
		t.Errorf("SMS part = %+v, want %+v", parts[0], wantSMS)
	}
	wantChat := &chat.Request{Account: "acme", To: r.To, OTP: "482913", Action: "login", Brand: "Acme",
		Domain: "shop.example.in", Language: "hi", IdempotencyKey: "signup-17"}
	if !reflect.DeepEqual(parts[1], notify.Request(wantChat)) {
		t.Errorf("chat part = %+v, want %+v", parts[1], wantChat)
	}
	for i, p := range parts {
		if p.AccountID() != r.AccountID() || p.Key() != r.Key() {
			t.Errorf("part %d: account %q, key %q; want the composite's", i, p.AccountID(), p.Key())
		}
	}
	if parts[0].Kind() != sms.Kind || parts[1].Kind() != chat.Kind {
		t.Errorf("parts of kinds %q and %q, want sms then chat", parts[0].Kind(), parts[1].Kind())
	}
	// Each call makes new parts: a caller may change one.
	again := r.Parts()
	again[0].(*sms.Request).Message = "000000"
	if r.Parts()[0].(*sms.Request).Message != "482913" {
		t.Error("Parts shares its parts between calls")
	}
}

func TestPartField(t *testing.T) {
	r := full()
	for _, c := range []struct {
		part        int
		field, want string
	}{
		{0, "message", "otp"},
		{0, "brand", "brand_name"},
		{1, "brand", "brand_name"},
		{1, "message", "otp"}, // the chat part wants a message only without a code
		{1, "otp", "otp"},
		{0, "to", "to"},
		{1, "to", "to"},
		{0, "webotp_host", "webotp_host"},
		{1, "language", "language"},
	} {
		if got := r.PartField(c.part, c.field); got != c.want {
			t.Errorf("PartField(%d, %q) = %q, want %q", c.part, c.field, got, c.want)
		}
	}
}

func fingerprint(r notify.Request) [32]byte {
	h := sha256.New()
	r.Fingerprint(h)
	return [32]byte(h.Sum(nil))
}

// TestFingerprint: every content field counts, the account and the key do
// not, and the recipient counts once normalised (notify.Request.Fingerprint).
func TestFingerprint(t *testing.T) {
	base := fingerprint(full())
	if fingerprint(full()) != base {
		t.Fatal("two fingerprints of one request differ")
	}
	same := map[string]func(*otp.Request){
		"account":          func(r *otp.Request) { r.Account = "other" },
		"key":              func(r *otp.Request) { r.IdempotencyKey = "" },
		"national number":  func(r *otp.Request) { r.To = "9876543210" },
		"number with 0":    func(r *otp.Request) { r.To = "09876543210" },
		"number with 91":   func(r *otp.Request) { r.To = "919876543210" },
		"number in pieces": func(r *otp.Request) { r.To = "98765-43210" },
	}
	for name, change := range same {
		r := full()
		change(r)
		if fingerprint(r) != base {
			t.Errorf("%s: the fingerprint changed", name)
		}
	}
	differ := map[string]func(*otp.Request){
		"to":          func(r *otp.Request) { r.To = "9876543211" },
		"otp":         func(r *otp.Request) { r.OTP = "482914" },
		"brand_name":  func(r *otp.Request) { r.BrandName = "Acme Bank" },
		"action":      func(r *otp.Request) { r.Action = "registration" },
		"domain":      func(r *otp.Request) { r.Domain = "" },
		"webotp_host": func(r *otp.Request) { r.WebOTPHost = "" },
		"app_hash":    func(r *otp.Request) { r.AppHash = "" },
		"language":    func(r *otp.Request) { r.Language = "en" },
		// Fields are delimited: moving text from one to the next differs.
		"brand into action": func(r *otp.Request) { r.BrandName, r.Action = "Acm", "elogin" },
	}
	for name, change := range differ {
		r := full()
		change(r)
		if fingerprint(r) == base {
			t.Errorf("%s: the fingerprint did not change", name)
		}
	}
}

// TestSend: through a Notifier, one receipt of Kind otp whose legs are
// the SMS and the chat message, SMS first, each charged.
func TestSend(t *testing.T) {
	kit := notifytest.New(t)
	r, err := kit.Notifier.Send(t.Context(), &otp.Request{Account: notifytest.AccountID, To: "98765 43210",
		OTP: "482913", BrandName: "Acme", Action: "login"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != otp.Kind || len(r.Legs) != 2 || r.Legs[0].Kind != sms.Kind || r.Legs[1].Kind != chat.Kind {
		t.Fatalf("receipt %+v", r)
	}
	for i, leg := range r.Legs {
		if leg.Status != record.StateSent || leg.To != "+919876543210" || leg.Cost.Minor <= 0 {
			t.Errorf("leg %d: %+v", i, leg)
		}
	}
	if r.Cost.Minor != r.Legs[0].Cost.Minor+r.Legs[1].Cost.Minor {
		t.Errorf("cost %d, legs %d and %d", r.Cost.Minor, r.Legs[0].Cost.Minor, r.Legs[1].Cost.Minor)
	}
	if m := sms.MessageOf(kit.LastSMS(t)); m.Route != sms.RouteOTP || m.OTP != "482913" || !strings.Contains(m.Text, "Acme") {
		t.Errorf("SMS %+v", m)
	}
	if m := chat.MessageOf(kit.LastChat(t)); m.OTP != "482913" {
		t.Errorf("chat %+v", m)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance-r.Cost.Minor)
}

// TestBadInput: a bad field is named in the dual OTP's own words, and
// nothing is sent or charged.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		req    otp.Request
		fields []string
	}{
		{"no code", otp.Request{To: "9876543210"}, []string{"otp"}},
		{"short code", otp.Request{To: "9876543210", OTP: "12"}, []string{"otp"}},
		{"no number", otp.Request{OTP: "482913"}, []string{"to"}},
		{"long brand", otp.Request{To: "9876543210", OTP: "482913", BrandName: strings.Repeat("b", 61)}, []string{"brand_name"}},
		{"everything", otp.Request{To: "123", OTP: "12ab", BrandName: "a\nb"}, []string{"brand_name", "otp", "to"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kit := notifytest.New(t)
			req := c.req
			req.Account = notifytest.AccountID
			_, err := kit.Notifier.Send(t.Context(), &req)
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument {
				t.Fatalf("error %v, want InvalidArgument", err)
			}
			var got []string
			for _, f := range ne.Fields {
				got = append(got, f.Field)
				if strings.Contains(f.Message, "482913") || strings.Contains(f.Message, "12ab") {
					t.Errorf("the rule of %s shows the code: %q", f.Field, f.Message)
				}
			}
			slices.Sort(got) // each field once, though both parts may break it
			if !slices.Equal(got, c.fields) {
				t.Errorf("fields %q, want %q: %v", got, c.fields, err)
			}
			kit.AssertSent(t, sms.Kind, 0)
			kit.AssertSent(t, chat.Kind, 0)
			kit.AssertBalance(t, notifytest.DefaultBalance)
		})
	}
}
