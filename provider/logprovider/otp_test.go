package logprovider_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// TestNoCodeInTheLog sends one-time codes every way a request can carry
// them (declared, or as a template variable), through the real channels
// into the log provider, and finds none of them in the log.
func TestNoCodeInTheLog(t *testing.T) {
	buf := &lockedBuffer{}
	p := logprovider.New(slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "log")
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: p, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: p, QR: p, Renderer: renderer, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	emailCh, err := email.New(email.Config{Provider: p, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	account := &notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}
	vars := record.Vars{"OTP": code}
	for _, tc := range []struct {
		ch  notify.Channel
		req notify.Request
	}{
		{smsCh, &sms.Request{To: "9876543210", Message: code, Route: sms.RouteOTP}},
		{smsCh, &sms.Request{To: "9876543210", TemplateSlug: "standard-otp", Variables: vars}},
		{chatCh, &chat.Request{To: "9876543210", OTP: code, Gateway: chat.GatewayQR}},
		{chatCh, &chat.Request{To: "9876543210", OTP: code, Gateway: chat.GatewayCloud}},
		{chatCh, &chat.Request{To: "9876543210", TemplateSlug: "standard-otp", Variables: vars, Gateway: chat.GatewayQR}},
		{chatCh, &chat.Request{To: "9876543210", TemplateSlug: "standard-otp", Variables: vars, Gateway: chat.GatewayCloud}},
		{emailCh, &email.Request{To: "riya@example.com", TemplateSlug: "standard-otp", Variables: vars}},
	} {
		env, err := tc.ch.Prepare(context.Background(), account, tc.req)
		if err != nil {
			t.Fatalf("%T %+v: %v", tc.req, tc.req, err)
		}
		env.Account = account
		if _, err := tc.ch.Deliver(context.Background(), env); err != nil {
			t.Fatal(err)
		}
	}
	out := buf.String()
	if n := strings.Count(out, "\n"); n != 7 {
		t.Fatalf("%d records, want 7:\n%s", n, out)
	}
	if strings.Contains(out, code) {
		t.Fatalf("the log shows the code:\n%s", out)
	}
}

// TestNoDeclaredMailCodeInTheLog: an e-mail that declares a code of 10
// digits (longer than the runs taken for codes undeclared), in its subject
// and body, through the real channel: the log has the subject's words
// but not the code, in either mode, whatever the purpose.
func TestNoDeclaredMailCodeInTheLog(t *testing.T) {
	const long = "4829135521"
	for _, mode := range []logprovider.Mode{logprovider.Dev, logprovider.Production} {
		for _, purpose := range []email.Purpose{"", email.PurposeOTP, email.PurposeNotification} {
			buf := &lockedBuffer{}
			p := logprovider.New(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "log", logprovider.WithMode(mode))
			ch, err := email.New(email.Config{Provider: p})
			if err != nil {
				t.Fatal(err)
			}
			env, err := ch.Prepare(context.Background(), &notify.Account{ID: "acme"}, &email.Request{
				To: "riya@example.com", Subject: long + " is your Acme code", OTP: long, Purpose: purpose,
				Message: "<p>Enter <b>" + long + "</b> to sign in.</p>"})
			if err != nil {
				t.Fatal(err)
			}
			env.ID = "m1"
			if _, err := ch.Deliver(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Count(out, "\n") != 1 || strings.Contains(out, long) {
				t.Errorf("%s, purpose %q: the log shows the code, or is not one record:\n%s", mode, purpose, out)
			}
			want := []string{"email.otp=" + logprovider.Mask, "email.text_len=", "message_id=m1"}
			if mode == logprovider.Dev {
				want = append(want, `email.subject="`+logprovider.Mask+` is your Acme code"`)
			} else {
				want = append(want, "email.subject="+logprovider.Withheld)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s, purpose %q: %q is missing:\n%s", mode, purpose, w, out)
				}
			}
		}
	}
}
