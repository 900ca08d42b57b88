// Package webpushtest is a strict fake Web Push service (RFC 8030), for
// tests of package webpush and of programs that use it, in the style of
// net/http/httptest: NewServer starts it on a loopback TLS port, and
// Close stops it.
//
// Its subscriptions are real ones: NewSubscription makes a fresh P-256
// key pair and 16-byte authentication secret, keeps the private parts,
// and returns the subscription a browser would give, whose endpoint is
// https://push.example.test/wpush/v2/{token} (Host): a public-looking
// name, as the push channel requires. Client returns an HTTP client that
// reaches that name on the fake's loopback port and trusts its
// certificate; give it to webpush.Config.HTTPClient.
//
// Each POST to an endpoint is checked as a push service checks it, and
// refused with a JSON error in Mozilla autopush's form,
// {"code", "errno", "error", "message"}:
//
//   - the subscription exists (404, errno 102, otherwise) and has not
//     expired (410, errno 103; Expire, Forget);
//   - Authorization is "vapid t=<JWT>, k=<key>": an ES256 token that
//     verifies under k, aud the endpoint's origin, exp in the future and
//     at most 24 hours ahead, sub a mailto: or https: URL (CheckVAPID; 401,
//     errno 109); with Config.ApplicationServerKey, k must be it (403,
//     errno 109), as a subscription is bound to the key it was made with;
//   - Content-Encoding is aes128gcm (400, errno 110); TTL is a
//     non-negative integer (400, errno 111); Urgency, if present, is
//     very-low, low, normal or high, and Topic at most 32 base64url
//     characters (400, errno 111);
//   - the body is at most MaxBody (4096) bytes (413, errno 104) and
//     decrypts with the subscription's keys (Decrypt, RFC 8291; 400,
//     errno 110), which a real service cannot check but the fake can.
//
// It answers 201 Created with Location, the push message resource
// (https://push.example.test/m/{id}), and TTL; Messages keeps what it
// accepted, the payload decrypted.
//
// Failures can be injected into the next request, and the fake slowed:
//
//   - FailNext: the service refuses the next valid request with a
//     Refusal (RateLimited, Unavailable, TooLarge, Gone, ...) in its own
//     JSON, with Retry-After when the Refusal has one; FailNextWith any
//     status, errno and message;
//   - FailNextHTTP: a proxy in front of the service answers an HTML
//     error page, such as a 502, and the service never sees the request;
//   - FailNextHTTPAfterAccept: the service accepts the message and the
//     proxy answers an error page instead of its answer;
//   - BreakNext: the service accepts the message and the connection is
//     closed before the answer (the answer is lost);
//   - SetLatency: the fake waits before answering, or until the client
//     gives up.
//
// A Server is safe for concurrent use. It is for tests only.
package webpushtest

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// Host is the fake's host name, that of its endpoints.
const Host = "push.example.test"

// A VAPID key pair for tests, as webpush.GenerateVAPIDKeys gives one
// (base64url without padding), and a subscriber. Never use them outside
// tests: the private key is public.
const (
	VAPIDPublicKey  = "BGngmNilqiOaWHSw4TGJtzuL1TraMYzy0o0cGMcOhZAFJfr0Kp7j57P5CKcwssmV3Moe_gZLAickvFt_PBP9zZU"
	VAPIDPrivateKey = "EsskWk3YvtHSBws9Pw3SG08AvjN1ri54XZGQteoVic8"
	Subscriber      = "mailto:ops@example.com"
)

// The autopush errnos the fake answers with.
const (
	ErrnoInvalidToken   = 102 // 404: no such subscription
	ErrnoExpired        = 103 // 410: the subscription is gone
	ErrnoTooLarge       = 104 // 413: the body is over MaxBody
	ErrnoUnauthorized   = 109 // 401, 403: the VAPID authorization
	ErrnoInvalidCrypto  = 110 // 400: the encryption
	ErrnoInvalidHeaders = 111 // 400: TTL, Urgency, Topic
	ErrnoBackOff        = 201 // 503: retry later
	ErrnoUnknown        = 999 // any other
)

// A Refusal is an error answer of the service, in autopush's form, with
// a Retry-After header when RetryAfter is positive.
type Refusal struct {
	Status     int
	Errno      int // left out of the body when 0
	Message    string
	RetryAfter time.Duration
}

