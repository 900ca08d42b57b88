package push

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
)

// Limits of the request fields the channel checks.
const (
	// MaxTitle and MaxBody are the longest title and body, in characters.
	MaxTitle = 200
	MaxBody  = 2000
	// MaxDataKeys is the most keys Data may hold.
	MaxDataKeys = 50
	// MaxTTL is the longest TTL, in seconds: four weeks, the longest FCM
	// keeps a message.
	MaxTTL = 28 * 24 * 60 * 60
	// DefaultTTL is the TTL of a request that names none: four weeks.
	DefaultTTL = MaxTTL
	// MaxPayload is the largest Payload, in bytes: what one 4096-byte
	// Web Push record holds once encrypted (RFC 8291: 4096 less the
	// 86-byte header, the 16-byte tag and the padding delimiter). FCM's
	// limit, 4096 bytes of notification and data, is looser, so one rule
	// holds both.
	MaxPayload = 4096 - 86 - 16 - 1
	// MessageIDKey is the key of Payload's (and FCM's data's) message ID,
	// which an app sends back to confirm delivery (package doc).
	MessageIDKey = "message_id"
)

// Config configures a Channel. At least one provider is required.
type Config struct {
	// WebPush delivers the messages to Web Push subscriptions, such as a
	// *webpush.Provider. Nil: such requests are refused, naming
	// "subscription".
	WebPush notify.Provider
	// FCM delivers the messages to FCM registration tokens, such as an
	// *fcm.Provider. Nil: such requests are refused, naming "token".
	FCM notify.Provider
}

// Channel is the push channel. It implements notify.Channel for push.Kind;
// create it with New. It is safe for concurrent use and keeps no state
// between sends.
type Channel struct {
	webPush, fcm notify.Provider
}

// New returns a push channel for cfg.
func New(cfg Config) (*Channel, error) {
	if nilness.Is(cfg.WebPush) && nilness.Is(cfg.FCM) {
		return nil, errors.New("push: Config needs a WebPush or an FCM provider")
	}
	c := &Channel{}
	if !nilness.Is(cfg.WebPush) {
		c.webPush = cfg.WebPush
	}
	if !nilness.Is(cfg.FCM) {
		c.fcm = cfg.FCM
	}
	return c, nil
}

// Kind implements notify.Channel.
func (c *Channel) Kind() notify.Kind { return Kind }

// Message is a push envelope's content (notify.Envelope.Content): what a
// provider sends, checked.
type Message struct {
	// Keys are the Web Push subscription's keys, for the payload's
	// encryption; zero for an FCM token.
	Keys Keys
	// Title, Body, Data, Link and Image are the request's.
	Title, Body string
	Data        map[string]string
	Link, Image string
	// TTL is how long the push service keeps the message, never zero.
	TTL time.Duration
	// Urgency is never empty.
	Urgency Urgency
}

// MessageOf returns the content of an envelope of this channel, or nil
// when env is nil or carries another channel's content.
func MessageOf(env *notify.Envelope) *Message {
	if env == nil {
		return nil
	}
	m, _ := env.Content.(*Message)
	return m
}

// payload is the JSON an app receives (Payload). Its field names are a
// format apps read: change them only with care.
type payload struct {
	MessageID string            `json:"message_id"`
	Title     string            `json:"title,omitempty"`
	Body      string            `json:"body"`
	Link      string            `json:"link,omitempty"`
	Image     string            `json:"image,omitempty"`
	Data      map[string]string `json:"data,omitempty"`
}

// Payload returns what a Web Push provider encrypts and a service worker
// reads (event.data.json()): the JSON object {"message_id", "title",
// "body", "link", "image", "data"}, empty fields left out, with messageID
// (notify.Envelope.ID) so that the app can confirm delivery. It is at most
// MaxPayload bytes for any message the channel prepared and a message ID
// of up to 36 bytes (a UUID).
func (m *Message) Payload(messageID string) []byte {
	b, err := json.Marshal(payload{MessageID: messageID, Title: m.Title, Body: m.Body, Link: m.Link, Image: m.Image, Data: m.Data})
	if err != nil { // strings and a map of strings always marshal
		panic(err)
	}
	return b
}

// sizingID stands for a message ID while Prepare measures the payload: as
// long as the longest the Notifier gives (a UUID).
const sizingID = "00000000-0000-0000-0000-000000000000"

