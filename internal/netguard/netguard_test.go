package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
)

// fakeResolver maps names to addresses; unknown names do not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ss, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// rebinder answers first for the first n lookups, then later: the DNS
// rebinding attack.
type rebinder struct {
	mu           sync.Mutex
	n            int
	first, later netip.Addr
	calls        int
}

func (r *rebinder) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.n {
		return []netip.Addr{r.first}, nil
	}
	return []netip.Addr{r.later}, nil
}

const publicV4 = "93.184.216.34"

func testResolver() fakeResolver {
	return fakeResolver{
		"cdn.example.com":      {publicV4},
		"v6.example.com":       {"2606:2800:220:1:248:1893:25c8:1946"},
		"loop.example.com":     {"127.0.0.1"},
		"ten.example.com":      {"10.1.2.3"},
		"metadata.example.com": {"169.254.169.254"},
		"cgnat.example.com":    {"100.64.0.1"},
		"zero.example.com":     {"0.0.0.0"},
		"mapped.example.com":   {"::ffff:10.0.0.1"},
		"ula.example.com":      {"fd00::1"},
		"v6loop.example.com":   {"::1"},
		"mixed.example.com":    {publicV4, "192.168.1.10"},
		"empty.example.com":    {},
		"bcast.example.com":    {"255.255.255.255"},
		"mcast.example.com":    {"239.1.2.3"},
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name, url string
		want      string // substring of the reason; "" = accepted
	}{
		{"public https", "https://cdn.example.com/invoice.pdf?sig=abc", ""},
		{"public with port", "https://cdn.example.com:8443/a.png", ""},
		{"trailing dot", "https://cdn.example.com./a.png", ""},
		{"upper case host", "https://CDN.Example.COM/a.png", ""},
		{"public IPv6 name", "https://v6.example.com/a.pdf", ""},

		{"empty", "", "is empty"},
		{"http", "http://cdn.example.com/a.pdf", "must use https"},
		{"ftp", "ftp://cdn.example.com/a.pdf", "must use https"},
		{"file", "file:///etc/passwd", "must use https"},
		{"javascript", "javascript:alert(1)", "must use https"},
		{"relative", "/a.pdf", "must use https"},
		{"opaque", "https:cdn.example.com", "absolute"},
		{"no host", "https:///a.pdf", "absolute"},
		{"space", "https://cdn.example.com/a b.pdf", "spaces"},
		{"newline", "https://cdn.example.com/a\n.pdf", "control"},
		{"too long", "https://cdn.example.com/" + strings.Repeat("a", 2100), "longer than"},
		{"userinfo user", "https://user@cdn.example.com/a.pdf", "user name"},
		{"userinfo user and password", "https://user:pw@cdn.example.com/a.pdf", "user name"},
		{"userinfo empty", "https://@cdn.example.com/a.pdf", "user name"},
		{"bad port", "https://cdn.example.com:0/a.pdf", "port"},

		{"IPv4 literal loopback", "https://127.0.0.1/a.pdf", "IP address"},
		{"IPv4 literal public", "https://8.8.8.8/a.pdf", "IP address"},
		{"IPv4 literal with port", "https://10.0.0.1:8443/a.pdf", "IP address"},
		{"IPv6 literal", "https://[::1]/a.pdf", "IP address"},
		{"IPv6 literal public", "https://[2606:4700::1111]/a.pdf", "IP address"},
		{"IPv4-mapped IPv6 literal", "https://[::ffff:127.0.0.1]/a.pdf", "IP address"},
		{"IPv6 literal with zone", "https://[fe80::1%25eth0]/a.pdf", "IP address"},
		{"decimal integer", "https://2130706433/a.pdf", "IP address"},
		{"hex integer", "https://0x7f000001/a.pdf", "IP address"},
		{"hex dotted", "https://0x7f.1/a.pdf", "IP address"},
		{"octal dotted", "https://0177.0.0.1/a.pdf", "IP address"},
		{"short dotted", "https://127.1/a.pdf", "IP address"},
		{"octal integer", "https://017700000001/a.pdf", "IP address"},
		{"bare 0x", "https://a.0x/a.pdf", "IP address"},
		{"percent-encoded literal", "https://%31%32%37.0.0.1/a.pdf", "not a valid URL"},

		{"localhost", "https://localhost/a.pdf", "not a fully qualified"},
		{"localhost upper", "https://LOCALHOST/a.pdf", "not a fully qualified"},
		{"localhost trailing dot", "https://localhost./a.pdf", "not a fully qualified"},
		{"sub.localhost", "https://app.localhost/a.pdf", "local-only"},
		{"percent-encoded localhost", "https://%6c%6fcalhost.localhost/a.pdf", "not a valid URL"},
		{"mdns .local", "https://printer.local/a.pdf", "local-only"},
		{".internal", "https://metadata.google.internal/a.pdf", "local-only"},
		{"home.arpa", "https://nas.home.arpa/a.pdf", "local-only"},
		{"single label", "https://intranet/a.pdf", "not a fully qualified"},
		{"non-ascii host", "https://bücher.example/a.pdf", "punycode"},
		{"bad char in host", "https://cdn!example.com/a.pdf", "invalid character"},
		{"empty label", "https://cdn..example.com/a.pdf", "invalid host name"},

		{"resolves to loopback", "https://loop.example.com/a.pdf", `host "loop.example.com" resolves to a loopback address`},
		{"resolves to 10/8", "https://ten.example.com/a.pdf", "resolves to a private address"},
		{"resolves to metadata", "https://metadata.example.com/a.pdf", "resolves to a link-local address"},
		{"resolves to CGNAT", "https://cgnat.example.com/a.pdf", "resolves to a shared (CGNAT) address"},
		{"resolves to 0.0.0.0", "https://zero.example.com/a.pdf", `resolves to a "this network" address`},
		{"resolves to mapped private", "https://mapped.example.com/a.pdf", "resolves to an IPv4-mapped private address"},
		{"resolves to ULA", "https://ula.example.com/a.pdf", "resolves to a private address"},
		{"resolves to ::1", "https://v6loop.example.com/a.pdf", "resolves to a loopback address"},
		{"one of several private", "https://mixed.example.com/a.pdf", "resolves to a private address"},
		{"broadcast", "https://bcast.example.com/a.pdf", "resolves to a broadcast address"},
		{"multicast", "https://mcast.example.com/a.pdf", "resolves to a multicast address"},
		{"no such host", "https://nx.example.com/a.pdf", "does not resolve: no such host"},
		{"empty answer", "https://empty.example.com/a.pdf", "does not resolve: it has no address"},
	}
	g := New(Config{Resolver: testResolver()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.CheckURL(context.Background(), tt.url)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want nil", tt.url, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("CheckURL(%q) = %v, want *Error containing %q", tt.url, err, tt.want)
			}
			if !strings.Contains(e.Reason, tt.want) {
				t.Errorf("CheckURL(%q) reason %q, want it to contain %q", tt.url, e.Reason, tt.want)
			}
			if strings.Contains(err.Error(), "sig=") || strings.Contains(err.Error(), "pw") {
				t.Errorf("error %q repeats the URL's secrets", err)
			}
			if strings.HasPrefix(err.Error(), "netguard") {
				t.Errorf("error %q names the package", err)
			}
		})
	}
}

