package smtp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
)

// encryptions are the ways to reach an smtptest server, each with the
// option that makes the server speak it.
var encryptions = []struct {
	name string
	opts []smtptest.Option
	enc  smtp.Encryption
}{
	{"none", nil, smtp.EncryptionNone},
	{"starttls", []smtptest.Option{smtptest.WithStartTLS()}, smtp.EncryptionSTARTTLS},
	{"implicit", []smtptest.Option{smtptest.WithImplicitTLS()}, smtp.EncryptionImplicitTLS},
}

// headerSection returns the message's header section, without the body.
func headerSection(m smtptest.Message) string {
	h, _, _ := strings.Cut(string(m.Data), "\r\n\r\n")
	return h
}

// TestIDNDomainsGoInASCII: internationalised domains (in To, Reply-To,
// the configured From and unsubscribe address) reach a relay without
// SMTPUTF8 as A-labels, in the envelope (which such a relay refuses in
// Unicode, 553 5.6.7) and in the headers, so the message is well-formed
// there.
func TestIDNDomainsGoInASCII(t *testing.T) {
	for _, e := range encryptions {
		t.Run(e.name, func(t *testing.T) {
			srv := startServer(t, e.opts...) // no SMTPUTF8
			cfg := serverConfig(srv, e.enc)
			cfg.From = "noreply@Bücher.example"
			cfg.ListUnsubscribeMailto = "mailto:unsubscribe@bücher.example?subject=stop"
			p := newProvider(t, smtp.Config{Default: cfg})
			env := htmlEnvelope("asha@उदाहरण.भारत", email.PurposeInvoice)
			env.ID = "idn-1"
			email.MessageOf(env).ReplyTo = "desk@bücher.example"
			res := send(t, p, env)

			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("server got %d messages", len(msgs))
			}
			m := msgs[0]
			if m.From != "noreply@xn--bcher-kva.example" || len(m.To) != 1 || m.To[0] != "asha@xn--p1b6ci4b4b3a.xn--h2brj9c" {
				t.Errorf("envelope MAIL FROM %q, RCPT TO %q; want the domains as A-labels", m.From, m.To)
			}
			if m.UTF8 {
				t.Error("the transaction asked for SMTPUTF8, which the server does not offer")
			}
			h := parse(t, m).msg.Header
			for _, tc := range []struct{ name, want string }{
				{"From", "noreply@xn--bcher-kva.example"},
				{"To", "asha@xn--p1b6ci4b4b3a.xn--h2brj9c"},
				{"Reply-To", "desk@xn--bcher-kva.example"},
			} {
				list, err := h.AddressList(tc.name)
				if err != nil || len(list) != 1 || list[0].Address != tc.want {
					t.Errorf("%s: %q, want %s", tc.name, h.Get(tc.name), tc.want)
				}
			}
			if res.ProviderMessageID != "idn-1@xn--bcher-kva.example" {
				t.Errorf("ProviderMessageID %q, want the Message-ID in the From domain's ASCII form", res.ProviderMessageID)
			}
			// Campaign mail adds the configured unsubscribe address.
			send(t, p, htmlEnvelope("asha@उदाहरण.भारत", email.PurposeCampaign))
			msgs = srv.Messages()
			if len(msgs) != 2 {
				t.Fatalf("server got %d messages", len(msgs))
			}
			if got := parse(t, msgs[1]).msg.Header.Get("List-Unsubscribe"); got != "<mailto:unsubscribe@xn--bcher-kva.example?subject=stop>" {
				t.Errorf("List-Unsubscribe %q, want the mailto domain as A-labels", got)
			}
			for _, m := range msgs {
				for i, c := range []byte(headerSection(m)) {
					if c >= 0x80 {
						t.Fatalf("header byte %d is not ASCII: %q", i, headerSection(m))
					}
				}
			}
		})
	}
}