// Prepare implements notify.Channel: it checks every field at once and
// names each bad one, and picks the provider of the recipient's kind.
func (c *Channel) Prepare(_ context.Context, _ *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "push: a %T is not a push request", req)
	}
	var fe record.FieldErrors
	to, provider, keys := c.checkRecipient(&fe, r)
	checkText(&fe, "title", r.Title, MaxTitle, false)
	checkText(&fe, "body", r.Body, MaxBody, true)
	checkData(&fe, r.Data)
	checkURL(&fe, "link", r.Link)
	checkURL(&fe, "image", r.Image)
	ttl := r.TTL
	switch {
	case ttl == 0:
		ttl = DefaultTTL
	case ttl < 0 || ttl > MaxTTL:
		fe.Addf("ttl", "must be 1 to %d seconds (0 for the default, four weeks)", MaxTTL)
	}
	urgency := r.Urgency
	switch urgency {
	case "":
		urgency = UrgencyNormal
	case UrgencyVeryLow, UrgencyLow, UrgencyNormal, UrgencyHigh:
	default:
		fe.Add("urgency", "must be very-low, low, normal or high")
	}
	rules.Check(&fe, r) // category, domain
	if len(fe) > 0 {
		return nil, notify.InvalidFields(fe)
	}
	msg := &Message{Keys: keys, Title: r.Title, Body: r.Body, Data: r.Data, Link: r.Link, Image: r.Image,
		TTL: time.Duration(ttl) * time.Second, Urgency: urgency}
	if n := len(msg.Payload(sizingID)); n > MaxPayload {
		fe.Addf("body", "title, body, link, image and data together make a %d-byte payload; a push carries at most %d", n, MaxPayload)
		return nil, notify.InvalidFields(fe)
	}
	class := record.Transactional
	if r.Promotional {
		class = record.Promotional
	}
	return &notify.Envelope{
		Kind:     Kind,
		To:       to,
		Provider: provider,
		Units:    1,
		Class:    class,
		Domain:   r.Domain,
		Category: r.Category,
		Content:  msg,
	}, nil
}

// checkRecipient checks the subscription or the token and returns the
// recipient's canonical form, the provider that sends to it and the
// subscription's keys.
func (c *Channel) checkRecipient(fe *record.FieldErrors, r *Request) (to, provider string, keys Keys) {
	s, token := r.Subscription, strings.TrimSpace(r.Token)
	switch {
	case s == nil && token == "":
		fe.Add("subscription", "a subscription or a token is required")
		return "", "", Keys{}
	case s != nil && token != "":
		fe.Add("token", "must not be set with a subscription: a push goes to one of them")
		return "", "", Keys{}
	case s != nil:
		if c.webPush == nil {
			fe.Add("subscription", "cannot be sent: this channel has no Web Push provider")
			return "", "", Keys{}
		}
		return checkSubscription(fe, "subscription", s), c.webPush.Name(), s.Keys
	default:
		if c.fcm == nil {
			fe.Add("token", "cannot be sent: this channel has no FCM provider")
			return "", "", Keys{}
		}
		if why := tokenRule(token); why != "" {
			fe.Add("token", why)
		}
		return token, c.fcm.Name(), Keys{}
	}
}

// checkBulkRecipients names every bad recipient of a bulk request by its
// index, by the rules Prepare holds a single request's to.
func checkBulkRecipients(subs []*Subscription, tokens []string) error {
	var fe record.FieldErrors
	for i, s := range subs {
		at := "subscriptions." + strconv.Itoa(i)
		if s == nil {
			fe.Add(at, "is required")
			continue
		}
		checkSubscription(&fe, at, s)
	}
	for i, t := range tokens {
		if why := tokenRule(strings.TrimSpace(t)); why != "" {
			fe.Add("tokens."+strconv.Itoa(i), why)
		}
	}
	return notify.InvalidFields(fe)
}

// checkSubscription adds to fe, under prefix, the rules s breaks, and
// returns its endpoint's canonical form.
func checkSubscription(fe *record.FieldErrors, prefix string, s *Subscription) string {
	to, why := endpoint(s.Endpoint)
	if why != "" {
		fe.Add(prefix+".endpoint", why)
	}
	if why := p256dhRule(s.Keys.P256dh); why != "" {
		fe.Add(prefix+".keys.p256dh", why)
	}
	if why := authRule(s.Keys.Auth); why != "" {
		fe.Add(prefix+".keys.auth", why)
	}
	return to
}

// Recipient implements notify.Channel: a Web Push endpoint (an https URL)
// with its scheme and host lower-cased, or an FCM token trimmed (tokens
// are case-sensitive). It is the form the suppression list keeps, so that
// a subscription the push service declared gone (404, 410) or a token FCM
// unregistered is never charged again.
func (c *Channel) Recipient(to string) (string, error) { return Recipient(to) }

// Recipient is Channel.Recipient, for callers without a channel.
func Recipient(to string) (string, error) {
	to = strings.TrimSpace(to)
	if strings.HasPrefix(strings.ToLower(to), "https:") {
		c, why := endpoint(to)
		if why != "" {
			return "", notify.InvalidField("to", why)
		}
		return c, nil
	}
	if why := tokenRule(to); why != "" {
		return "", notify.InvalidField("to", "must be a Web Push endpoint (an https URL) or an FCM token: "+why)
	}
	return to, nil
}

