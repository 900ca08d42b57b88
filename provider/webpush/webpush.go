package webpush

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode"

	webpushgo "github.com/SherClockHolmes/webpush-go"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Defaults and limits of Config and Send.
const (
	// DefaultName is the provider's name when Config.Name is empty: the
	// name a push.Channel's envelopes for it carry (Envelope.Provider).
	DefaultName = "webpush"
	// DefaultTimeout bounds one request of the default HTTP client; the
	// caller's context bounds it too.
	DefaultTimeout = 15 * time.Second
	// MaxRecord is the size of the one aes128gcm record a push message
	// is sent as (RFC 8291 section 4: push services must take 4096
	// bytes): every body is padded to it, so that its size says nothing
	// of the message.
	MaxRecord = 4096
	// LocalIDPrefix starts a ProviderMessageID that Send made itself,
	// because the push service accepted the message without a Location
	// (package doc).
	LocalIDPrefix = "local:"
)

// maxAnswer bounds the answers read: push services answer with an empty
// body or a short JSON error.
const maxAnswer = 64 << 10

// maxLocation bounds the Location kept as a message ID, as netguard
// bounds URLs.
const maxLocation = 2048

// Config configures a Provider.
type Config struct {
	// VAPIDPublicKey is the application server's public key (RFC 8292):
	// the uncompressed P-256 point (65 bytes), base64url with or without
	// padding, as webpush.GenerateVAPIDKeys gives it. Browsers subscribe
	// with it (PushManager.subscribe's applicationServerKey, which
	// PublicKey returns), and push services refuse pushes signed by
	// another key. Required.
	VAPIDPublicKey string
	// VAPIDPrivateKey is its private key, the 32-byte P-256 scalar,
	// base64url with or without padding, which signs every request's
	// VAPID token. It must be the private key of VAPIDPublicKey. It never
	// appears in errors. Required.
	VAPIDPrivateKey string
	// Subscriber is the contact of the application server's operator,
	// the VAPID token's "sub" (RFC 8292 section 2.1): a mailto: URL
	// (mailto:ops@example.com) or an https: URL, which push services use
	// to reach the operator about the pushes. Required.
	Subscriber string
	// Name is the provider's name in envelopes, receipts and timeouts.
	// Default DefaultName ("webpush").
	Name string
	// Timeout bounds one request of the default HTTP client (connection,
	// writing and the whole answer). It does not apply to HTTPClient.
	// Default DefaultTimeout (15s); negative is an error.
	Timeout time.Duration
	// HTTPClient, when set, sends the requests as it is: it is for tests
	// (webpushtest.Server.Client) and networks whose egress the operator
	// controls, since it dials whatever an endpoint names. Default: a
	// client that dials only public addresses (every address a push
	// service's name resolves to is checked at dial time, so an endpoint
	// cannot reach the private network: SSRF), uses no proxy, follows no
	// redirect and is bounded by Timeout; Close releases its idle
	// connections.
	HTTPClient *http.Client
}

// Provider sends push envelopes (push.MessageOf) to Web Push
// subscriptions. Create one with New; it is safe for concurrent use and
// holds no goroutines.
type Provider struct {
	name       string
	public     string // VAPID public key, base64url without padding
	private    string // VAPID private key, base64url without padding
	subscriber string // as webpush-go takes it (see subscriberOption)
	client     *http.Client
	guarded    bool // the default client: endpoints must be public
	owned      bool // the client was made here: Close releases it
}

// New returns a Provider for cfg. It fails, naming the field and never
// repeating the private key, when a VAPID key is missing or not a P-256
// key in base64url, when the two keys are not one pair, when Subscriber
// is not a mailto: or https: URL, or when Timeout is negative.
func New(cfg Config) (*Provider, error) { return newProvider(cfg, netguard.Config{}) }

// newProvider is New with the guard's configuration of the default
// client: the zero Config in production, a resolver and loopback in
// tests (export_test.go).
func newProvider(cfg Config, guard netguard.Config) (*Provider, error) {
	public, private, err := checkKeys(cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey)
	if err != nil {
		return nil, err
	}
	sub, err := subscriberOption(cfg.Subscriber)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("webpush: Config.Timeout must not be negative (0 for the default, 15s)")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	p := &Provider{name: cfg.Name, public: public, private: private, subscriber: sub, client: cfg.HTTPClient}
	if p.client == nil {
		p.client, p.guarded, p.owned = guardedClient(cfg.Timeout, guard), true, true
	}
	return p, nil
}

