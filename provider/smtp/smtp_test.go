package smtp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
)

func send(t *testing.T, p *smtp.Provider, env *notify.Envelope) *notify.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := p.Send(ctx, env)
	if err != nil {
		t.Fatalf("Send: %v (code %q)", err, notify.CodeOf(err))
	}
	return res
}

func sendErr(t *testing.T, p *smtp.Provider, env *notify.Envelope) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := p.Send(ctx, env)
	if err == nil {
		t.Fatalf("Send succeeded (%q), want an error", res.ProviderMessageID)
	}
	if strings.Contains(err.Error(), testPassword) {
		t.Errorf("error text contains the password: %v", err)
	}
	return err
}

// parsed is a received message, parsed with net/mail and mime/multipart.
type parsed struct {
	msg   *mail.Message
	parts map[string]string // media type -> decoded body
	ctype string
}

func parse(t *testing.T, m smtptest.Message) parsed {
	t.Helper()
	pm, err := m.Parse()
	if err != nil {
		t.Fatalf("net/mail cannot parse the message: %v\n%s", err, m.Data)
	}
	for _, line := range strings.Split(string(m.Data), "\r\n") {
		if len(line) > 998 {
			t.Errorf("a line of %d bytes exceeds RFC 5322's 998", len(line))
		}
	}
	if strings.Contains(strings.ReplaceAll(string(m.Data), "\r\n", ""), "\n") {
		t.Error("the message has a bare LF")
	}
	out := parsed{msg: pm, parts: map[string]string{}}
	mt, params, err := mime.ParseMediaType(pm.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type: %v", err)
	}
	out.ctype = mt
	if mt == "multipart/alternative" {
		r := multipart.NewReader(pm.Body, params["boundary"])
		for {
			part, err := r.NextPart() // decodes quoted-printable
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("multipart: %v", err)
			}
			pt, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
			b, _ := io.ReadAll(part)
			out.parts[pt] = string(b)
		}
		return out
	}
	b, err := io.ReadAll(pm.Body)
	if err != nil {
		t.Fatal(err)
	}
	if pm.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		b, _ = io.ReadAll(quotedPrintable(string(b)))
	}
	out.parts[mt] = string(b)
	return out
}

// quotedPrintable decodes a single-part body; multipart does it for parts.
func quotedPrintable(s string) io.Reader {
	return quotedprintable.NewReader(strings.NewReader(s))
}

func decodeHeader(t *testing.T, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatalf("decode header %q: %v", v, err)
	}
	return s
}

