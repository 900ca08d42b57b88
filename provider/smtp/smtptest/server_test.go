package smtptest_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/notifykit/notify/provider/smtp/smtptest"
)

const body = "From: a@example.com\r\nTo: b@example.com\r\nSubject: Hi\r\n\r\nHello.\r\n"

func start(t *testing.T, opts ...smtptest.Option) *smtptest.Server {
	t.Helper()
	s := smtptest.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

func dial(t *testing.T, s *smtptest.Server) *gosmtp.Client {
	t.Helper()
	c, err := gosmtp.Dial(s.Addr)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(c *gosmtp.Client, from, to, data string) error {
	return c.SendMail(from, []string{to}, strings.NewReader(data))
}

func smtpCode(err error) int {
	var se *gosmtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestReceive(t *testing.T) {
	s := start(t)
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") || s.Host != "127.0.0.1" || s.Port == 0 {
		t.Fatalf("Addr %q Host %q Port %d: want a loopback address", s.Addr, s.Host, s.Port)
	}
	c := dial(t, s)
	for i := range 3 {
		if err := send(c, "a@example.com", "b@example.com", body); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	msgs := s.Messages()
	if len(msgs) != 3 || s.Received() != 3 {
		t.Fatalf("got %d messages, Received %d; want 3", len(msgs), s.Received())
	}
	m := msgs[0]
	if m.From != "a@example.com" || len(m.To) != 1 || m.To[0] != "b@example.com" {
		t.Errorf("envelope %q -> %q", m.From, m.To)
	}
	if string(m.Data) != body {
		t.Errorf("Data = %q, want %q", m.Data, body)
	}
	if got := m.Header.Get("Subject"); got != "Hi" {
		t.Errorf("Subject = %q", got)
	}
	pm, err := m.Parse()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(pm.Body); string(b) != "Hello.\r\n" {
		t.Errorf("body %q", b)
	}
	if m.TLS || m.AuthUser != "" {
		t.Errorf("TLS %v AuthUser %q on a plain connection", m.TLS, m.AuthUser)
	}
	if n := s.Connections(); n != 1 {
		t.Errorf("Connections = %d, want 1 (one client sent three messages)", n)
	}
}

func TestAuth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []smtptest.Option
		dial   func(s *smtptest.Server) (*gosmtp.Client, error)
		wantTL bool
	}{
		{"plain", nil, func(s *smtptest.Server) (*gosmtp.Client, error) { return gosmtp.Dial(s.Addr) }, false},
		{"starttls", []smtptest.Option{smtptest.WithStartTLS()}, func(s *smtptest.Server) (*gosmtp.Client, error) {
			return gosmtp.DialStartTLS(s.Addr, s.ClientTLSConfig())
		}, true},
		{"implicit", []smtptest.Option{smtptest.WithImplicitTLS()}, func(s *smtptest.Server) (*gosmtp.Client, error) {
			return gosmtp.DialTLS(s.Addr, s.ClientTLSConfig())
		}, true},
	} {
		for _, mech := range []string{"PLAIN", "LOGIN"} {
			t.Run(tc.name+"/"+mech, func(t *testing.T) {
				s := start(t, append(tc.opts, smtptest.WithAuth("user", "pw"))...)
				client := func(pass string) sasl.Client {
					if mech == "PLAIN" {
						return sasl.NewPlainClient("", "user", pass)
					}
					return sasl.NewLoginClient("user", pass)
				}
				c, err := tc.dial(s)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if err := send(c, "a@example.com", "b@example.com", body); smtpCode(err) != 530 {
					t.Errorf("send without AUTH: %v, want 530", err)
				}
				if err := c.Auth(client("wrong")); smtpCode(err) != 535 {
					t.Errorf("AUTH with a wrong password: %v, want 535", err)
				}
				if err := c.Auth(client("pw")); err != nil {
					t.Fatalf("AUTH: %v", err)
				}
				if err := send(c, "a@example.com", "b@example.com", body); err != nil {
					t.Fatalf("send after AUTH: %v", err)
				}
				m := s.Messages()[0]
				if m.AuthUser != "user" || m.TLS != tc.wantTL {
					t.Errorf("AuthUser %q TLS %v, want user and %v", m.AuthUser, m.TLS, tc.wantTL)
				}
			})
		}
	}
}

func TestStartTLSRequiredForAuth(t *testing.T) {
	s := start(t, smtptest.WithStartTLS(), smtptest.WithAuth("user", "pw"))
	c := dial(t, s)
	if err := c.Auth(sasl.NewPlainClient("", "user", "pw")); err == nil {
		t.Fatal("AUTH in the clear succeeded on a STARTTLS server")
	}
}

func TestUntrustedCertificate(t *testing.T) {
	s := start(t, smtptest.WithImplicitTLS())
	if _, err := gosmtp.DialTLS(s.Addr, &tls.Config{ServerName: s.Host}); err == nil {
		t.Fatal("a client without the server's CertPool trusted it")
	}
	if s.CertPool() == nil {
		t.Fatal("CertPool is nil on a TLS server")
	}
	if start(t).ClientTLSConfig() != nil {
		t.Error("ClientTLSConfig is not nil without TLS")
	}
}

// TestSMTPUTF8: without WithSMTPUTF8 the server neither offers SMTPUTF8
// nor takes a non-ASCII address (553 5.6.7, the sender at MAIL FROM, a
// recipient at RCPT TO), as a real server; with it, it takes them in a
// transaction that asks for SMTPUTF8, and only then.
func TestSMTPUTF8(t *testing.T) {
	const utf8Addr = "रमेश@xn--p1b6ci4b4b3a.xn--h2brj9c"
	// refused checks that a transaction without SMTPUTF8 cannot carry
	// a non-ASCII address, and that the session survives it.
	refused := func(t *testing.T, c *gosmtp.Client) {
		t.Helper()
		if err := c.Mail(utf8Addr, nil); smtpCode(err) != 553 {
			t.Errorf("MAIL FROM a non-ASCII sender without SMTPUTF8: %v, want 553", err)
		}
		if err := c.Reset(); err != nil {
			t.Fatalf("RSET: %v", err)
		}
		if err := c.Mail("a@example.com", nil); err != nil {
			t.Fatalf("MAIL FROM: %v", err)
		}
		if err := c.Rcpt(utf8Addr, nil); smtpCode(err) != 553 {
			t.Errorf("RCPT TO a non-ASCII recipient without SMTPUTF8: %v, want 553", err)
		}
		if err := c.Reset(); err != nil {
			t.Fatalf("RSET: %v", err)
		}
	}

	t.Run("off", func(t *testing.T) {
		s := start(t)
		c := dial(t, s)
		if ok, _ := c.Extension("SMTPUTF8"); ok {
			t.Error("the server offers SMTPUTF8 without WithSMTPUTF8")
		}
		refused(t, c)
		if err := send(c, "a@example.com", "b@example.com", body); err != nil {
			t.Fatalf("an ASCII message after the refusals: %v", err)
		}
		if m := s.Messages(); len(m) != 1 || m[0].UTF8 {
			t.Errorf("messages %+v, want one without SMTPUTF8", m)
		}
	})
	t.Run("on", func(t *testing.T) {
		s := start(t, smtptest.WithSMTPUTF8())
		c := dial(t, s)
		if ok, _ := c.Extension("SMTPUTF8"); !ok {
			t.Fatal("the server does not offer SMTPUTF8 with WithSMTPUTF8")
		}
		// Still refused when the transaction does not ask for it.
		refused(t, c)
		// SendMail asks for SMTPUTF8 for a non-ASCII address.
		if err := c.SendMail(utf8Addr, []string{utf8Addr}, strings.NewReader(body)); err != nil {
			t.Fatalf("send with SMTPUTF8: %v", err)
		}
		m := s.Messages()
		if len(m) != 1 || !m[0].UTF8 || m[0].From != utf8Addr || len(m[0].To) != 1 || m[0].To[0] != utf8Addr {
			t.Fatalf("messages %+v, want one with SMTPUTF8 from and to %s", m, utf8Addr)
		}
		if err := send(c, "a@example.com", "b@example.com", body); err != nil {
			t.Fatal(err)
		}
		if m := s.Messages(); len(m) != 2 || m[1].UTF8 {
			t.Error("SMTPUTF8 outlived its transaction")
		}
	})
}

func TestRejectNext(t *testing.T) {
	s := start(t)
	c := dial(t, s)
	s.RejectNext(451, "4.3.0 Try later")
	s.RejectNext(550, "5.7.1 No")
	s.RejectNextAt(smtptest.StageMail, 421, "4.7.0 Busy")
	s.RejectNextAt(smtptest.StageRcpt, 550, "5.1.1 Unknown user")
	wants := []int{421, 550, 451, 550, 0}
	for i, want := range wants {
		err := send(c, "a@example.com", "b@example.com", body)
		if got := smtpCode(err); got != want {
			t.Fatalf("send %d: %v (code %d), want code %d", i, err, got, want)
		}
		if err != nil {
			if err := c.Reset(); err != nil {
				t.Fatalf("RSET: %v", err)
			}
		}
	}
	if n := s.Received(); n != 1 {
		t.Errorf("Received = %d, want 1: rejected messages are not kept", n)
	}
}

func TestDrops(t *testing.T) {
	t.Run("DropNext", func(t *testing.T) {
		s := start(t)
		s.DropNext()
		c := dial(t, s)
		if err := send(c, "a@example.com", "b@example.com", body); err == nil {
			t.Fatal("send on a dropped connection succeeded")
		}
		if s.Received() != 0 {
			t.Error("a message dropped at MAIL was kept")
		}
		c2 := dial(t, s)
		if err := send(c2, "a@example.com", "b@example.com", body); err != nil {
			t.Fatalf("next connection: %v", err)
		}
	})
	t.Run("DropNextAtDataEnd", func(t *testing.T) {
		s := start(t)
		s.DropNextAtDataEnd()
		c := dial(t, s)
		if err := send(c, "a@example.com", "b@example.com", body); err == nil {
			t.Fatal("send succeeded though the server hung up before replying")
		}
		if s.Received() != 1 {
			t.Errorf("Received = %d, want 1: the server took the message", s.Received())
		}
	})
	t.Run("DropNextAt RCPT", func(t *testing.T) {
		s := start(t)
		s.DropNextAt(smtptest.StageRcpt)
		s.DropNextAt(smtptest.Stage(99)) // ignored
		c := dial(t, s)
		if err := send(c, "a@example.com", "b@example.com", body); err == nil {
			t.Fatal("send on a connection dropped at RCPT succeeded")
		}
		if s.Received() != 0 {
			t.Error("a message dropped at RCPT was kept")
		}
		c2 := dial(t, s)
		if err := send(c2, "a@example.com", "b@example.com", body); err != nil {
			t.Fatalf("next connection: %v", err)
		}
		if s.Received() != 1 {
			t.Errorf("Received = %d, want 1", s.Received())
		}
	})
	t.Run("StallNextAtDataEnd", func(t *testing.T) {
		s := smtptest.NewServer()
		defer s.Close()
		s.StallNextAtDataEnd()
		c, err := gosmtp.Dial(s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- send(c, "a@example.com", "b@example.com", body) }()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := s.WaitMessages(ctx, 1); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the client got an answer while the server stalls: %v", err)
		default:
		}
		s.Close() // ends the stall: the connection is dropped unanswered
		if err := <-done; err == nil {
			t.Error("send succeeded though the server never answered the final dot")
		}
		if s.Received() != 1 {
			t.Errorf("Received = %d, want 1: the server took the message", s.Received())
		}
	})
	t.Run("DropAfter", func(t *testing.T) {
		s := start(t)
		s.DropAfter(2)
		c := dial(t, s)
		for i := range 2 {
			if err := send(c, "a@example.com", "b@example.com", body); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		if err := send(c, "a@example.com", "b@example.com", body); err == nil {
			t.Fatal("third send on a connection closed after two succeeded")
		}
		if s.Received() != 2 {
			t.Errorf("Received = %d, want 2", s.Received())
		}
	})
}

func TestWaitMessages(t *testing.T) {
	s := start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.WaitMessages(ctx, 2) }()
	c := dial(t, s)
	for range 2 {
		if err := send(c, "a@example.com", "b@example.com", body); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitMessages: %v", err)
	}
	short, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if err := s.WaitMessages(short, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitMessages with a canceled context: %v", err)
	}
	s.Close()
	if err := s.WaitMessages(t.Context(), 3); err == nil {
		t.Error("WaitMessages on a closed server returned nil")
	}
}

