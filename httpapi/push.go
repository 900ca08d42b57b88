package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/record"
)

// Push notifications (channel/push), beyond the spec:
//
//	POST /push                          one push to a subscription or a token (send_at, fallback, respond-async as any send)
//	POST /push/bulk                     one push to many subscriptions, tokens and registered recipients
//	POST /push/confirm                  the app's word that a push arrived (delivered) or was opened (read)
//	POST /push/subscriptions            register a subscription or a token for a recipient (WithPush)
//	POST /push/subscriptions/lookup     a recipient's registered devices (WithPush)
//	POST /push/subscriptions/delete     forget a device (WithPush)
//	GET  /push/vapid-public-key         the VAPID public key a browser subscribes with, without an API key (WithPush)
//
// The send routes answer as POST /email/send and POST /sms/bulk do. The
// recipient a device is registered for travels in the body, never in the
// path or query string, so that the access log never holds it.

// PushConfig configures the push routes beyond sending (WithPush).
type PushConfig struct {
	// Registry keeps the devices registered for recipients; with it
	// POST /push/bulk takes "recipients". Nil: the registration routes
	// are 404 and a bulk push names its devices itself.
	Registry *push.Registry
	// VAPIDPublicKey is the Web Push provider's public key
	// (webpush.Provider.PublicKey), served to browsers, which subscribe
	// with it as their applicationServerKey. Empty: the route is 404.
	VAPIDPublicKey string
}

// WithPush serves the push device registry and the VAPID public key
// (see the routes above). The push send routes are served without it,
// and answer what the Notifier answers: without a push channel, 503
// unavailable. A config with neither field is an error.
func WithPush(cfg PushConfig) Option {
	return func(h *Handler) error {
		if cfg.Registry == nil && cfg.VAPIDPublicKey == "" {
			return errors.New("WithPush: needs a Registry or a VAPIDPublicKey")
		}
		h.push = cfg
		return nil
	}
}

// pushText is what every push body shares: the message.
type pushText struct {
	Title          value           `json:"title"`
	Body           value           `json:"body"`
	Data           json.RawMessage `json:"data"`
	Link           value           `json:"link"`
	Image          value           `json:"image"`
	TTL            value           `json:"ttl"`
	Urgency        value           `json:"urgency"`
	Promotional    json.RawMessage `json:"promotional"`
	Category       value           `json:"category"`
	Domain         value           `json:"domain"`
	IdempotencyKey value           `json:"idempotency_key"`
	SendAt         value           `json:"send_at"`
}

// pushBody is the JSON of POST /push.
type pushBody struct {
	Subscription json.RawMessage `json:"subscription"`
	Token        value           `json:"token"`
	Fallback     json.RawMessage `json:"fallback"`
	pushText
}

// pushBulkBody is the JSON of POST /push/bulk.
type pushBulkBody struct {
	Subscriptions json.RawMessage `json:"subscriptions"`
	Tokens        json.RawMessage `json:"tokens"`
	Recipients    json.RawMessage `json:"recipients"`
	pushText
}

// subscriptionBody is a Web Push subscription as PushSubscription.toJSON()
// gives it.
type subscriptionBody struct {
	Endpoint       value           `json:"endpoint"`
	ExpirationTime json.RawMessage `json:"expirationTime"`
	Keys           json.RawMessage `json:"keys"`
}

// keysBody is a subscription's keys.
type keysBody struct {
	P256dh value `json:"p256dh"`
	Auth   value `json:"auth"`
}

// deviceBody is the JSON of POST /push/subscriptions.
type deviceBody struct {
	Recipient    value           `json:"recipient"`
	Subscription json.RawMessage `json:"subscription"`
	Token        value           `json:"token"`
}

// pushConfirmBody is the JSON of POST /push/confirm.
type pushConfirmBody struct {
	MessageID value `json:"message_id"`
	State     value `json:"state"`
}

// deviceLookupBody and deviceDeleteBody are the JSON of the lookup and
// delete routes.
type deviceLookupBody struct {
	Recipient value `json:"recipient"`
}
type deviceDeleteBody struct {
	To value `json:"to"`
}