func crlf(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

func TestMessageContents(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	env := htmlEnvelope("asha@example.com", email.PurposeInvoice)
	env.ID = "0b6d7c1e-8f3a-4c55-9a1e-2f4b6c8d0e12"
	email.MessageOf(env).FromName = "Café Ünïcode, Billing"
	email.MessageOf(env).ReplyTo = "billing@shop.example"
	email.MessageOf(env).Subject = "Invoice №42 — ₹1,234.50 due " + strings.Repeat("soon ", 30)
	res := send(t, p, env)

	if res.ProviderMessageID != env.ID+"@shop.example" || res.Provider != "smtp" {
		t.Errorf("Result %+v, want ProviderMessageID %q", res, env.ID+"@shop.example")
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages", len(msgs))
	}
	m := msgs[0]
	if m.From != "noreply@shop.example" || len(m.To) != 1 || m.To[0] != "asha@example.com" {
		t.Errorf("envelope %q -> %v", m.From, m.To)
	}
	pm := parse(t, m)
	h := pm.msg.Header
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != email.MessageOf(env).FromName || from[0].Address != "noreply@shop.example" {
		t.Errorf("From = %q (%v), want %q <noreply@shop.example>", h.Get("From"), err, email.MessageOf(env).FromName)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != "asha@example.com" {
		t.Errorf("To = %q", h.Get("To"))
	}
	rt, err := h.AddressList("Reply-To")
	if err != nil || len(rt) != 1 || rt[0].Address != "billing@shop.example" {
		t.Errorf("Reply-To = %q", h.Get("Reply-To"))
	}
	if got := decodeHeader(t, h.Get("Subject")); got != email.MessageOf(env).Subject {
		t.Errorf("Subject = %q\nwant      %q", got, email.MessageOf(env).Subject)
	}
	if got := h.Get("Message-ID"); got != "<"+res.ProviderMessageID+">" {
		t.Errorf("Message-ID = %q, want <%s>", got, res.ProviderMessageID)
	}
	if d, err := h.Date(); err != nil || time.Since(d) > time.Minute {
		t.Errorf("Date = %q (%v)", h.Get("Date"), err)
	}
	if h.Get("MIME-Version") != "1.0" {
		t.Errorf("MIME-Version = %q", h.Get("MIME-Version"))
	}
	if pm.ctype != "multipart/alternative" {
		t.Fatalf("Content-Type %q, want multipart/alternative", pm.ctype)
	}
	if got := pm.parts["text/html"]; got != crlf(email.MessageOf(env).HTML) {
		t.Errorf("HTML part = %q", got)
	}
	if got := pm.parts["text/plain"]; got != crlf(email.MessageOf(env).Text) {
		t.Errorf("text part = %q", got)
	}
	if v := h.Get("List-Unsubscribe") + h.Get("List-Unsubscribe-Post"); v != "" {
		t.Errorf("invoice mail carries List-Unsubscribe headers %q", v)
	}
}

func TestBodies(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	long := strings.Repeat("x", 1500)
	for _, tc := range []struct {
		name, html, text string
		wantType         string
		wantCTE          string
	}{
		{"ascii text", "", "Hello,\nyour code is ready.\n.\n..leading dots survive\n", "text/plain", "7bit"},
		{"unicode text", "", "नमस्ते, आपका ऑर्डर भेज दिया गया है।\r\nधन्यवाद", "text/plain", "quoted-printable"},
		{"long line", "", long, "text/plain", "quoted-printable"},
		{"nul byte", "", "a\x00b", "text/plain", "quoted-printable"},
		{"html only", "<p>Hi</p>", "", "text/html", "7bit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := htmlEnvelope("a@example.com", email.PurposeNotification)
			email.MessageOf(env).HTML, email.MessageOf(env).Text = tc.html, tc.text
			before := srv.Received()
			send(t, p, env)
			m := srv.Messages()[before]
			pm := parse(t, m)
			if pm.ctype != tc.wantType {
				t.Fatalf("Content-Type %q, want %q", pm.ctype, tc.wantType)
			}
			if cte := pm.msg.Header.Get("Content-Transfer-Encoding"); cte != tc.wantCTE {
				t.Errorf("Content-Transfer-Encoding %q, want %q", cte, tc.wantCTE)
			}
			want := tc.text
			if tc.html != "" {
				want = tc.html
			}
			got := pm.parts[tc.wantType]
			if tc.wantCTE == "7bit" {
				want = crlf(want)
			} else {
				// quoted-printable carries the bytes exactly, with CRLF
				// line breaks.
				want = crlf(want)
			}
			if strings.TrimRight(got, "\r\n") != strings.TrimRight(want, "\r\n") {
				t.Errorf("body = %q\nwant   %q", got, want)
			}
		})
	}
}

func TestCampaignHeaders(t *testing.T) {
	srv := startServer(t)
	def := serverConfig(srv, smtp.EncryptionNone)
	def.ListUnsubscribeURL = "https://shop.example/unsubscribe?e={email}"
	def.ListUnsubscribeMailto = "unsubscribe@shop.example?subject=unsubscribe"
	p := newProvider(t, smtp.Config{Default: def})
	for _, purpose := range []email.Purpose{email.PurposeCampaign, email.PurposeOTP, email.PurposeInvoice, email.PurposeNotification, ""} {
		t.Run(string(purpose), func(t *testing.T) {
			before := srv.Received()
			send(t, p, htmlEnvelope("a+b@example.com", purpose))
			h := parse(t, srv.Messages()[before]).msg.Header
			lu, lup := h.Get("List-Unsubscribe"), h.Get("List-Unsubscribe-Post")
			if purpose != email.PurposeCampaign {
				if lu != "" || lup != "" {
					t.Errorf("%q mail carries List-Unsubscribe %q, Post %q", purpose, lu, lup)
				}
				return
			}
			want := "<https://shop.example/unsubscribe?e=a%2Bb%40example.com>, <mailto:unsubscribe@shop.example?subject=unsubscribe>"
			if lu != want {
				t.Errorf("List-Unsubscribe = %q\nwant                %q", lu, want)
			}
			if lup != "List-Unsubscribe=One-Click" {
				t.Errorf("List-Unsubscribe-Post = %q", lup)
			}
		})
	}

	t.Run("mailto only", func(t *testing.T) {
		cfg := serverConfig(srv, smtp.EncryptionNone)
		cfg.ListUnsubscribeMailto = "unsubscribe@shop.example"
		p := newProvider(t, smtp.Config{Default: cfg})
		before := srv.Received()
		send(t, p, htmlEnvelope("a@example.com", email.PurposeCampaign))
		h := parse(t, srv.Messages()[before]).msg.Header
		if lu := h.Get("List-Unsubscribe"); lu != "<mailto:unsubscribe@shop.example>" {
			t.Errorf("List-Unsubscribe = %q", lu)
		}
		if lup := h.Get("List-Unsubscribe-Post"); lup != "" {
			t.Errorf("one-click without an HTTPS URL: %q", lup)
		}
	})

	t.Run("not configured", func(t *testing.T) {
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
		before := srv.Received()
		err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeCampaign))
		if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed ||
			!strings.Contains(err.Error(), "ListUnsubscribe") {
			t.Errorf("campaign without unsubscribe configuration: %v (code %q)", err, notify.CodeOf(err))
		}
		if srv.Received() != before {
			t.Error("campaign mail without List-Unsubscribe was sent")
		}
	})
}

