package smtp_test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toorop/go-dkim"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
)

// readKey returns a test key from testdata. The keys there sign nothing
// but tests.
func readKey(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dnsRecord is the TXT record that publishes the public half of pemKey.
func dnsRecord(t testing.TB, pemKey []byte) (string, *rsa.PublicKey) {
	t.Helper()
	block, _ := pem.Decode(pemKey)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := &k.(*rsa.PrivateKey).PublicKey
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der), pub
}

// signature is a parsed DKIM-Signature header field.
type signature struct {
	raw  string            // the field as received, folded
	tags map[string]string // tag -> value, white space removed
}

func (s signature) headers() []string {
	var out []string
	for _, h := range strings.Split(s.tags["h"], ":") {
		out = append(out, strings.ToLower(h))
	}
	return out
}

// fields splits a message's header section into its fields, unfolded
// lines joined with their CRLF kept, and returns the body.
func fields(t *testing.T, data []byte) ([]string, []byte) {
	t.Helper()
	head, body, ok := bytes.Cut(data, []byte("\r\n\r\n"))
	if !ok {
		t.Fatal("the message has no blank line after its header")
	}
	var out []string
	for _, line := range strings.Split(string(head), "\r\n") {
		if (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) && len(out) > 0 {
			out[len(out)-1] += "\r\n" + line
			continue
		}
		out = append(out, line)
	}
	return out, body
}

func parseSignature(t *testing.T, data []byte) signature {
	t.Helper()
	hs, _ := fields(t, data)
	var sigs []string
	for _, f := range hs {
		if strings.HasPrefix(strings.ToLower(f), "dkim-signature:") {
			sigs = append(sigs, f)
		}
	}
	if len(sigs) != 1 {
		t.Fatalf("%d DKIM-Signature fields, want 1:\n%s", len(sigs), data)
	}
	s := signature{raw: sigs[0], tags: map[string]string{}}
	_, v, _ := strings.Cut(sigs[0], ":")
	for _, tag := range strings.Split(v, ";") {
		k, val, _ := strings.Cut(tag, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		s.tags[k] = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, val)
	}
	return s
}

var wsp = regexp.MustCompile(`[ \t]+`)

// relaxedHeader is RFC 6376 3.4.2.
func relaxedHeader(f string) string {
	name, value, _ := strings.Cut(f, ":")
	value = strings.NewReplacer("\r\n", "").Replace(value)
	value = strings.TrimSpace(wsp.ReplaceAllString(value, " "))
	return strings.ToLower(strings.TrimSpace(name)) + ":" + value
}

// relaxedBody is RFC 6376 3.4.4.
func relaxedBody(body []byte) []byte {
	lines := strings.Split(string(body), "\r\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(wsp.ReplaceAllString(l, " "), " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil
	}
	return []byte(strings.Join(lines, "\r\n") + "\r\n")
}

// verifyIndependently recomputes the signature of data (relaxed/relaxed,
// rsa-sha256) with the public key, without go-dkim.
func verifyIndependently(t *testing.T, data []byte, pub *rsa.PublicKey) error {
	t.Helper()
	sig := parseSignature(t, data)
	if sig.tags["a"] != "rsa-sha256" || sig.tags["c"] != "relaxed/relaxed" {
		return fmt.Errorf("a=%s c=%s", sig.tags["a"], sig.tags["c"])
	}
	hs, body := fields(t, data)
	bh := sha256.Sum256(relaxedBody(body))
	if got := base64.StdEncoding.EncodeToString(bh[:]); got != sig.tags["bh"] {
		return fmt.Errorf("body hash %s, signature says %s", got, sig.tags["bh"])
	}
	used := make([]bool, len(hs))
	var in strings.Builder
	for _, name := range sig.headers() {
		for i := len(hs) - 1; i >= 0; i-- { // the last unused instance
			n, _, _ := strings.Cut(hs[i], ":")
			if !used[i] && strings.EqualFold(strings.TrimSpace(n), name) {
				used[i] = true
				in.WriteString(relaxedHeader(hs[i]) + "\r\n")
				break
			}
		}
	}
	// The signature field itself, with b= emptied, without its CRLF.
	noB := regexp.MustCompile(`(^|;)(\s*b\s*=)[^;]*`).ReplaceAllString(sig.raw, "$1$2")
	in.WriteString(relaxedHeader(noB))
	h := sha256.Sum256([]byte(in.String()))
	b, err := base64.StdEncoding.DecodeString(sig.tags["b"])
	if err != nil {
		return err
	}
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], b)
}