// The keys of the push bodies, from their structs.
var (
	pushKeys         = bodyKeys(reflect.TypeFor[pushBody]())
	pushBulkKeys     = bodyKeys(reflect.TypeFor[pushBulkBody]())
	subscriptionKeys = bodyKeys(reflect.TypeFor[subscriptionBody]())
	keysKeys         = bodyKeys(reflect.TypeFor[keysBody]())
	pushConfirmKeys  = bodyKeys(reflect.TypeFor[pushConfirmBody]())
	deviceKeys       = bodyKeys(reflect.TypeFor[deviceBody]())
	deviceLookupKeys = bodyKeys(reflect.TypeFor[deviceLookupBody]())
	deviceDeleteKeys = bodyKeys(reflect.TypeFor[deviceDeleteBody]())
)

// decodePushAt decodes the body of POST /push, its send_at and its
// fallback chain (whose SMS and e-mail steps name their own "to").
func decodePushAt(body []byte, account string, m Header) (notify.Request, time.Time, error) {
	var w pushBody
	if err := unmarshalKeys(body, &w, pushKeys, true); err != nil {
		return nil, time.Time{}, err
	}
	var fe record.FieldErrors
	r := &push.Request{
		Subscription: decodeSubscription(&fe, "subscription", w.Subscription),
		Token:        w.Token.str(&fe, "token", false),
	}
	at := w.fill(&fe, r, account, m)
	var req notify.Request = r
	if len(w.Fallback) > 0 && string(w.Fallback) != "null" {
		req = chained(&fe, w.Fallback, r, "", r.Category, r.Domain, at)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, time.Time{}, err
	}
	return req, at, nil
}

// fill reads the message's fields into r and returns the send_at.
func (w *pushText) fill(fe *record.FieldErrors, r *push.Request, account string, m Header) time.Time {
	r.Account = account
	r.Title = w.Title.str(fe, "title", false)
	r.Body = w.Body.str(fe, "body", false)
	r.Data = decodeData(fe, w.Data)
	r.Link = w.Link.str(fe, "link", false)
	r.Image = w.Image.str(fe, "image", false)
	if s := w.TTL.str(fe, "ttl", true); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > push.MaxTTL {
			fe.Addf("ttl", "must be 1 to %d seconds (0 for the default, four weeks)", push.MaxTTL)
		}
		r.TTL = n
	}
	r.Urgency = push.Urgency(w.Urgency.str(fe, "urgency", false))
	switch p := string(bytes.TrimSpace(w.Promotional)); p {
	case "", "null", "false":
	case "true":
		r.Promotional = true
	default:
		fe.Add("promotional", "must be true or false")
	}
	r.Category = w.Category.str(fe, "category", false)
	var website value
	r.Domain, r.IdempotencyKey = common(fe, m, &w.Domain, &website, &w.IdempotencyKey)
	return sendAt(fe, &w.SendAt)
}

// decodeData reads "data": an object of strings, a bad value named
// "data.<key>".
func decodeData(fe *record.FieldErrors, raw json.RawMessage) map[string]string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var vs map[string]value
	if raw[0] != '{' || json.Unmarshal(raw, &vs) != nil {
		fe.Add("data", "must be an object of strings")
		return nil
	}
	out := make(map[string]string, len(vs))
	for k, v := range vs {
		if v.kind != 's' {
			fe.Add("data."+k, "must be a string")
			continue
		}
		out[k] = v.s
	}
	return out
}