func TestPurposes(t *testing.T) {
	bulk := startServer(t)
	fast := startServer(t)
	def := serverConfig(bulk, smtp.EncryptionNone)
	otp := serverConfig(fast, smtp.EncryptionNone)
	otp.From, otp.FromName = "otp@auth.example", "Login codes"
	p := newProvider(t, smtp.Config{Default: def, Purposes: map[email.Purpose]smtp.Server{email.PurposeOTP: otp}})

	res := send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
	send(t, p, htmlEnvelope("a@example.com", email.PurposeInvoice))
	send(t, p, htmlEnvelope("a@example.com", ""))
	if fast.Received() != 1 || bulk.Received() != 2 {
		t.Fatalf("otp server got %d, default server %d; want 1 and 2", fast.Received(), bulk.Received())
	}
	m := fast.Messages()[0]
	from, _ := parse(t, m).msg.Header.AddressList("From")
	if m.From != "otp@auth.example" || len(from) != 1 || from[0].Name != "Login codes" {
		t.Errorf("OTP mail from %q, header %v", m.From, from)
	}
	if !strings.HasSuffix(res.ProviderMessageID, "@auth.example") {
		t.Errorf("ProviderMessageID %q is not in the OTP From domain", res.ProviderMessageID)
	}
}

func TestTLSAndAuth(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  smtptest.Option
		enc  smtp.Encryption
		auth smtp.AuthMechanism
	}{
		{"starttls/plain", smtptest.WithStartTLS(), smtp.EncryptionSTARTTLS, smtp.AuthPlain},
		{"starttls/login", smtptest.WithStartTLS(), smtp.EncryptionSTARTTLS, smtp.AuthLogin},
		{"starttls/auto", smtptest.WithStartTLS(), smtp.EncryptionSTARTTLS, smtp.AuthAuto},
		{"implicit/plain", smtptest.WithImplicitTLS(), smtp.EncryptionImplicitTLS, smtp.AuthPlain},
		{"implicit/login", smtptest.WithImplicitTLS(), smtp.EncryptionImplicitTLS, smtp.AuthLogin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, tc.tls, smtptest.WithAuth("mailer", testPassword))
			cfg := serverConfig(srv, tc.enc)
			cfg.Auth, cfg.Username, cfg.Password = tc.auth, "mailer", testPassword
			p := newProvider(t, smtp.Config{Default: cfg})
			for range 3 {
				send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
			}
			for _, m := range srv.Messages() {
				if !m.TLS || m.AuthUser != "mailer" {
					t.Errorf("message arrived with TLS %v as %q, want TLS as mailer", m.TLS, m.AuthUser)
				}
			}
			if n := srv.Connections(); n != 1 {
				t.Errorf("%d connections for 3 sequential messages, want 1", n)
			}

			t.Run("wrong password", func(t *testing.T) {
				cfg := cfg
				cfg.Password = testPassword + "-wrong"
				p := newProvider(t, smtp.Config{Default: cfg})
				err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
				if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "535") {
					t.Errorf("wrong password: %v (code %q), want rejected with the 535 reply", err, notify.CodeOf(err))
				}
				if strings.Contains(err.Error(), "-wrong") {
					t.Errorf("error shows the password: %v", err)
				}
			})
			t.Run("untrusted certificate", func(t *testing.T) {
				cfg := cfg
				cfg.TLSConfig = nil // system roots do not know the test CA
				p := newProvider(t, smtp.Config{Default: cfg})
				err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
				if !strings.Contains(err.Error(), "certificate") {
					t.Errorf("untrusted certificate: %v", err)
				}
			})
		})
	}
}