// TestDKIMOnTheWire: a loopback server receives signed campaign mail;
// the signature verifies with go-dkim's Verify (the public key served as
// the DNS record) and with an independent recomputation; its h= tag
// covers both List-Unsubscribe fields and the other required ones;
// changing either List-Unsubscribe field breaks it.
func TestDKIMOnTheWire(t *testing.T) {
	key := readKey(t, "dkim-test-rsa2048.pem")
	record, pub := dnsRecord(t, key)
	lookup := dkim.DNSOptLookupTXT(func(name string) ([]string, error) {
		if name != "s2025._domainkey.shop.example" {
			return nil, errors.New("no such host")
		}
		return []string{record}, nil
	})
	srv := startServer(t)
	cfg := serverConfig(srv, smtp.EncryptionNone)
	cfg.ListUnsubscribeURL = "https://shop.example/unsubscribe?t={token}"
	cfg.UnsubscribeSecret = testSecret
	cfg.ListUnsubscribeMailto = "unsubscribe@shop.example"
	cfg.DKIM = smtp.DKIM{Domain: "shop.example", Selector: "s2025", PrivateKey: key}
	p := newProvider(t, smtp.Config{Default: cfg})

	verify := func(t *testing.T, data []byte) error {
		t.Helper()
		d := bytes.Clone(data)
		status, err := dkim.Verify(&d, lookup)
		if err == nil && status != dkim.SUCCESS {
			err = fmt.Errorf("status %v", status)
		}
		ierr := verifyIndependently(t, data, pub)
		if (err == nil) != (ierr == nil) {
			t.Errorf("go-dkim says %v, the independent check %v", err, ierr)
		}
		return errors.Join(err, ierr)
	}

	for _, purpose := range []email.Purpose{email.PurposeCampaign, email.PurposeOTP} {
		t.Run(string(purpose), func(t *testing.T) {
			before := srv.Received()
			env := htmlEnvelope("asha@example.com", purpose)
			env.ID = "dkim-" + string(purpose)
			email.MessageOf(env).ReplyTo = "desk@shop.example"
			send(t, p, env)
			data := srv.Messages()[before].Data
			if err := verify(t, data); err != nil {
				t.Fatalf("the signature does not verify: %v\n%s", err, data)
			}
			sig := parseSignature(t, data)
			if sig.tags["d"] != "shop.example" || sig.tags["s"] != "s2025" || sig.tags["t"] == "" {
				t.Errorf("d=%s s=%s t=%s", sig.tags["d"], sig.tags["s"], sig.tags["t"])
			}
			want := []string{"from", "to", "subject", "date", "message-id", "reply-to", "mime-version", "content-type"}
			if purpose == email.PurposeCampaign {
				want = append(want, "list-unsubscribe", "list-unsubscribe-post")
			}
			if got := sig.headers(); !slices.Equal(got, want) {
				t.Errorf("h= %v, want %v", got, want)
			}
			if strings.Contains(sig.raw, string(key[40:80])) {
				t.Error("the signature field shows the private key")
			}
			if purpose != email.PurposeCampaign {
				return
			}
			// Each List-Unsubscribe field is covered: a changed one fails.
			for _, edit := range [][2]string{
				{"List-Unsubscribe: <https://shop.example/unsubscribe?t=", "List-Unsubscribe: <https://evil.example/unsubscribe?t="},
				{"List-Unsubscribe-Post: List-Unsubscribe=One-Click", "List-Unsubscribe-Post: List-Unsubscribe=Two-Clicks"},
			} {
				forged := bytes.Replace(data, []byte(edit[0]), []byte(edit[1]), 1)
				if bytes.Equal(forged, data) {
					t.Fatalf("%q is not in the message:\n%s", edit[0], data)
				}
				if err := verify(t, forged); err == nil {
					t.Errorf("changing %q kept the signature valid", edit[0])
				}
			}
			// A body change fails too.
			if err := verify(t, bytes.Replace(data, []byte("Track it"), []byte("Track me"), 1)); err == nil {
				t.Error("a changed body kept the signature valid")
			}
		})
	}
}

