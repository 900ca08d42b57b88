package fcm

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// Defaults of Config.
const (
	// DefaultBaseURL is FCM's API.
	DefaultBaseURL = "https://fcm.googleapis.com"
	// DefaultName is the provider's name when Config.Name is empty.
	DefaultName = "fcm"
	// DefaultTimeout bounds one request (a token's or a send's) of the
	// default HTTP client; the caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
)

// Scope is the OAuth2 scope of the access tokens Send asks for: the one
// FCM HTTP v1 requires.
const Scope = "https://www.googleapis.com/auth/firebase.messaging"

// maxAnswer bounds the answers read; FCM's are well under 1 KB.
const maxAnswer = 64 << 10

// Config configures a Provider.
type Config struct {
	// ProjectID is the Firebase project's ID (such as "acme-app-5b1d"),
	// the {project} of projects/{project}/messages:send: 6 to 30
	// lower-case letters, digits and hyphens, starting with a letter,
	// optionally after a "domain:" prefix; or a project number. The
	// registration tokens must be of this project's apps (FCM answers
	// SENDER_ID_MISMATCH otherwise). Required.
	ProjectID string
	// CredentialsJSON is a service account's JSON key, as the Google
	// Cloud console downloads it ("type": "service_account", with
	// client_email, private_key and token_uri). Send signs a JWT with its
	// private key and trades it at token_uri for an access token of
	// Scope, which it reuses until shortly before it expires. The account
	// needs a role that may send messages (Firebase Cloud Messaging API
	// Admin, or any with cloudmessaging.messages.create). Set it or
	// TokenSource, not both. The key never appears in errors.
	CredentialsJSON []byte
	// TokenSource gives the access tokens instead of CredentialsJSON, such
	// as google.DefaultTokenSource's (workload identity, the metadata
	// server). Its tokens must carry Scope. Send calls it only when it
	// holds no usable token (none yet, near expiry, or refused by FCM),
	// from one send at a time, and stops waiting for it when the send's
	// context ends; it cannot see that context. A source that caches
	// (oauth2.ReuseTokenSource) gives back a token FCM refused until the
	// token expires.
	TokenSource oauth2.TokenSource
	// BaseURL is where the API is: an http(s) URL without user info,
	// query or fragment, under which Send posts to
	// /v1/projects/{ProjectID}/messages:send. A trailing slash or /v1 is
	// ignored. Default DefaultBaseURL (https://fcm.googleapis.com).
	BaseURL string
	// Name is the provider's name in receipts and timeouts; the push
	// channel routes FCM envelopes by it. Default DefaultName ("fcm").
	Name string
	// Timeout bounds each request of the default HTTP client, the token's
	// and the send's. Ignored with HTTPClient. Default DefaultTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests, to FCM and to the token endpoint.
	// Default: vendorhttp.NewClient(Timeout): bounded dial, TLS handshake
	// and whole request, no redirects followed, on a transport of its own
	// whose idle connections Close releases.
	HTTPClient *http.Client
	// Now is the clock of apns-expiration (now plus the message's TTL).
	// Default time.Now.
	Now func() time.Time
}

// Provider sends push envelopes (push.MessageOf(env)) to FCM registration
// tokens through FCM HTTP v1. Create one with New; it is safe for
// concurrent use, holds no goroutines, and shares one cached access token
// among its sends.
type Provider struct {
	name     string
	project  string
	endpoint string // {base}/v1/projects/{project}/messages:send
	conn     *vendorhttp.Conn
	tokens   *tokenCache
	now      func() time.Time
}

// projectRule is what a ProjectID must be: Google's project ID (6 to 30
// of a-z, 0-9 and '-', starting with a letter and not ending with '-'),
// optionally after a legacy "domain:" prefix, or a project number.
var projectRule = regexp.MustCompile(`^(([a-z0-9][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]|[0-9]{1,20})$`)

