package smtp_test

import (
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []smtptest.Option
		enc  smtp.Encryption
	}{
		{"plain", nil, smtp.EncryptionNone},
		{"starttls-auth", []smtptest.Option{smtptest.WithStartTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionSTARTTLS},
		{"implicit-tls-auth", []smtptest.Option{smtptest.WithImplicitTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionImplicitTLS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tc.opts...)
			cfg := serverConfig(srv, tc.enc)
			if tc.enc != smtp.EncryptionNone {
				cfg.Username, cfg.Password = "mailer", testPassword
			}
			p := newProvider(t, smtp.Config{Default: cfg})
			providertest.Run(t, providertest.Harness{
				Provider: p,
				Envelope: func(i int) *notify.Envelope {
					return htmlEnvelope(fmt.Sprintf("user%d@example.com", i), email.PurposeNotification)
				},
				Secrets: []string{testPassword},
				FailNext: func(f providertest.Failure) bool {
					switch f {
					case providertest.Temporary:
						srv.RejectNext(451, "4.3.0 Try again later")
					case providertest.Permanent:
						srv.RejectNext(550, "5.7.1 Message refused")
					default:
						return false // SMTP has no rate-limit reply of its own
					}
					return true
				},
				SetLatency: srv.SetLatency,
				Received:   srv.Received,
			})
		})
	}
}