// TestRefusalNeverNamesTheAddress: whatever a blocked name resolves to,
// the refusal says which rule refused it and not the address, so that a
// client cannot learn through it what internal names resolve to. The
// dial-time check, which sees only addresses, names none either.
func TestRefusalNeverNamesTheAddress(t *testing.T) {
	g := New(Config{Resolver: testResolver()})
	for host, addrs := range testResolver() {
		err := g.CheckURL(context.Background(), "https://"+host+"/a.pdf")
		if len(addrs) == 0 || host == "cdn.example.com" || host == "v6.example.com" {
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want a refusal", host, err)
			continue
		}
		for _, a := range addrs {
			p := netip.MustParseAddr(a)
			for _, s := range []string{a, p.String(), p.Unmap().String(), p.StringExpanded()} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q names the address %s", host, err, s)
				}
			}
		}
		if !strings.Contains(e.Reason, " address") || !strings.Contains(e.Reason, "resolves to a") {
			t.Errorf("%s: %q does not name the rule", host, e.Reason)
		}
	}
	for _, a := range []string{"127.0.0.1", "10.9.8.7", "::1", "fd00::7"} {
		err := New(Config{}).control("tcp", netip.AddrPortFrom(netip.MustParseAddr(a), 443).String(), nil)
		if err == nil || strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), "address, which is not allowed") {
			t.Errorf("dial to %s: %v, want a refusal without the address", a, err)
		}
	}
}

