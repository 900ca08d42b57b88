package smtp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/rules"
)

// Encryption is how a connection to the SMTP server is protected.
type Encryption int

// The encryptions.
const (
	// EncryptionSTARTTLS connects in the clear and upgrades with STARTTLS
	// before anything else is sent. A server that does not offer STARTTLS
	// is refused, never used in the clear. It is the zero value.
	EncryptionSTARTTLS Encryption = iota
	// EncryptionImplicitTLS speaks TLS from the first byte (port 465).
	EncryptionImplicitTLS
	// EncryptionNone sends everything in the clear; for local relays and
	// development servers.
	EncryptionNone
)

// String returns "starttls", "tls" or "none".
func (e Encryption) String() string {
	switch e {
	case EncryptionSTARTTLS:
		return "starttls"
	case EncryptionImplicitTLS:
		return "tls"
	case EncryptionNone:
		return "none"
	}
	return fmt.Sprintf("Encryption(%d)", int(e))
}

// AuthMechanism is the SASL mechanism used to log in.
type AuthMechanism string

// The mechanisms.
const (
	// AuthAuto uses the first of PLAIN, LOGIN and CRAM-MD5 that the server
	// offers. It is the zero value.
	AuthAuto AuthMechanism = ""
	// AuthPlain is AUTH PLAIN (RFC 4616).
	AuthPlain AuthMechanism = "PLAIN"
	// AuthLogin is AUTH LOGIN.
	AuthLogin AuthMechanism = "LOGIN"
)

// Server is one SMTP configuration: where to connect, how to log in, and
// who the mail is from.
type Server struct {
	// Host is the SMTP server's name or IP address. Required.
	Host string
	// Port is the server's TCP port. Default 587 for STARTTLS, 465 for
	// implicit TLS, 25 without encryption.
	Port int
	// Encryption protects the connection. Default EncryptionSTARTTLS.
	Encryption Encryption
	// Auth is the login mechanism, used when Username is set. Default
	// AuthAuto.
	Auth AuthMechanism
	// Username and Password are the login; no login when Username is
	// empty. The password never appears in errors. Default none.
	Username string
	Password string
	// AllowInsecureAuth permits sending the login over a connection
	// without encryption to a host other than a loopback address; New
	// refuses that otherwise. Default false.
	AllowInsecureAuth bool
	// From is the sender's bare address, used in MAIL FROM and the From
	// header, and the domain of Message-IDs, all with an internationalised
	// domain in its ASCII form (xn--...). A non-ASCII local part needs a
	// relay that offers SMTPUTF8. Required.
	From string
	// FromName is the sender's display name; an envelope's FromName
	// overrides it. Default none.
	FromName string
	// Helo is the name the client gives in EHLO: a host name such as
	// mail.example.com (letters, digits and hyphens in dot-separated
	// labels) or an address literal such as [192.0.2.1]; New refuses
	// anything else. Default: the machine's host name (os.Hostname), or
	// "localhost" when that fails or is not a valid host name. Some
	// receivers check that it names the sending host; set it to the
	// relay-facing name when the machine's own is not public.
	Helo string
	// ConnectTimeout bounds dialling, TLS and login. Default 10s.
	ConnectTimeout time.Duration
	// SendTimeout bounds the sending of one message on an open
	// connection. The context's deadline applies too, when earlier.
	// Default 30s.
	SendTimeout time.Duration
	// TLSConfig configures TLS; it is cloned. Default: the system's roots,
	// with ServerName set to Host.
	TLSConfig *tls.Config
	// ListUnsubscribeURL is the HTTPS one-click unsubscribe address put in
	// campaign mail's List-Unsubscribe header (RFC 8058). Every "{token}"
	// in it is replaced by the recipient's unsubscribe token (see
	// UnsubscribeSecret), which is URL-safe and names the message's
	// account and recipient (AccountUnsubscribeToken), as
	// UnsubscribeHandler needs; every "{email}" by the
	// query-escaped recipient address, which anybody could put in a URL
	// to unsubscribe somebody else: prefer {token}. Campaign mail needs
	// it or ListUnsubscribeMailto. Default none.
	ListUnsubscribeURL string
	// UnsubscribeSecret is the key of the unsubscribe tokens that replace
	// "{token}" in ListUnsubscribeURL: at least MinUnsubscribeSecretLen
	// (32) random bytes, kept as secret as a password; the host
	// application's unsubscribe endpoint checks tokens with the same
	// secret through VerifyUnsubscribeToken. When it is set,
	// ListUnsubscribeURL must use {token} and must not use {email} (a
	// plain address is forgeable, which the secret is there to prevent);
	// {token} without it is refused too. Empty means not set. It never
	// appears in errors. Default none.
	UnsubscribeSecret []byte
	// ListUnsubscribeMailto is an address (bare, or a mailto: URL with a
	// subject) put in campaign mail's List-Unsubscribe header, an
	// internationalised domain in its ASCII form. Default none.
	ListUnsubscribeMailto string
	// DKIM signs the mail of this configuration when set; see DKIM.
	// Default off.
	DKIM DKIM
}