func TestSTARTTLSNotOffered(t *testing.T) {
	srv := startServer(t, smtptest.WithAuth("mailer", testPassword)) // no TLS at all
	cfg := serverConfig(srv, smtp.EncryptionSTARTTLS)
	cfg.TLSConfig = &tls.Config{ServerName: "127.0.0.1"}
	cfg.Username, cfg.Password = "mailer", testPassword
	p := newProvider(t, smtp.Config{Default: cfg})
	err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
	if !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("server without STARTTLS: %v", err)
	}
	if srv.Received() != 0 {
		t.Error("mail went out in the clear")
	}
}

func TestPoolReuse(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 3})
	for i := range 20 {
		send(t, p, htmlEnvelope(fmt.Sprintf("u%d@example.com", i), email.PurposeOTP))
	}
	if n := srv.Connections(); n != 1 {
		t.Errorf("%d connections for 20 sequential messages, want 1", n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := p.Send(t.Context(), htmlEnvelope(fmt.Sprintf("g%d-%d@example.com", g, i), email.PurposeOTP)); err != nil {
					t.Errorf("Send: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := srv.Connections(); n > 3 {
		t.Errorf("%d connections with PoolSize 3", n)
	}
	if n := srv.Received(); n != 220 {
		t.Errorf("server got %d messages, want 220", n)
	}
}

// checkExactlyOnce checks that the server got each of ids exactly once
// and nothing else.
func checkExactlyOnce(t *testing.T, srv *smtptest.Server, ids []string) {
	t.Helper()
	got := map[string]int{}
	for _, m := range srv.Messages() {
		got[strings.Trim(m.Header.Get("Message-ID"), "<>")]++
	}
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("message %s received %d times, want once", id, got[id])
		}
		delete(got, id)
	}
	for id, n := range got {
		t.Errorf("server got %d unexpected copies of %s", n, id)
	}
}