// TestResolverFailureIsTemporary: a lookup that failed for the resolver's
// own reasons (SERVFAIL, a timeout, an unreachable server) says nothing
// about the URL, so it is Unavailable and retryable, not a refusal; only
// a name the resolver is sure does not exist is the URL's fault. Neither
// repeats the resolver's words, which name the DNS server's address.
func TestResolverFailureIsTemporary(t *testing.T) {
	const server = "10.0.0.53:53"
	for name, tt := range map[string]struct {
		err     error
		refused bool
		want    string
	}{
		"NXDOMAIN":                 {&net.DNSError{Err: "no such host", Name: "x.example.com", Server: server, IsNotFound: true}, true, "no such host"},
		"SERVFAIL":                 {&net.DNSError{Err: "server misbehaving", Name: "x.example.com", Server: server, IsTemporary: true}, false, "the DNS lookup failed"},
		"timeout":                  {&net.DNSError{Err: "i/o timeout", Name: "x.example.com", Server: server, IsTimeout: true}, false, "timed out"},
		"refused":                  {&net.DNSError{Err: "server misbehaving", Name: "x.example.com", Server: server}, false, "the DNS lookup failed"},
		"not found, but temporary": {&net.DNSError{Err: "no such host", Name: "x.example.com", Server: server, IsNotFound: true, IsTemporary: true}, false, "the DNS lookup failed"},
		"not a DNSError":           {fmt.Errorf("lookup x.example.com on %s: connection refused", server), false, "the DNS lookup failed"},
	} {
		t.Run(name, func(t *testing.T) {
			g := New(Config{Resolver: resolverFunc(func(context.Context, string, string) ([]netip.Addr, error) { return nil, tt.err })})
			err := g.CheckURL(context.Background(), "https://x.example.com/a.pdf?sig=abc")
			var e *Error
			if errors.As(err, &e) != tt.refused {
				t.Fatalf("CheckURL = %T %v, refusal %v", err, err, tt.refused)
			}
			if !tt.refused && (notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err)) {
				t.Errorf("CheckURL = %v (%s), want a retryable Unavailable", err, notify.CodeOf(err))
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "10.0.0.53") ||
				strings.Contains(err.Error(), "sig=") || strings.HasPrefix(err.Error(), "netguard") {
				t.Errorf("CheckURL = %q, want it to say %q and neither the DNS server nor the query", err, tt.want)
			}
			// Fetch classifies it the same way, before any connection.
			_, err = g.Fetch(context.Background(), "https://x.example.com/a.pdf")
			wantCode := notify.CodeUnavailable
			if tt.refused {
				wantCode = notify.CodeRejected
			}
			if notify.CodeOf(err) != wantCode || strings.Contains(err.Error(), "10.0.0.53") {
				t.Errorf("Fetch = %v, want %s without the DNS server", err, wantCode)
			}
		})
	}
}

func TestCheckURLPackageFunc(t *testing.T) {
	if err := CheckURL(context.Background(), "https://cdn.example.com/a.pdf", testResolver()); err != nil {
		t.Fatalf("public URL: %v", err)
	}
	if err := CheckURL(context.Background(), "https://loop.example.com/a.pdf", testResolver()); err == nil {
		t.Fatal("loopback name accepted")
	}
}

func TestCheckURLContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := New(Config{Resolver: testResolver()}).CheckURL(ctx, "https://cdn.example.com/a.pdf")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" = public
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{publicV4, ""},
		{"2606:4700::1111", ""},
		{"64:ff9b::5db8:d822", ""}, // NAT64 of a public address
		{"::ffff:8.8.8.8", ""},
		{"0.0.0.0", "this network"},
		{"0.1.2.3", "this network"},
		{"10.255.255.255", "private"},
		{"100.64.0.0", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.169.254", "link-local"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.8", "IETF"},
		{"192.0.2.1", "documentation"},
		{"192.88.99.1", "6to4"},
		{"192.168.0.1", "private"},
		{"198.18.0.1", "benchmarking"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
		{"::ffff:169.254.169.254", "IPv4-mapped link-local"},
		{"::127.0.0.1", "outside 2000::/3"}, // IPv4-compatible, deprecated
		{"64:ff9b::7f00:1", "NAT64 of loopback"},
		{"64:ff9b:1::1", "outside 2000::/3"},
		{"100::1", "outside 2000::/3"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "zone"},
		{"fec0::1", "outside 2000::/3"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"ff02::1", "multicast"},
		{"2001:db8::1", "documentation"},
		{"2001::1", "IETF"},
		{"2002:7f00:1::1", "6to4"},
		{"3fff::1", "documentation"},
	}
	for _, tt := range tests {
		got := Reason(netip.MustParseAddr(tt.addr))
		if tt.want == "" && got != "" {
			t.Errorf("Reason(%s) = %q, want public", tt.addr, got)
		}
		if tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("Reason(%s) = %q, want it to contain %q", tt.addr, got, tt.want)
		}
		if IsPublic(netip.MustParseAddr(tt.addr)) != (tt.want == "") {
			t.Errorf("IsPublic(%s) disagrees with Reason", tt.addr)
		}
	}
	if Reason(netip.Addr{}) == "" {
		t.Error("the zero Addr is public")
	}
}

// mediaServer is an HTTPS server on loopback counting its requests.
type mediaServer struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func newMediaServer(t *testing.T, h http.HandlerFunc) *mediaServer {
	t.Helper()
	m := &mediaServer{}
	m.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(m.Close)
	u, _ := url.Parse(m.URL)
	m.port = u.Port()
	return m
}

// url returns an https URL on host (which the test's resolver maps to the
// server's loopback address) at the server's port. httptest's certificate
// is valid for example.com.
func (m *mediaServer) url(host, path string) string {
	return "https://" + host + ":" + m.port + path
}

func loopbackOnly(a netip.Addr) bool { return a.IsLoopback() }

func testGuard(m *mediaServer, cfg Config) *Guard {
	if cfg.Resolver == nil {
		cfg.Resolver = fakeResolver{"example.com": {"127.0.0.1"}, "private.example.com": {"10.0.0.5"}}
	}
	cfg.TLSConfig = m.Client().Transport.(*http.Transport).TLSClientConfig
	return New(cfg)
}

func TestFetchDefaultBlocksLoopback(t *testing.T) {
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "%PDF-1.4") })
	g := testGuard(m, Config{}) // no Allow: the production setting
	_, err := g.Fetch(context.Background(), m.url("example.com", "/a.pdf"))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("Fetch = %v, want Rejected naming loopback", err)
	}
	// The raw client refuses too, for a name and for an IP literal.
	for _, u := range []string{m.url("example.com", "/a.pdf"), m.URL + "/a.pdf"} {
		resp, err := g.Client().Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("Client().Get(%s) succeeded", u)
		}
		var ge *Error
		if !errors.As(err, &ge) {
			t.Fatalf("Client().Get(%s) = %v, want a *netguard.Error", u, err)
		}
	}
	if n := m.hits.Load(); n != 0 {
		t.Fatalf("loopback server got %d requests", n)
	}
}

