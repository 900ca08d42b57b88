package smtp_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
)

const testPassword = "s3cret-Passw0rd"

// startServer starts an smtptest server stopped at the end of the test.
func startServer(t testing.TB, opts ...smtptest.Option) *smtptest.Server {
	t.Helper()
	srv := smtptest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// serverConfig points a Server configuration at srv.
func serverConfig(srv *smtptest.Server, enc smtp.Encryption) smtp.Server {
	return smtp.Server{
		Host:       srv.Host,
		Port:       srv.Port,
		Encryption: enc,
		TLSConfig:  srv.ClientTLSConfig(),
		From:       "noreply@shop.example",
		FromName:   "Shop",
	}
}

// newProvider returns a provider closed at the end of the test.
func newProvider(t testing.TB, cfg smtp.Config) *smtp.Provider {
	t.Helper()
	p, err := smtp.New(cfg)
	if err != nil {
		t.Fatalf("smtp.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// htmlBody is about 1 KB of HTML.
var htmlBody = "<html><body><h1>Your order has shipped</h1>" +
	strings.Repeat("<p>Thank you for shopping with us. Your parcel is on its way and will arrive soon.</p>\n", 10) +
	"<p><a href=\"https://shop.example/track\">Track it</a></p></body></html>"

func htmlEnvelope(to string, purpose email.Purpose) *notify.Envelope {
	return &notify.Envelope{
		Kind:     email.Kind,
		To:       to,
		Provider: "smtp",
		Units:    1,
		Class:    record.Transactional,
		Account:  &notify.Account{ID: "acct-1", Name: "Shop"},
		Content: &email.Message{
			Purpose: purpose,
			Subject: "Your order has shipped",
			HTML:    htmlBody,
			Text:    "Your order has shipped. Track it (https://shop.example/track)",
		},
	}
}
