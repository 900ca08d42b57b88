package smtp_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// DKIM signing of campaign mail with one-click unsubscribe. The key is
// made once, with for instance
//
//	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out dkim.pem
//
// and its public half published as the TXT record
// s2025._domainkey.acme.example: "v=DKIM1; k=rsa; p=<base64 PKIX key>"
// (openssl pkey -in dkim.pem -pubout prints it between the PEM lines).
// The key, like the unsubscribe secret, comes from a secret store in a
// real setup.
func ExampleDKIM() {
	key, err := os.ReadFile("testdata/dkim-test-rsa2048.pem") // a key for tests only
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := smtptest.NewServer()
	defer srv.Close()

	p, err := smtp.New(smtp.Config{Default: smtp.Server{
		Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone, // a relay with TLS in a real setup
		From: "news@acme.example", FromName: "Acme",
		Helo:               "mta1.acme.example",
		ListUnsubscribeURL: "https://acme.example/unsubscribe?t={token}",
		UnsubscribeSecret:  []byte("example-secret-do-not-use-0123456789"),
		DKIM: smtp.DKIM{
			Domain:     "acme.example", // the From domain, or a parent of it
			Selector:   "s2025",
			PrivateKey: key,
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Send(ctx, &notify.Envelope{ID: "msg-1", To: "asha@example.com",
		Content: &email.Message{Purpose: email.PurposeCampaign, Subject: "Monsoon sale", Text: "20% off."}})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := srv.Messages()[0]
	sig := strings.Join(strings.Fields(m.Header.Get("DKIM-Signature")), "")
	for _, tag := range strings.Split(sig, ";") {
		if k, v, _ := strings.Cut(tag, "="); k == "d" || k == "s" || k == "h" {
			fmt.Printf("%s=%s\n", k, v)
		}
	}
	fmt.Println("EHLO", m.Helo)
	// Output:
	// s=s2025
	// d=acme.example
	// h=from:to:subject:date:message-id:mime-version:content-type:content-transfer-encoding:list-unsubscribe:list-unsubscribe-post
	// EHLO mta1.acme.example
}