func TestDroppedConnectionMidBatch(t *testing.T) {
	t.Run("sequential", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
		var ids []string
		for i := range 30 {
			switch i {
			case 5:
				srv.DropAfter(1) // the server hangs up after message 6
			case 15:
				srv.DropNext() // and on the MAIL FROM of message 16
			}
			ids = append(ids, send(t, p, htmlEnvelope(fmt.Sprintf("u%d@example.com", i), email.PurposeNotification)).ProviderMessageID)
		}
		checkExactlyOnce(t, srv, ids)
		if n := srv.Connections(); n != 3 {
			t.Errorf("%d connections, want 3: one re-dial per drop", n)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 4})
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			ids []string
		)
		for g := range 8 {
			wg.Go(func() {
				for i := range 25 {
					if g == 0 && i%5 == 4 {
						srv.DropAfter(3)
					}
					res, err := p.Send(t.Context(), htmlEnvelope(fmt.Sprintf("g%d-%d@example.com", g, i), email.PurposeOTP))
					if err != nil {
						t.Errorf("Send: %v", err)
						return
					}
					mu.Lock()
					ids = append(ids, res.ProviderMessageID)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		checkExactlyOnce(t, srv, ids)
		if srv.Connections() < 2 {
			t.Errorf("only %d connections: no drop happened", srv.Connections())
		}
	})

}

// TestAnswerLostAfterDataIsUnknown: when the server took the whole
// message, final dot included, and its answer never came (the connection
// dropped, the send timeout or the caller's context ended while waiting),
// the outcome is unknown: the error is CodeOutcomeUnknown, the pool does
// not send the message again on a fresh connection, and the server has it
// exactly once.
func TestAnswerLostAfterDataIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []smtptest.Option
		enc  smtp.Encryption
	}{
		{"plain", nil, smtp.EncryptionNone},
		{"starttls", []smtptest.Option{smtptest.WithStartTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionSTARTTLS},
		{"implicit-tls", []smtptest.Option{smtptest.WithImplicitTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionImplicitTLS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, reused := range []bool{false, true} {
				t.Run(fmt.Sprintf("reused=%v", reused), func(t *testing.T) {
					srv := startServer(t, tc.opts...)
					cfg := serverConfig(srv, tc.enc)
					if tc.enc != smtp.EncryptionNone {
						cfg.Username, cfg.Password = "mailer", testPassword
					}
					p := newProvider(t, smtp.Config{Default: cfg, PoolSize: 1})
					var ids []string
					if reused {
						ids = append(ids, send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP)).ProviderMessageID)
					}
					conns := srv.Connections()
					srv.DropNextAtDataEnd()
					env := htmlEnvelope("b@example.com", email.PurposeOTP)
					env.ID = "lost-reply"
					err := sendErr(t, p, env)
					if notify.OutcomeOf(err) != record.StateUnknown || notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.IsRetryable(err) {
						t.Errorf("lost answer after the final dot: %v (code %q, outcome %v); want outcome_unknown", err, notify.CodeOf(err), notify.OutcomeOf(err))
					}
					if n := srv.Connections(); n != max(conns, 1) {
						t.Errorf("%d connections, want %d: the pool must not resend on a fresh connection", n, max(conns, 1))
					}
					if n := srv.Received(); n != len(ids)+1 {
						t.Errorf("server received %d messages, want %d", n, len(ids)+1)
					}
					ids = append(ids, "lost-reply@shop.example")
					ids = append(ids, send(t, p, htmlEnvelope("c@example.com", email.PurposeOTP)).ProviderMessageID)
					checkExactlyOnce(t, srv, ids)
				})
			}
		})
	}

	// The server took the message and withholds its answer: the caller's
	// context, or the send timeout, ends the wait.
	for _, tc := range []struct {
		name   string
		cancel bool          // cancel the context once the server has the message
		limit  time.Duration // else SendTimeout
		want   error
	}{
		{"canceled", true, 0, context.Canceled},
		{"send timeout", false, 200 * time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t)
			cfg := serverConfig(srv, smtp.EncryptionNone)
			cfg.SendTimeout = tc.limit
			p := newProvider(t, smtp.Config{Default: cfg, PoolSize: 1})
			first := send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
			srv.StallNextAtDataEnd()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			env := htmlEnvelope("b@example.com", email.PurposeOTP)
			env.ID = "stalled"
			done := make(chan error, 1)
			go func() {
				_, err := p.Send(ctx, env)
				done <- err
			}()
			if tc.cancel {
				if err := srv.WaitMessages(ctx, 2); err != nil {
					t.Fatal(err)
				}
				cancel()
			}
			err := <-done
			if notify.OutcomeOf(err) != record.StateUnknown || notify.CodeOf(err) != notify.CodeOutcomeUnknown {
				t.Errorf("answer withheld after the final dot: %v (code %q); want outcome_unknown", err, notify.CodeOf(err))
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.want)
			}
			if srv.Connections() != 1 || srv.Received() != 2 {
				t.Errorf("connections %d, received %d; want 1 and 2", srv.Connections(), srv.Received())
			}
			checkExactlyOnce(t, srv, []string{first.ProviderMessageID, "stalled@shop.example"})
		})
	}
}

