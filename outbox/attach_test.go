package outbox_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

func ccEnvelope() *notify.Envelope {
	return &notify.Envelope{ID: "m9", Kind: email.Kind, Account: acct, To: "asha@example.com", Provider: "smtp",
		Content: &email.Message{Subject: "Minutes", Text: "See the minutes.",
			Cc: []string{"ravi@example.com"}, Bcc: []string{"audit@example.org"},
			Attachments: []email.Attachment{
				{FileName: "minutes.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 minutes")},
				{FileName: "plan.pdf", ContentType: "application/pdf", URL: "https://files.example.com/plan.pdf?token=s3cr3t"},
			}}}
}

func TestPreparedMailShowsCcBccAndFiles(t *testing.T) {
	o := newOutbox(t)
	accept(o, ccEnvelope())
	m, ok := o.Message("m9")
	if !ok || m.Email == nil {
		t.Fatalf("not kept: %+v", m)
	}
	e := m.Email
	if !slices.Equal(e.Cc, []string{"ravi@example.com"}) || !slices.Equal(e.Bcc, []string{"audit@example.org"}) {
		t.Errorf("cc %v bcc %v", e.Cc, e.Bcc)
	}
	want := []outbox.Attachment{
		{FileName: "minutes.pdf", ContentType: "application/pdf", Size: 16},
		{FileName: "plan.pdf", ContentType: "application/pdf", Source: "files.example.com"},
	}
	if !slices.Equal(e.Attachments, want) {
		t.Errorf("attachments %+v, want %+v", e.Attachments, want)
	}
	srv := httptest.NewServer(o)
	defer srv.Close()
	_, page := get(t, srv, "/outbox?id=m9")
	for _, s := range []string{"ravi@example.com", "audit@example.org", "minutes.pdf", "16 bytes", "plan.pdf", "fetched from files.example.com"} {
		if !strings.Contains(page, s) {
			t.Errorf("the page does not show %q", s)
		}
	}
	if strings.Contains(page, "s3cr3t") {
		t.Error("the page shows the URL's token")
	}
}

// TestReceivedMailShowsCcBccAndFiles: the provider's message, as an SMTP
// server received it, handed to AddMail with its envelope recipients.
func TestReceivedMailShowsCcBccAndFiles(t *testing.T) {
	o := newOutbox(t)
	srv := smtptest.NewServer(smtptest.WithOnMessage(func(m smtptest.Message) {
		if err := o.AddMail(m.Data, m.To); err != nil {
			t.Errorf("AddMail: %v", err)
		}
	}))
	defer srv.Close()
	p, err := smtp.New(smtp.Config{Default: smtp.Server{Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone, From: "noreply@acme.example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	env := ccEnvelope()
	msg := email.MessageOf(env)
	msg.Attachments = msg.Attachments[:1] // no URL: this test fetches nothing
	accept(o, env)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Send(ctx, env); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m, _ := o.Message("m9")
	e := m.Email
	if e == nil || !e.Received {
		t.Fatalf("not matched: %+v", m)
	}
	if !slices.Equal(e.Cc, []string{"ravi@example.com"}) || !slices.Equal(e.Bcc, []string{"audit@example.org"}) {
		t.Errorf("cc %v bcc %v", e.Cc, e.Bcc)
	}
	if len(e.Attachments) != 1 || e.Attachments[0] != (outbox.Attachment{FileName: "minutes.pdf", ContentType: "application/pdf", Size: 16}) {
		t.Errorf("attachments %+v", e.Attachments)
	}
	for _, h := range e.Headers {
		if strings.EqualFold(h.Name, "Bcc") {
			t.Errorf("received headers hold Bcc: %q", h.Value)
		}
	}
}