// Refusals to inject with FailNext.
var (
	RateLimited   = Refusal{Status: http.StatusTooManyRequests, Message: "Too many requests", RetryAfter: 30 * time.Second}
	Unavailable   = Refusal{Status: http.StatusServiceUnavailable, Errno: ErrnoBackOff, Message: "Use exponential back-off for retries", RetryAfter: time.Minute}
	InternalError = Refusal{Status: http.StatusInternalServerError, Errno: ErrnoUnknown, Message: "An unexpected server error occurred"}
	TooLarge      = Refusal{Status: http.StatusRequestEntityTooLarge, Errno: ErrnoTooLarge, Message: "Data payload too large"}
	BadRequest    = Refusal{Status: http.StatusBadRequest, Errno: ErrnoInvalidHeaders, Message: "Missing necessary headers"}
	Unauthorized  = Refusal{Status: http.StatusUnauthorized, Errno: ErrnoUnauthorized, Message: "Request did not validate: invalid authorization"}
	Gone          = Refusal{Status: http.StatusGone, Errno: ErrnoExpired, Message: "Request did not validate: subscription expired"}
	NotFound      = Refusal{Status: http.StatusNotFound, Errno: ErrnoInvalidToken, Message: "Request did not validate: invalid token"}
)

// Config configures a Server.
type Config struct {
	// ApplicationServerKey, when set, is the VAPID public key (base64url)
	// every subscription was made with: a request signed with another
	// key is refused 403. Default: any key that verifies.
	ApplicationServerKey string
	// OmitLocation makes the fake accept without a Location header, as
	// some services do. Default false: Location is sent.
	OmitLocation bool
	// Now is the fake's clock, for the tokens' exp. Default time.Now.
	Now func() time.Time
}

// Message is a push message the fake accepted.
type Message struct {
	// Endpoint is the subscription's endpoint, as NewSubscription gave it.
	Endpoint string
	// Payload is the decrypted payload (nil for a push without a body).
	Payload []byte
	// TTL, Urgency and Topic are the headers' ("" when absent).
	TTL     int
	Urgency string
	Topic   string
	// VAPID is the authorization that verified.
	VAPID VAPID
	// Location is the push message resource answered ("" with
	// Config.OmitLocation).
	Location string
	// Header is every header of the request.
	Header http.Header
	// BodyLen is the encrypted body's length.
	BodyLen int
}

// Request is a request the fake received, accepted or not.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// BodyLen is the body's length (as read, up to 64 KiB and one byte).
	BodyLen int
	// Status is what the fake answered; 0 when it answered nothing (the
	// client went away, or the connection was broken on purpose).
	Status int
	// Refused says why the fake refused the request, "" when it did not.
	Refused string
}

// subscription is one the fake made, with its private parts.
type subscription struct {
	endpoint string
	key      *ecdh.PrivateKey
	auth     []byte
	expired  bool
}

// Server is the fake push service.
type Server struct {
	// URL is the fake's origin, https://push.example.test.
	URL string
	// Faults are the network's faults of the next request, and latency:
	// FailNextHTTP (the service does not see the request), FailNextHTTPAfterAccept
	// and BreakNext (the service takes the next valid message and its
	// answer is lost), and SetLatency.
	vendorhttptest.Faults

	cfg    Config
	srv    *httptest.Server
	client *http.Client
	cert   *x509.Certificate

	mu   sync.Mutex
	subs map[string]*subscription // by token

	fail     atomic.Pointer[Refusal]
	messages vendorhttptest.Log[Message]
	requests vendorhttptest.Log[Request]
	ids      vendorhttptest.IDs
}