// TestFailureBeforeDataEndIsRetryable: a failure before the final dot of
// DATA was written leaves the server without the message, so it is a
// certain, temporary refusal (CodeUnavailable, IsRetryable), and the
// server has nothing.
func TestFailureBeforeDataEndIsRetryable(t *testing.T) {
	check := func(t *testing.T, srv *smtptest.Server, before int, err error) {
		t.Helper()
		if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("failure before the final dot: %v (code %q, outcome %v); want a retryable unavailable", err, notify.CodeOf(err), notify.OutcomeOf(err))
		}
		if srv != nil && srv.Received() != before {
			t.Errorf("server received %d messages, want %d", srv.Received(), before)
		}
	}
	for _, tc := range []struct {
		name string
		opts []smtptest.Option
		enc  smtp.Encryption
	}{
		{"plain", nil, smtp.EncryptionNone},
		{"starttls", []smtptest.Option{smtptest.WithStartTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionSTARTTLS},
		{"implicit-tls", []smtptest.Option{smtptest.WithImplicitTLS(), smtptest.WithAuth("mailer", testPassword)}, smtp.EncryptionImplicitTLS},
	} {
		for _, stage := range []smtptest.Stage{smtptest.StageMail, smtptest.StageRcpt} {
			t.Run(fmt.Sprintf("%s/dropped at %v", tc.name, stage), func(t *testing.T) {
				srv := startServer(t, tc.opts...)
				cfg := serverConfig(srv, tc.enc)
				if tc.enc != smtp.EncryptionNone {
					cfg.Username, cfg.Password = "mailer", testPassword
				}
				p := newProvider(t, smtp.Config{Default: cfg, PoolSize: 1})
				// On a fresh connection the failure is returned.
				srv.DropNextAt(stage)
				check(t, srv, 0, sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP)))
				// On a reused one the pool re-dials once, safely.
				first := send(t, p, htmlEnvelope("b@example.com", email.PurposeOTP))
				srv.DropNextAt(stage)
				second := send(t, p, htmlEnvelope("c@example.com", email.PurposeOTP))
				checkExactlyOnce(t, srv, []string{first.ProviderMessageID, second.ProviderMessageID})
				if n := srv.Connections(); n != 3 {
					t.Errorf("%d connections, want 3", n)
				}
			})
		}
	}

	t.Run("context ends before the final dot", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
		send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
		srv.SetLatency(time.Hour) // MAIL FROM waits for its reply
		defer srv.SetLatency(0)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Send(ctx, htmlEnvelope("b@example.com", email.PurposeOTP))
		check(t, srv, 1, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
		}
	})

	t.Run("context done before the call", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.Send(ctx, htmlEnvelope("a@example.com", email.PurposeOTP))
		check(t, srv, 0, err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(%v, context.Canceled) = false", err)
		}
	})

	t.Run("context ends waiting for a connection", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
		send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
		srv.StallNextAtDataEnd() // holds the pool's only connection
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		held := make(chan error, 1)
		go func() {
			_, err := p.Send(ctx, htmlEnvelope("b@example.com", email.PurposeOTP))
			held <- err
		}()
		if err := srv.WaitMessages(ctx, 2); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer wcancel()
		_, err := p.Send(wctx, htmlEnvelope("c@example.com", email.PurposeOTP))
		check(t, nil, 0, err)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
		}
		cancel()
		if err := <-held; notify.OutcomeOf(err) != record.StateUnknown {
			t.Errorf("the stalled send: %v, want an unknown outcome", err)
		}
		if srv.Received() != 2 {
			t.Errorf("server received %d messages, want 2", srv.Received())
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		srv := startServer(t)
		port := srv.Port
		srv.Close()
		p := newProvider(t, smtp.Config{Default: smtp.Server{Host: "127.0.0.1", Port: port, Encryption: smtp.EncryptionNone, From: "a@shop.example"}})
		check(t, nil, 0, sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP)))
	})

	t.Run("closed provider", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
		_ = p.Close()
		check(t, srv, 0, sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP)))
	})
}

func TestReplies(t *testing.T) {
	for _, tc := range []struct {
		stage smtptest.Stage
		reply int
		text  string
		want  notify.Code
	}{
		{smtptest.StageMail, 451, "4.7.1 Greylisted, try again", notify.CodeUnavailable},
		{smtptest.StageMail, 553, "5.7.1 Sender not allowed", notify.CodeRejected},
		{smtptest.StageRcpt, 450, "4.2.1 Mailbox busy", notify.CodeUnavailable},
		{smtptest.StageRcpt, 550, "5.1.1 No such user", notify.CodeRejected},
		{smtptest.StageData, 452, "4.3.1 Insufficient storage", notify.CodeUnavailable},
		{smtptest.StageData, 554, "5.7.1 Spam detected", notify.CodeRejected},
	} {
		t.Run(fmt.Sprintf("%v/%d", tc.stage, tc.reply), func(t *testing.T) {
			srv := startServer(t)
			p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
			send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
			srv.RejectNextAt(tc.stage, tc.reply, tc.text)
			err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
			if got := notify.CodeOf(err); got != tc.want {
				t.Errorf("code %q, want %q (%v)", got, tc.want, err)
			}
			if notify.OutcomeOf(err) != record.StateFailed || notify.IsRetryable(err) != (tc.reply < 500) {
				t.Errorf("reply %d: outcome %v, retryable %v; want a certain refusal, retryable for 4xx", tc.reply, notify.OutcomeOf(err), notify.IsRetryable(err))
			}
			if !strings.Contains(err.Error(), tc.text[strings.IndexByte(tc.text, ' ')+1:]) {
				t.Errorf("error %q lost the server's reply %q", err, tc.text)
			}
			send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
			if n := srv.Connections(); n != 1 {
				t.Errorf("%d connections: a rejected message should not cost the connection", n)
			}
			if n := srv.Received(); n != 2 {
				t.Errorf("server got %d messages, want 2", n)
			}
		})
	}

	t.Run("421 on a reused connection", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
		send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
		srv.RejectNextAt(smtptest.StageMail, 421, "4.4.2 Idle too long, closing")
		send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
		if srv.Connections() != 2 || srv.Received() != 2 {
			t.Errorf("connections %d, received %d; want a re-dial and 2 messages", srv.Connections(), srv.Received())
		}
	})
	t.Run("421 on a fresh connection", func(t *testing.T) {
		srv := startServer(t)
		p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: 1})
		srv.RejectNextAt(smtptest.StageMail, 421, "4.3.2 Shutting down")
		err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
		if notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("421: %v", err)
		}
	})
}