// checkKeys checks the VAPID key pair and returns both keys as
// webpush-go reads them: base64url without padding.
func checkKeys(public, private string) (string, string, error) {
	if public == "" {
		return "", "", errors.New("webpush: Config.VAPIDPublicKey is required (webpush.GenerateVAPIDKeys makes a pair)")
	}
	if private == "" {
		return "", "", errors.New("webpush: Config.VAPIDPrivateKey is required (webpush.GenerateVAPIDKeys makes a pair)")
	}
	pub, ok := decodeKey(public)
	if !ok || len(pub) != 65 {
		return "", "", errors.New("webpush: Config.VAPIDPublicKey must be an uncompressed P-256 public key (65 bytes), base64url")
	}
	pk, err := ecdh.P256().NewPublicKey(pub)
	if err != nil {
		return "", "", errors.New("webpush: Config.VAPIDPublicKey must be a point on the P-256 curve")
	}
	// The private key's errors say what is wrong with it, never what it
	// holds: an error is logged.
	priv, ok := decodeKey(private)
	if !ok || len(priv) != 32 {
		return "", "", errors.New("webpush: Config.VAPIDPrivateKey must be a P-256 private key (32 bytes), base64url")
	}
	sk, err := ecdh.P256().NewPrivateKey(priv)
	if err != nil {
		return "", "", errors.New("webpush: Config.VAPIDPrivateKey is not a valid P-256 private key")
	}
	if !sk.PublicKey().Equal(pk) {
		return "", "", errors.New("webpush: Config.VAPIDPublicKey is not the public key of Config.VAPIDPrivateKey: give the two keys of one pair")
	}
	return base64.RawURLEncoding.EncodeToString(pub), base64.RawURLEncoding.EncodeToString(priv), nil
}

// decodeKey decodes a key in base64url, or standard base64 as some tools
// write it, with or without padding.
func decodeKey(s string) ([]byte, bool) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// subscriberOption checks Config.Subscriber and returns it as
// webpush.Options.Subscriber takes it: webpush-go v1.4.0 prefixes
// "mailto:" to anything that does not start with "https:", so a mailto:
// URL is given as its bare address (else the token's sub would be
// "mailto:mailto:...", which push services refuse).
func subscriberOption(s string) (string, error) {
	const rule = "webpush: Config.Subscriber must be a mailto: URL (mailto:ops@example.com) or an https: URL: the VAPID contact push services require (RFC 8292)"
	if s == "" || strings.IndexFunc(s, unicode.IsSpace) >= 0 || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", errors.New(rule)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New(rule)
	}
	switch u.Scheme {
	case "mailto":
		addr, err := mail.ParseAddress(u.Opaque)
		if err != nil || addr.Address != u.Opaque || addr.Name != "" || u.RawQuery != "" || u.Fragment != "" {
			return "", errors.New(rule)
		}
		return u.Opaque, nil
	case "https":
		if u.Host == "" || u.User != nil {
			return "", errors.New(rule)
		}
		return u.String(), nil // the scheme lower-cased, as webpush-go looks for it
	}
	return "", errors.New(rule)
}

// Name returns Config.Name.
func (p *Provider) Name() string { return p.name }

// PublicKey returns the VAPID public key, base64url without padding: the
// applicationServerKey a browser subscribes with
// (PushManager.subscribe), which an HTTP API serves to the app's pages.
func (p *Provider) PublicKey() string { return p.public }

// Close releases the idle connections of the default HTTP client; a
// client given in Config is left alone. Send keeps working after Close,
// opening new connections. It never fails.
func (p *Provider) Close() error {
	if p.owned {
		p.client.CloseIdleConnections()
	}
	return nil
}

// Send delivers one push message to the subscription env.To, once: the
// payload push.Message.Payload(env.ID), encrypted for the subscription's
// keys (RFC 8291) by webpush-go, with the VAPID authorization (RFC 8292)
// and the TTL and Urgency headers (RFC 8030). It returns the push
// message resource (the answer's Location) as the ProviderMessageID. An
// envelope that cannot be sent (no *push.Message, an endpoint that is not
// an https URL, keys that are not a subscription's, a payload over
// push.MaxPayload, a negative TTL, an unknown urgency) is
// CodeInvalidArgument naming the field, and sends nothing; other errors
// are classified as the package documentation describes.
func (p *Provider) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	msg := push.MessageOf(env)
	if msg == nil {
		return nil, notify.InvalidField("message", "webpush sends push envelopes (a *push.Message) only")
	}
	sub, opts, payload, err := p.request(env, msg)
	if err != nil {
		return nil, err
	}
	if cerr := ctx.Err(); cerr != nil {
		// Before the encryption's work: the request is certainly not sent.
		return nil, &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("webpush: request not sent: %w", cerr)}
	}
	ex := &exchange{ctx: ctx, client: p.client}
	opts.HTTPClient = ex
	resp, err := webpushgo.SendNotificationWithContext(ex.ctx, payload, sub, opts)
	if resp != nil {
		resp.Body.Close()
	}
	var ge *netguard.Error
	switch {
	case !ex.called:
		// webpush-go failed before any I/O: nothing was sent.
		return nil, notSent(err)
	case ex.err != nil:
		// The kit classifies a dial the guard refused as any failed dial,
		// a temporary refusal; but the endpoint itself is refused, for good.
		if p.guarded && errors.As(ex.err, &ge) {
			return nil, notify.Errorf(notify.CodeRejected,
				"webpush: the subscription's endpoint is not dialed: %s (only public addresses are)", ge.Error())
		}
		return nil, ex.err
	}
	id, err := classify(p.name, ex.answer, env.To)
	if err != nil {
		return nil, err
	}
	return &notify.Result{Provider: p.name, ProviderMessageID: id}, nil
}