// endpoint returns a Web Push endpoint in its canonical form, or why it
// is not one: a public https URL (netguard.CheckSyntax), without a
// fragment, its scheme and host lower-cased.
func endpoint(raw string) (string, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "is required"
	}
	if err := netguard.CheckSyntax(raw); err != nil {
		return "", "must be a public https URL: " + err.Error()
	}
	u, err := url.Parse(raw)
	if err != nil || u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") {
		return "", "must be a push service's URL, without a fragment"
	}
	u.Scheme, u.Host = "https", strings.ToLower(u.Host)
	return u.String(), ""
}

// tokenRule is the rule token breaks, or "".
func tokenRule(token string) string {
	if len(token) < 32 || len(token) > 4096 || strings.IndexFunc(token, notTokenRune) >= 0 {
		return "must be 32 to 4096 letters, digits or -_:."
	}
	return ""
}

func notTokenRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_:.", r))
}

// decodeKey decodes a subscription key: base64url as browsers give it,
// with or without padding (standard base64 too, as some libraries store
// it).
func decodeKey(s string) ([]byte, bool) {
	s = strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// p256dhRule is the rule a subscription's p256dh key breaks, or "": an
// uncompressed P-256 point on the curve, which the payload's key
// agreement needs.
func p256dhRule(s string) string {
	b, ok := decodeKey(s)
	if !ok || len(b) != 65 {
		return "must be the subscription's P-256 public key: 65 bytes, base64url"
	}
	if _, err := ecdh.P256().NewPublicKey(b); err != nil {
		return "must be a point on the P-256 curve"
	}
	return ""
}

// authRule is the rule a subscription's auth secret breaks, or "".
func authRule(s string) string {
	if b, ok := decodeKey(s); !ok || len(b) != 16 {
		return "must be the subscription's authentication secret: 16 bytes, base64url"
	}
	return ""
}

// checkText adds to fe the rule s breaks as field: required, valid
// UTF-8, at most max characters.
func checkText(fe *record.FieldErrors, field, s string, max int, required bool) {
	switch {
	case strings.TrimSpace(s) == "":
		if required {
			fe.Add(field, "is required")
		} else if s != "" {
			fe.Add(field, "must not be blank")
		}
	case !utf8.ValidString(s):
		fe.Add(field, "must be valid UTF-8")
	case utf8.RuneCountInString(s) > max:
		fe.Addf(field, "must be at most %d characters", max)
	}
}

// checkData adds to fe the rules data breaks, naming the key
// ("data.order").
func checkData(fe *record.FieldErrors, data map[string]string) {
	if len(data) > MaxDataKeys {
		fe.Addf("data", "must have at most %d keys", MaxDataKeys)
		return
	}
	for k, v := range data {
		field := "data." + k
		if why := dataKeyRule(k); why != "" {
			fe.Add("data", why)
			continue
		}
		if !utf8.ValidString(v) {
			fe.Add(field, "must be valid UTF-8")
		}
	}
}

// dataKeyRule is the rule a data key breaks, or "".
func dataKeyRule(k string) string {
	lower := strings.ToLower(k)
	switch {
	case k == "" || len(k) > 64 || strings.IndexFunc(k, notKeyRune) >= 0:
		return "keys must be 1 to 64 letters, digits, _, - or ."
	case k == MessageIDKey:
		return "must not hold message_id: the channel sets it"
	case lower == "from" || lower == "notification" || lower == "message_type" || lower == "collapse_key" ||
		strings.HasPrefix(lower, "google") || strings.HasPrefix(lower, "gcm"):
		return "must not hold a key FCM reserves (from, notification, message_type, collapse_key, google*, gcm*)"
	}
	return ""
}

func notKeyRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
}

// checkURL adds to fe the rule a link or image URL breaks: empty, or a
// public https URL.
func checkURL(fe *record.FieldErrors, field, raw string) {
	if raw == "" {
		return
	}
	if err := netguard.CheckSyntax(raw); err != nil {
		fe.Add(field, "must be a public https URL: "+err.Error())
	}
}

// Deliver implements notify.Channel: one attempt through the provider
// Prepare chose.
func (c *Channel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	switch {
	case c.webPush != nil && env.Provider == c.webPush.Name():
		return c.webPush.Send(ctx, env)
	case c.fcm != nil && env.Provider == c.fcm.Name():
		return c.fcm.Send(ctx, env)
	}
	return nil, notify.Errorf(notify.CodeInternal, "push: no provider named %q", env.Provider)
}

// Interface guards.
var _ notify.Channel = (*Channel)(nil)