func TestConnectFailures(t *testing.T) {
	srv := startServer(t)
	addr := srv.Port
	srv.Close() // nothing listens there now
	cfg := smtp.Server{Host: "127.0.0.1", Port: addr, Encryption: smtp.EncryptionNone, From: "a@shop.example"}
	p := newProvider(t, smtp.Config{Default: cfg})
	err := sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("connection refused: %v (code %q), want unavailable", err, notify.CodeOf(err))
	}
	if err := p.CheckHealth(t.Context()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("CheckHealth with the server down: %v", err)
	}
}

func TestInvalidEnvelope(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	for _, tc := range []struct {
		name  string
		edit  func(*notify.Envelope)
		field string
	}{
		{"no content", func(e *notify.Envelope) { e.Content = nil }, "message"},
		{"empty to", func(e *notify.Envelope) { e.To = "" }, "to"},
		{"display name in to", func(e *notify.Envelope) { e.To = "Asha <a@example.com>" }, "to"},
		{"header in to", func(e *notify.Envelope) { e.To = "a@example.com\r\nBcc: x@evil.example" }, "to"},
		{"two addresses", func(e *notify.Envelope) { e.To = "a@example.com, b@example.com" }, "to"},
		{"bad reply_to", func(e *notify.Envelope) { email.MessageOf(e).ReplyTo = "not an address" }, "reply_to"},
		{"header in reply_to", func(e *notify.Envelope) { email.MessageOf(e).ReplyTo = "a@example.com\nBcc: x@evil.example" }, "reply_to"},
		{"CR in subject", func(e *notify.Envelope) { email.MessageOf(e).Subject = "Hi\rBcc: x@evil.example" }, "subject"},
		{"LF in subject", func(e *notify.Envelope) { email.MessageOf(e).Subject = "Hi\nBcc: x@evil.example" }, "subject"},
		{"NUL in subject", func(e *notify.Envelope) { email.MessageOf(e).Subject = "Hi\x00" }, "subject"},
		{"LF in from_name", func(e *notify.Envelope) { email.MessageOf(e).FromName = "Shop\nBcc: x@evil.example" }, "from_name"},
		// The character rule of the e-mail channel (internal/rules), for
		// callers that build envelopes themselves.
		{"NBSP in to", func(e *notify.Envelope) { e.To = "victim@exa\u00a0mple.com" }, "to"},
		{"zero-width space in to", func(e *notify.Envelope) { e.To = "vic\u200btim@example.com" }, "to"},
		{"RLO in to", func(e *notify.Envelope) { e.To = "victim\u202e@example.com" }, "to"},
		{"line separator in reply_to", func(e *notify.Envelope) { email.MessageOf(e).ReplyTo = "a@example.com\u2029" }, "reply_to"},
		{"encoded word in from_name", func(e *notify.Envelope) { email.MessageOf(e).FromName = "=?utf-8?q?x=0D=0ABcc:evil@example.com?=" }, "from_name"},
		{"bidi isolate in from_name", func(e *notify.Envelope) { email.MessageOf(e).FromName = "Shop\u2068" }, "from_name"},
		{"no body", func(e *notify.Envelope) { email.MessageOf(e).HTML, email.MessageOf(e).Text = "", "" }, "message"},
		// Domains that IDNA refuses, which have no ASCII form to send.
		{"bad IDN domain in to", func(e *notify.Envelope) { e.To = "a@bücher-.example" }, "to"},
		{"undecodable A-label in to", func(e *notify.Envelope) { e.To = "a@xn--zz.example" }, "to"},
		{"bad IDN domain in reply_to", func(e *notify.Envelope) { email.MessageOf(e).ReplyTo = "a@bü_cher.example" }, "reply_to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := htmlEnvelope("a@example.com", email.PurposeOTP)
			tc.edit(env)
			err := sendErr(t, p, env)
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) == 0 || ne.Fields[0].Field != tc.field {
				t.Errorf("got %v, want InvalidArgument on %q", err, tc.field)
			}
		})
	}
	if srv.Received() != 0 {
		t.Errorf("server got %d messages from bad envelopes", srv.Received())
	}
}

