package smtp

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toorop/go-dkim"
)

// DKIM configures DKIM signatures (RFC 6376) on a Server's mail. The
// zero value signs nothing; setting any field turns signing on and makes
// all three required.
//
// Signatures use rsa-sha256 with relaxed/relaxed canonicalization and a
// t= timestamp, and cover From, To, Subject, Date, Message-ID,
// MIME-Version, Content-Type and, when the message has them, Cc,
// Reply-To, Content-Transfer-Encoding, List-Unsubscribe and List-Unsubscribe-Post
// (RFC 8058 requires one-click unsubscribe headers to be signed). The
// signer is github.com/toorop/go-dkim, which go-simple-mail already
// brings; it signs with RSA only.
//
// Publish the public key as a TXT record at
// <Selector>._domainkey.<Domain>: "v=DKIM1; k=rsa; p=<base64 of the
// PKIX public key>".
//
// Printed with the fmt package or logged with log/slog, a DKIM shows its
// domain and selector and never its key.
type DKIM struct {
	// Domain is the signing domain (d=): the From address's domain, or a
	// parent domain of it (relaxed DMARC alignment), in ASCII (an IDN in
	// its xn-- form). New refuses a domain that does not match From.
	Domain string
	// Selector (s=) names the key among the domain's keys: a DNS label
	// or dot-separated labels, such as "mail2025".
	Selector string
	// PrivateKey is the signing key, PEM-encoded: an RSA key of at least
	// 1024 bits (2048 recommended) as PKCS #1 ("RSA PRIVATE KEY") or
	// PKCS #8 ("PRIVATE KEY"). New refuses other keys, Ed25519 included
	// (the signer does not support RFC 8463), naming the field and never
	// showing the key. Keep it as secret as a password.
	PrivateKey []byte
}

// enabled reports whether any field is set.
func (d DKIM) enabled() bool {
	return d.Domain != "" || d.Selector != "" || len(d.PrivateKey) > 0
}

// Format prints d without its private key, for every verb.
func (d DKIM) Format(f fmt.State, verb rune) {
	key := "none"
	if len(d.PrivateKey) > 0 {
		key = "[redacted]"
	}
	fmt.Fprintf(f, "{Domain:%s Selector:%s PrivateKey:%s}", d.Domain, d.Selector, key)
}

// LogValue implements slog.LogValuer: the domain and the selector, never
// the key.
func (d DKIM) LogValue() slog.Value {
	return slog.GroupValue(slog.String("domain", d.Domain), slog.String("selector", d.Selector),
		slog.Bool("private_key_set", len(d.PrivateKey) > 0))
}

// dkimSigner holds a checked DKIM configuration.
type dkimSigner struct {
	domain, selector string
	// key is the private key re-encoded as PKCS #1 PEM, the form go-dkim
	// parses without trying another.
	key []byte
}

// newDKIMSigner checks d against the From domain; every message names
// the field and none shows the key. It returns nil, nil when d is off.
func newDKIMSigner(d DKIM, fromDomain string) (*dkimSigner, []string) {
	if !d.enabled() {
		return nil, nil
	}
	var errs []string
	domain := strings.ToLower(d.Domain)
	switch {
	case d.Domain == "":
		errs = append(errs, "DKIM.Domain is required when DKIM is configured")
	case !isHostName(d.Domain) || !strings.Contains(d.Domain, "."):
		errs = append(errs, fmt.Sprintf("DKIM.Domain %q is not a domain name such as example.com (use the xn-- form of an IDN)", d.Domain))
	case fromDomain != "":
		from := strings.ToLower(fromDomain)
		if from != domain && !strings.HasSuffix(from, "."+domain) {
			errs = append(errs, fmt.Sprintf("DKIM.Domain %q does not match the From domain %q: it must be that domain or a parent of it", d.Domain, fromDomain))
		}
	}
	switch {
	case d.Selector == "":
		errs = append(errs, "DKIM.Selector is required when DKIM is configured")
	case !isHostName(d.Selector):
		errs = append(errs, fmt.Sprintf("DKIM.Selector %q is not a DNS label such as mail2025", d.Selector))
	}
	key, why := parseDKIMKey(d.PrivateKey)
	if why != "" {
		errs = append(errs, "DKIM.PrivateKey "+why)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &dkimSigner{domain: domain, selector: d.Selector, key: key}, nil
}

// parseDKIMKey returns the RSA key of pemKey as PKCS #1 PEM, or why it
// cannot sign; the reason never quotes the key or the parser's error.
func parseDKIMKey(pemKey []byte) ([]byte, string) {
	if len(pemKey) == 0 {
		return nil, "is required when DKIM is configured"
	}
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return nil, "is not PEM-encoded (-----BEGIN RSA PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----)"
	}
	var key any
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, "is not a valid PKCS #1 RSA private key"
		}
		key = k
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, "is not a valid PKCS #8 private key"
		}
		key = k
	default:
		return nil, fmt.Sprintf("is a PEM block of type %q, not a private key", block.Type)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if err := k.Validate(); err != nil {
			return nil, "is not a valid RSA private key"
		}
		if n := k.N.BitLen(); n < 1024 {
			return nil, fmt.Sprintf("is an RSA key of %d bits; DKIM needs at least 1024 (RFC 8301), 2048 recommended", n)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), ""
	case ed25519.PrivateKey:
		return nil, "is an Ed25519 key, which the DKIM signer (github.com/toorop/go-dkim) does not support; use an RSA key"
	default:
		return nil, fmt.Sprintf("is a %T key; DKIM here signs with RSA keys only", key)
	}
}

// signedHeaders lists, in order, the header fields a signature covers
// when the message has them.
var signedHeaders = []string{
	"from", "to", "cc", "subject", "date", "message-id", "reply-to",
	"mime-version", "content-type", "content-transfer-encoding",
	"list-unsubscribe", "list-unsubscribe-post",
}

// sign returns data with a DKIM-Signature header field prepended.
func (s *dkimSigner) sign(data string) (string, error) {
	head := data
	if i := strings.Index(data, "\r\n\r\n"); i >= 0 {
		head = data[:i+2]
	}
	var names []string
	for _, h := range signedHeaders {
		if hasHeader(head, h) {
			names = append(names, h)
		}
	}
	opts := dkim.NewSigOptions()
	opts.PrivateKey = s.key
	opts.Domain = s.domain
	opts.Selector = s.selector
	opts.Canonicalization = "relaxed/relaxed"
	opts.Headers = names
	b := []byte(data)
	if err := dkim.Sign(&b, opts); err != nil {
		return "", err // go-dkim's errors name the problem, never the key
	}
	return string(b), nil
}

// hasHeader reports whether the header section head (CRLF-terminated
// lines) has a field named name (lower case).
func hasHeader(head, name string) bool {
	for line := range strings.SplitSeq(head, "\r\n") {
		if len(line) > len(name) && line[len(name)] == ':' && strings.EqualFold(line[:len(name)], name) {
			return true
		}
	}
	return false
}
