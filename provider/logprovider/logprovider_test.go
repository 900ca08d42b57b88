package logprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/syncbuf"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/record"
)

// lockedBuffer is the log, safe for the concurrent sends of the
// conformance suite.
type lockedBuffer struct{ syncbuf.Buffer }

// Lines counts the log's lines.
func (l *lockedBuffer) Lines() int { return strings.Count(l.String(), "\n") }

func newLogged(t *testing.T) (*logprovider.Provider, *lockedBuffer) {
	t.Helper()
	buf := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	return logprovider.New(logger, "log"), buf
}

// dropTime leaves the time out of a record, so that a secret's absence is
// checked against what the provider wrote: a timestamp's nanoseconds may
// spell a code by chance.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// record decodes the only log record in buf.
func recordOf(t *testing.T, buf *lockedBuffer) map[string]any {
	t.Helper()
	out := buf.String()
	if n := strings.Count(out, "\n"); n != 1 {
		t.Fatalf("want one record, got %d:\n%s", n, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("record is not JSON: %v\n%s", err, out)
	}
	return m
}

// field returns the value at a dotted path of a decoded record.
func field(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

const code = "482915"

var acct = &notify.Account{ID: "acct-1", Settings: sms.Settings{SenderID: "NTFYKT"}.Map()}

func TestRecords(t *testing.T) {
	tests := []struct {
		name   string
		env    *notify.Envelope
		want   map[string]any // dotted path -> value (numbers as float64)
		absent []string       // must not appear anywhere in the record
	}{
		{
			name: "sms otp route",
			env: &notify.Envelope{
				ID: "m-1", Kind: sms.Kind, To: "9876543210", Account: acct, Units: 1,
				Content: &sms.Message{
					Route: sms.RouteOTP, OTP: code, SenderID: "NTFYKT",
					Text: code + " is your code. Do not share " + code + ".", Encoding: sms.GSM7, Segments: 1,
				},
			},
			want: map[string]any{
				"level": "INFO", "kind": "sms", "to": "98xxxxxx10", "provider": "log",
				"provider_message_id": "log-1", "message_id": "m-1", "account": "acct-1", "units": 1.0,
				"sms.route": "otp", "sms.sender_id": "NTFYKT", "sms.otp": "******",
				"sms.text": "****** is your code. Do not share ******.", "sms.text_len": 41.0,
				"sms.segments": 1.0, "sms.encoding": "gsm7",
			},
			absent: []string{code, "9876543210"},
		},
		{
			name: "sms dlt route with an undeclared code",
			env: &notify.Envelope{
				Kind: sms.Kind, To: "9876543210",
				Content: &sms.Message{
					Route: sms.RouteDLT, Text: "Dear user, 7731 is your OTP for order 98765432101.",
					DLTTemplateID: "1107000000000000001", DLTEntityID: "1101000000000000001",
					DLTValues: []string{"7731", "98765432101"},
				},
			},
			want: map[string]any{
				"sms.route": "dlt", "sms.text": "Dear user, ****** is your OTP for order 98765432101.",
				"sms.dlt_template_id": "1107000000000000001", "sms.dlt_entity_id": "1101000000000000001",
				"sms.dlt_values": []any{"******", "98765432101"},
			},
			absent: []string{"7731"},
		},
		{
			name: "sms route keeps ordinary numbers",
			env: &notify.Envelope{
				Kind: sms.Kind, To: "9876543210",
				Content: &sms.Message{Route: sms.RouteSMS, Text: "Order 4711 shipped."},
			},
			want: map[string]any{"sms.text": "Order 4711 shipped."},
		},
		{
			name: "email otp purpose",
			env: &notify.Envelope{
				Kind: email.Kind, To: "riya@example.com",
				Content: &email.Message{
					Purpose: email.PurposeOTP, Subject: "Your code " + code, ReplyTo: "help@example.com",
					HTML: "<p>Use " + code + "</p>", Text: "Use " + code,
				},
			},
			want: map[string]any{
				"kind": "email", "to": "r***@example.com", "email.purpose": "otp",
				"email.subject": "Your code ******", "email.html_len": 17.0, "email.text_len": 10.0,
				"email.reply_to": "h***@example.com",
			},
			absent: []string{code, "riya", "Use"},
		},
		{
			name: "chat template with otp",
			env: &notify.Envelope{
				Kind: chat.Kind, To: "9876543210",
				Content: &chat.Message{
					Gateway: chat.GatewayCloud, Type: chat.TypeOTP, OTP: code, Auto: true,
					Template: &chat.Template{
						Name: "otp_login", Language: "en_US", Params: []string{code, "Acme"},
						HeaderURL: "https://cdn.example.com/h.png?sig=topsecret", HeaderKind: chat.MediaImage,
					},
				},
			},
			want: map[string]any{
				"chat.gateway": "cloud", "chat.type": "otp", "chat.otp": "******", "chat.auto": true,
				"chat.template.name": "otp_login", "chat.template.params": []any{"******", "Acme"},
				"chat.template.header_url": "https://cdn.example.com/h.png",
			},
			absent: []string{code, "topsecret"},
		},
		{
			name: "chat media",
			env: &notify.Envelope{
				Kind: chat.Kind, To: "9876543210",
				Content: &chat.Message{
					Gateway: chat.GatewayQR, Text: "Invoice attached",
					Media: &chat.Media{
						URL: "https://user:pw@files.example.com/inv.pdf?token=abc#x", Kind: chat.MediaDocument,
						FileName: "inv.pdf", MIMEType: "application/pdf",
					},
				},
			},
			want: map[string]any{
				"chat.text": "Invoice attached", "chat.media.url": "https://files.example.com/inv.pdf",
				"chat.media.kind": "document", "chat.media.file_name": "inv.pdf",
			},
			absent: []string{"token=abc", "pw@"},
		},
		{
			name: "no content",
			env:  &notify.Envelope{Kind: sms.Kind, To: "9876543210"},
			want: map[string]any{"kind": "sms", "to": "98xxxxxx10", "sms": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := newLogged(t)
			res, err := p.Send(t.Context(), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProviderMessageID != "log-1" || res.Provider != "log" {
				t.Errorf("Result = %+v, want log-1 from log", res)
			}
			m := recordOf(t, buf)
			for path, want := range tt.want {
				got := field(m, path)
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s = %s, want %s", path, gj, wj)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(buf.String(), s) {
					t.Errorf("record contains %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

func TestSendErrors(t *testing.T) {
	p, buf := newLogged(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// Nothing is logged, so the vendor certainly has nothing: the errors
	// must say so, or the Notifier would keep the charge.
	_, err := p.Send(ctx, &notify.Envelope{Kind: sms.Kind})
	if !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable || notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("canceled: %v (code %q), want unavailable wrapping context.Canceled", err, notify.CodeOf(err))
	}
	dctx, dcancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer dcancel()
	_, err = p.Send(dctx, &notify.Envelope{Kind: sms.Kind})
	if !errors.Is(err, context.DeadlineExceeded) || notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("expired: %v (code %q), want a certain refusal wrapping context.DeadlineExceeded", err, notify.CodeOf(err))
	}
	if _, err := p.Send(t.Context(), nil); notify.CodeOf(err) != notify.CodeInvalidArgument || notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("nil envelope: %v, want invalid_argument", err)
	}
	if buf.Lines() != 0 {
		t.Errorf("failed sends were logged:\n%s", buf.String())
	}
}

func TestDisabledLevel(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p := logprovider.New(logger, "")
	if p.Name() != "logprovider" {
		t.Errorf(`New(l, "").Name() = %q, want "logprovider"`, p.Name())
	}
	res, err := p.Send(t.Context(), &notify.Envelope{Kind: sms.Kind, To: "9876543210"})
	if err != nil || res.ProviderMessageID != "log-1" {
		t.Fatalf("Send = %+v, %v; want log-1", res, err)
	}
	if buf.Len() != 0 {
		t.Errorf("logged below the handler's level: %s", buf.String())
	}
}

func TestMaskRecipient(t *testing.T) {
	tests := []struct{ in, want string }{
		{"9876543210", "98xxxxxx10"},
		{"+919876543210", "+9xxxxxxxxx10"},
		{"12345", "12x45"},
		{"1234", "xxxx"},
		{"", ""},
		{"riya@example.com", "r***@example.com"},
		{"@example.com", "***@example.com"},
		{"élan@example.com", "é***@example.com"},
		{"रिया@example.com", "र***@example.com"},
	}
	for _, tt := range tests {
		if got := logprovider.MaskRecipient(tt.in); got != tt.want {
			t.Errorf("MaskRecipient(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		text, otp string
		digits    bool
		want      string
	}{
		{"code 1234", "1234", false, "code ******"},
		{"1234 and 1234", "1234", false, "****** and ******"},
		{"no code here", "", false, "no code here"},
		{"call 9876543210 or use 5678", "", true, "call 9876543210 or use ******"},
		{"123 12345678 123456789", "", true, "123 ****** 123456789"},
		{"a1234b", "", true, "a******b"},
		{"₹1500 paid", "", true, "₹****** paid"},
		{"4711", "", false, "4711"},
	}
	for _, tt := range tests {
		if got := logprovider.Redact(tt.text, tt.otp, tt.digits); got != tt.want {
			t.Errorf("Redact(%q, %q, %v) = %q, want %q", tt.text, tt.otp, tt.digits, got, tt.want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("your code is 482915", "482915", false)
	f.Add("4829154829", "4829", true)
	f.Add("ज़रूरी 1234 कोड", "1234", true)
	f.Add("", "", false)
	f.Fuzz(func(t *testing.T, text, otp string, digits bool) {
		got := logprovider.Redact(text, otp, digits)
		if otp != "" && !strings.Contains(logprovider.Mask, otp) && strings.Contains(got, otp) {
			t.Errorf("Redact(%q, %q) = %q still holds the code", text, otp, got)
		}
		if digits {
			for _, run := range strings.FieldsFunc(got, func(r rune) bool { return r < '0' || r > '9' }) {
				if n := len(run); n >= 4 && n <= 8 {
					t.Errorf("Redact(%q, digits) = %q keeps the run %q", text, got, run)
				}
			}
		}
	})
}

func FuzzMaskRecipient(f *testing.F) {
	f.Add("9876543210")
	f.Add("riya@example.com")
	f.Add("\xff\xfe@x")
	f.Fuzz(func(t *testing.T, to string) {
		got := logprovider.MaskRecipient(to)
		if strings.Contains(to, "@") {
			domain := to[strings.LastIndex(to, "@")+1:]
			if !strings.HasSuffix(got, "***@"+domain) {
				t.Errorf("MaskRecipient(%q) = %q, want the local part masked and the domain kept", to, got)
			}
			return
		}
		in, out := []rune(to), []rune(got)
		if len(out) != len(in) {
			t.Fatalf("MaskRecipient(%q) = %q changes the length", to, got)
		}
		hidden := out
		if len(in) > 4 {
			hidden = out[2 : len(out)-2]
		}
		if strings.Trim(string(hidden), "x") != "" {
			t.Errorf("MaskRecipient(%q) = %q leaves part of the middle visible", to, got)
		}
	})
}