func TestConfigErrors(t *testing.T) {
	good := smtp.Server{Host: "smtp.example.com", From: "noreply@shop.example"}
	for _, tc := range []struct {
		name string
		edit func(*smtp.Config)
		want string
	}{
		{"no host", func(c *smtp.Config) { c.Default.Host = "" }, "Host"},
		{"no from", func(c *smtp.Config) { c.Default.From = "" }, "From"},
		{"from with name", func(c *smtp.Config) { c.Default.From = "Shop <noreply@shop.example>" }, "From"},
		{"from name with LF", func(c *smtp.Config) { c.Default.FromName = "Shop\nBcc: x" }, "FromName"},
		{"from name with an encoded word", func(c *smtp.Config) { c.Default.FromName = "=?utf-8?b?QmFuaw==?=" }, "FromName"},
		{"from with NBSP", func(c *smtp.Config) { c.Default.From = "noreply@shop\u00a0example" }, "From must not contain space characters"},
		{"from with a bad IDN domain", func(c *smtp.Config) { c.Default.From = "noreply@bücher-.example" }, "From"},
		{"bad port", func(c *smtp.Config) { c.Default.Port = 70000 }, "Port"},
		{"bad encryption", func(c *smtp.Config) { c.Default.Encryption = 9 }, "Encryption"},
		{"bad auth", func(c *smtp.Config) { c.Default.Auth = "CRAM-MD5" }, "Auth"},
		{"login in the clear", func(c *smtp.Config) {
			c.Default.Encryption, c.Default.Username, c.Default.Password = smtp.EncryptionNone, "u", testPassword
		}, "expose the password"},
		{"negative pool", func(c *smtp.Config) { c.PoolSize = -1 }, "PoolSize"},
		{"unknown purpose", func(c *smtp.Config) {
			c.Purposes = map[email.Purpose]smtp.Server{"newsletter": good}
		}, "unknown purpose"},
		{"bad purpose server", func(c *smtp.Config) {
			c.Purposes = map[email.Purpose]smtp.Server{email.PurposeOTP: {Host: "x"}}
		}, `Purposes["otp"]`},
		{"http unsubscribe", func(c *smtp.Config) { c.Default.ListUnsubscribeURL = "http://shop.example/u" }, "ListUnsubscribeURL"},
		{"bad unsubscribe mailto", func(c *smtp.Config) { c.Default.ListUnsubscribeMailto = "not an address" }, "ListUnsubscribeMailto"},
		{"negative timeout", func(c *smtp.Config) { c.Default.SendTimeout = -time.Second }, "timeouts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smtp.Config{Default: good}
			tc.edit(&cfg)
			p, err := smtp.New(cfg)
			if err == nil {
				p.Close()
				t.Fatalf("New succeeded, want an error about %s", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("New's error shows the password: %v", err)
			}
		})
	}
	// The loopback exception and AllowInsecureAuth.
	for _, s := range []smtp.Server{
		{Host: "127.0.0.1", From: "a@shop.example", Encryption: smtp.EncryptionNone, Username: "u", Password: "p"},
		{Host: "relay.internal", From: "a@shop.example", Encryption: smtp.EncryptionNone, Username: "u", Password: "p", AllowInsecureAuth: true},
	} {
		p, err := smtp.New(smtp.Config{Default: s})
		if err != nil {
			t.Errorf("New(%s): %v", s.Host, err)
			continue
		}
		p.Close()
	}
}

func TestCloseAndHealth(t *testing.T) {
	srv := startServer(t)
	p, err := smtp.New(smtp.Config{Name: "mail-main", Default: serverConfig(srv, smtp.EncryptionNone)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "mail-main" {
		t.Errorf("Name = %q", p.Name())
	}
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	send(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
	if srv.Connections() != 1 {
		t.Errorf("CheckHealth's connection was not reused: %d connections", srv.Connections())
	}
	p.Close()
	p.Close()
	err = sendErr(t, p, htmlEnvelope("a@example.com", email.PurposeOTP))
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("Send after Close: %v", err)
	}
	if err := p.CheckHealth(t.Context()); err == nil {
		t.Error("CheckHealth after Close succeeded")
	}
}
