package smtp_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// A provider with a default configuration and a dedicated one for
// campaigns, both pointed at an smtptest server here (a real setup names
// its relays, ports and logins).
func Example() {
	srv := smtptest.NewServer(smtptest.WithStartTLS(), smtptest.WithAuth("mailer", "app-password"))
	defer srv.Close()

	relay := smtp.Server{
		Host: srv.Host, Port: srv.Port,
		Encryption: smtp.EncryptionSTARTTLS,
		TLSConfig:  srv.ClientTLSConfig(), // trust the test certificate
		Username:   "mailer", Password: "app-password",
		From: "noreply@acme.example", FromName: "Acme",
	}
	bulk := relay
	bulk.From = "news@acme.example"
	bulk.ListUnsubscribeURL = "https://acme.example/unsubscribe?t={token}" // see ExampleVerifyUnsubscribeToken
	bulk.UnsubscribeSecret = []byte("example-secret-do-not-use-0123456789")
	bulk.ListUnsubscribeMailto = "unsubscribe@acme.example"

	p, err := smtp.New(smtp.Config{
		Default:  relay,
		Purposes: map[email.Purpose]smtp.Server{email.PurposeCampaign: bulk},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, purpose := range []email.Purpose{email.PurposeOTP, email.PurposeCampaign} {
		_, err := p.Send(ctx, &notify.Envelope{
			ID: "msg-" + string(purpose), Kind: email.Kind, To: "asha@example.com",
			Content: &email.Message{Purpose: purpose, Subject: "Hello", Text: "Hello Asha."},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, m := range srv.Messages() {
		fmt.Printf("%s from %s, over TLS %v, List-Unsubscribe %q\n",
			m.Header.Get("Message-ID"), m.From, m.TLS, m.Header.Get("List-Unsubscribe"))
	}
	fmt.Println("connections:", srv.Connections())
	// Output:
	// <msg-otp@acme.example> from noreply@acme.example, over TLS true, List-Unsubscribe ""
	// <msg-campaign@acme.example> from news@acme.example, over TLS true, List-Unsubscribe "<https://acme.example/unsubscribe?t=AV1U2mINXzVz650HOxBb-Qh6mP_li6V_PEEIA5UIy8mL>, <mailto:unsubscribe@acme.example>"
	// connections: 1
}