// request checks env and msg and returns what webpush-go sends.
func (p *Provider) request(env *notify.Envelope, msg *push.Message) (*webpushgo.Subscription, *webpushgo.Options, []byte, error) {
	var fe record.FieldErrors
	if why := p.endpointRule(env.To); why != "" {
		fe.Add("to", why)
	}
	p256dh, ok := decodeKey(msg.Keys.P256dh)
	if ok {
		// The curve's check includes the length: 65 bytes, uncompressed.
		_, err := ecdh.P256().NewPublicKey(p256dh)
		ok = err == nil
	}
	if !ok {
		fe.Add("subscription.keys.p256dh", "must be the subscription's P-256 public key: 65 bytes, base64url")
	}
	auth, ok := decodeKey(msg.Keys.Auth)
	if !ok || len(auth) != 16 {
		fe.Add("subscription.keys.auth", "must be the subscription's authentication secret: 16 bytes, base64url")
	}
	payload := msg.Payload(env.ID)
	if len(payload) > push.MaxPayload {
		fe.Addf("body", "title, body, link, image and data together make a %d-byte payload; a push carries at most %d", len(payload), push.MaxPayload)
	}
	if msg.TTL < 0 {
		fe.Add("ttl", "must not be negative")
	}
	switch msg.Urgency {
	case "", push.UrgencyVeryLow, push.UrgencyLow, push.UrgencyNormal, push.UrgencyHigh:
	default:
		fe.Add("urgency", "must be very-low, low, normal or high")
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, nil, nil, err
	}
	sub := &webpushgo.Subscription{Endpoint: env.To, Keys: webpushgo.Keys{
		// Given as webpush-go decodes them whatever the browser's spelling.
		P256dh: base64.RawURLEncoding.EncodeToString(p256dh),
		Auth:   base64.RawURLEncoding.EncodeToString(auth),
	}}
	opts := &webpushgo.Options{
		Subscriber:      p.subscriber,
		TTL:             int(msg.TTL / time.Second),
		Urgency:         webpushgo.Urgency(msg.Urgency),
		VAPIDPublicKey:  p.public,
		VAPIDPrivateKey: p.private,
		RecordSize:      MaxRecord,
	}
	return sub, opts, payload, nil
}

// endpointRule is the rule the endpoint to breaks, or "": an https URL
// with a host and without user info or fragment (RFC 8030 push services
// are https); with the default client also a public one by netguard's
// rules that need no DNS (no IP literal, no local name), as the push
// channel requires, the dial itself checking the addresses.
func (p *Provider) endpointRule(to string) string {
	u, err := url.Parse(to)
	if to == "" || err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(to, "#") {
		return "must be the subscription's endpoint: an https URL"
	}
	if p.guarded {
		if err := netguard.CheckSyntax(to); err != nil {
			return "must be a public https URL: " + err.Error()
		}
	}
	return ""
}

// notSent classifies an error of webpush-go before it asked the client
// to send anything: the message certainly went nowhere. The keys were
// checked, so what is left is the configuration or the system's
// randomness; webpush-go's text names neither key's value.
func notSent(err error) error {
	if err == nil {
		err = errors.New("no request was made")
	}
	if errors.Is(err, webpushgo.ErrMaxPadExceeded) {
		return &notify.Error{Code: notify.CodeInvalidArgument, Err: err, Fields: record.FieldErrors{{Field: "body",
			Message: fmt.Sprintf("makes a payload over what one push carries (%d bytes)", push.MaxPayload)}}}
	}
	return notify.Errorf(notify.CodeRejected,
		"webpush: the message could not be encrypted or signed (check webpush Config.VAPIDPublicKey, VAPIDPrivateKey and Subscriber): %s",
		vendorhttp.CleanText(vendorhttp.Cause(err), 0))
}

// localID returns a ProviderMessageID of a message accepted without a
// Location: LocalIDPrefix and 32 random hex digits, unique.
func localID() string {
	b := make([]byte, 16)
	_, _ = io.ReadFull(rand.Reader, b)
	return LocalIDPrefix + hex.EncodeToString(b)
}

// Interface guards
var (
	_ notify.Provider = (*Provider)(nil)
	_ io.Closer       = (*Provider)(nil)
)
