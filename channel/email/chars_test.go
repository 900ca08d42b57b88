package email_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
)

// TestInvisibleCharacters: addresses refuse control, format, space-like
// and bidirectional characters anywhere, naming the field and the rule;
// internationalised addresses pass. Through the whole stack, the
// look-alike address never reaches the SMTP server and nothing is
// charged: before this rule, the server took
// "victim@exa\u00a0mple.com" for a mailbox that the receipt did not
// name.
func TestInvisibleCharacters(t *testing.T) {
	c := newChannel(t)
	ok := email.Request{To: "a@example.com", Subject: "Hello", Message: "Hi"}
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *email.Request)
	}{
		{"NBSP in to", "to", "space characters (U+00A0", func(r *email.Request) { r.To = "victim@exa\u00a0mple.com" }},
		{"NBSP at the edge of to", "to", "space characters (U+00A0", func(r *email.Request) { r.To = "victim@example.com\u00a0" }},
		{"zero-width space in to", "to", "invisible format characters (U+200B", func(r *email.Request) { r.To = "vic\u200btim@example.com" }},
		{"line separator in to", "to", "line or paragraph separators (U+2028", func(r *email.Request) { r.To = "victim@example.com\u2028" }},
		{"RLO in to", "to", "bidirectional control characters (U+202E", func(r *email.Request) { r.To = "victim\u202e@example.com" }},
		{"isolate in to", "to", "bidirectional control characters (U+2066", func(r *email.Request) { r.To = "victim@\u2066example.com" }},
		{"ALM in to", "to", "bidirectional control characters (U+061C", func(r *email.Request) { r.To = "victim@example.com\u061c" }},
		{"tab in to", "to", "control characters (U+0009", func(r *email.Request) { r.To = "victim@example.com\t" }},
		{"NBSP in reply_to", "reply_to", "space characters (U+00A0", func(r *email.Request) { r.ReplyTo = "desk@exa\u00a0mple.com" }},
		{"LRM in reply_to", "reply_to", "bidirectional control characters (U+200E", func(r *email.Request) { r.ReplyTo = "desk\u200e@example.com" }},
		{"encoded word in from_name", "from_name", "encoded word", func(r *email.Request) { r.FromName = "=?utf-8?q?x=0D=0ABcc:evil@example.com?=" }},
		{"encoded word in from_name, upper case", "from_name", "encoded word", func(r *email.Request) { r.FromName = "Acme =?UTF-8?B?QmNjOiBldmlsQGV4YW1wbGUuY29t?=" }},
		{"RLO in from_name", "from_name", "bidirectional control characters (U+202E", func(r *email.Request) { r.FromName = "Acme\u202eknaB" }},
		{"zero-width space in from_name", "from_name", "invisible format characters (U+200B", func(r *email.Request) { r.FromName = "Ac\u200bme" }},
		{"tab in from_name", "from_name", "control characters", func(r *email.Request) { r.FromName = "Acme\tBank" }},
		// Internationalised domains must be ones IDNA accepts: the relay
		// gets their ASCII form.
		{"bad IDN domain in to", "to", "valid internationalised domain name", func(r *email.Request) { r.To = "asha@bücher-.example" }},
		{"undecodable A-label in to", "to", "valid internationalised domain name", func(r *email.Request) { r.To = "asha@xn--zz.example" }},
		{"bad IDN domain in reply_to", "reply_to", "valid internationalised domain name", func(r *email.Request) { r.ReplyTo = "desk@bü_cher.example" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			tc.edit(&req)
			env, err := c.Prepare(context.Background(), testAcct, &req)
			if err == nil {
				t.Fatalf("Prepare accepted it: %+v", env)
			}
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 ||
				ne.Fields[0].Field != tc.field || !strings.Contains(ne.Fields[0].Message, tc.want) {
				t.Errorf("got %v, want InvalidArgument on %s saying %q", err, tc.field, tc.want)
			}
		})
	}
	for _, to := range []string{"user@bücher.example", "user@例え.jp", "अजय@example.in"} {
		req := ok
		req.To, req.ReplyTo, req.FromName = to, to, "मेरी दुकान\u00a0Store"
		env := prepare(t, c, &req)
		if env.To != to || email.MessageOf(env).ReplyTo != to {
			t.Errorf("IDN address %q became to %q, reply_to %q", to, env.To, email.MessageOf(env).ReplyTo)
		}
	}
}

func TestLookAlikeAddressNeverSent(t *testing.T) {
	s := newStack(t)
	_, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "victim@exa\u00a0mple.com", Subject: "Your receipt", Message: "Hello",
	})
	var ne *notify.Error
	if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "to" ||
		!strings.Contains(ne.Fields[0].Message, "U+00A0") {
		t.Fatalf("SendEmail: %v, want InvalidArgument on to naming U+00A0", err)
	}
	if b := s.balance(t); b != opening {
		t.Errorf("balance %d, want %d", b, opening)
	}
	if s.srv.Received() != 0 || s.srv.Connections() != 0 {
		t.Error("the look-alike address reached the SMTP server")
	}
}
