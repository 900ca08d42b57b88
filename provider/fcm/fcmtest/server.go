// Package fcmtest is a strict fake of Firebase Cloud Messaging's HTTP v1
// API and of Google's OAuth2 token endpoint, for tests of package fcm and
// of programs that use it, in the style of net/http/httptest: NewServer
// starts it on a loopback port and Close stops it.
//
// # The service account and its tokens
//
// The fake has a service account: an RSA key (2048 bits, generated once
// per test binary and shared by its fakes, so that each starts at once)
// under a key ID of its own, and a client_email of its project.
// CredentialsJSON is the account's JSON key as the Google Cloud console
// downloads it, its token_uri pointing at the fake's token endpoint,
// POST /token. The endpoint checks the JWT-bearer grant (RFC 7523) as
// Google does: a form body; grant_type
// urn:ietf:params:oauth:grant-type:jwt-bearer (unsupported_grant_type
// otherwise); an assertion of three base64url parts whose header is
// RS256 (and whose kid, when there is one, is the key's ID) and whose
// signature verifies under the account's public key; iss the account's
// client_email, aud the token URL, iat and exp an hour at most apart and
// around now; and a scope (invalid_grant, or invalid_scope for an empty
// one, each with Google's error_description). A grant that passes is
// answered {"access_token": "ya29.c....", "expires_in": N, "token_type":
// "Bearer"}, N being Config.TokenLifetime's seconds (SetTokenLifetime);
// the token carries the grant's scopes, and the send endpoint refuses one
// without firebase.messaging (403 "Request had insufficient
// authentication scopes."), as FCM does. TokenRequests counts the
// requests, Grants keeps them decoded.
//
// # Sends
//
// POST /v1/projects/{project}/messages:send checks, in Google's order:
// the bearer token (401 UNAUTHENTICATED when it is missing, unknown,
// expired or revoked), the project (403 PERMISSION_DENIED for another),
// a JSON Content-Type, and the body, strictly: a name outside FCM v1's
// Message is refused ("Invalid JSON payload received. Unknown name ...
// Cannot find field."), a value of the wrong type too ("Invalid value at
// 'message.data[0].value' (TYPE_STRING), 12"), and names are taken in
// snake_case or lowerCamelCase, as Google's parser takes them. Then it
// checks FCM's rules: exactly one target (token, topic or condition), a
// token of 32 to 4096 of [A-Za-z0-9-_:.] (INVALID_ARGUMENT naming
// message.token), no data key FCM reserves (from, message_type, google*,
// gcm*), android.ttl of 0 to 2419200 seconds ("Ns", a proto Duration),
// android.priority NORMAL or HIGH, webpush headers TTL (digits) and
// Urgency (very-low, low, normal, high), an https webpush fcm_options
// link, apns-priority 5 or 10 and apns-expiration digits, and notification
// and data within 4096 bytes. A token Unregister named answers 404
// UNREGISTERED; once Register named any token, an unknown one answers 400
// INVALID_ARGUMENT "The registration token is not a valid FCM
// registration token". Errors are Google's error format, {"error":
// {"code", "message", "status", "details": [{"@type":
// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode"},
// {"@type": "type.googleapis.com/google.rpc.BadRequest",
// "fieldViolations": [...]}]}}. A message that passes is kept (Messages)
// and answered 200 {"name": "projects/{project}/messages/0:..."};
// validate_only answers the name projects/{project}/messages/fake_message_id
// and keeps nothing.
//
// # Failures
//
// FailNext makes FCM refuse the next send with one of its errors
// (Unregistered, InvalidArgument, SenderIDMismatch, QuotaExceeded and
// Unavailable with Retry-After, Internal, ThirdPartyAuthError, or any
// Error); RevokeAccessTokens makes every token issued so far answer 401,
// as a revoked or prematurely expired one does; FailNextToken makes the
// token endpoint refuse the next grant (InvalidGrant, TokenUnavailable),
// DeleteKey every later one (the key was deleted). The faults of the
// network path are vendorhttptest.Faults': FailNextHTTP (a proxy's page
// before FCM sees the send, such as 502 HTML), FailNextHTTPAfterAccept and
// BreakNext (FCM takes the message and the answer is lost: an error page,
// or the connection hijacked and closed), and SetLatency (both endpoints
// wait, after reading the request, until the latency passes or the
// client gives up).
//
// A Server is safe for concurrent use. It is for tests only.
package fcmtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// The defaults of Config, and what the fake serves.
const (
	DefaultProjectID = "notify-fcm-test"
	// DefaultTokenLifetime is the lifetime of the access tokens the fake
	// issues, as Google's: an hour less a second.
	DefaultTokenLifetime = 3599 * time.Second
	// Scope is FCM's OAuth2 scope, which a token must carry to send.
	Scope = "https://www.googleapis.com/auth/firebase.messaging"
	// GrantType is the JWT-bearer grant's grant_type.
	GrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// TokenPath is the path of the token endpoint.
	TokenPath = "/token"
	// MaxTTL is the longest android.ttl FCM takes, in seconds.
	MaxTTL = 2419200
	// MaxPayload is the most bytes of notification and data FCM takes.
	MaxPayload = 4096
)