func TestLatency(t *testing.T) {
	s := start(t)
	s.SetLatency(time.Hour)
	c := dial(t, s)
	errc := make(chan error, 1)
	go func() { errc <- send(c, "a@example.com", "b@example.com", body) }()
	// The send is held at MAIL until the latency changes.
	s.SetLatency(0)
	if err := <-errc; err != nil {
		t.Fatalf("send released by SetLatency(0): %v", err)
	}
}

func TestRetainAndOnMessage(t *testing.T) {
	var (
		mu   sync.Mutex // OnMessage runs on the server's goroutines
		seen []string
	)
	s := start(t, smtptest.WithRetain(2), smtptest.WithOnMessage(func(m smtptest.Message) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, m.To[0]+"/"+m.Header.Get("Subject"))
	}))
	c := dial(t, s)
	for _, to := range []string{"1@example.com", "2@example.com", "3@example.com"} {
		if err := send(c, "a@example.com", to, body); err != nil {
			t.Fatal(err)
		}
	}
	msgs := s.Messages()
	if len(msgs) != 2 || msgs[0].To[0] != "2@example.com" || s.Received() != 3 {
		t.Errorf("kept %d messages (first %v), Received %d; want the last 2 of 3", len(msgs), msgs[0].To, s.Received())
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "1@example.com/Hi,2@example.com/Hi,3@example.com/Hi" {
		t.Errorf("OnMessage saw %v", seen)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := smtptest.Start(smtptest.WithStartTLS(), smtptest.WithImplicitTLS()); err == nil {
		t.Error("Start with both TLS modes succeeded")
	}
	if _, err := smtptest.Start(smtptest.WithAddr("256.0.0.1:0")); err == nil {
		t.Error("Start on a bad address succeeded")
	}
	s := start(t)
	if _, err := smtptest.Start(smtptest.WithAddr(s.Addr)); err == nil {
		t.Error("Start on a port in use succeeded")
	}
}

func TestCloseEndsConnections(t *testing.T) {
	s := start(t)
	c := dial(t, s)
	s.Close()
	s.Close() // twice is fine
	if err := c.Noop(); err == nil {
		t.Error("NOOP after Close succeeded")
	}
	if _, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		t.Error("the port still accepts connections after Close")
	}
}