// decodeSubscription reads a subscription object under name; nil when
// absent.
func decodeSubscription(fe *record.FieldErrors, name string, raw json.RawMessage) *push.Subscription {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var w subscriptionBody
	if raw[0] != '{' || unmarshalKeys(raw, &w, subscriptionKeys, true) != nil {
		fe.Add(name, "must be a Web Push subscription: an object with endpoint and keys, as PushSubscription.toJSON() gives it")
		return nil
	}
	s := &push.Subscription{Endpoint: w.Endpoint.str(fe, name+".endpoint", false)}
	var k keysBody
	if len(w.Keys) == 0 || w.Keys[0] != '{' || unmarshalKeys(w.Keys, &k, keysKeys, true) != nil {
		fe.Add(name+".keys", "must be an object with p256dh and auth")
		return s
	}
	s.Keys = push.Keys{P256dh: k.P256dh.str(fe, name+".keys.p256dh", false), Auth: k.Auth.str(fe, name+".keys.auth", false)}
	return s
}

// decodeList reads an array of items under name with item, naming a bad
// one "<name>.<i>"; nil when absent.
func decodeList[T any](fe *record.FieldErrors, name string, raw json.RawMessage, item func(fe *record.FieldErrors, at string, raw json.RawMessage) T) []T {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		fe.Add(name, "must be an array")
		return nil
	}
	if len(items) > notify.MaxBulkRecipients {
		fe.Addf(name, "at most %d, got %d", notify.MaxBulkRecipients, len(items))
		return nil
	}
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = item(fe, name+"."+strconv.Itoa(i), it)
	}
	return out
}

// stringItem reads one string of an array: a JSON string or a whole
// number (a user ID such as 42).
func stringItem(fe *record.FieldErrors, at string, raw json.RawMessage) string {
	var v value
	_ = json.Unmarshal(raw, &v)
	s := v.str(fe, at, true) // a token, or a recipient's name, which may be a number
	if s == "" && !fe.Has(at) {
		fe.Add(at, "is required")
	}
	return s
}

