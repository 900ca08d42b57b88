package smtp

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

func TestDefaultHelo(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"mta1.shop.example", nil, "mta1.shop.example"},
		{"vm", nil, "vm"},
		{"3f9c2a1b7e4d", nil, "3f9c2a1b7e4d"},
		{"", errors.New("uname failed"), "localhost"},
		{"mta1.shop.example", errors.New("uname failed"), "localhost"},
		{"", nil, "localhost"},
		{"my_host", nil, "localhost"},
		{"host name", nil, "localhost"},
		{"host\r\nMAIL FROM:<x@evil.example>", nil, "localhost"},
		{"-host", nil, "localhost"},
		{"host.", nil, "localhost"},
		{"bücher", nil, "localhost"},
		{strings.Repeat("a", 64), nil, "localhost"},
		{strings.Repeat("abcdefg.", 32) + "example", nil, "localhost"},
	} {
		got := defaultHelo(func() (string, error) { return tc.name, tc.err })
		if got != tc.want {
			t.Errorf("defaultHelo(%q, %v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestValidHelo(t *testing.T) {
	for _, s := range []string{"localhost", "mail.example.com", "MTA-1.Shop.Example", "[192.0.2.1]", "[IPv6:2001:db8::1]"} {
		if !validHelo(s) {
			t.Errorf("validHelo(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a b", "a\r\nb", "a_b.example", "[::1]", "[IPv6:192.0.2.1]", "[not-an-ip]", "[192.0.2.1", "x..y", "é.example"} {
		if validHelo(s) {
			t.Errorf("validHelo(%q) = true", s)
		}
	}
}

// TestHeloOnTheWire: a real loopback server sees the configured EHLO
// name, and by default the machine's host name (or "localhost" when it
// is not a valid one).
func TestHeloOnTheWire(t *testing.T) {
	srv := smtptest.NewServer()
	t.Cleanup(srv.Close)
	want := "localhost"
	if h, err := os.Hostname(); err == nil && isHostName(h) {
		want = h
	}
	for _, tc := range []struct{ helo, want string }{
		{"", want},
		{"mta1.shop.example", "mta1.shop.example"},
		{"[127.0.0.1]", "[127.0.0.1]"},
	} {
		p, err := New(Config{Default: Server{Host: srv.Host, Port: srv.Port, Encryption: EncryptionNone,
			From: "noreply@shop.example", Helo: tc.helo}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err = p.Send(ctx, &notify.Envelope{ID: "helo-" + tc.want, To: "a@example.com",
			Content: &email.Message{Subject: "Hi", Text: "Hi"}})
		cancel()
		_ = p.Close()
		if err != nil {
			t.Fatalf("Send with Helo %q: %v", tc.helo, err)
		}
		msgs := srv.Messages()
		if got := msgs[len(msgs)-1].Helo; got != tc.want {
			t.Errorf("Helo %q: the server saw EHLO %q, want %q", tc.helo, got, tc.want)
		}
	}
	for _, bad := range []string{"bad name", "x\r\nRSET", "under_score.example"} {
		if p, err := New(Config{Default: Server{Host: srv.Host, From: "noreply@shop.example", Helo: bad}}); err == nil {
			_ = p.Close()
			t.Errorf("New accepted Helo %q", bad)
		} else if !strings.Contains(err.Error(), "Helo") {
			t.Errorf("New with Helo %q: %v, want it to name Helo", bad, err)
		}
	}
}
