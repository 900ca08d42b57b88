package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// TestBadInput: every case is InvalidArgument naming the field.
func TestBadInput(t *testing.T) {
	ok := func(edit func(r *chat.Request)) *chat.Request {
		r := &chat.Request{To: "9876543210", Message: "hi"}
		edit(r)
		return r
	}
	media := func(u string) *chat.Request {
		return ok(func(r *chat.Request) { r.MediaURL = u })
	}
	tests := []struct {
		name  string
		req   *chat.Request
		field string
		msg   string // substring of the field's message
	}{
		{"media http", media("http://cdn.example.com/a.pdf"), "media_url", "must use https"},
		{"media ftp", media("ftp://cdn.example.com/a.pdf"), "media_url", "must use https"},
		{"media userinfo", media("https://user:pass@cdn.example.com/a.pdf"), "media_url", "user name"},
		{"media IPv4 literal", media("https://127.0.0.1/a.pdf"), "media_url", "IP address"},
		{"media public IP literal", media("https://8.8.8.8/a.pdf"), "media_url", "IP address"},
		{"media IPv6 literal", media("https://[::1]/a.pdf"), "media_url", "IP address"},
		{"media integer IP", media("https://2130706433/a.pdf"), "media_url", "IP address"},
		{"media hex IP", media("https://0x7f.1/a.pdf"), "media_url", "IP address"},
		{"media localhost", media("https://localhost/a.pdf"), "media_url", "not a fully qualified"},
		{"media sub.localhost", media("https://a.localhost/a.pdf"), "media_url", "local-only"},
		{"media resolves to loopback", media("https://loop.example.com/a.pdf"), "media_url", "loopback"},
		{"media resolves to 10.x", media("https://ten.example.com/a.pdf"), "media_url", "private"},
		{"media resolves to 169.254.x", media("https://metadata.example.com/a.pdf"), "media_url", "link-local"},
		{"media resolves to CGNAT", media("https://cgnat.example.com/a.pdf"), "media_url", "CGNAT"},
		{"media does not resolve", media("https://nx.example.com/a.pdf"), "media_url", "does not resolve"},
		{"header_url loopback", &chat.Request{To: "9876543210", Gateway: chat.GatewayCloud, TemplateName: "x",
			HeaderURL: "https://loop.example.com/h.png"}, "header_url", "loopback"},
		{"header_url http", &chat.Request{To: "9876543210", TemplateName: "x",
			HeaderURL: "http://cdn.example.com/h.png"}, "header_url", "https"},
		{"unknown gateway", ok(func(r *chat.Request) { r.Gateway = "sms" }), "gateway", "cloud, qr or auto"},
		{"unknown type", ok(func(r *chat.Request) { r.Type = "marketing" }), "type", "otp or promotional"},
		{"unknown action", ok(func(r *chat.Request) { r.Action = "unlock" }), "action", "login"},
		{"bad otp", &chat.Request{To: "9876543210", OTP: "12ab"}, "otp", "4 to 8 digits"},
		{"short otp", &chat.Request{To: "9876543210", OTP: "123"}, "otp", "4 to 8 digits"},
		{"cloud send without a template", &chat.Request{Gateway: chat.GatewayCloud, To: "9876543210",
			Language: "en_US", Variables: record.Vars{"1": "Asha"}}, "message", "is required"},
		{"nothing to send", &chat.Request{To: "9876543210"}, "message", "is required"},
		{"template_name on qr", &chat.Request{Gateway: chat.GatewayQR, To: "9876543210", TemplateName: "order_confirmed"},
			"template_name", "gateway cloud"},
		{"template_name named variables", &chat.Request{To: "9876543210", TemplateName: "order_confirmed",
			Variables: record.Vars{"NAME": "Asha"}}, "variables", "positional"},
		{"template_name gap", &chat.Request{To: "9876543210", TemplateName: "order_confirmed",
			Variables: record.Vars{"1": "Asha", "3": "x"}}, "variables", "without gaps"},
		{"template_name bad", &chat.Request{To: "9876543210", TemplateName: "Order Confirmed"}, "template_name", "lower-case"},
		{"unknown slug", &chat.Request{To: "9876543210", TemplateSlug: "order-confirmd"}, "template_slug", ""},
		{"slug missing variable", &chat.Request{To: "9876543210", TemplateSlug: "order-confirmed",
			Variables: record.Vars{"NAME": "Asha"}}, "variables.ORDER_ID", ""},
		{"otp contradicts variables.OTP", &chat.Request{To: "9876543210", TemplateSlug: "standard-otp", OTP: "1234",
			Variables: record.Vars{"OTP": "5678"}}, "otp", "differs"},
		{"bad number", ok(func(r *chat.Request) { r.To = "12345" }), "to", ""},
		{"no number", ok(func(r *chat.Request) { r.To = "" }), "to", "required"},
		{"bad language", ok(func(r *chat.Request) { r.Language = "english" }), "language", ""},
		{"file name with path", ok(func(r *chat.Request) {
			r.MediaURL, r.FileName = "https://cdn.example.com/a.pdf", "../../etc/passwd"
		}), "file_name", "without a path"},
		{"brand with newline", ok(func(r *chat.Request) { r.Brand = "Acme\nBank" }), "brand", ""},
		{"caption too long", ok(func(r *chat.Request) {
			r.MediaURL, r.Message = "https://cdn.example.com/a.pdf", strings.Repeat("x", 1025)
		}), "message", "caption"},
		{"message too long", ok(func(r *chat.Request) { r.Message = strings.Repeat("x", 4097) }), "message", "4096"},
		{"message blank", ok(func(r *chat.Request) { r.Message = "  \n" }), "message", "non-empty"},
	}
	r := newRig(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.ch.Prepare(context.Background(), account(""), tt.req)
			e, ok := err.(*notify.Error)
			if !ok || e.Code != notify.CodeInvalidArgument {
				t.Fatalf("Prepare = %v, want InvalidArgument", err)
			}
			found := false
			for _, f := range e.Fields {
				if f.Field == tt.field && strings.Contains(f.Message, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Fatalf("fields %+v, want %s containing %q", e.Fields, tt.field, tt.msg)
			}
			if tt.req.OTP != "" && strings.Contains(err.Error(), tt.req.OTP) {
				t.Errorf("the error repeats the OTP: %v", err)
			}
			if strings.Contains(err.Error(), "pass@") {
				t.Errorf("the error repeats the URL's password: %v", err)
			}
		})
	}
	if r.cloud.Len()+r.qr.Len() != 0 {
		t.Fatal("a bad request reached a provider")
	}
}

