package email_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// The e-mail channel wired to the SMTP provider, which here talks to an
// in-process smtptest server as a development setup would.
func Example() {
	srv := smtptest.NewServer()
	defer srv.Close()
	provider, err := smtp.New(smtp.Config{Default: smtp.Server{
		Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone,
		From: "noreply@acme.example", FromName: "Acme",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer provider.Close()
	renderer, _ := template.New(nil)
	ch, err := email.New(email.Config{Provider: provider, Renderer: renderer})
	if err != nil {
		fmt.Println(err)
		return
	}
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()})
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(ch)) // unmetered

	rc, err := n.Send(context.Background(), &email.Request{
		Account: "acme",
		To:      "asha@example.com",
		Subject: "Welcome to Acme",
		Message: `<p>Hello Asha,</p><p>Start <a href="https://acme.example/start">here</a>.</p>`,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := srv.Messages()[0]
	fmt.Println(rc.Status, rc.Provider)
	fmt.Println(m.Header.Get("From"))
	fmt.Println(m.Header.Get("Subject"))
	// Output:
	// sent smtp
	// "Acme" <noreply@acme.example>
	// Welcome to Acme
}

func ExampleHTMLToText() {
	fmt.Println(email.HTMLToText(`<h1>Order shipped</h1>
<p>Your parcel is on its way &amp; arrives <b>Friday</b>.</p>
<ul><li>1 &times; Kettle</li><li>2 &times; Mug</li></ul>
<p><a href="https://acme.example/track/42">Track it</a></p>`))
	// Output:
	// Order shipped
	//
	// Your parcel is on its way & arrives Friday.
	//
	// - 1 × Kettle
	// - 2 × Mug
	//
	// Track it (https://acme.example/track/42)
}

func ExampleIsHTML() {
	fmt.Println(email.IsHTML("<p>Hi</p>"), email.IsHTML("Hi, 3 < 4"))
	// Output: true false
}

// Cc, bcc and an attachment given as bytes: every recipient is in the
// SMTP envelope and is priced as one unit; bcc shows in no header.
func ExampleRequest_attachments() {
	srv := smtptest.NewServer()
	defer srv.Close()
	provider, err := smtp.New(smtp.Config{Default: smtp.Server{
		Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone, From: "billing@acme.example",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer provider.Close()
	ch, _ := email.New(email.Config{Provider: provider})
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()})
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(ch))

	rc, err := n.Send(context.Background(), &email.Request{
		Account: "acme", To: "asha@example.com", Subject: "Invoice 42", Message: "Your invoice is attached.",
		Cc:  []string{"accounts@example.com"},
		Bcc: []string{"audit@acme.example"},
		Attachments: []email.Attachment{
			{FileName: "INV-42.pdf", Data: []byte("%PDF-1.4 ...")},
			// {URL: "https://files.acme.example/INV-42.pdf"} would be
			// fetched by the provider when it sends.
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := srv.Messages()[0]
	files, _ := m.Attachments()
	fmt.Println("units:", rc.Units)
	fmt.Println("RCPT TO:", m.To)
	fmt.Println("Cc:", m.Header.Get("Cc"), "| Bcc header:", m.Header.Get("Bcc") != "")
	fmt.Println("file:", files[0].FileName, files[0].ContentType, len(files[0].Data), "bytes")
	// Output:
	// units: 3
	// RCPT TO: [asha@example.com accounts@example.com audit@acme.example]
	// Cc: <accounts@example.com> | Bcc header: false
	// file: INV-42.pdf application/pdf 12 bytes
}