// NewServer starts a fake push service on a loopback TLS port, with a
// certificate of its own for Host. Stop it with Close.
func NewServer(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{URL: "https://" + Host, cfg: cfg, subs: make(map[string]*subscription)}
	cert, leaf := certificate()
	s.cert = leaf
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes of guard tests
	s.srv.StartTLS()
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	addr := s.srv.Listener.Addr().String()
	s.client = &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
			DialContext: func(ctx context.Context, network, target string) (net.Conn, error) {
				host, _, err := net.SplitHostPort(target)
				if err != nil || !strings.EqualFold(host, Host) {
					return nil, fmt.Errorf("webpushtest: the fake's client reaches %s only", Host)
				}
				var d net.Dialer
				return d.DialContext(ctx, "tcp", addr)
			},
			MaxIdleConnsPerHost: 32,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

// certificate makes a self-signed certificate for Host, valid for a day.
func certificate() (tls.Certificate, *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic("webpushtest: " + err.Error())
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: Host},
		DNSNames:              []string{Host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic("webpushtest: " + err.Error())
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic("webpushtest: " + err.Error())
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf
}

// Close stops the server, as httptest.Server.Close does, and releases
// the client's connections.
func (s *Server) Close() {
	s.client.CloseIdleConnections()
	s.srv.Close()
}

// Client returns an HTTP client that reaches Host (any port) on the
// fake's loopback port, and nothing else, trusts the fake's certificate
// and follows no redirect: webpush.Config.HTTPClient for tests.
func (s *Server) Client() *http.Client { return s.client }

// Addr returns the fake's loopback address ("127.0.0.1:port"), for a
// test that dials it with a client of its own.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// Certificate returns the fake's certificate (for Host), for a client of
// a test's own to trust.
func (s *Server) Certificate() *x509.Certificate { return s.cert }

// NewSubscription makes a subscription as a browser's
// PushManager.subscribe does: a fresh P-256 key pair and 16-byte
// authentication secret, whose private parts the fake keeps to decrypt
// what is sent to it, and an endpoint https://push.example.test/wpush/v2/
// and a random token. The keys are base64url without padding, as
// PushSubscription.toJSON() gives them.
func (s *Server) NewSubscription() *push.Subscription {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic("webpushtest: " + err.Error())
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	token := s.ids.New("", 24)
	endpoint := s.URL + "/wpush/v2/" + token
	s.mu.Lock()
	s.subs[token] = &subscription{endpoint: endpoint, key: key, auth: auth}
	s.mu.Unlock()
	return &push.Subscription{Endpoint: endpoint, Keys: push.Keys{
		P256dh: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		Auth:   base64.RawURLEncoding.EncodeToString(auth),
	}}
}

// Expire makes the subscription of endpoint gone: every later push to it
// is answered 410 (errno 103), as when the user unsubscribed. It panics
// for an endpoint the fake did not make.
func (s *Server) Expire(endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookup(endpoint).expired = true
}

// Forget makes the fake forget the subscription of endpoint: every
// later push to it is answered 404 (errno 102), as for a token the
// service never issued or has dropped. It panics for an endpoint the fake
// did not make.
func (s *Server) Forget(endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookup(endpoint)
	delete(s.subs, token(endpoint))
}

// lookup returns the subscription of endpoint, with s.mu held.
func (s *Server) lookup(endpoint string) *subscription {
	sub := s.subs[token(endpoint)]
	if sub == nil {
		panic("webpushtest: no subscription of this fake has the endpoint " + endpoint)
	}
	return sub
}

// token returns the token of an endpoint URL, "" when it is none of the
// fake's.
func token(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	t, ok := strings.CutPrefix(u.Path, "/wpush/v2/")
	if !ok || strings.Contains(t, "/") {
		return ""
	}
	return t
}

// FailNext makes the service refuse the next valid request with r
// (nothing is accepted).
func (s *Server) FailNext(r Refusal) { s.fail.Store(&r) }

// FailNextWith makes the service refuse the next valid request with its
// JSON error of status, errno and message (no Retry-After).
func (s *Server) FailNextWith(status, errno int, message string) {
	s.FailNext(Refusal{Status: status, Errno: errno, Message: message})
}

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// MessagesTo returns the messages accepted for endpoint, oldest first.
func (s *Server) MessagesTo(endpoint string) []Message {
	var out []Message
	for _, m := range s.messages.All() {
		if m.Endpoint == endpoint {
			out = append(out, m)
		}
	}
	return out
}

// Accepted returns how many messages the fake has accepted, including
// those whose answer was then lost (BreakNext, FailNextHTTPAfterAccept).
func (s *Server) Accepted() int { return s.messages.Len() }

// Requests returns the requests received so far, accepted or not,
// oldest first.
func (s *Server) Requests() []Request { return s.requests.All() }

// maxRead bounds what the fake reads of a body.
const maxRead = 64 << 10

// topicRule is RFC 8030 section 5.4's Topic: at most 32 characters of
// the URL- and filename-safe base64 alphabet.
var topicRule = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRead+1))
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), BodyLen: len(body)}
	defer func() { s.requests.Add(rec) }()
	refuse := func(f Refusal, why string) {
		rec.Status, rec.Refused = f.Status, why
		reply(w, f)
	}
	proxy := s.TakeProxyError()
	if !s.Wait(w, r) { // the connection is closed, not answered
		rec.Refused = "the client went away while the fake was slow"
		return
	}
	if proxy != 0 {
		rec.Status, rec.Refused = proxy, "a proxy's error page (FailNextHTTP)"
		vendorhttptest.ProxyError(w, proxy)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(Refusal{Status: http.StatusMethodNotAllowed, Errno: ErrnoUnknown, Message: "Method not allowed"}, "not a POST")
		return
	}
	s.mu.Lock()
	sub := s.subs[token(r.URL.Path)]
	var endpoint string
	var key *ecdh.PrivateKey
	var auth []byte
	expired := false
	if sub != nil {
		endpoint, key, auth, expired = sub.endpoint, sub.key, sub.auth, sub.expired
	}
	s.mu.Unlock()
	switch {
	case sub == nil:
		refuse(NotFound, "no such subscription")
		return
	case expired:
		refuse(Gone, "the subscription expired")
		return
	}
	vapid, err := CheckVAPID(r.Header.Get("Authorization"), "https://"+strings.ToLower(r.Host), s.cfg.Now())
	if err != nil {
		refuse(Refusal{Status: http.StatusUnauthorized, Errno: ErrnoUnauthorized, Message: "Request did not validate: " + err.Error()}, err.Error())
		return
	}
	if k := s.cfg.ApplicationServerKey; k != "" && strings.TrimRight(k, "=") != vapid.PublicKey {
		refuse(Refusal{Status: http.StatusForbidden, Errno: ErrnoUnauthorized, Message: "Request did not validate: the key is not the subscription's applicationServerKey"},
			"k is not Config.ApplicationServerKey")
		return
	}
	ttl, why := headers(r.Header)
	if why != "" {
		refuse(Refusal{Status: http.StatusBadRequest, Errno: ErrnoInvalidHeaders, Message: why}, why)
		return
	}
	if len(body) > MaxBody {
		refuse(TooLarge, fmt.Sprintf("a body of %d bytes, over %d", len(body), MaxBody))
		return
	}
	var payload []byte
	if len(body) > 0 {
		if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
			refuse(Refusal{Status: http.StatusBadRequest, Errno: ErrnoInvalidCrypto, Message: "Content-Encoding must be aes128gcm"},
				fmt.Sprintf("Content-Encoding %q", ce))
			return
		}
		if payload, err = Decrypt(body, key, auth); err != nil {
			refuse(Refusal{Status: http.StatusBadRequest, Errno: ErrnoInvalidCrypto, Message: "the payload does not decrypt: " + err.Error()}, err.Error())
			return
		}
	}
	if f := s.fail.Swap(nil); f != nil {
		refuse(*f, "injected (FailNext)")
		return
	}
	msg := Message{Endpoint: endpoint, Payload: payload, TTL: ttl, Urgency: r.Header.Get("Urgency"), Topic: r.Header.Get("Topic"),
		VAPID: *vapid, Header: r.Header.Clone(), BodyLen: len(body)}
	if !s.cfg.OmitLocation {
		msg.Location = s.URL + "/m/" + s.ids.New("", 16)
	}
	s.messages.Add(msg)
	if s.AfterAccept(w) {
		rec.Refused = "accepted, and the answer lost (BreakNext, FailNextHTTPAfterAccept)"
		return
	}
	if msg.Location != "" {
		w.Header().Set("Location", msg.Location)
	}
	w.Header().Set("TTL", strconv.Itoa(ttl))
	w.WriteHeader(http.StatusCreated)
	rec.Status = http.StatusCreated
}

