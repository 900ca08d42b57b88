package smtp_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
)

var (
	testSecret  = []byte("test-secret-0123456789abcdefghijklmnop")
	otherSecret = []byte("another-secret-0123456789abcdefghijkl")
)

func TestUnsubscribeTokenRoundTrip(t *testing.T) {
	for _, addr := range []string{"a@example.com", "Asha.Rao+news@shop.example", "user@bücher.example", "x", strings.Repeat("a", 242) + "@example.com"} {
		tok, err := smtp.UnsubscribeToken(testSecret, addr)
		if err != nil {
			t.Fatalf("UnsubscribeToken(%q): %v", addr, err)
		}
		again, _ := smtp.UnsubscribeToken(testSecret, addr)
		if again != tok {
			t.Errorf("tokens of %q differ: %q, %q", addr, tok, again)
		}
		got, err := smtp.VerifyUnsubscribeToken(testSecret, tok)
		if err != nil || got != addr {
			t.Errorf("VerifyUnsubscribeToken(Token(%q)) = %q, %v", addr, got, err)
		}
		// Opaque: neither the address nor an encoding of it shows.
		for _, leak := range []string{addr, base64.RawURLEncoding.EncodeToString([]byte(addr)), base64.StdEncoding.EncodeToString([]byte(addr))} {
			if len(addr) > 3 && strings.Contains(tok, leak) {
				t.Errorf("token %q shows the address %q", tok, addr)
			}
		}
		if strings.ContainsFunc(tok, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_')
		}) {
			t.Errorf("token %q needs escaping in a URL", tok)
		}
		// Another secret neither makes nor accepts it.
		other, _ := smtp.UnsubscribeToken(otherSecret, addr)
		if other == tok {
			t.Error("two secrets make the same token")
		}
		if _, err := smtp.VerifyUnsubscribeToken(otherSecret, tok); !errors.Is(err, smtp.ErrInvalidUnsubscribeToken) {
			t.Errorf("another secret: %v", err)
		}
	}
	a, _ := smtp.UnsubscribeToken(testSecret, "a@example.com")
	b, _ := smtp.UnsubscribeToken(testSecret, "b@example.com")
	if a[:24] == b[:24] {
		t.Errorf("tokens of different addresses share a prefix: %q, %q", a, b)
	}
}

// TestUnsubscribeTokenTampered: changing any bit of a token, or cutting
// or extending it, is refused; nothing panics.
func TestUnsubscribeTokenTampered(t *testing.T) {
	tok, _ := smtp.UnsubscribeToken(testSecret, "victim@example.com")
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := range 8 {
			b := bytes.Clone(raw)
			b[i] ^= 1 << bit
			forged := base64.RawURLEncoding.EncodeToString(b)
			if addr, err := smtp.VerifyUnsubscribeToken(testSecret, forged); !errors.Is(err, smtp.ErrInvalidUnsubscribeToken) {
				t.Fatalf("byte %d bit %d flipped: %q, %v", i, bit, addr, err)
			}
		}
	}
	for _, forged := range []string{
		"", "x", tok[:len(tok)-1], tok + "A", tok + "=", "!" + tok[1:], strings.Repeat("A", 10000),
		base64.RawURLEncoding.EncodeToString([]byte("\x01" + strings.Repeat("\x00", 16) + "victim@example.com")),
		base64.RawURLEncoding.EncodeToString(append([]byte{2}, raw[1:]...)),
		base64.RawURLEncoding.EncodeToString([]byte("victim@example.com")),
	} {
		addr, err := smtp.VerifyUnsubscribeToken(testSecret, forged)
		if !errors.Is(err, smtp.ErrInvalidUnsubscribeToken) || addr != "" {
			t.Errorf("VerifyUnsubscribeToken(%.40q) = %q, %v", forged, addr, err)
		}
		if err != nil && (strings.Contains(err.Error(), string(testSecret)) || (len(forged) > 8 && strings.Contains(err.Error(), forged))) {
			t.Errorf("error shows the secret or the token: %v", err)
		}
	}
}

func TestUnsubscribeTokenArguments(t *testing.T) {
	short := testSecret[:smtp.MinUnsubscribeSecretLen-1]
	if _, err := smtp.UnsubscribeToken(short, "a@example.com"); err == nil || strings.Contains(err.Error(), string(short)) {
		t.Errorf("short secret: %v", err)
	}
	if _, err := smtp.VerifyUnsubscribeToken(short, "abc"); err == nil || errors.Is(err, smtp.ErrInvalidUnsubscribeToken) {
		t.Errorf("short secret when verifying: %v, want an error of its own", err)
	}
	for _, addr := range []string{"", strings.Repeat("a", 255)} {
		if _, err := smtp.UnsubscribeToken(testSecret, addr); err == nil {
			t.Errorf("UnsubscribeToken accepted an address of %d bytes", len(addr))
		}
	}
}

