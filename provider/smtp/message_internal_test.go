package smtp

import (
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/rules"
)

func testSettings(t testing.TB) *settings {
	t.Helper()
	st, err := Server{Host: "127.0.0.1", From: "noreply@shop.example", FromName: "Shop",
		ListUnsubscribeURL: "https://shop.example/u?e={email}"}.settings()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAppendHeader(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"short", "Subject: short\r\n"},
		{"", "Subject: \r\n"},
		{strings.Repeat("word ", 20) + "end",
			"Subject: word word word word word word word word word word word word word word\r\n word word word word word word end\r\n"},
		// A long word stays whole; runs of spaces are never folded.
		{strings.Repeat("x", 100) + "  y", "Subject: " + strings.Repeat("x", 100) + "  y\r\n"},
	} {
		got := string(appendHeader(nil, "Subject", tc.value))
		if got != tc.want {
			t.Errorf("appendHeader(%q)\n got %q\nwant %q", tc.value, got, tc.want)
		}
	}
}

func TestEncodeText(t *testing.T) {
	for _, tc := range []struct {
		in      string
		encoded bool
	}{
		{"Your code", false},
		{"Order #42: 50% off!", false},
		{"", false},
		{" leading", true},
		{"trailing ", true},
		{"two  spaces", true},
		{"tab\there", true},
		{"=?utf-8?q?x?= looks encoded", true},
		{"₹1,234", true},
		{strings.Repeat("x", 995), true},
	} {
		got := encodeText(tc.in)
		if (got != tc.in) != tc.encoded {
			t.Errorf("encodeText(%q) = %q, encoded %v, want %v", tc.in, got, got != tc.in, tc.encoded)
		}
		dec, err := new(mime.WordDecoder).DecodeHeader(got)
		if err != nil || dec != tc.in {
			t.Errorf("decode(encodeText(%q)) = %q, %v", tc.in, dec, err)
		}
		for _, w := range strings.Fields(got) {
			if strings.HasPrefix(w, "=?") && len(w) > 75 {
				t.Errorf("encoded word of %d characters: %q", len(w), w)
			}
		}
	}
}

func TestBuildAllocs(t *testing.T) {
	st := testSettings(t)
	env := &notify.Envelope{ID: "3f1c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6", To: "asha@example.com", Content: &email.Message{
		Subject: "Your order has shipped", HTML: strings.Repeat("<p>Thank you for shopping with us.</p>\n", 28),
		Text: strings.Repeat("Thank you for shopping with us.\n", 28),
	}}
	buf := make([]byte, 0, 8192)
	allocs := testing.AllocsPerRun(100, func() {
		_, b, err := build(buf, st, env, wire{to: env.To}, time.Unix(1700000000, 0))
		if err != nil {
			t.Fatal(err)
		}
		buf = b[:0]
	})
	// Addresses formatted by net/mail, the Message-ID and boundary, and
	// the message string: a handful, against go-simple-mail's ~184.
	if allocs > 12 {
		t.Errorf("build makes %v allocations, want at most 12", allocs)
	}
}

// FuzzBuild checks that every message build makes from header values the
// channel lets through parses with net/mail and gives back exactly what
// went in: subject, sender name and both bodies.
func FuzzBuild(f *testing.F) {
	f.Add("Your order has shipped", "Shop", "<p>Hi &amp; bye</p>", "Hi & bye", "campaign")
	f.Add("Invoice №42 — ₹1,234.50", "Café Ünïcode, \"Billing\"", "", "नमस्ते\n.\n..", "invoice")
	f.Add(" two  spaces ", "", "<p>x</p>", "", "otp")
	f.Add("=?utf-8?q?fake?=", strings.Repeat("n", 250), "", "a\rb\r\nc\nd", "")
	f.Add(strings.Repeat("long subject ", 120), "x", strings.Repeat("y", 3000), "z", "notification")
	st := testSettings(f)
	f.Fuzz(func(t *testing.T, subject, fromName, html, text, purpose string) {
		if hasCRLF(subject) || rules.DisplayName(fromName) != "" || !utf8.ValidString(subject) {
			t.Skip("the channel rejects these")
		}
		if html == "" && text == "" {
			t.Skip("no body")
		}
		env := &notify.Envelope{ID: "fuzz-1", To: "asha@example.com", Content: &email.Message{
			Purpose: email.Purpose(purpose), Subject: subject, FromName: fromName, HTML: html, Text: text,
		}}
		w, err := checkEnvelope(env)
		if err != nil {
			t.Fatalf("checkEnvelope: %v", err)
		}
		msg, _, err := build(nil, st, env, w, time.Unix(1700000000, 0))
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		for _, line := range strings.Split(msg.data, "\r\n") {
			if len(line) > maxLine {
				t.Fatalf("line of %d bytes", len(line))
			}
			if strings.ContainsAny(line, "\r\n") {
				t.Fatalf("bare CR or LF in %q", line)
			}
		}
		m, err := mail.ReadMessage(strings.NewReader(msg.data))
		if err != nil {
			t.Fatalf("net/mail: %v", err)
		}
		if got, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject")); err != nil || got != subject {
			t.Errorf("Subject round trip: %q, %v; want %q", got, err, subject)
		}
		from, err := m.Header.AddressList("From")
		wantName := fromName
		if wantName == "" {
			wantName = "Shop"
		}
		if err != nil || len(from) != 1 || from[0].Name != wantName || from[0].Address != "noreply@shop.example" {
			t.Errorf("From %q parsed as %v, %v; want name %q", m.Header.Get("From"), from, err, wantName)
		}
		if (purpose == "campaign") != (m.Header.Get("List-Unsubscribe") != "") {
			t.Errorf("purpose %q with List-Unsubscribe %q", purpose, m.Header.Get("List-Unsubscribe"))
		}
		parts := map[string]string{}
		mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		if mt == "multipart/alternative" {
			r := multipart.NewReader(m.Body, params["boundary"])
			for {
				p, err := r.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("multipart: %v", err)
				}
				b, _ := io.ReadAll(p)
				pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
				parts[pt] = string(b)
			}
		} else {
			// Wrap the single part in a multipart reader's decoding by
			// hand: only 7bit and quoted-printable occur.
			b, _ := io.ReadAll(m.Body)
			if m.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
				b, _ = io.ReadAll(qpReader(string(b)))
			}
			parts[mt] = strings.TrimSuffix(string(b), "\r\n")
		}
		for typ, want := range map[string]string{"text/html": html, "text/plain": text} {
			if want == "" {
				continue
			}
			got, ok := parts[typ]
			if !ok {
				t.Fatalf("no %s part", typ)
			}
			if norm(got) != strings.TrimSuffix(norm(want), "\n") && norm(got) != norm(want) {
				t.Errorf("%s body round trip:\n got %q\nwant %q", typ, got, want)
			}
		}
	})
}

// norm makes every line ending LF: SMTP carries CRLF only.
func norm(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func qpReader(s string) io.Reader { return quotedprintable.NewReader(strings.NewReader(s)) }