func TestFetchAllowedLoopback(t *testing.T) {
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, "%PDF-1.4 test")
	})
	g := testGuard(m, Config{Allow: loopbackOnly})
	f, err := g.Fetch(context.Background(), m.url("example.com", "/a.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Data) != "%PDF-1.4 test" || f.ContentType != "application/pdf" {
		t.Fatalf("got %q (%s)", f.Data, f.ContentType)
	}
}

func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "proxy", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	g := testGuard(m, Config{Allow: loopbackOnly})
	if _, err := g.Fetch(context.Background(), m.url("example.com", "/a.pdf")); err != nil {
		t.Fatal(err)
	}
	if proxied.Load() != 0 {
		t.Fatal("the fetch went through the environment's proxy")
	}
}

func TestFetchSizeLimit(t *testing.T) {
	body := strings.Repeat("x", 2048)
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length: the limit must hold while reading
		}
		io.WriteString(w, body)
	})
	for _, path := range []string{"/sized", "/chunked"} {
		g := testGuard(m, Config{Allow: loopbackOnly, MaxBytes: 1024})
		_, err := g.Fetch(context.Background(), m.url("example.com", path))
		if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "larger than the limit of 1024 bytes") {
			t.Errorf("%s: Fetch = %v, want Rejected over the limit", path, err)
		}
	}
	g := testGuard(m, Config{Allow: loopbackOnly, MaxBytes: 2048})
	if f, err := g.Fetch(context.Background(), m.url("example.com", "/sized")); err != nil || len(f.Data) != 2048 {
		t.Fatalf("exactly at the limit: %v", err)
	}
}

func TestFetchRedirects(t *testing.T) {
	var m *mediaServer
	m = newMediaServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/to-private":
			http.Redirect(w, r, m.url("private.example.com", "/x"), http.StatusFound)
		case r.URL.Path == "/to-http":
			http.Redirect(w, r, "http://example.com:"+m.port+"/x", http.StatusFound)
		case r.URL.Path == "/to-literal":
			http.Redirect(w, r, "https://127.0.0.1:"+m.port+"/x", http.StatusFound)
		case r.URL.Path == "/to-userinfo":
			http.Redirect(w, r, "https://u:p@example.com:"+m.port+"/x", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/loop/"):
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		case r.URL.Path == "/ok":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		case r.URL.Path == "/final":
			io.WriteString(w, "final")
		default:
			http.NotFound(w, r)
		}
	})
	g := testGuard(m, Config{Allow: loopbackOnly})
	for _, tt := range []struct{ path, want string }{
		{"/to-private", "redirect target host \"private.example.com\" resolves to a private address"},
		{"/to-http", "must use https"},
		{"/to-literal", "IP address"},
		{"/to-userinfo", "user name"},
		{"/loop/", "stopped after 3 redirects"},
	} {
		m.hits.Store(0)
		_, err := g.Fetch(context.Background(), m.url("example.com", tt.path))
		if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Fetch = %v, want Rejected containing %q", tt.path, err, tt.want)
		}
		if tt.path == "/loop/" && m.hits.Load() != 4 {
			t.Errorf("redirect loop made %d requests, want 4 (1 + 3 redirects)", m.hits.Load())
		}
	}
	f, err := g.Fetch(context.Background(), m.url("example.com", "/ok"))
	if err != nil || string(f.Data) != "final" {
		t.Fatalf("allowed redirect: %v", err)
	}
	noRedirects := testGuard(m, Config{Allow: loopbackOnly, MaxRedirects: -1})
	if _, err := noRedirects.Fetch(context.Background(), m.url("example.com", "/ok")); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("MaxRedirects -1 followed a redirect: %v", err)
	}
}