// New returns a Provider for cfg. It fails, naming the field and never
// repeating a secret, when ProjectID is missing or not a project ID; when
// neither or both of CredentialsJSON and TokenSource are set; when
// CredentialsJSON is not a service account's JSON key with a
// client_email, an RSA private_key in PEM and an http(s) token_uri (or
// none, for Google's); when BaseURL is not an http(s) URL without user
// info, query or fragment; or when Timeout is negative. New makes no
// request: the first Send fetches the first token.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.ProjectID == "":
		return nil, errors.New("fcm: Config.ProjectID is required")
	case !projectRule.MatchString(cfg.ProjectID):
		return nil, errors.New("fcm: Config.ProjectID must be a Firebase project ID (6 to 30 of a-z, 0-9 and -, starting with a letter) or a project number")
	case cfg.Timeout < 0:
		return nil, errors.New("fcm: Config.Timeout must not be negative")
	}
	hasSource := !nilness.Is(cfg.TokenSource)
	switch {
	case len(cfg.CredentialsJSON) > 0 && hasSource:
		return nil, errors.New("fcm: set Config.CredentialsJSON or Config.TokenSource, not both")
	case len(cfg.CredentialsJSON) == 0 && !hasSource:
		return nil, errors.New("fcm: Config.CredentialsJSON (a service account's JSON key) or Config.TokenSource is required")
	}
	base, err := vendorhttp.CheckBaseURL("fcm", cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	base = vendorhttp.TrimEndpoint(base, "/v1/projects/"+cfg.ProjectID+"/messages:send", "/v1")
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	conn := vendorhttp.NewConn(cfg.HTTPClient, cfg.Timeout)
	var fetch fetcher
	if hasSource {
		fetch = sourceFetcher(cfg.TokenSource)
	} else {
		conf, err := serviceAccount(cfg.CredentialsJSON)
		if err != nil {
			return nil, err
		}
		fetch = jwtFetcher(conf, conn.Client())
	}
	return &Provider{
		name:     cfg.Name,
		project:  cfg.ProjectID,
		endpoint: base + "/v1/projects/" + cfg.ProjectID + "/messages:send",
		conn:     conn,
		tokens:   &tokenCache{fetch: fetch},
		now:      cfg.Now,
	}, nil
}

// serviceAccount checks a service account's JSON key and returns its
// JWT configuration for Scope. Its errors name the key's fields, never
// their values: a key that is not JSON says where, not what.
func serviceAccount(key []byte) (*jwtConfig, error) {
	var f struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
		TokenURI    string `json:"token_uri"`
	}
	if err := json.Unmarshal(key, &f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("fcm: Config.CredentialsJSON is not JSON (at byte %d): it must be a service account's JSON key", se.Offset)
		}
		return nil, errors.New("fcm: Config.CredentialsJSON is not a service account's JSON key: a field has the wrong type")
	}
	switch {
	case f.Type != "service_account":
		return nil, errors.New(`fcm: Config.CredentialsJSON must be a service account's JSON key ("type": "service_account")`)
	case f.ClientEmail == "":
		return nil, errors.New("fcm: Config.CredentialsJSON has no client_email")
	case f.PrivateKey == "":
		return nil, errors.New("fcm: Config.CredentialsJSON has no private_key")
	case !rsaKey(f.PrivateKey):
		return nil, errors.New("fcm: Config.CredentialsJSON's private_key is not an RSA private key in PEM (PKCS #8 or PKCS #1)")
	case f.TokenURI != "" && !httpURL(f.TokenURI):
		return nil, errors.New("fcm: Config.CredentialsJSON's token_uri must be an http(s) URL")
	}
	conf, err := google.JWTConfigFromJSON(key, Scope)
	if err != nil { // checked above; kept in case oauth2's rules grow
		return nil, errors.New("fcm: Config.CredentialsJSON is not a service account's JSON key oauth2 accepts")
	}
	return &jwtConfig{conf}, nil
}

// rsaKey reports whether s is an RSA private key in PEM, as oauth2 parses
// it (PKCS #8, else PKCS #1): checked in New, so that Send never meets a
// key that fails, and its error never quotes one.
func rsaKey(s string) bool {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return false
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		_, ok := k.(*rsa.PrivateKey)
		return ok
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections.
func (p *Provider) Close() error { return p.conn.Close() }

// Send sends one message to the registration token env.To, once, and
// returns FCM's message name ("projects/{project}/messages/0:...") as the
// ProviderMessageID. It first takes an access token: the cached one, or
// a new one from the token endpoint (or Config.TokenSource), fetched with
// the send's context. An envelope FCM could not take (no push content, no
// token, a TTL out of range, a link that is not https) is
// CodeInvalidArgument and sends nothing; other errors are classified as
// the package documentation describes. An error that says FCM
// unregistered the token implements store.Bounce, so the Notifier puts
// the token on the account's suppression list.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	body, err := p.body(env)
	if err != nil {
		return nil, err
	}
	tok, err := p.tokens.token(ctx)
	if err != nil {
		return nil, err
	}
	ans, err := p.conn.Do(ctx, vendorhttp.Request{Name: "fcm", Method: http.MethodPost, URL: p.endpoint,
		URLConfig: "fcm Config.BaseURL and ProjectID", Body: body, ContentType: "application/json; charset=utf-8",
		Header: http.Header{"Authorization": {"Bearer " + tok.AccessToken}}, Limit: maxAnswer})
	if err != nil {
		return nil, err
	}
	name, refused, err := decodeAnswer(ans, tok.AccessToken)
	if refused {
		// FCM refused the access token itself (expired early, revoked):
		// the next send fetches a fresh one.
		p.tokens.drop(tok)
	}
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: name}, nil
}