// headers checks TTL, Urgency and Topic, and returns the TTL or what is
// wrong.
func headers(h http.Header) (int, string) {
	v := h.Values("TTL")
	if len(v) != 1 {
		return 0, "TTL is required, once (RFC 8030 section 5.2)"
	}
	ttl, err := strconv.Atoi(v[0])
	if err != nil || ttl < 0 || strings.TrimSpace(v[0]) != v[0] || strings.HasPrefix(v[0], "+") {
		return 0, fmt.Sprintf("TTL %q is not a non-negative integer", v[0])
	}
	switch u := h.Values("Urgency"); {
	case len(u) > 1:
		return 0, "Urgency is given more than once"
	case len(u) == 1 && u[0] != "very-low" && u[0] != "low" && u[0] != "normal" && u[0] != "high":
		return 0, fmt.Sprintf("Urgency %q is not very-low, low, normal or high", u[0])
	}
	if t := h.Values("Topic"); len(t) > 1 || (len(t) == 1 && !topicRule.MatchString(t[0])) {
		return 0, "Topic must be at most 32 base64url characters"
	}
	return ttl, ""
}

// reply answers f in autopush's form.
func reply(w http.ResponseWriter, f Refusal) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
	}
	body := map[string]any{"code": f.Status, "error": http.StatusText(f.Status), "message": f.Message}
	if f.Errno != 0 {
		body["errno"] = f.Errno
	}
	vendorhttptest.ReplyJSON(w, f.Status, body)
}