// TestDialTimeRebinding: the name is public when checked and loopback when
// dialed; the dial-time check must refuse it.
func TestDialTimeRebinding(t *testing.T) {
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") })
	for _, checks := range []int{1, 2} {
		t.Run(fmt.Sprintf("public for %d lookups", checks), func(t *testing.T) {
			r := &rebinder{n: checks, first: netip.MustParseAddr(publicV4), later: netip.MustParseAddr("127.0.0.1")}
			g := testGuard(m, Config{Resolver: r})
			u := m.url("example.com", "/a.pdf")
			if err := g.CheckURL(context.Background(), u); err != nil {
				t.Fatalf("CheckURL at check time: %v", err)
			}
			var err error
			if checks == 1 {
				var resp *http.Response
				resp, err = g.Client().Get(u) // the dial resolves again
				if err == nil {
					resp.Body.Close()
				}
			} else {
				_, err = g.Fetch(context.Background(), u) // Fetch checks, then the dial resolves again
			}
			if err == nil || !strings.Contains(err.Error(), "loopback") {
				t.Fatalf("got %v, want a loopback refusal at dial time", err)
			}
			if m.hits.Load() != 0 {
				t.Fatal("the rebound name reached the loopback server")
			}
			if r.calls != checks+1 {
				t.Fatalf("resolver called %d times, want %d", r.calls, checks+1)
			}
		})
	}
}

func TestFetchHTTPErrors(t *testing.T) {
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			http.NotFound(w, r)
		case "/503":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/429":
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	})
	g := testGuard(m, Config{Allow: loopbackOnly})
	for path, want := range map[string]notify.Code{"/404": notify.CodeRejected, "/503": notify.CodeUnavailable, "/429": notify.CodeUnavailable} {
		_, err := g.Fetch(context.Background(), m.url("example.com", path+"?token=s3cret"))
		if notify.CodeOf(err) != want {
			t.Errorf("%s: got %v, want %s", path, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error repeats the URL's query: %v", path, err)
		}
	}
	// A closed server: a network error before anything was sent.
	m.Close()
	_, err := g.Fetch(context.Background(), m.url("example.com", "/gone?token=s3cret"))
	if notify.CodeOf(err) != notify.CodeUnavailable || strings.Contains(err.Error(), "s3cret") ||
		strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("closed server: %v, want Unavailable saying why, without the query or the address", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Errorf("closed server: %v does not unwrap to the *net.OpError", err)
	}
}

func TestFetchContextCanceled(t *testing.T) {
	m := newMediaServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	g := testGuard(m, Config{Allow: loopbackOnly})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Fetch(ctx, m.url("example.com", "/a.pdf"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://cdn.example.com/a.pdf", "http://cdn.example.com/", "https://127.0.0.1/",
		"https://[::ffff:7f00:1]/", "https://0x7f.1/", "https://2130706433/", "https://u:p@x.example.com/",
		"https://localhost/", "https://a.local/", "https://%6c%6fcalhost/", "https://xn--bcher-kva.example/",
		"https://cdn.example.com:443/a?b=c#d", "HTTPS://CDN.EXAMPLE.COM/", "https://1.2.3.4.example.com/",
	} {
		f.Add(s)
	}
	public := netip.MustParseAddr(publicV4)
	g := New(Config{Resolver: resolverFunc(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		return []netip.Addr{public}, nil
	})})
	f.Fuzz(func(t *testing.T, raw string) {
		err := g.CheckURL(context.Background(), raw)
		if err == nil {
			u, perr := url.Parse(raw)
			if perr != nil {
				t.Fatalf("accepted an unparsable URL %q", raw)
			}
			host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
			switch {
			case u.Scheme != "https":
				t.Fatalf("accepted scheme %q", u.Scheme)
			case u.User != nil:
				t.Fatalf("accepted userinfo in %q", raw)
			case host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost"):
				t.Fatalf("accepted host %q", host)
			case net.ParseIP(host) != nil:
				t.Fatalf("accepted IP literal %q", host)
			case !strings.Contains(host, "."):
				t.Fatalf("accepted single-label host %q", host)
			}
			for _, c := range host {
				if c > 0x7f {
					t.Fatalf("accepted non-ASCII host %q", host)
				}
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("CheckURL(%q) = %T %v, want *Error", raw, err, err)
		}
	})
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}