// Config configures a Server.
type Config struct {
	// ProjectID is the Firebase project the fake serves. Default
	// DefaultProjectID.
	ProjectID string
	// ClientEmail is the service account's e-mail. Default
	// fcm-sender@{ProjectID}.iam.gserviceaccount.com.
	ClientEmail string
	// TokenLifetime is the expires_in of the access tokens the fake
	// issues, at least a second. Default DefaultTokenLifetime. A lifetime
	// of 10 seconds or less is within oauth2's expiry margin: a client
	// fetches a new token for every request.
	TokenLifetime time.Duration
}

// Error is an error answer of FCM, for FailNext.
type Error struct {
	// HTTPStatus and Status are the HTTP status and Google's canonical
	// status, such as 404 and "NOT_FOUND".
	HTTPStatus int
	Status     string
	Message    string
	// ErrorCode is the FcmError detail's errorCode, such as
	// "UNREGISTERED"; none when empty.
	ErrorCode string
	// Field and Description make a google.rpc.BadRequest detail; none
	// when Field is empty.
	Field, Description string
	// RetryAfter, when positive, is sent as Retry-After, in seconds.
	RetryAfter time.Duration
}

// FCM's errors, as it answers them.
var (
	Unregistered = Error{HTTPStatus: 404, Status: "NOT_FOUND", Message: "Requested entity was not found.", ErrorCode: "UNREGISTERED"}
	// InvalidArgument names no field: the sender is not told which.
	InvalidArgument  = Error{HTTPStatus: 400, Status: "INVALID_ARGUMENT", Message: "Request contains an invalid argument.", ErrorCode: "INVALID_ARGUMENT"}
	SenderIDMismatch = Error{HTTPStatus: 403, Status: "PERMISSION_DENIED", Message: "SenderId mismatch", ErrorCode: "SENDER_ID_MISMATCH"}
	QuotaExceeded    = Error{HTTPStatus: 429, Status: "RESOURCE_EXHAUSTED", Message: "Quota exceeded for quota metric 'Send messages' and limit 'Send messages per minute'.",
		ErrorCode: "QUOTA_EXCEEDED", RetryAfter: 60 * time.Second}
	Unavailable         = Error{HTTPStatus: 503, Status: "UNAVAILABLE", Message: "The service is currently unavailable.", ErrorCode: "UNAVAILABLE", RetryAfter: 10 * time.Second}
	Internal            = Error{HTTPStatus: 500, Status: "INTERNAL", Message: "Internal error encountered.", ErrorCode: "INTERNAL"}
	ThirdPartyAuthError = Error{HTTPStatus: 401, Status: "UNAUTHENTICATED", Message: "Auth error from APNS or Web Push Service", ErrorCode: "THIRD_PARTY_AUTH_ERROR"}
)