func TestDKIMConfigErrors(t *testing.T) {
	key := readKey(t, "dkim-test-rsa2048.pem")
	keyText := string(key[100:160]) // a piece of the key that no error may show
	good := smtp.Server{Host: "smtp.example.com", From: "noreply@mail.shop.example",
		DKIM: smtp.DKIM{Domain: "shop.example", Selector: "s2025", PrivateKey: key}}
	if p, err := smtp.New(smtp.Config{Default: good}); err != nil {
		t.Fatalf("a parent domain of From: %v", err)
	} else {
		_ = p.Close()
	}
	for _, tc := range []struct {
		name string
		edit func(*smtp.DKIM)
		want string
	}{
		{"other domain", func(d *smtp.DKIM) { d.Domain = "other.example" }, `DKIM.Domain "other.example" does not match the From domain "mail.shop.example"`},
		{"suffix that is not a parent", func(d *smtp.DKIM) { d.Domain = "hop.example" }, "does not match the From domain"},
		{"child of From", func(d *smtp.DKIM) { d.Domain = "x.mail.shop.example" }, "does not match the From domain"},
		{"no domain", func(d *smtp.DKIM) { d.Domain = "" }, "DKIM.Domain is required"},
		{"bad domain", func(d *smtp.DKIM) { d.Domain = "shop example" }, "DKIM.Domain"},
		{"no selector", func(d *smtp.DKIM) { d.Selector = "" }, "DKIM.Selector is required"},
		{"bad selector", func(d *smtp.DKIM) { d.Selector = "s 1;x=y" }, "DKIM.Selector"},
		{"no key", func(d *smtp.DKIM) { d.PrivateKey = nil }, "DKIM.PrivateKey is required"},
		{"not PEM", func(d *smtp.DKIM) { d.PrivateKey = key[30:] }, "DKIM.PrivateKey is not PEM-encoded"},
		{"corrupt key", func(d *smtp.DKIM) {
			d.PrivateKey = bytes.Replace(key, key[100:120], bytes.Repeat([]byte("A"), 20), 1)
		}, "DKIM.PrivateKey is not a valid"},
		{"public key", func(d *smtp.DKIM) {
			d.PrivateKey = []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
		}, `DKIM.PrivateKey is a PEM block of type "PUBLIC KEY"`},
		{"Ed25519 key", func(d *smtp.DKIM) { d.PrivateKey = readKey(t, "dkim-test-ed25519.pem") }, "DKIM.PrivateKey is an Ed25519 key"},
		{"512-bit key", func(d *smtp.DKIM) { d.PrivateKey = readKey(t, "dkim-test-rsa512.pem") }, "DKIM.PrivateKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.edit(&s.DKIM)
			p, err := smtp.New(smtp.Config{Default: s})
			if err == nil {
				_ = p.Close()
				t.Fatalf("New succeeded, want an error about %s", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), keyText) {
				t.Errorf("New's error shows the key: %v", err)
			}
		})
	}
	// Printing or logging a configuration never shows the key.
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("smtp", "dkim", good.DKIM)
	for _, out := range []string{fmt.Sprint(good), fmt.Sprintf("%+v", good), fmt.Sprintf("%#v", good.DKIM), fmt.Sprintf("%x", good.DKIM), logged.String()} {
		if strings.Contains(out, keyText) || strings.Contains(out, "BEGIN") || strings.Contains(out, fmt.Sprintf("%x", key[:20])) {
			t.Errorf("the key shows in %.200q", out)
		}
		if !strings.Contains(out, "s2025") {
			t.Errorf("the selector is missing from %.200q", out)
		}
	}
}
