package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
)

// TestSMTPLogHidesDeclaredMailCodes: the in-process SMTP server's log
// hides the code an e-mail declares (email.Request.OTP), 10 digits long,
// in the subject it shows, as the mail went through the Notifier, the
// channel and provider/smtp. Other numbers of the subject show.
func TestSMTPLogHidesDeclaredMailCodes(t *testing.T) {
	const code = "4829135521"
	out := newLines()
	logger := slog.New(slog.NewTextHandler(out, nil))
	codes := newMailCodes(&config{})
	if codes == nil {
		t.Fatal("no codes for the in-process SMTP server")
	}
	srv, err := smtptest.Start(smtptest.WithOnMessage(logSMTP(logger, codes)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := smtp.New(smtp.Config{Default: smtp.Server{Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone,
		From: "notify@localhost", FromName: "Notify"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ch, err := email.New(email.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(nil), append([]notify.Option{notify.WithChannel(ch)}, codes.options()...)...)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := n.Send(context.Background(), &email.Request{Account: "acme", To: "asha@example.com",
		Subject: code + " is your Acme code (ref 9876543210)", Message: "<p>Enter <b>" + code + "</b>.</p>", OTP: code})
	if err != nil {
		t.Fatal(err)
	}
	line := out.waitFor(t, `msg="smtp message received"`)
	if all := out.text(); strings.Contains(all, code) {
		t.Errorf("the SMTP log shows the code:\n%s", all)
	}
	if want := `subject="****** is your Acme code (ref 9876543210)"`; !strings.Contains(line, want) {
		t.Errorf("the subject is not logged as %s:\n%s", want, line)
	}
	if codes.byID[rc.MessageID] != code {
		t.Errorf("the code of %s was not heard", rc.MessageID)
	}
}

// mailCodes keeps the latest maxMailCodes codes, only of e-mails that
// declare one, and nothing without the in-process SMTP server.
func TestMailCodesBounded(t *testing.T) {
	u, _ := url.Parse("smtp://relay.example:25?from=a@example.com")
	s, err := smtpServer(u)
	if err != nil {
		t.Fatal(err)
	}
	if c := newMailCodes(&config{smtp: &s}); c != nil || c.options() != nil {
		t.Error("codes kept for a real relay, which nobody logs")
	}
	c := newMailCodes(&config{})
	pending := func(id string, m any) {
		c.Observe(context.Background(), notify.Event{Type: record.StatePending, Envelope: &notify.Envelope{ID: id, Content: m}})
	}
	for i := range maxMailCodes + 10 {
		pending(fmt.Sprint(i), &email.Message{OTP: fmt.Sprintf("%010d", i)})
	}
	pending("none", &email.Message{})
	c.Observe(context.Background(), notify.Event{Type: record.StateSent, Envelope: &notify.Envelope{ID: "sent", Content: &email.Message{OTP: "1234"}}})
	if len(c.byID) != maxMailCodes || len(c.order) != maxMailCodes {
		t.Fatalf("%d codes, %d IDs kept, want %d", len(c.byID), len(c.order), maxMailCodes)
	}
	last := fmt.Sprint(maxMailCodes + 9)
	for id, want := range map[string]string{"0": "", "9": "", "10": "0000000010", last: fmt.Sprintf("%010s", last), "none": "", "sent": ""} {
		m := smtptest.Message{Header: map[string][]string{"Message-Id": {"<" + id + "@localhost>"}}}
		if got := c.of(m); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}