// TokenError is an answer of the token endpoint, for FailNextToken: the
// OAuth2 error {"error", "error_description"} on HTTPStatus, or, with an
// empty Error, an HTML error page.
type TokenError struct {
	HTTPStatus         int
	Error, Description string
}

// The token endpoint's errors.
var (
	// InvalidGrant is Google's refusal of a key it does not know.
	InvalidGrant = TokenError{HTTPStatus: 400, Error: "invalid_grant", Description: "Invalid JWT Signature."}
	// TokenUnavailable is the endpoint's outage: an HTML 503.
	TokenUnavailable = TokenError{HTTPStatus: 503}
)

// Message is a message the fake accepted.
type Message struct {
	// Name is the name FCM answered, projects/{project}/messages/0:...
	Name string
	// Token, Topic and Condition are the target: one is set.
	Token, Topic, Condition string
	// Title, Body and Image are the notification's; Notification is
	// whether there was one.
	Notification       bool
	Title, Body, Image string
	// Data is the data map, nil when there was none.
	Data map[string]string
	// AndroidTTL and AndroidPriority are android's ttl ("2419200s") and
	// priority ("HIGH"), empty when not set.
	AndroidTTL, AndroidPriority string
	// WebpushHeaders and APNSHeaders are webpush's and apns's headers;
	// Link is webpush's fcm_options.link.
	WebpushHeaders, APNSHeaders map[string]string
	Link                        string
	// Raw is the request's body.
	Raw []byte
}

// Request is a request the send endpoint received, accepted or not.
type Request struct {
	Method, Path string
	ContentType  string
	Accept       string
	// AccessToken is the bearer token it carried, "" for none.
	AccessToken string
	Body        []byte
}

// Grant is a request the token endpoint received, decoded (whether or not
// the fake issued a token for it).
type Grant struct {
	ContentType string
	GrantType   string
	// Header and Claims are the assertion's, decoded; nil when it is not
	// a JWS.
	Header, Claims map[string]any
	// Issued is whether the fake answered it with a token.
	Issued bool
}

// issued is an access token the fake issued.
type issued struct {
	expires time.Time
	scopes  []string
	revoked bool
}

// Server is the fake FCM and token endpoint.
type Server struct {
	// URL is the base URL of the fake, for fcm.Config.BaseURL.
	URL string
	// Faults are the network's faults of the next send, and latency (of
	// both endpoints).
	vendorhttptest.Faults
	// Loopback is the fake's server: Client returns an HTTP client for
	// it.
	vendorhttptest.Loopback

	project  string
	email    string
	keyID    string
	key      *rsa.PrivateKey
	lifetime atomic.Int64 // of the tokens, in nanoseconds

	requests  vendorhttptest.Log[Request]
	messages  vendorhttptest.Log[Message]
	grants    vendorhttptest.Log[Grant]
	tokenReqs atomic.Int64
	serial    atomic.Int64 // of the message names
	ids       vendorhttptest.IDs

	mu           sync.Mutex // what follows, and a request's record with FailNextHTTP's fault
	tokens       map[string]*issued
	order        []string // tokens, oldest first
	registered   map[string]bool
	unregistered map[string]bool
	fail         *Error
	failToken    *TokenError
	keyDeleted   bool
}

// accountKey is the service accounts' key, made once per test binary:
// RSA key generation takes long enough under -race to be worth sharing.
var accountKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("fcmtest: generating the service account's key: " + err.Error())
	}
	return k
})