// Config configures a Provider.
type Config struct {
	// Name is the provider's name in receipts. Default "smtp".
	Name string
	// Default is the configuration for purposes not in Purposes. Required.
	Default Server
	// Purposes gives a dedicated configuration to some purposes (OTP mail
	// through a fast transactional relay, campaigns through a bulk one).
	// Each entry is complete: nothing is inherited from Default. Default
	// none.
	Purposes map[email.Purpose]Server
	// PoolSize is the number of connections kept open per distinct
	// configuration; at most that many messages of one configuration are
	// in flight at once, the rest wait for a connection. Default 4.
	PoolSize int

	// MaxAttachmentBytes bounds the files attached to one message, in
	// bytes before encoding: the sum of their Data and of what their URLs
	// return, counted while fetching, so that no fetch reads past it. A
	// message over it is refused before anything is written to the SMTP
	// server (a certain refusal: refunded). The built message, base64
	// making files a third larger, is held in memory while it is sent
	// (DKIM signs it whole), so this bounds that memory too. Default
	// DefaultMaxAttachmentBytes (10 MiB).
	MaxAttachmentBytes int64
	// AttachmentTimeout bounds the fetch of each attachment URL. Default
	// DefaultAttachmentTimeout (30s).
	AttachmentTimeout time.Duration
	// Resolver resolves the hosts of attachment URLs, for the dial-time
	// address check. Default net.DefaultResolver.
	Resolver Resolver
	// AllowAttachmentAddr, when set, lets attachment fetches dial
	// addresses the guard refuses (loopback, private networks). It exists
	// only for tests that serve files from loopback; production code must
	// leave it nil. Default nil: public addresses only.
	AllowAttachmentAddr func(netip.Addr) bool
	// AttachmentTLSConfig is the TLS configuration of attachment fetches,
	// for tests that trust a test server's certificate. Default nil: the
	// system roots.
	AttachmentTLSConfig *tls.Config
}

// Resolver looks up the addresses of a host name; *net.Resolver
// implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Defaults of Config's attachment settings.
const (
	DefaultMaxAttachmentBytes = 10 << 20
	DefaultAttachmentTimeout  = 30 * time.Second
)

// settings is a Server with defaults applied and values checked.
type settings struct {
	Server
	addr       string
	fromAddr   string // bare address, its domain in ASCII
	fromDomain string // in ASCII
	// fromUTF8 is set when From's local part is not ASCII: only a relay
	// with SMTPUTF8 carries it.
	fromUTF8  bool
	tls       *tls.Config
	unsubURL  string
	unsubMail string // mailto: URL
	// unsubKeys make the tokens of "{token}"; nil without
	// UnsubscribeSecret.
	unsubKeys *tokenKeys
	// dkim signs messages; nil when DKIM is off.
	dkim *dkimSigner
}