// TestBadInputEveryField: one request with several bad fields names each.
func TestBadInputEveryField(t *testing.T) {
	r := newRig(t, nil)
	_, err := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "1", Gateway: "x", Type: "y", Action: "z",
		MediaURL: "http://cdn.example.com/a.pdf"})
	for _, f := range []string{"to", "gateway", "type", "action", "media_url"} {
		if !hasField(err, f) {
			t.Errorf("%s not named in %v", f, err)
		}
	}
}

// TestVariablesShape: variables that are neither an object nor an array
// are refused when the request is decoded (record.Vars).
func TestVariablesShape(t *testing.T) {
	for _, raw := range []string{`"NAME=Asha"`, `42`, `true`, `{"NAME":{"first":"Asha"}}`, `[["Asha"]]`} {
		var v record.Vars
		if err := json.Unmarshal([]byte(raw), &v); err == nil {
			t.Errorf("variables %s decoded to %v", raw, v)
		}
	}
	for _, raw := range []string{`{"NAME":"Asha"}`, `["Asha","A-1042"]`, `[{"name":"NAME","value":"Asha"}]`} {
		var v record.Vars
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Errorf("variables %s: %v", raw, err)
		}
	}
}

func TestWrongRequestType(t *testing.T) {
	r := newRig(t, nil)
	if _, err := r.ch.Prepare(context.Background(), account(""), &sms.Request{To: "9876543210", Message: "hi"}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("SMS request: %v", err)
	}
	if _, err := r.ch.Deliver(context.Background(), &notify.Envelope{Kind: chat.Kind}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("empty envelope: %v", err)
	}
}

// FuzzPrepare: no input panics, and every failure is InvalidArgument.
func FuzzPrepare(f *testing.F) {
	f.Add("9876543210", "482915", "login", "Acme", "", "", "", "", "", "")
	f.Add("9876543210", "", "", "", "order-confirmed", "", "", "", "", "")
	f.Add("9876543210", "", "", "", "", "order_confirmed", "en_US", "https://cdn.example.com/h.png", "", "cloud")
	f.Add("+91 98765 43210", "", "", "", "", "", "", "", "https://cdn.example.com/a.pdf", "qr")
	f.Add("0", "1", "x", "\n", "../", "A B", "english", "http://x", "https://0x7f.1/", "auto")
	r := newRig(f, nil)
	f.Fuzz(func(t *testing.T, to, otp, action, brand, slug, name, lang, header, media, gateway string) {
		env, err := r.ch.Prepare(context.Background(), account(chat.GatewayCloud), &chat.Request{
			To: to, OTP: otp, Action: action, Brand: brand, TemplateSlug: slug, TemplateName: name, Language: lang,
			HeaderURL: header, MediaURL: media, Gateway: chat.Gateway(gateway), Message: "m",
		})
		if err != nil {
			if c := notify.CodeOf(err); c != notify.CodeInvalidArgument && c != notify.CodeUnavailable {
				t.Fatalf("code %s: %v", c, err)
			}
			return
		}
		if chat.MessageOf(env) == nil || env.Provider == "" || len(env.To) != 13 || env.Country != "IN" {
			t.Fatalf("incomplete envelope %+v", env)
		}
	})
}