// NewServer starts a fake FCM on a loopback port.
func NewServer(cfg Config) *Server {
	if cfg.ProjectID == "" {
		cfg.ProjectID = DefaultProjectID
	}
	if cfg.ClientEmail == "" {
		cfg.ClientEmail = "fcm-sender@" + cfg.ProjectID + ".iam.gserviceaccount.com"
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = DefaultTokenLifetime
	}
	s := &Server{
		project:      cfg.ProjectID,
		email:        cfg.ClientEmail,
		key:          accountKey(),
		tokens:       make(map[string]*issued),
		registered:   make(map[string]bool),
		unregistered: make(map[string]bool),
	}
	s.keyID = s.ids.New("", 20)
	s.SetTokenLifetime(cfg.TokenLifetime)
	s.URL = s.Serve(http.HandlerFunc(s.serve))
	return s
}

// ProjectID returns the fake's project.
func (s *Server) ProjectID() string { return s.project }

// ClientEmail returns the service account's e-mail.
func (s *Server) ClientEmail() string { return s.email }

// TokenURL returns the token endpoint's URL, the key's token_uri.
func (s *Server) TokenURL() string { return s.URL + TokenPath }

// SendPath returns the path of the send endpoint,
// /v1/projects/{project}/messages:send.
func (s *Server) SendPath() string { return "/v1/projects/" + s.project + "/messages:send" }

// PrivateKeyPEM returns the service account's private key in PEM (PKCS
// #8), as CredentialsJSON holds it: a secret a test checks errors for.
func (s *Server) PrivateKeyPEM() string {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		panic("fcmtest: " + err.Error())
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// CredentialsJSON returns the service account's JSON key, as the Google
// Cloud console downloads it, with token_uri the fake's token endpoint:
// fcm.Config.CredentialsJSON.
func (s *Server) CredentialsJSON() []byte {
	b, err := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  s.project,
		"private_key_id":              s.keyID,
		"private_key":                 s.PrivateKeyPEM(),
		"client_email":                s.email,
		"client_id":                   "104532907720134981632",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   s.TokenURL(),
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"client_x509_cert_url":        "https://www.googleapis.com/robot/v1/metadata/x509/" + url.PathEscape(s.email),
		"universe_domain":             "googleapis.com",
	}, "", "  ")
	if err != nil {
		panic("fcmtest: " + err.Error())
	}
	return b
}

// SetTokenLifetime sets the expires_in of the tokens issued from now on
// (at least a second; less is a second).
func (s *Server) SetTokenLifetime(d time.Duration) { s.lifetime.Store(int64(max(d, time.Second))) }

// TokenRequests returns how many requests the token endpoint received,
// granted or not.
func (s *Server) TokenRequests() int { return int(s.tokenReqs.Load()) }

// Grants returns the token endpoint's requests, decoded, oldest first.
func (s *Server) Grants() []Grant { return s.grants.All() }

// AccessTokens returns the access tokens issued so far, oldest first:
// secrets a test checks errors for.
func (s *Server) AccessTokens() []string {
	return vendorhttptest.Locked(&s.mu, func() []string { return slices.Clone(s.order) })
}

// RevokeAccessTokens revokes every access token issued so far: a send
// with one is answered 401 UNAUTHENTICATED, as a revoked or expired
// token is. Tokens issued later work.
func (s *Server) RevokeAccessTokens() {
	vendorhttptest.WithLock(&s.mu, func() {
		for _, t := range s.tokens {
			t.revoked = true
		}
	})
}

// DeleteKey deletes the service account's key: every later grant is
// refused with invalid_grant "Invalid JWT Signature.", as Google refuses a
// deleted key's. Tokens already issued still work until they expire.
func (s *Server) DeleteKey() { vendorhttptest.WithLock(&s.mu, func() { s.keyDeleted = true }) }

// FailNextToken makes the token endpoint answer the next grant with e,
// issuing nothing.
func (s *Server) FailNextToken(e TokenError) {
	vendorhttptest.WithLock(&s.mu, func() { s.failToken = &e })
}

// FailNext makes FCM refuse the next authenticated send with e; nothing
// is accepted.
func (s *Server) FailNext(e Error) { vendorhttptest.WithLock(&s.mu, func() { s.fail = &e }) }