// settings applies the defaults of s and checks it, reporting every
// problem at once (errors.Join), in a fixed order.
func (s Server) settings() (*settings, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	s.checkConnection(bad)
	st := &settings{Server: s}
	st.checkFrom(bad)
	st.checkSession(bad)
	st.checkUnsubscribe(bad)
	if s.Encryption != EncryptionNone {
		if s.TLSConfig != nil {
			st.tls = s.TLSConfig.Clone()
		} else {
			st.tls = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if st.tls.ServerName == "" {
			st.tls.ServerName = s.Host
		}
	}
	st.addr = net.JoinHostPort(s.Host, fmt.Sprint(st.Port))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return st, nil
}

// checkConnection checks how s reaches and logs in to the server (Host,
// Encryption, Auth, Port, Username and Password), passing each problem to
// bad, and sets the default Port of the Encryption. It runs before the
// rest since the settings are made from s with that Port.
func (s *Server) checkConnection(bad func(format string, args ...any)) {
	if s.Host == "" {
		bad("Host is required")
	}
	if strings.ContainsAny(s.Host, "\r\n\x00 /") {
		bad("Host %q is not a host name", s.Host)
	}
	switch s.Encryption {
	case EncryptionSTARTTLS, EncryptionImplicitTLS, EncryptionNone:
	default:
		bad("unknown Encryption %d", int(s.Encryption))
	}
	switch s.Auth {
	case AuthAuto, AuthPlain, AuthLogin:
	default:
		bad("unknown Auth %q", string(s.Auth))
	}
	if s.Port == 0 {
		switch s.Encryption {
		case EncryptionImplicitTLS:
			s.Port = 465
		case EncryptionNone:
			s.Port = 25
		default:
			s.Port = 587
		}
	}
	if s.Port < 0 || s.Port > 65535 {
		bad("Port %d is out of range", s.Port)
	}
	if s.Username != "" && s.Encryption == EncryptionNone && !s.AllowInsecureAuth && !isLoopback(s.Host) {
		bad("a login without encryption to %s would expose the password; set Encryption or AllowInsecureAuth", s.Host)
	}
	if strings.ContainsAny(s.Username+s.Password, "\r\n\x00") {
		bad("Username and Password must not contain CR, LF or NUL")
	}
}

// checkFrom checks the sender (From, DKIM, FromName), passing each
// problem to bad, and sets the ASCII forms of From that MAIL FROM, the
// headers and the DKIM signer use.
func (s *settings) checkFrom(bad func(format string, args ...any)) {
	if why := rules.AddressChars(s.From); why != "" && s.From != "" {
		bad("From %s", why)
	} else if a, err := mail.ParseAddress(s.From); err != nil || a.Name != "" || a.Address != s.From {
		bad("From %q must be a bare address such as noreply@example.com", s.From)
	} else if ascii, ok := rules.ASCIIAddress(a.Address); !ok {
		bad("From %q must have a valid internationalised domain name after the @, such as bücher.example", s.From)
	} else {
		// MAIL FROM, the From header and Message-IDs carry the domain
		// in ASCII; a non-ASCII local part needs SMTPUTF8 of the relay.
		s.fromAddr = ascii
		s.fromDomain = ascii[strings.LastIndexByte(ascii, '@')+1:]
		s.fromUTF8 = !isASCII(ascii)
	}
	var dkimErrs []string
	s.dkim, dkimErrs = newDKIMSigner(s.DKIM, s.fromDomain)
	for _, e := range dkimErrs {
		bad("%s", e)
	}
	if hasCRLF(s.FromName) {
		bad("FromName must not contain CR, LF or NUL")
	} else if why := rules.DisplayName(s.FromName); why != "" {
		bad("FromName %s", why)
	}
}

// checkSession checks the EHLO name and the timeouts of a session,
// passing each problem to bad, and fills in their defaults.
func (s *settings) checkSession(bad func(format string, args ...any)) {
	if s.Helo == "" {
		s.Helo = defaultHelo(os.Hostname)
	} else if !validHelo(s.Helo) {
		bad("Helo %q is not a host name such as mail.example.com or an address literal such as [192.0.2.1]", s.Helo)
	}
	if s.ConnectTimeout < 0 || s.SendTimeout < 0 {
		bad("timeouts must not be negative")
	}
	if s.ConnectTimeout == 0 {
		s.ConnectTimeout = 10 * time.Second
	}
	if s.SendTimeout == 0 {
		s.SendTimeout = 30 * time.Second
	}
}

// checkUnsubscribe checks the List-Unsubscribe settings
// (ListUnsubscribeURL, UnsubscribeSecret, ListUnsubscribeMailto), passing
// each problem to bad, and sets what the header is made of: the URL, the
// token keys and the mailto: URL.
func (s *settings) checkUnsubscribe(bad func(format string, args ...any)) {
	if s.ListUnsubscribeURL != "" {
		u, err := url.Parse(strings.NewReplacer("{email}", "x", "{token}", "x").Replace(s.ListUnsubscribeURL))
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(s.ListUnsubscribeURL, "\r\n\x00<> ,") {
			bad("ListUnsubscribeURL %q must be an https URL", s.ListUnsubscribeURL)
		}
		s.unsubURL = s.ListUnsubscribeURL
	}
	hasToken := strings.Contains(s.ListUnsubscribeURL, "{token}")
	switch {
	case len(s.UnsubscribeSecret) > 0:
		k, err := newTokenKeys(s.UnsubscribeSecret)
		if err != nil {
			bad("UnsubscribeSecret must be at least %d bytes, not %d", MinUnsubscribeSecretLen, len(s.UnsubscribeSecret))
		}
		s.unsubKeys = k
		if strings.Contains(s.ListUnsubscribeURL, "{email}") {
			bad("ListUnsubscribeURL must not use {email} when UnsubscribeSecret is set: anybody can put a plain address in a URL; use {token}")
		} else if !hasToken {
			bad("UnsubscribeSecret is set but ListUnsubscribeURL has no {token} to use it")
		}
	case hasToken:
		bad("ListUnsubscribeURL uses {token}, which needs UnsubscribeSecret")
	}
	if s.ListUnsubscribeMailto != "" {
		s.unsubMail = unsubscribeMailto(s.ListUnsubscribeMailto, bad)
	}
}

// unsubscribeMailto returns ListUnsubscribeMailto m as the mailto: URL of
// the header, its domain in ASCII as in To and From, passing a problem
// with it to bad.
func unsubscribeMailto(m string, bad func(format string, args ...any)) string {
	orig := m
	if !strings.HasPrefix(strings.ToLower(m), "mailto:") {
		m = "mailto:" + m
	}
	u, err := url.Parse(m)
	if err != nil || strings.ContainsAny(m, "\r\n\x00<> ,") {
		bad("ListUnsubscribeMailto %q must be an address or a mailto: URL", orig)
	} else if _, err := mail.ParseAddress(u.Opaque); err != nil {
		bad("ListUnsubscribeMailto %q must be an address or a mailto: URL", orig)
	} else if ascii, ok := rules.ASCIIAddress(u.Opaque); !ok {
		bad("ListUnsubscribeMailto %q must have a valid internationalised domain name after the @", orig)
	} else if rest, found := strings.CutPrefix(m[len("mailto:"):], u.Opaque); found {
		// The header carries the domain in ASCII, as To and From do.
		m = m[:len("mailto:")] + ascii + rest
	}
	return m
}

// key identifies configurations that may share a pool of connections:
// equal connection and login settings.
type poolKey struct {
	addr, helo, user, pass string
	enc                    Encryption
	auth                   AuthMechanism
	tls                    *tls.Config
	connect, send          time.Duration
}

func (s *settings) poolKey() poolKey {
	return poolKey{
		addr: s.addr, helo: s.Helo, user: s.Username, pass: s.Password,
		enc: s.Encryption, auth: s.Auth, tls: s.TLSConfig,
		connect: s.ConnectTimeout, send: s.SendTimeout,
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func hasCRLF(s string) bool { return strings.ContainsAny(s, "\r\n\x00") }

// defaultHelo returns the EHLO name used when Server.Helo is empty: the
// host name that hostname (os.Hostname) reports when it is a valid host
// name, else "localhost".
func defaultHelo(hostname func() (string, error)) string {
	if h, err := hostname(); err == nil && isHostName(h) {
		return h
	}
	return "localhost"
}

// validHelo reports whether s may follow EHLO (RFC 5321 4.1.1.1): a
// host name, or an address literal in brackets.
func validHelo(s string) bool {
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		lit := s[1 : len(s)-1]
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			ip := net.ParseIP(v6)
			return ip != nil && strings.Contains(v6, ":")
		}
		ip := net.ParseIP(lit)
		return ip != nil && ip.To4() != nil && !strings.Contains(lit, ":")
	}
	return isHostName(s)
}

// isHostName reports whether s is a DNS host name: at most 253
// characters of dot-separated labels of 1-63 letters, digits and
// hyphens, none starting or ending with a hyphen.
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
