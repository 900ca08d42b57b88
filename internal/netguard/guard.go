package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/notifykit/notify"
)

// Resolver looks up the addresses of a host name. *net.Resolver
// implements it; tests pass a fake that maps names to chosen addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Guard. The zero Config is the safe production
// setting.
type Config struct {
	// Resolver resolves host names, both when a URL is checked and when a
	// connection is dialed. Default net.DefaultResolver.
	Resolver Resolver
	// Allow, when set, reports whether an address that is not public may
	// be dialed anyway. It exists for tests that serve files from
	// loopback; production code must leave it nil. Default nil: only
	// public addresses.
	Allow func(netip.Addr) bool
	// TLSConfig is the TLS client configuration of fetches, for example to
	// trust a test server's certificate. Default nil: the system roots.
	TLSConfig *tls.Config
	// MaxBytes is the largest response body Open lets be read. Default 16 MiB.
	MaxBytes int64
	// MaxRedirects is how many redirects a fetch follows, each checked as
	// a new URL. Default 3; negative follows none.
	MaxRedirects int
	// Timeout bounds a whole fetch: connections, redirects and the body.
	// Default 30s.
	Timeout time.Duration
	// DialTimeout bounds each connection attempt. Default 5s.
	DialTimeout time.Duration
}

// Default limits.
const (
	DefaultMaxBytes     = 16 << 20
	DefaultMaxRedirects = 3
	DefaultTimeout      = 30 * time.Second
	DefaultDialTimeout  = 5 * time.Second
	// maxURLLength bounds the URLs CheckURL accepts; longer ones are
	// refused before parsing.
	maxURLLength = 2048
)

// Error is a refusal by the guard: a URL that is not acceptable as
// written, a host that does not exist or resolves to an address that is
// not public, or a redirect limit. It is the caller's URL that is wrong,
// so the caller should not try it again unchanged.
//
// Its message is fit for the client who sent the URL: it names the host
// and the rule that refused it ("resolves to a private address") but never
// the whole URL, whose query may carry access tokens, nor any address a
// name resolved to, which would let a client map the internal network
// through the server's resolver.
type Error struct {
	// Host is the host name involved, if any.
	Host string
	// Reason says what is wrong, in words fit for an API error message.
	Reason string
}

// Error returns "URL " followed by the reason.
func (e *Error) Error() string { return "URL " + e.Reason }

// Guard checks URLs and fetches them safely. Create one with New; it is
// safe for concurrent use, and its Client keeps idle connections, so make
// one Guard and reuse it.
type Guard struct {
	cfg    Config
	client *http.Client
}

// New returns a Guard for cfg, with defaults filled in.
func New(cfg Config) *Guard {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	} else if cfg.MaxRedirects < 0 {
		cfg.MaxRedirects = 0
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	g := &Guard{cfg: cfg}
	var tlsConf *tls.Config
	if cfg.TLSConfig != nil {
		tlsConf = cfg.TLSConfig.Clone()
	}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, unchecked
		DialContext:            g.dialContext,
		TLSClientConfig:        tlsConf,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  15 * time.Second,
		MaxIdleConns:           16,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	g.client = &http.Client{
		Transport:     tr,
		CheckRedirect: g.checkRedirect,
		Timeout:       cfg.Timeout,
	}
	return g
}

// CheckURL reports whether raw may be fetched, resolving its host with r
// (nil: net.DefaultResolver). It is New(Config{Resolver: r}).CheckURL
// without the client; prefer a long-lived Guard.
func CheckURL(ctx context.Context, raw string, r Resolver) error {
	g := &Guard{cfg: Config{Resolver: r}}
	if r == nil {
		g.cfg.Resolver = net.DefaultResolver
	}
	return g.CheckURL(ctx, raw)
}

