package email_test

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

const opening = 10000 // paise

// stack is a Notifier wired to the e-mail channel, the SMTP provider and
// an smtptest server, with an in-memory ledger and wallet.
type stack struct {
	n      *notify.Notifier
	srv    *smtptest.Server
	wallet *memstore.Wallet
	ledger *memstore.Ledger
}

// newStack's SMTP server speaks STARTTLS and wants a login; opts add to
// that.
func newStack(t *testing.T, opts ...smtptest.Option) *stack {
	t.Helper()
	srv := smtptest.NewServer(append([]smtptest.Option{smtptest.WithStartTLS(), smtptest.WithAuth("mailer", "pw-123456")}, opts...)...)
	t.Cleanup(srv.Close)
	p, err := smtp.New(smtp.Config{Default: smtp.Server{
		Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionSTARTTLS, TLSConfig: srv.ClientTLSConfig(),
		Username: "mailer", Password: "pw-123456",
		From: "noreply@acme.example", FromName: "Acme",
		ListUnsubscribeURL:    "https://acme.example/unsubscribe?e={email}",
		ListUnsubscribeMailto: "unsubscribe@acme.example",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	r, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return stackOf(t, email.Config{Provider: p, Renderer: r}, srv)
}

// stackOf is the stack of an e-mail channel of cfg, whose provider
// sends to srv: the account acme, under key-1, with a wallet that opens
// with opening, the default INR prices and quick retries.
func stackOf(t *testing.T, cfg email.Config, srv *smtptest.Server) *stack {
	t.Helper()
	ch, err := email.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}, "key-1"); err != nil {
		t.Fatal(err)
	}
	l := memstore.NewLedger(w)
	n, err := notify.New(accounts, l,
		notify.WithChannel(ch),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return &stack{n: n, srv: srv, wallet: w, ledger: l}
}

func (s *stack) balance(t *testing.T) int64 {
	t.Helper()
	b, err := s.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// bodies returns the decoded parts of a multipart/alternative message.
func bodies(t *testing.T, m smtptest.Message) map[string]string {
	t.Helper()
	pm, err := m.Parse()
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(pm.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", pm.Header.Get("Content-Type"), err)
	}
	out := map[string]string{}
	r := multipart.NewReader(pm.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		b, _ := io.ReadAll(p)
		out[pt] = string(b)
	}
}

func TestSendThroughSMTP(t *testing.T) {
	s := newStack(t)
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account:  "acme",
		To:       "asha@example.com",
		Subject:  "Your invoice is ready",
		Message:  `<h1>Invoice 42</h1><p>Pay <a href="https://acme.example/pay/42">here</a>.</p>`,
		FromName: "Acme Billing",
		ReplyTo:  "billing@acme.example",
		Purpose:  email.PurposeInvoice,
	})
	if err != nil {
		t.Fatalf("SendEmail: %v", err)
	}
	if rc.Status != record.StateSent || rc.Provider != "smtp" || rc.ProviderMessageID != rc.MessageID+"@acme.example" ||
		rc.Cost.Minor != 10 || rc.Balance.Minor != opening-10 || rc.Attempts != 1 {
		t.Errorf("receipt %+v", rc)
	}
	msgs := s.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.AuthUser != "mailer" {
		t.Errorf("TLS %v, user %q", m.TLS, m.AuthUser)
	}
	h := m.Header
	from, _ := h.AddressList("From")
	reply, _ := h.AddressList("Reply-To")
	if len(from) != 1 || from[0].Name != "Acme Billing" || from[0].Address != "noreply@acme.example" {
		t.Errorf("From %q", h.Get("From"))
	}
	if len(reply) != 1 || reply[0].Address != "billing@acme.example" {
		t.Errorf("Reply-To %q", h.Get("Reply-To"))
	}
	if h.Get("Subject") != "Your invoice is ready" || h.Get("Message-ID") != "<"+rc.ProviderMessageID+">" {
		t.Errorf("Subject %q, Message-ID %q", h.Get("Subject"), h.Get("Message-ID"))
	}
	if h.Get("List-Unsubscribe") != "" {
		t.Error("invoice mail has List-Unsubscribe")
	}
	parts := bodies(t, m)
	if want := "Invoice 42\r\n\r\nPay here (https://acme.example/pay/42)."; parts["text/plain"] != want {
		t.Errorf("text part %q, want %q", parts["text/plain"], want)
	}
	if !strings.Contains(parts["text/html"], `<a href="https://acme.example/pay/42">here</a>`) {
		t.Errorf("html part %q", parts["text/html"])
	}
}

func TestSendCampaignTemplate(t *testing.T) {
	s := newStack(t)
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "asha@example.com", TemplateSlug: "promo-discount", Purpose: email.PurposeCampaign,
		Variables: record.Vars{"NAME": "Asha", "DISCOUNT": "20%", "CODE": "SAVE20", "EXPIRY_DATE": "31/12/2030", "LINK": "https://acme.example/sale"},
	})
	if err != nil {
		t.Fatalf("SendEmail: %v", err)
	}
	if rc.Cost.Minor != 5 {
		t.Errorf("campaign cost %v, want 5 paise", rc.Cost)
	}
	h := s.srv.Messages()[0].Header
	if got := h.Get("List-Unsubscribe"); got != "<https://acme.example/unsubscribe?e=asha%40example.com>, <mailto:unsubscribe@acme.example>" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", h.Get("List-Unsubscribe-Post"))
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if !strings.Contains(subject, "20%") {
		t.Errorf("Subject %q", subject)
	}
	parts := bodies(t, s.srv.Messages()[0])
	if !strings.Contains(parts["text/plain"], "SAVE20") || !strings.Contains(parts["text/html"], "SAVE20") {
		t.Errorf("the code is missing: %q", parts["text/plain"])
	}
}