// CheckHealth is the readiness check of notify.Provider: nil when the
// provider holds an access token or gets one now, so that the credentials
// work (the token endpoint took them). It sends nothing to FCM, so it
// does not prove that the account may send for ProjectID. Its errors are
// the token's, as for Send: CodeRejected for credentials the endpoint
// refused, else CodeUnavailable; an ended ctx stays visible to errors.Is.
func (p *Provider) CheckHealth(ctx context.Context) error {
	_, err := p.tokens.token(ctx)
	return err
}

// The JSON of FCM HTTP v1's send request (messages.send), as much of it as
// Send fills. Empty fields are left out.
type (
	sendRequest struct {
		Message message `json:"message"`
	}
	message struct {
		Token        string            `json:"token"`
		Notification *notification     `json:"notification,omitempty"`
		Data         map[string]string `json:"data,omitempty"`
		Android      *androidConfig    `json:"android,omitempty"`
		Webpush      *webpushConfig    `json:"webpush,omitempty"`
		APNS         *apnsConfig       `json:"apns,omitempty"`
	}
	notification struct {
		Title string `json:"title,omitempty"`
		Body  string `json:"body,omitempty"`
		Image string `json:"image,omitempty"`
	}
	androidConfig struct {
		TTL      string `json:"ttl"`
		Priority string `json:"priority"`
	}
	webpushConfig struct {
		Headers    map[string]string `json:"headers"`
		FCMOptions *webpushOptions   `json:"fcm_options,omitempty"`
	}
	webpushOptions struct {
		Link string `json:"link"`
	}
	apnsConfig struct {
		Headers map[string]string `json:"headers"`
	}
)

// body builds the request's JSON for env, or says which field FCM could
// not take.
func (p *Provider) body(env *notify.Envelope) ([]byte, error) {
	m := push.MessageOf(env)
	if m == nil {
		return nil, notify.InvalidField("message", "fcm sends push envelopes only")
	}
	if strings.TrimSpace(env.To) == "" {
		return nil, notify.InvalidField("token", "is required: fcm sends to an FCM registration token")
	}
	ttl := m.TTL
	switch {
	case ttl == 0:
		ttl = push.DefaultTTL * time.Second
	case ttl < 0 || ttl > push.MaxTTL*time.Second:
		return nil, notify.InvalidField("ttl", fmt.Sprintf("must be 1 to %d seconds: FCM keeps a message at most four weeks", push.MaxTTL))
	}
	if m.Link != "" && !strings.HasPrefix(strings.ToLower(m.Link), "https://") {
		return nil, notify.InvalidField("link", "must be an https URL: FCM opens only those")
	}
	secs := int64(ttl / time.Second)
	high := m.Urgency == push.UrgencyHigh
	urgency := m.Urgency
	if urgency == "" {
		urgency = push.UrgencyNormal
	}
	msg := message{
		Token:   env.To,
		Android: &androidConfig{TTL: strconv.FormatInt(secs, 10) + "s", Priority: pick(high, "HIGH", "NORMAL")},
		Webpush: &webpushConfig{Headers: map[string]string{"TTL": strconv.FormatInt(secs, 10), "Urgency": string(urgency)}},
		APNS: &apnsConfig{Headers: map[string]string{
			"apns-expiration": strconv.FormatInt(p.now().Add(ttl).Unix(), 10),
			"apns-priority":   pick(high, "10", "5"),
		}},
	}
	if m.Title != "" || m.Body != "" || m.Image != "" {
		msg.Notification = &notification{Title: m.Title, Body: m.Body, Image: m.Image}
	}
	if len(m.Data) > 0 || env.ID != "" {
		msg.Data = make(map[string]string, len(m.Data)+1)
		for k, v := range m.Data {
			msg.Data[k] = v
		}
		if env.ID != "" {
			msg.Data[push.MessageIDKey] = env.ID
		}
	}
	if m.Link != "" {
		msg.Webpush.FCMOptions = &webpushOptions{Link: m.Link}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the text as written; FCM reads JSON, not HTML
	if err := enc.Encode(sendRequest{Message: msg}); err != nil {
		// Strings and maps of strings always encode.
		return nil, notify.Errorf(notify.CodeInternal, "fcm: encoding the message: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