// CheckURL returns nil when raw is an https URL without userinfo whose
// host is a DNS name (not an IP literal in any spelling, not a local-only
// name) that resolves, every address of it public. Otherwise it returns:
//
//   - an *Error saying why, when the URL itself is wrong: its syntax, a
//     host that does not exist (NXDOMAIN, or no address), or an address
//     that is not public;
//   - a *notify.Error of notify.CodeUnavailable when the resolver failed
//     (a timeout, SERVFAIL or any other failure that does not say the
//     name does not exist): the URL may be fine, so the refusal is
//     temporary and a retry later may succeed;
//   - the context's error when ctx ends.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	host, err := checkSyntax(raw)
	if err != nil {
		return err
	}
	_, err = g.resolve(ctx, host)
	return err
}

// checkSyntax checks everything about raw that needs no DNS and returns
// its host, lower-cased and without a trailing dot.
func checkSyntax(raw string) (string, error) {
	if raw == "" {
		return "", &Error{Reason: "is empty"}
	}
	if len(raw) > maxURLLength {
		return "", &Error{Reason: fmt.Sprintf("is longer than %d characters", maxURLLength)}
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return "", &Error{Reason: "contains spaces or control characters"}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", &Error{Reason: "is not a valid URL"}
	}
	if u.Scheme != "https" {
		return "", &Error{Reason: "must use https"}
	}
	if u.Opaque != "" || u.Host == "" {
		return "", &Error{Reason: "must be an absolute https URL with a host"}
	}
	if u.User != nil {
		return "", &Error{Reason: "must not contain a user name or password"}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", &Error{Reason: "has an invalid port"}
		}
	}
	host, err := checkHost(u.Hostname())
	if err != nil {
		return "", err
	}
	return host, nil
}

// checkHost accepts only DNS names that are not IP literals or local-only.
func checkHost(h string) (string, error) {
	if strings.ContainsAny(h, ":[]%") {
		return "", &Error{Reason: "must name a host, not an IP address"}
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" {
		return "", &Error{Reason: "has no host"}
	}
	if len(h) > 253 {
		return "", &Error{Reason: "has a host name longer than 253 characters"}
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			if c >= 0x80 {
				return "", &Error{Reason: "has a non-ASCII host name; use its punycode (xn--) form"}
			}
			return "", &Error{Reason: fmt.Sprintf("has an invalid character %q in the host", c)}
		}
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", &Error{Reason: "has an invalid host name (empty or over-long label)"}
		}
	}
	if _, err := netip.ParseAddr(h); err == nil || isNumber(labels[len(labels)-1]) {
		// A numeric last label is never a DNS name but is how inet_aton
		// spells addresses: 2130706433, 0x7f000001, 0177.1, 0x7f.1.
		return "", &Error{Host: h, Reason: "must name a host, not an IP address"}
	}
	if len(labels) < 2 {
		// A single label goes through the resolver's search list and
		// usually names an internal machine.
		return "", &Error{Host: h, Reason: fmt.Sprintf("host %q is not a fully qualified domain name", h)}
	}
	switch tld := labels[len(labels)-1]; tld {
	case "localhost", "local", "internal", "localdomain", "lan", "home", "intranet", "corp":
		return "", &Error{Host: h, Reason: fmt.Sprintf("host %q is a local-only name (.%s)", h, tld)}
	}
	if strings.HasSuffix(h, ".home.arpa") {
		return "", &Error{Host: h, Reason: fmt.Sprintf("host %q is a local-only name (.home.arpa)", h)}
	}
	return h, nil
}

// isNumber reports whether s is a number as inet_aton reads one: decimal,
// octal with a leading 0, or hex with 0x.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	digits := "0123456789"
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, digits = s[2:], "0123456789abcdefABCDEF"
		if s == "" {
			return true
		}
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(digits, rune(s[i])) {
			return false
		}
	}
	return true
}