// TestNonASCIILocalPart: an address whose local part is not ASCII goes
// through a relay that offers SMTPUTF8, with SMTPUTF8 in MAIL FROM; a
// relay without it gets nothing: the send is refused before MAIL FROM,
// naming the field and the missing extension, and the connection carries
// the next message.
func TestNonASCIILocalPart(t *testing.T) {
	const to = "रमेश@उदाहरण.भारत"
	for _, e := range encryptions {
		t.Run(e.name, func(t *testing.T) {
			t.Run("relay with SMTPUTF8", func(t *testing.T) {
				srv := startServer(t, append([]smtptest.Option{smtptest.WithSMTPUTF8()}, e.opts...)...)
				p := newProvider(t, smtp.Config{Default: serverConfig(srv, e.enc)})
				env := htmlEnvelope(to, email.PurposeOTP)
				email.MessageOf(env).ReplyTo = "डेस्क@bücher.example"
				send(t, p, env)
				msgs := srv.Messages()
				if len(msgs) != 1 {
					t.Fatalf("server got %d messages", len(msgs))
				}
				m := msgs[0]
				if !m.UTF8 || len(m.To) != 1 || m.To[0] != "रमेश@xn--p1b6ci4b4b3a.xn--h2brj9c" {
					t.Errorf("SMTPUTF8 %v, RCPT TO %q; want SMTPUTF8 and the domain as A-labels", m.UTF8, m.To)
				}
				h := parse(t, m).msg.Header
				if list, err := h.AddressList("To"); err != nil || len(list) != 1 || list[0].Address != m.To[0] {
					t.Errorf("To: %q (%v), want %s", h.Get("To"), err, m.To[0])
				}
				if list, err := h.AddressList("Reply-To"); err != nil || len(list) != 1 || list[0].Address != "डेस्क@xn--bcher-kva.example" {
					t.Errorf("Reply-To: %q (%v)", h.Get("Reply-To"), err)
				}
			})
			t.Run("relay without SMTPUTF8", func(t *testing.T) {
				srv := startServer(t, e.opts...)
				p := newProvider(t, smtp.Config{Default: serverConfig(srv, e.enc)})
				for _, tc := range []struct {
					field string
					edit  func(*notify.Envelope)
				}{
					{"to", func(env *notify.Envelope) { env.To = to }},
					{"reply_to", func(env *notify.Envelope) { email.MessageOf(env).ReplyTo = "डेस्क@example.com" }},
				} {
					env := htmlEnvelope("asha@example.com", email.PurposeOTP)
					tc.edit(env)
					err := sendErr(t, p, env)
					var ne *notify.Error
					if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 ||
						ne.Fields[0].Field != tc.field || !strings.Contains(ne.Fields[0].Message, "does not offer SMTPUTF8") {
						t.Errorf("%s: %v, want InvalidArgument on %s saying the relay lacks SMTPUTF8", tc.field, err, tc.field)
					}
					if notify.OutcomeOf(err) != record.StateFailed {
						t.Errorf("%s: outcome %v, want not accepted", tc.field, notify.OutcomeOf(err))
					}
				}
				if srv.Received() != 0 {
					t.Errorf("the server got %d messages", srv.Received())
				}
				send(t, p, htmlEnvelope("asha@example.com", email.PurposeOTP))
				if srv.Received() != 1 || srv.Connections() != 1 {
					t.Errorf("%d messages over %d connections, want the next message on the same connection", srv.Received(), srv.Connections())
				}
			})
			t.Run("From, relay without SMTPUTF8", func(t *testing.T) {
				srv := startServer(t, e.opts...)
				cfg := serverConfig(srv, e.enc)
				cfg.From = "सूचना@shop.example"
				p := newProvider(t, smtp.Config{Default: cfg})
				err := sendErr(t, p, htmlEnvelope("asha@example.com", email.PurposeOTP))
				if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "From") || !strings.Contains(err.Error(), "does not offer SMTPUTF8") {
					t.Errorf("%v (code %q), want Rejected naming From and SMTPUTF8", err, notify.CodeOf(err))
				}
				if srv.Received() != 0 {
					t.Errorf("the server got %d messages", srv.Received())
				}
			})
		})
	}
}