// Register adds tokens to the fake's registry. Once it holds any, a send
// to a token not in it (and not Unregistered) is refused with 400
// INVALID_ARGUMENT, as FCM refuses a token it never issued; before that,
// every well-formed token is taken.
func (s *Server) Register(tokens ...string) {
	vendorhttptest.WithLock(&s.mu, func() {
		for _, t := range tokens {
			s.registered[t] = true
			delete(s.unregistered, t)
		}
	})
}

// NewToken returns a fresh registration token, of the shape the Firebase
// SDK gives (an instance ID, ':' and 140 characters), registered.
func (s *Server) NewToken() string {
	b := make([]byte, 105)
	_, _ = rand.Read(b)
	inst := make([]byte, 8)
	_, _ = rand.Read(inst)
	tok := base64.RawURLEncoding.EncodeToString(inst)[:11] + ":APA91b" + base64.RawURLEncoding.EncodeToString(b)[:134]
	s.Register(tok)
	return tok
}

// Unregister makes FCM answer every later send to token with 404
// UNREGISTERED, as it does once the app was uninstalled or the token
// expired.
func (s *Server) Unregister(token string) {
	vendorhttptest.WithLock(&s.mu, func() {
		s.unregistered[token] = true
		delete(s.registered, token)
	})
}

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Accepted returns how many messages the fake has accepted.
func (s *Server) Accepted() int { return s.messages.Len() }

// Requests returns the requests the send endpoint received, accepted or
// not, oldest first.
func (s *Server) Requests() []Request { return s.requests.All() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == TokenPath {
		s.serveToken(w, r)
		return
	}
	rest, under := strings.CutPrefix(r.URL.Path, "/v1/projects/")
	project, send := strings.CutSuffix(rest, "/messages:send")
	if !under || !send || project == "" || strings.Contains(project, "/") {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		googlePage(w, http.StatusNotFound)
		return
	}
	s.serveSend(w, r, project)
}