// pushBulk serves POST /push/bulk: subscriptions and tokens as given,
// then the devices of the registered recipients (Registry.BulkFor).
func (h *Handler) pushBulk(x *exchange, r *http.Request, acct *notify.Account) {
	var w pushBulkBody
	if !h.readObject(x, r, &w, pushBulkKeys) {
		return
	}
	var fe record.FieldErrors
	req := &push.BulkRequest{
		Subscriptions: decodeList(&fe, "subscriptions", w.Subscriptions, decodeSubscription),
		Tokens:        decodeList(&fe, "tokens", w.Tokens, stringItem),
	}
	at := w.fill(&fe, &req.Message, acct.ID, headerMeta(r))
	names := decodeList(&fe, "recipients", w.Recipients, stringItem)
	if len(names) > 0 && h.push.Registry == nil {
		fe.Add("recipients", "cannot be used here: this gateway keeps no push devices (send subscriptions or tokens)")
	}
	if refuseFields(x, r, fe) {
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	if len(names) > 0 {
		reg, err := h.push.Registry.BulkFor(ctx, acct.ID, names)
		if err != nil {
			writeErr(x, r, err, nil)
			return
		}
		req.Registered = reg
	}
	h.sendBulk(ctx, x, r, req, at)
}

// confirmPush serves POST /push/confirm: the app's word that one of the
// account's pushes arrived ("delivered", the default) or was opened
// ("read"), which push services never report. It moves the record as a
// vendor's delivery report would (notify.Notifier.Report), so that the
// step of a timed fallback after it is not sent, and answers the record
// as GET /messages/{id} does. A message that is not one of the
// account's pushes is 404: an app confirms its pushes, never another
// channel's message, whose vendor reports it.
func (h *Handler) confirmPush(x *exchange, r *http.Request, acct *notify.Account) {
	var w pushConfirmBody
	if !h.readObject(x, r, &w, pushConfirmKeys) {
		return
	}
	var fe record.FieldErrors
	id := w.MessageID.str(&fe, "message_id", false)
	if id == "" && !fe.Has("message_id") {
		fe.Add("message_id", "is required: the message_id of the push's payload")
	}
	state := record.State(w.State.str(&fe, "state", false))
	switch state {
	case "":
		state = record.StateDelivered
	case record.StateDelivered, record.StateRead:
	default:
		fe.Add("state", "must be delivered or read")
	}
	if refuseFields(x, r, fe) {
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	m, err := h.n.Message(ctx, acct.ID, id)
	if err == nil && m.Kind != push.Kind {
		err = notify.Errorf(notify.CodeNotFound, "no push message %s: only a push's delivery is confirmed by its app", id)
	}
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	x.message = id
	if _, err := h.n.Report(ctx, &notify.DeliveryReport{Provider: m.Provider, Account: acct.ID, MessageID: id, State: state}); err != nil {
		writeErr(x, r, err, nil)
		return
	}
	h.answerMessage(ctx, x, r, acct, id)
}

// deviceAnswer is one device in the registry's answers.
type deviceAnswer struct {
	Recipient string `json:"recipient"`
	// To is the device's address: the subscription's endpoint, or the
	// FCM token.
	To string `json:"to"`
	// Type is webpush or fcm.
	Type         string    `json:"type"`
	RegisteredAt time.Time `json:"registered_at"`
}

func answerDevice(d pushstore.Device) deviceAnswer {
	typ := "fcm"
	if d.P256dh != "" {
		typ = "webpush"
	}
	return deviceAnswer{Recipient: d.Recipient, To: d.To, Type: typ, RegisteredAt: d.RegisteredAt.UTC()}
}

// registerDevice serves POST /push/subscriptions.
func (h *Handler) registerDevice(x *exchange, r *http.Request, acct *notify.Account) {
	var w deviceBody
	if !h.readObject(x, r, &w, deviceKeys) {
		return
	}
	var fe record.FieldErrors
	recipient := w.Recipient.str(&fe, "recipient", true)
	sub := decodeSubscription(&fe, "subscription", w.Subscription)
	token := w.Token.str(&fe, "token", false)
	if refuseFields(x, r, fe) {
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	d, err := h.push.Registry.Register(ctx, acct.ID, recipient, sub, token, time.Now())
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	writeVerificationJSON(x, r, struct {
		Success bool `json:"success"`
		deviceAnswer
	}{true, answerDevice(d)})
}

// lookupDevices serves POST /push/subscriptions/lookup.
func (h *Handler) lookupDevices(x *exchange, r *http.Request, acct *notify.Account) {
	var w deviceLookupBody
	if !h.readObject(x, r, &w, deviceLookupKeys) {
		return
	}
	var fe record.FieldErrors
	recipient := w.Recipient.str(&fe, "recipient", true)
	if refuseFields(x, r, fe) {
		return
	}
	ds, err := h.push.Registry.Devices(r.Context(), acct.ID, recipient)
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	out := make([]deviceAnswer, len(ds))
	for i, d := range ds {
		out[i] = answerDevice(d)
	}
	writeVerificationJSON(x, r, struct {
		Success   bool           `json:"success"`
		Recipient string         `json:"recipient"`
		Devices   []deviceAnswer `json:"devices"`
	}{true, recipient, out})
}

// deleteDevice serves POST /push/subscriptions/delete.
func (h *Handler) deleteDevice(x *exchange, r *http.Request, acct *notify.Account) {
	var w deviceDeleteBody
	if !h.readObject(x, r, &w, deviceDeleteKeys) {
		return
	}
	var fe record.FieldErrors
	to := strings.TrimSpace(w.To.str(&fe, "to", false))
	if to == "" && !fe.Has("to") {
		fe.Add("to", "is required: the subscription's endpoint or the FCM token")
	}
	if refuseFields(x, r, fe) {
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	if err := h.push.Registry.Unregister(ctx, acct.ID, to); err != nil {
		writeErr(x, r, err, nil)
		return
	}
	writeVerificationJSON(x, r, struct {
		Success bool `json:"success"`
	}{true})
}

// vapidPublicKey serves GET /push/vapid-public-key, without an API key: a
// browser's page asks for it before it subscribes, and it is public.
func (h *Handler) vapidPublicKey(w http.ResponseWriter, r *http.Request) {
	b, _ := json.Marshal(struct {
		PublicKey string `json:"public_key"`
	}{h.push.VAPIDPublicKey})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}