func TestTemporaryThenSuccess(t *testing.T) {
	s := newStack(t)
	s.srv.RejectNext(451, "4.3.0 Try again later")
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "a@example.com", Subject: "Code", Message: "Your code is 4829", Purpose: email.PurposeOTP,
	})
	if err != nil {
		t.Fatalf("SendEmail: %v", err)
	}
	if rc.Attempts != 2 || rc.Cost.Minor != 10 || s.balance(t) != opening-10 {
		t.Errorf("attempts %d, cost %v, balance %d; want 2 attempts and one charge of 10", rc.Attempts, rc.Cost, s.balance(t))
	}
	entries, _, err := s.wallet.Ledger("acme")
	if err != nil || len(entries) != 1 || entries[0].Kind != memstore.Debit {
		t.Errorf("ledger %+v (%v), want one debit", entries, err)
	}
	if n := s.srv.Received(); n != 1 {
		t.Errorf("server got %d messages, want 1", n)
	}
}

func TestPermanentFailureRefunded(t *testing.T) {
	s := newStack(t)
	s.srv.RejectNext(550, "5.1.1 No such user here")
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "nobody@example.com", Subject: "Hi", Message: "Hello",
	})
	if notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("SendEmail: %v (code %q), want rejected", err, notify.CodeOf(err))
	}
	if !strings.Contains(err.Error(), "No such user here") {
		t.Errorf("error %q lost the server's reply", err)
	}
	if rc == nil || rc.Status != record.StateFailed || rc.Attempts != 1 || rc.Cost.Minor != 0 {
		t.Errorf("receipt %+v", rc)
	}
	if b := s.balance(t); b != opening {
		t.Errorf("balance %d, want %d: the charge is refunded", b, opening)
	}
	if s.srv.Received() != 0 {
		t.Error("the server kept a rejected message")
	}
}

func TestLostReplyNotRetried(t *testing.T) {
	s := newStack(t)
	s.srv.DropNextAtDataEnd()
	rc, err := s.n.Send(context.Background(), &email.Request{Account: "acme", To: "a@example.com", Subject: "Hi", Message: "Hello"})
	if err == nil {
		t.Fatal("SendEmail succeeded though the server hung up before replying")
	}
	if rc.Attempts != 1 {
		t.Errorf("%d attempts: a message that may have been delivered must not be sent again", rc.Attempts)
	}
	if n := s.srv.Received(); n != 1 {
		t.Errorf("server got %d copies, want 1", n)
	}
}