// serveSend is the send endpoint.
func (s *Server) serveSend(w http.ResponseWriter, r *http.Request, project string) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	access, hasBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	s.requests.Add(Request{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
		Accept: r.Header.Get("Accept"), AccessToken: access, Body: body})
	proxy := s.TakeProxyError() // the fault falls on the request recorded
	s.mu.Unlock()
	if !s.Wait(w, r) {
		return
	}
	if proxy != 0 {
		vendorhttptest.ProxyError(w, proxy)
		return
	}
	if r.Method != http.MethodPost {
		googlePage(w, http.StatusMethodNotAllowed)
		return
	}
	if !hasBearer || access == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		reply(w, Error{HTTPStatus: 401, Status: "UNAUTHENTICATED",
			Message: "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."})
		return
	}
	s.mu.Lock()
	tok := s.tokens[access]
	valid := tok != nil && !tok.revoked && time.Now().Before(tok.expires)
	scoped := tok != nil && (slices.Contains(tok.scopes, Scope) || slices.Contains(tok.scopes, "https://www.googleapis.com/auth/cloud-platform"))
	s.mu.Unlock()
	switch {
	case !valid:
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		reply(w, Error{HTTPStatus: 401, Status: "UNAUTHENTICATED",
			Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."})
		return
	case !scoped:
		replyInfo(w, Error{HTTPStatus: 403, Status: "PERMISSION_DENIED", Message: "Request had insufficient authentication scopes."}, "ACCESS_TOKEN_SCOPE_INSUFFICIENT")
		return
	case project != s.project:
		replyInfo(w, Error{HTTPStatus: 403, Status: "PERMISSION_DENIED",
			Message: fmt.Sprintf("Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/%s' (or it may not exist).", project)},
			"IAM_PERMISSION_DENIED")
		return
	}
	s.mu.Lock()
	injected := s.fail
	s.fail = nil
	s.mu.Unlock()
	if injected != nil {
		reply(w, *injected)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		reply(w, badRequest("", "Invalid JSON payload received. Unexpected token.", ""))
		return
	}
	m, validateOnly, e := s.parse(body)
	if e != nil {
		reply(w, *e)
		return
	}
	if validateOnly {
		vendorhttptest.ReplyJSONAs(w, "application/json; charset=UTF-8", http.StatusOK, map[string]string{"name": "projects/" + s.project + "/messages/fake_message_id"})
		return
	}
	m.Name = fmt.Sprintf("projects/%s/messages/0:%016d%%%s", s.project, 1500415314455276+s.serial.Add(1), s.ids.New("", 8))
	s.messages.Add(m)
	if !s.AfterAccept(w) {
		vendorhttptest.ReplyJSONAs(w, "application/json; charset=UTF-8", http.StatusOK, map[string]string{"name": m.Name})
	}
}

// parse checks a send's body as FCM does and returns the message it
// would accept, whether it only asks for validation, or FCM's refusal.
func (s *Server) parse(body []byte) (Message, bool, *Error) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		e := badRequest("", "Invalid JSON payload received. Unexpected token.", "")
		return Message{}, false, &e
	}
	if vi := check("", v, sendSchema); vi != nil {
		e := badRequest(vi.field, vi.text, "")
		return Message{}, false, &e
	}
	root := v.(map[string]any)
	validateOnly, _ := get(root, "validate_only").(bool)
	msg, _ := get(root, "message").(map[string]any)
	m := Message{Raw: body}
	m.Token, _ = get(msg, "token").(string)
	m.Topic, _ = get(msg, "topic").(string)
	m.Condition, _ = get(msg, "condition").(string)
	m.Data = stringMap(get(msg, "data"))
	if n, ok := get(msg, "notification").(map[string]any); ok {
		m.Notification = true
		m.Title, _ = get(n, "title").(string)
		m.Body, _ = get(n, "body").(string)
		m.Image, _ = get(n, "image").(string)
	}
	if a, ok := get(msg, "android").(map[string]any); ok {
		m.AndroidTTL, _ = get(a, "ttl").(string)
		m.AndroidPriority, _ = get(a, "priority").(string)
	}
	if wp, ok := get(msg, "webpush").(map[string]any); ok {
		m.WebpushHeaders = stringMap(get(wp, "headers"))
		if o, ok := get(wp, "fcm_options").(map[string]any); ok {
			m.Link, _ = get(o, "link").(string)
		}
	}
	if a, ok := get(msg, "apns").(map[string]any); ok {
		m.APNSHeaders = stringMap(get(a, "headers"))
	}
	if e := s.rules(m); e != nil {
		return Message{}, false, e
	}
	return m, validateOnly, nil
}