// resolve looks host up and checks every address. A failed lookup is the
// URL's fault only when the resolver says the name does not exist; see
// lookupErr.
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := g.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, lookupErr(host, err)
	}
	if len(addrs) == 0 {
		return nil, &Error{Host: host, Reason: fmt.Sprintf("host %q does not resolve: it has no address", host)}
	}
	for _, a := range addrs {
		if err := g.checkAddr(host, a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// lookupErr classifies a failed lookup of host by what the resolver knows:
//
//   - the name does not exist (*net.DNSError with IsNotFound: NXDOMAIN, or
//     a name without addresses) and the resolver is sure of it (neither
//     IsTimeout nor IsTemporary): the client's URL is wrong, an *Error;
//   - anything else (a timeout, SERVFAIL, a refused or unreachable DNS
//     server, an error that is not a *net.DNSError): the resolver's
//     trouble, not the URL's, so notify.CodeUnavailable, which callers
//     may retry.
//
// Neither message repeats the resolver's error, which names the DNS
// server's address.
func lookupErr(host string, err error) error {
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound && !de.IsTimeout && !de.IsTemporary {
		return &Error{Host: host, Reason: fmt.Sprintf("host %q does not resolve: no such host", host)}
	}
	why := "the DNS lookup failed"
	if errors.As(err, &de) && de.IsTimeout {
		why = "the DNS lookup timed out"
	}
	return notify.Errorf(notify.CodeUnavailable, "cannot check the URL's host %q now: %s; try again later", host, why)
}

// checkAddr refuses a that is not public, unless Config.Allow lets it
// through. host is the name that resolved to a, or "" when the address is
// all there is (an IP literal or a socket address at dial time). The
// refusal names the class of the address, never the address itself.
func (g *Guard) checkAddr(host string, a netip.Addr) error {
	c := class(a)
	if c == "" || (g.cfg.Allow != nil && g.cfg.Allow(a)) {
		return nil
	}
	if host == "" {
		return &Error{Reason: fmt.Sprintf("leads to %s address, which is not allowed", withArticle(c))}
	}
	return &Error{Host: host, Reason: fmt.Sprintf("host %q resolves to %s address", host, withArticle(c))}
}

// Client returns the guarded client: no proxy, every dialed address
// checked, redirects re-checked and limited, Config.Timeout per request.
// It does not limit body sizes; Open does. The client is shared: do not
// modify it.
func (g *Guard) Client() *http.Client { return g.client }

func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > g.cfg.MaxRedirects {
		return &Error{Host: req.URL.Hostname(), Reason: fmt.Sprintf("stopped after %d redirects", g.cfg.MaxRedirects)}
	}
	if err := g.CheckURL(req.Context(), req.URL.String()); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Host: e.Host, Reason: "redirect target " + e.Reason}
		}
		return err
	}
	return nil
}

// dialContext resolves the host itself and dials only addresses it has
// checked, so the answer that was checked is the one that is used.
func (g *Guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, &Error{Reason: "invalid port"}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		if err := g.checkAddr("", a); err != nil {
			return nil, err
		}
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolve(ctx, strings.ToLower(strings.TrimSuffix(host, "."))); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: g.cfg.DialTimeout, Control: g.control}
	var first error
	tried := 0
	for _, a := range addrs {
		if (network == "tcp4" && !a.Unmap().Is4()) || (network == "tcp6" && a.Unmap().Is4()) {
			continue
		}
		tried++
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if tried == 0 {
		return nil, fmt.Errorf("host %q has no address for %s", host, network)
	}
	return nil, first
}

// control checks the socket address right before connect: the last line
// of defence, whatever resolved it.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Reason: "cannot parse dial address"}
	}
	return g.checkAddr("", ap.Addr())
}

// CheckSyntax reports whether raw passes every rule of CheckURL that needs
// no DNS lookup: https only, no userinfo, a host that is a DNS name (not
// an IP literal in any spelling, not a local-only name such as localhost
// or *.local), and a valid port. It returns nil or an *Error. It has no
// side effects, so request checks that must not touch the network (a
// channel's Prepare) use it; the dial-time check of Open still refuses a
// name that resolves to an address that is not public.
func CheckSyntax(raw string) error {
	_, err := checkSyntax(raw)
	return err
}