func TestBadInputChargesNothing(t *testing.T) {
	s := newStack(t)
	_, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "a@example.com", Subject: "Hi\r\nBcc: everyone@example.com", Message: "Hello",
	})
	var ne *notify.Error
	if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "subject" {
		t.Fatalf("SendEmail: %v, want InvalidArgument on subject", err)
	}
	if b := s.balance(t); b != opening {
		t.Errorf("balance %d, want %d", b, opening)
	}
	if s.srv.Received() != 0 || s.srv.Connections() != 0 {
		t.Error("a bad request reached the SMTP server")
	}
}

// TestInternationalisedAddresses, through the whole stack to a real
// loopback relay: an IDN domain reaches a relay without SMTPUTF8 as
// A-labels; a non-ASCII local part goes through a relay with SMTPUTF8 and
// is refused on one without, naming the field, refunded and never sent;
// a domain IDNA refuses is InvalidArgument naming the field, charged
// nothing.
func TestInternationalisedAddresses(t *testing.T) {
	const utf8Local = "रमेश@उदाहरण.भारत"
	send := func(s *stack, to string) (*notify.Receipt, error) {
		return s.n.Send(context.Background(), &email.Request{
			Account: "acme", To: to, ReplyTo: "desk@bücher.example", Subject: "Your order", Message: "It has shipped.",
		})
	}
	t.Run("IDN domain, relay without SMTPUTF8", func(t *testing.T) {
		s := newStack(t)
		rc, err := send(s, "asha@bücher.example")
		if err != nil {
			t.Fatalf("SendEmail: %v", err)
		}
		msgs := s.srv.Messages()
		if len(msgs) != 1 || len(msgs[0].To) != 1 || msgs[0].To[0] != "asha@xn--bcher-kva.example" || msgs[0].UTF8 {
			t.Fatalf("messages %+v, want RCPT TO asha@xn--bcher-kva.example without SMTPUTF8", msgs)
		}
		to, _ := msgs[0].Header.AddressList("To")
		reply, _ := msgs[0].Header.AddressList("Reply-To")
		if len(to) != 1 || to[0].Address != "asha@xn--bcher-kva.example" || len(reply) != 1 || reply[0].Address != "desk@xn--bcher-kva.example" {
			t.Errorf("To %q, Reply-To %q: want the domains as A-labels", msgs[0].Header.Get("To"), msgs[0].Header.Get("Reply-To"))
		}
		if rc.To != "asha@bücher.example" {
			t.Errorf("receipt to %q, want the address as given", rc.To)
		}
	})
	t.Run("non-ASCII local part, relay with SMTPUTF8", func(t *testing.T) {
		s := newStack(t, smtptest.WithSMTPUTF8())
		if _, err := send(s, utf8Local); err != nil {
			t.Fatalf("SendEmail: %v", err)
		}
		msgs := s.srv.Messages()
		if len(msgs) != 1 || !msgs[0].UTF8 || len(msgs[0].To) != 1 || msgs[0].To[0] != "रमेश@xn--p1b6ci4b4b3a.xn--h2brj9c" {
			t.Fatalf("messages %+v, want SMTPUTF8 and RCPT TO रमेश@xn--p1b6ci4b4b3a.xn--h2brj9c", msgs)
		}
	})
	t.Run("non-ASCII local part, relay without SMTPUTF8", func(t *testing.T) {
		s := newStack(t)
		rc, err := send(s, utf8Local)
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "to" ||
			!strings.Contains(ne.Fields[0].Message, "does not offer SMTPUTF8") {
			t.Fatalf("SendEmail: %v, want InvalidArgument on to saying the relay lacks SMTPUTF8", err)
		}
		if rc == nil || rc.Status != record.StateFailed || rc.Attempts != 1 || rc.Cost.Minor != 0 {
			t.Errorf("receipt %+v, want failed after one attempt, refunded", rc)
		}
		if b := s.balance(t); b != opening {
			t.Errorf("balance %d, want %d: the charge is refunded", b, opening)
		}
		if s.srv.Received() != 0 {
			t.Error("the relay got the message")
		}
	})
	t.Run("bad IDN domain", func(t *testing.T) {
		s := newStack(t)
		_, err := send(s, "asha@bücher-.example")
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "to" {
			t.Fatalf("SendEmail: %v, want InvalidArgument on to", err)
		}
		if b := s.balance(t); b != opening {
			t.Errorf("balance %d, want %d", b, opening)
		}
		if s.srv.Connections() != 0 {
			t.Error("a bad address reached the relay")
		}
	})
}