// rules checks FCM's rules beyond the schema.
func (s *Server) rules(m Message) *Error {
	targets := 0
	for _, t := range []string{m.Token, m.Topic, m.Condition} {
		if t != "" {
			targets++
		}
	}
	invalid := func(field, description string) *Error {
		e := badRequest(field, "Request contains an invalid argument.", "INVALID_ARGUMENT")
		e.Description = description
		return &e
	}
	switch {
	case targets == 0:
		e := badRequest("message", "Recipient of the message is not set.", "")
		return &e
	case targets > 1:
		e := badRequest("message", "Invalid value at 'message' (oneof), oneof field 'target' is already set.", "")
		return &e
	case m.Token != "" && !validToken(m.Token):
		return invalid("message.token", "Invalid registration token")
	}
	for k := range m.Data {
		if l := strings.ToLower(k); l == "from" || l == "message_type" || strings.HasPrefix(l, "google") || strings.HasPrefix(l, "gcm") {
			return invalid("message.data", "Invalid data key: "+strconv.Quote(k)+" is reserved by FCM")
		}
	}
	if m.AndroidTTL != "" {
		secs, _ := strconv.ParseFloat(strings.TrimSuffix(m.AndroidTTL, "s"), 64)
		if secs < 0 || secs > MaxTTL {
			return invalid("message.android.ttl", "Invalid TTL: it must be 0 to 2419200 seconds")
		}
	}
	if h := m.WebpushHeaders; h != nil {
		if ttl, ok := h["TTL"]; ok && !digits(ttl) {
			return invalid("message.webpush.headers", "Invalid TTL header: "+strconv.Quote(ttl))
		}
		if u, ok := h["Urgency"]; ok && !slices.Contains([]string{"very-low", "low", "normal", "high"}, u) {
			return invalid("message.webpush.headers", "Invalid Urgency header: "+strconv.Quote(u))
		}
	}
	if m.Link != "" {
		if u, err := url.Parse(m.Link); err != nil || u.Scheme != "https" || u.Host == "" {
			return invalid("message.webpush.fcm_options.link", "The link must be an HTTPS URL")
		}
	}
	if h := m.APNSHeaders; h != nil {
		if p, ok := h["apns-priority"]; ok && p != "5" && p != "10" && p != "1" {
			return invalid("message.apns.headers", "Invalid apns-priority: "+strconv.Quote(p))
		}
		if x, ok := h["apns-expiration"]; ok && !digits(x) {
			return invalid("message.apns.headers", "Invalid apns-expiration: "+strconv.Quote(x))
		}
	}
	size := len(m.Title) + len(m.Body) + len(m.Image)
	for k, v := range m.Data {
		size += len(k) + len(v)
	}
	if size > MaxPayload {
		return invalid("message", "Message too big")
	}
	if m.Token == "" {
		return nil
	}
	s.mu.Lock()
	gone, known, strict := s.unregistered[m.Token], s.registered[m.Token], len(s.registered) > 0
	s.mu.Unlock()
	switch {
	case gone:
		e := Unregistered
		return &e
	case strict && !known:
		e := InvalidArgument
		e.Message = "The registration token is not a valid FCM registration token"
		return &e
	}
	return nil
}

// validToken reports whether t has a registration token's shape.
func validToken(t string) bool {
	if len(t) < 32 || len(t) > 4096 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_:.", r)) {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// badRequest is a 400 INVALID_ARGUMENT with text, a BadRequest detail
// naming field (none when empty) and an FcmError detail of errorCode (none
// when empty).
func badRequest(field, text, errorCode string) Error {
	return Error{HTTPStatus: 400, Status: "INVALID_ARGUMENT", Message: text, ErrorCode: errorCode, Field: field, Description: text}
}

// reply answers e in Google's error format.
func reply(w http.ResponseWriter, e Error) { replyInfo(w, e, "") }

// replyInfo answers e, with a google.rpc.ErrorInfo detail of reason when
// it is not empty.
func replyInfo(w http.ResponseWriter, e Error, reason string) {
	details := []any{}
	if e.ErrorCode != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": e.ErrorCode})
	}
	if e.Field != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]string{{"field": e.Field, "description": e.Description}}})
	}
	if reason != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
			"domain": "googleapis.com", "metadata": map[string]string{"service": "fcm.googleapis.com", "method": "google.firebase.fcm.v1.FcmService.SendMessage"}})
	}
	body := map[string]any{"code": e.HTTPStatus, "message": e.Message, "status": e.Status}
	if len(details) > 0 {
		body["details"] = details
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter/time.Second)))
	}
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=UTF-8", e.HTTPStatus, map[string]any{"error": body})
}

// googlePage answers status with the HTML page Google's front end serves
// for a path or method it does not route.
func googlePage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=en>\n<meta charset=utf-8>\n<title>Error %d (%s)!!1</title>\n<p><b>%d.</b> <ins>That’s an error.</ins>\n", status, http.StatusText(status), status)
}

