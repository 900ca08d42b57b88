package push

import (
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/record"
)

// Kind is the kind of the push channel and its requests.
const Kind notify.Kind = "push"

// Request asks for one push notification to one subscription (a browser's
// Web Push subscription) or one device (an FCM registration token); send
// it with notify.Notifier.Send. Exactly one of Subscription and Token is
// set.
type Request struct {
	Account string `json:"-"`
	// Subscription is a Web Push subscription, as the browser's
	// PushSubscription.toJSON() gives it: its endpoint (a public https
	// URL of the push service) and its keys. Sent through the channel's
	// Web Push provider.
	Subscription *Subscription `json:"subscription,omitempty"`
	// Token is an FCM registration token: 32 to 4096 letters, digits or
	// -_:. as the Firebase SDK gives it. Sent through the channel's FCM
	// provider.
	Token string `json:"token,omitempty"`
	// Title is the notification's title, at most MaxTitle characters.
	// Optional: a platform shows the app's name without one.
	Title string `json:"title,omitempty"`
	// Body is the notification's text, at most MaxBody characters.
	// Required.
	Body string `json:"body"`
	// Data are key-value pairs the app receives with the notification
	// (its service worker's event.data, FCM's data): at most MaxDataKeys
	// keys of 1 to 64 letters, digits, "_", "-" or "."; none of the
	// names FCM reserves (from, notification, message_type, collapse_key,
	// any starting with google or gcm) nor MessageIDKey, which the
	// channel sets. Default none.
	Data map[string]string `json:"data,omitempty"`
	// Link is the https URL the notification opens when tapped (a deep
	// link). Optional.
	Link string `json:"link,omitempty"`
	// Image is the https URL of an image the notification shows. Optional.
	Image string `json:"image,omitempty"`
	// TTL is how long, in seconds, the push service keeps the message
	// for a device that is offline: 1 to MaxTTL. 0, the default, is
	// DefaultTTL. A message not delivered within it is dropped by the
	// service, never reported: pair a short TTL with a timed fallback
	// (queued.Sender.SendWithFallback) when the message must arrive.
	TTL int `json:"ttl,omitempty"`
	// Urgency tells the push service how soon to wake the device:
	// very-low, low, normal (the default) or high.
	Urgency Urgency `json:"urgency,omitempty"`
	// Promotional marks a marketing message: priced at the promotional
	// rate and stopped by any suppression of the subscription (a
	// transactional message is stopped by a hard bounce only). Default
	// false: transactional.
	Promotional bool `json:"promotional,omitempty"`
	// Category names a category of the account's (store.Category): the
	// message goes only to a recipient whose preferences take it on the
	// push channel (notify.CodeDeclined otherwise). Empty: none.
	Category string `json:"category,omitempty" validate:"omitempty,category"`
	// Domain is the calling application's domain, recorded with the
	// message.
	Domain         string `json:"domain,omitempty" validate:"omitempty,domain"`
	IdempotencyKey string `json:"-"`
}

// Subscription is a Web Push subscription (RFC 8030, RFC 8291), in the
// JSON form of the browser's PushSubscription.toJSON().
type Subscription struct {
	// Endpoint is the push service's URL for this subscription: a public
	// https URL of at most 2048 bytes. It is the subscription's recipient
	// form (Recipient), so the suppression list keeps endpoints.
	Endpoint string `json:"endpoint"`
	// ExpirationTime is when the browser says the subscription ends, in
	// milliseconds since the epoch, or nil. It is not read: the push
	// service answers 404 or 410 for an ended subscription.
	ExpirationTime *int64 `json:"expirationTime,omitempty"`
	// Keys are the subscription's keys, which the payload is encrypted
	// for.
	Keys Keys `json:"keys"`
}

// Keys are a Web Push subscription's keys, base64url as the browser gives
// them (padding optional).
type Keys struct {
	// P256dh is the user agent's P-256 public key, uncompressed (65
	// bytes).
	P256dh string `json:"p256dh"`
	// Auth is the 16-byte authentication secret.
	Auth string `json:"auth"`
}

// Urgency is a push message's urgency (RFC 8030 section 5.3): how soon the
// push service should wake the device to deliver it.
type Urgency string

// The urgencies.
const (
	UrgencyVeryLow Urgency = "very-low"
	UrgencyLow     Urgency = "low"
	UrgencyNormal  Urgency = "normal"
	UrgencyHigh    Urgency = "high"
)

// Kind implements notify.Request.
func (*Request) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *Request) AccountID() string { return r.Account }

// Key implements notify.Request.
func (r *Request) Key() string { return r.IdempotencyKey }