// FuzzVerifyUnsubscribeToken: whatever the token, Verify does not panic;
// what it accepts is exactly what UnsubscribeToken makes (tokens are
// canonical); any address round-trips.
func FuzzVerifyUnsubscribeToken(f *testing.F) {
	tok, _ := smtp.UnsubscribeToken(testSecret, "a@example.com")
	f.Add(tok, "a@example.com")
	f.Add(tok[:10], "")
	f.Add("AQ", "user@bücher.example")
	f.Add("====", "\x00\xff")
	f.Fuzz(func(t *testing.T, token, addr string) {
		got, err := smtp.VerifyUnsubscribeToken(testSecret, token)
		if err == nil {
			if again, _ := smtp.UnsubscribeToken(testSecret, got); again != token {
				t.Errorf("accepted %q for %q, whose token is %q", token, got, again)
			}
		} else if !errors.Is(err, smtp.ErrInvalidUnsubscribeToken) || got != "" {
			t.Errorf("VerifyUnsubscribeToken(%q) = %q, %v", token, got, err)
		}
		if addr == "" || len(addr) > 254 {
			return
		}
		tok, err := smtp.UnsubscribeToken(testSecret, addr)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := smtp.VerifyUnsubscribeToken(testSecret, tok); err != nil || back != addr {
			t.Errorf("round trip of %q: %q, %v", addr, back, err)
		}
		if _, err := smtp.VerifyUnsubscribeToken(otherSecret, tok); err == nil {
			t.Errorf("another secret accepted the token of %q", addr)
		}
	})
}

// TestUnsubscribeTokenOnTheWire: campaign mail carries the recipient's
// token in List-Unsubscribe, and the host's endpoint gets the recipient
// back from it.
func TestUnsubscribeTokenOnTheWire(t *testing.T) {
	srv := startServer(t)
	cfg := serverConfig(srv, smtp.EncryptionNone)
	cfg.ListUnsubscribeURL = "https://shop.example/unsubscribe?t={token}"
	cfg.UnsubscribeSecret = testSecret
	p := newProvider(t, smtp.Config{Default: cfg})
	send(t, p, htmlEnvelope("asha+news@example.com", email.PurposeCampaign))
	h := parse(t, srv.Messages()[0]).msg.Header
	lu := h.Get("List-Unsubscribe")
	tok, ok := strings.CutPrefix(lu, "<https://shop.example/unsubscribe?t=")
	if !ok || !strings.HasSuffix(tok, ">") {
		t.Fatalf("List-Unsubscribe = %q", lu)
	}
	tok = strings.TrimSuffix(tok, ">")
	if strings.Contains(lu, "asha") || strings.Contains(lu, "example.com") {
		t.Errorf("List-Unsubscribe shows the address: %q", lu)
	}
	if addr, err := smtp.VerifyUnsubscribeToken(testSecret, tok); err != nil || addr != "asha+news@example.com" {
		t.Errorf("the token in the header names %q, %v", addr, err)
	}
	if lup := h.Get("List-Unsubscribe-Post"); lup != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post = %q", lup)
	}
}

func TestUnsubscribeConfigErrors(t *testing.T) {
	good := smtp.Server{Host: "smtp.example.com", From: "news@shop.example",
		ListUnsubscribeURL: "https://shop.example/u?t={token}", UnsubscribeSecret: testSecret}
	if p, err := smtp.New(smtp.Config{Default: good}); err != nil {
		t.Fatalf("New: %v", err)
	} else {
		_ = p.Close()
	}
	for _, tc := range []struct {
		name string
		edit func(*smtp.Server)
		want string
	}{
		{"short secret", func(s *smtp.Server) { s.UnsubscribeSecret = testSecret[:31] }, "UnsubscribeSecret must be at least 32 bytes"},
		{"email with a secret", func(s *smtp.Server) { s.ListUnsubscribeURL = "https://shop.example/u?e={email}&t={token}" }, "must not use {email}"},
		{"secret without token", func(s *smtp.Server) { s.ListUnsubscribeURL = "https://shop.example/u" }, "no {token}"},
		{"secret without URL", func(s *smtp.Server) {
			s.ListUnsubscribeURL, s.ListUnsubscribeMailto = "", "unsubscribe@shop.example"
		}, "no {token}"},
		{"token without secret", func(s *smtp.Server) { s.UnsubscribeSecret = nil }, "needs UnsubscribeSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.edit(&s)
			p, err := smtp.New(smtp.Config{Default: s})
			if err == nil {
				_ = p.Close()
				t.Fatalf("New succeeded, want an error about %s", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), string(testSecret[:16])) {
				t.Errorf("New's error shows the secret: %v", err)
			}
		})
	}
}