// serveToken is the token endpoint.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	s.tokenReqs.Add(1)
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if !s.Wait(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		googlePage(w, http.StatusMethodNotAllowed)
		return
	}
	g := Grant{ContentType: r.Header.Get("Content-Type")}
	var form url.Values
	if ct, _, _ := mime.ParseMediaType(g.ContentType); ct == "application/x-www-form-urlencoded" {
		form, _ = url.ParseQuery(string(body))
	}
	g.GrantType = form.Get("grant_type")
	assertion := form.Get("assertion")
	parts := strings.Split(assertion, ".")
	var signed []byte
	var sig []byte
	if len(parts) == 3 {
		g.Header, g.Claims = decodePart(parts[0]), decodePart(parts[1])
		signed = []byte(parts[0] + "." + parts[1])
		sig, _ = base64.RawURLEncoding.DecodeString(parts[2])
	}
	s.mu.Lock()
	injected, deleted := s.failToken, s.keyDeleted
	s.failToken = nil
	s.mu.Unlock()
	refuse := func(status int, code, description string) {
		s.grants.Add(g)
		vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", status, map[string]string{"error": code, "error_description": description})
	}
	if injected != nil {
		s.grants.Add(g)
		if injected.Error == "" {
			googlePage(w, injected.HTTPStatus)
			return
		}
		vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", injected.HTTPStatus,
			map[string]string{"error": injected.Error, "error_description": injected.Description})
		return
	}
	switch {
	case g.GrantType != GrantType:
		refuse(400, "unsupported_grant_type", "Invalid grant_type: "+g.GrantType)
		return
	case g.Header == nil || g.Claims == nil || len(sig) == 0:
		refuse(400, "invalid_request", "Invalid JWT: the assertion is not a signed JWT.")
		return
	case g.Header["alg"] != "RS256":
		refuse(400, "invalid_grant", "Invalid JWT: the algorithm must be RS256.")
		return
	case deleted || g.Header["kid"] != nil && g.Header["kid"] != s.keyID || !verify(&s.key.PublicKey, signed, sig):
		refuse(400, "invalid_grant", "Invalid JWT Signature.")
		return
	case g.Claims["iss"] != s.email:
		refuse(400, "invalid_grant", "Invalid grant: account not found")
		return
	case g.Claims["aud"] != s.TokenURL():
		refuse(400, "invalid_grant", "Invalid JWT: Failed audience check. The right audience is "+s.TokenURL())
		return
	}
	iat, iok := g.Claims["iat"].(float64)
	exp, eok := g.Claims["exp"].(float64)
	now := float64(time.Now().Unix())
	if !iok || !eok || exp <= iat || exp-iat > 3600 || iat > now+300 || exp < now-300 {
		refuse(400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
		return
	}
	scope, _ := g.Claims["scope"].(string)
	if strings.TrimSpace(scope) == "" {
		refuse(400, "invalid_scope", "Empty or missing scope not allowed.")
		return
	}
	lifetime := time.Duration(s.lifetime.Load())
	raw := make([]byte, 48)
	_, _ = rand.Read(raw)
	access := "ya29.c." + base64.RawURLEncoding.EncodeToString(raw)
	s.mu.Lock()
	s.tokens[access] = &issued{expires: time.Now().Add(lifetime), scopes: strings.Fields(scope)}
	s.order = append(s.order, access)
	s.mu.Unlock()
	g.Issued = true
	s.grants.Add(g)
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", http.StatusOK, map[string]any{
		"access_token": access, "expires_in": int(lifetime / time.Second), "token_type": "Bearer"})
}

// decodePart decodes a JWS part, base64url JSON, or nil.
func decodePart(p string) map[string]any {
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// verify checks an RS256 signature.
func verify(pub *rsa.PublicKey, signed, sig []byte) bool {
	sum := sha256.Sum256(signed)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
}

// KeyID returns the service account key's ID (private_key_id).
func (s *Server) KeyID() string { return s.keyID }