// Fingerprint implements notify.Request: every content field, the
// recipient in its canonical form, so that a repeat that spells an
// endpoint's host otherwise is the same request.
func (r *Request) Fingerprint(h hash.Hash) {
	to, p256dh, auth := strings.TrimSpace(r.Token), "", ""
	if s := r.Subscription; s != nil {
		to, p256dh, auth = s.Endpoint, s.Keys.P256dh, s.Keys.Auth
	}
	if c, err := Recipient(to); err == nil {
		to = c
	}
	fingerprint.Fields(h, "push", to, p256dh, auth, r.Title, r.Body, r.Link, r.Image,
		strconv.Itoa(r.TTL), string(r.Urgency), strconv.FormatBool(r.Promotional), r.Domain)
	fingerprint.Vars(h, r.Data)
	fingerprint.Optional(h, "category", r.Category)
}

// BulkRequest sends one push notification to many subscriptions and
// tokens (a notify.Bulk request): every recipient is charged and recorded
// as its own message. queued.Sender.Enqueue and SendAt queue or schedule
// each recipient as its own message instead.
type BulkRequest struct {
	// Message is what every recipient gets: a Request without a
	// Subscription or a Token. Its Account and IdempotencyKey are the
	// bulk request's.
	Message Request
	// Subscriptions and Tokens are the recipients the caller names,
	// subscriptions first. One given twice (once in its canonical form)
	// is refused.
	Subscriptions []*Subscription
	Tokens        []string
	// Registered are the devices of registered recipients
	// (Registry.BulkFor), sent after Subscriptions and Tokens. Nil: none.
	Registered *Registered
}

// Registered are the devices of some of an account's recipients, as
// Registry.BulkFor read them for a bulk push. A bulk request is
// fingerprinted by the recipients' names, not their devices, so that a
// repeat of its idempotency key is the same request whatever became of
// the devices meanwhile.
type Registered struct {
	// Names are the recipients, as the caller named them.
	Names []string
	// Subscriptions and Tokens are their devices, each once.
	Subscriptions []*Subscription
	Tokens        []string
	// Unreachable are the indexes in Names of the recipients without a
	// device: the request is refused naming each ("recipients.1"), once
	// its idempotency key was found new.
	Unreachable []int
}

// Kind implements notify.Request.
func (*BulkRequest) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *BulkRequest) AccountID() string { return r.Message.Account }

// Key implements notify.Request.
func (r *BulkRequest) Key() string { return r.Message.IdempotencyKey }

// Fingerprint implements notify.Request: the devices named, the
// registered recipients' names, and the message.
func (r *BulkRequest) Fingerprint(h hash.Hash) {
	fingerprint.Fields(h, "push-bulk", strconv.Itoa(len(r.Subscriptions)), strconv.Itoa(len(r.Tokens)))
	for _, s := range r.Subscriptions {
		if s == nil {
			fingerprint.Fields(h, "")
			continue
		}
		fingerprint.Fields(h, s.Endpoint, s.Keys.P256dh, s.Keys.Auth)
	}
	for _, t := range r.Tokens {
		fingerprint.Fields(h, strings.TrimSpace(t))
	}
	if r.Registered != nil {
		fingerprint.Fields(h, "registered", strconv.Itoa(len(r.Registered.Names)))
		fingerprint.Fields(h, r.Registered.Names...)
	}
	r.Message.Fingerprint(h)
}

// Recipients implements notify.Bulk: one Request per subscription, then
// one per token, then the registered devices, subscriptions first (the
// index a refusal names, "to.3", counts in this order). Bad
// recipients are named together, by index ("subscriptions.2.endpoint",
// "tokens.0", "recipients.1").
func (r *BulkRequest) Recipients() ([]notify.Request, error) {
	n := len(r.Subscriptions) + len(r.Tokens)
	reg := r.Registered
	if reg != nil {
		if len(reg.Unreachable) > 0 {
			var fe record.FieldErrors
			for _, i := range reg.Unreachable {
				fe.Add("recipients."+strconv.Itoa(i), "has no registered device")
			}
			return nil, notify.InvalidFields(fe)
		}
		n += len(reg.Subscriptions) + len(reg.Tokens)
	} else {
		reg = &Registered{}
	}
	switch {
	case r.Message.Subscription != nil || r.Message.Token != "":
		return nil, notify.InvalidField("message", "must name no subscription or token: the recipients are in subscriptions and tokens")
	case n == 0:
		return nil, notify.InvalidField("subscriptions", "a bulk push needs at least one subscription, token or registered recipient")
	case n > notify.MaxBulkRecipients:
		return nil, notify.InvalidField("subscriptions", fmt.Sprintf("at most %d devices, got %d", notify.MaxBulkRecipients, n))
	}
	if err := checkBulkRecipients(r.Subscriptions, r.Tokens); err != nil {
		return nil, err
	}
	reqs := make([]notify.Request, 0, n)
	for _, group := range []struct {
		subs   []*Subscription
		tokens []string
	}{{r.Subscriptions, r.Tokens}, {reg.Subscriptions, reg.Tokens}} {
		for _, s := range group.subs {
			msg := r.Message
			msg.Subscription = s
			reqs = append(reqs, &msg)
		}
		for _, t := range group.tokens {
			msg := r.Message
			msg.Token = t
			reqs = append(reqs, &msg)
		}
	}
	return reqs, nil
}
