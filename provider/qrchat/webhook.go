package qrchat

import (
	"context"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// The gateway's webhook headers: the hex HMAC of the raw body, keyed by
// the webhook's hmac.key, and the name of its hash, always sha512.
const (
	hmacHeader          = "X-Webhook-Hmac"
	hmacAlgorithmHeader = "X-Webhook-Hmac-Algorithm"
)

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier, which
	// finds the messages' records in its Ledger. Required.
	Reporter notify.Reporter
	// Provider is the Name of the Provider that sent the messages the
	// gateway reports on, as the records keep it (Config.Name). Default
	// "qrchat" (DefaultName), New's default.
	Provider string
	// Secret is the HMAC key of the gateway's webhook configuration
	// (config.webhooks[].hmac.key): every request must carry
	// X-Webhook-Hmac, the hex HMAC-SHA512 of its body under this key, or
	// it is refused with 401. A report can refund a message, so an
	// unauthenticated receiver would let anyone who reaches it give
	// messages away: the key is required. Use 32 random bytes or more. It
	// never appears in errors or answers.
	Secret string
	// Session, when set, is the only gateway session whose events are
	// taken; events of other sessions are acknowledged and counted as
	// ignored (Stats().Ignored). It must then be a valid session name
	// (letters, digits, '-' and '_'). Default empty: every session.
	Session string
	// MaxBody bounds a request's body; a larger one is answered 413,
	// before it is read when its Content-Length says so. Default
	// DefaultMaxBody.
	MaxBody int64
}

// DefaultMaxBody is the default bound of an event's body, 1 MiB
// (vendorhttp.MaxWebhookBody). WAHA documents no bound. A message.ack event is an
// envelope and one message's ack: kilobytes, with the raw message data
// some engines attach (payload._data); 1 MiB leaves that ample room, and
// a body that declares more is refused before it is read.
const DefaultMaxBody = 1 << 20

// signature is how the gateway signs an event: X-Webhook-Hmac, the hex
// HMAC-SHA512 of the raw body under the webhook's hmac.key, with
// X-Webhook-Hmac-Algorithm sha512 (absent is taken as sha512; another
// hash cannot be checked, so it is refused).
var signature = vendorhttp.Signature{Header: hmacHeader, Hash: sha512.New, Size: sha512.Size,
	AlgorithmHeader: hmacAlgorithmHeader, Algorithm: "sha512"}

// Webhook receives the gateway's "message.ack" webhook events and turns
// them into notify.DeliveryReports for WebhookConfig.Reporter; see the
// package documentation's "Delivery reports". Mount it at the URL of the
// session's webhook configuration; create it with NewWebhook. It is safe
// for concurrent use and holds no goroutines.
type Webhook struct {
	cfg   WebhookConfig
	rep   notify.Reporter // cfg.Reporter, trying each ID a record may keep
	body  vendorhttp.WebhookBody
	count vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating the secret, when Reporter or Secret is missing, Secret
// contains control characters (a pasted line break, which no signature
// would ever match), or Session is set but not a valid session name.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if err := vendorhttp.CheckSignedReceiver("qrchat", cfg.Reporter, "Secret", cfg.Secret,
		"a report can refund a message, so the gateway must sign its events (hmac.key)"); err != nil {
		return nil, err
	}
	if cfg.Session != "" && !sessionName(cfg.Session) {
		return nil, errors.New("qrchat: WebhookConfig.Session must be 1-64 letters, digits, '-' or '_'")
	}
	if cfg.Provider == "" {
		cfg.Provider = DefaultName
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	return &Webhook{cfg: cfg, rep: candidateReporter{cfg.Reporter},
		body: vendorhttp.WebhookBody{Signature: &signature, Secret: cfg.Secret, JSON: true, Max: cfg.MaxBody,
			Budget: vendorhttp.NewUnverifiedBudget()}}, nil
}

// Stats returns what the webhook did so far.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// ServeHTTP takes one webhook event (POST; other methods are answered
// 405 with an Allow header). What can be checked without the body is
// checked first, before a byte of it is read: 401 when X-Webhook-Hmac is
// missing or not 128 hex digits, or X-Webhook-Hmac-Algorithm names
// another hash than sha512; 415 for a Content-Type other than JSON (none
// is taken); 413 for a Content-Length over MaxBody; 503 while forgeries
// have spent this receiver's budget of reading unauthenticated bodies, 1
// MiB a second in bursts of 8 MiB (the gateway retries). Then the body is read,
// within MaxBody (413), and its signature checked (401, reporting
// nothing). Then: 400 for a body that is not a JSON event, 503 when the
// report could not be applied now, or no record has its ID yet while a
// send is in flight (the gateway retries), and 200 otherwise: for a
// report taken, for one of a message no record has (Stats().Unmatched),
// and for an event it does not act on (Stats().Ignored).
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !vendorhttp.AllowMethods(w, r, http.MethodPost) {
		return
	}
	body, ok := h.count.Read(w, r, &h.body)
	if !ok {
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		h.count.Malformed(w, err)
		return
	}
	rep, err := h.report(&ev)
	if err != nil {
		h.count.Malformed(w, err)
		return
	}
	if rep == nil {
		h.count.Ignore(1)
		w.WriteHeader(http.StatusOK)
		return
	}
	h.count.Deliver(r.Context(), w, h.rep, []*notify.DeliveryReport{rep})
}

// event is the envelope of every webhook event; payload is read only for
// message.ack.
type event struct {
	Event     string          `json:"event"`
	Session   string          `json:"session"`
	Timestamp json.Number     `json:"timestamp"`
	Payload   json.RawMessage `json:"payload"`
}

// ackPayload is the payload of message.ack; the engines send more, but
// at least these.
type ackPayload struct {
	ID      json.RawMessage `json:"id"`
	To      string          `json:"to"`
	FromMe  bool            `json:"fromMe"`
	Ack     *int            `json:"ack"`
	AckName string          `json:"ackName"`
	Error   json.RawMessage `json:"error"`
}

// Ack levels of the gateway (WAMessageAck).
const (
	ackError   = -1
	ackPending = 0
	ackServer  = 1
	ackDevice  = 2
	ackRead    = 3
	ackPlayed  = 4
)

// ackNames are the names of the ack levels, which the payload's ackName
// carries; they stand in for a missing ack number.
var ackNames = map[string]int{
	"ERROR": ackError, "PENDING": ackPending, "SERVER": ackServer,
	"DEVICE": ackDevice, "READ": ackRead, "PLAYED": ackPlayed,
}

// ackStates maps ack levels to the states they report. PENDING (the
// message is still on the phone) has none, nor has any other level.
var ackStates = map[int]record.State{
	ackServer: record.StateSent,      // the chat network's server has it
	ackDevice: record.StateDelivered, // the recipient's device has it
	ackRead:   record.StateRead,
	ackPlayed: record.StateRead, // a voice or video message was played
	ackError:  record.StateFailed,
}

// errorText is the failure text of an ERROR ack without one of its own.
const errorText = "the gateway reported an error delivering the message"

// report turns ev into a report, or nil for an event the receiver does
// not act on: another event, another session, an ack of a message the
// session received rather than sent, or an ack level without a state.
// The error is for a message.ack payload that is not JSON of its shape.
func (h *Webhook) report(ev *event) (*notify.DeliveryReport, error) {
	if ev.Event != "message.ack" || (h.cfg.Session != "" && ev.Session != h.cfg.Session) {
		return nil, nil
	}
	var p ackPayload
	if len(ev.Payload) > 0 {
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return nil, err
		}
	}
	id := idOf(p.ID)
	if !p.FromMe || id == "" {
		return nil, nil
	}
	level, ok := 0, false
	if p.Ack != nil {
		level, ok = *p.Ack, true
	} else {
		level, ok = ackNames[strings.ToUpper(p.AckName)]
	}
	state, known := ackStates[level]
	if !ok || !known {
		return nil, nil
	}
	r := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: id, State: state,
		To: recipient(id, p.To), At: eventTime(ev.Timestamp)}
	if state == record.StateFailed {
		r.VendorCode = "ack:" + strconv.Itoa(level)
		text := ackErrorText(p.Error)
		if text == "" {
			text = errorText
		}
		r.Error = "qrchat: " + text
	}
	return r, nil
}

// eventTime reads the event's timestamp: Unix milliseconds, as the
// gateway writes it, or seconds for a value too small to be milliseconds
// of this century. Zero (the Notifier's now) when it is missing or
// absurd.
func eventTime(n json.Number) time.Time {
	v, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f < 0 || f > 1e15 {
			return time.Time{}
		}
		v = int64(f)
	}
	switch {
	case v <= 0 || v > 1e15: // beyond the year 30000 in milliseconds
		return time.Time{}
	case v < 1e12: // before September 2001 in milliseconds: seconds
		return time.Unix(v, 0).UTC()
	}
	return time.UnixMilli(v).UTC()
}

// ackErrorText reads the failure detail of an ERROR ack: a string, or an
// object with a reason (or message) and a code, as newer gateways send
// ({"code": "463", "reason": "account_restricted", ...}).
func ackErrorText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return vendorhttp.CleanText(s, 0)
	}
	var o struct {
		Code    json.RawMessage `json:"code"`
		Reason  string          `json:"reason"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	text := o.Reason
	if text == "" {
		text = o.Message
	}
	code := ""
	if json.Unmarshal(o.Code, &s) == nil {
		code = s
	} else if n := strings.TrimSpace(string(o.Code)); n != "" && n != "null" {
		code = n
	}
	code = vendorhttp.CleanText(code, 0)
	switch {
	case text != "" && code != "":
		return vendorhttp.CleanText(text, 0) + " (code " + code + ")"
	case code != "":
		return "code " + code
	}
	return vendorhttp.CleanText(text, 0)
}

// recipient returns the phone number a message of ours went to, digits
// only: the chat of its serialized ID (<fromMe>_<chat>_<id>), which is
// the recipient's for a message we sent in every engine, else the
// payload's "to". It is "" when neither is a phone chat (a group, or a
// @lid address whose digits are not a number), so that the report then
// names the message by its ID alone.
func recipient(id, to string) string {
	if _, chat, _, ok := splitID(id); ok {
		if n := phoneOf(chat); n != "" {
			return n
		}
	}
	return phoneOf(to)
}

// phoneOf returns the number of a phone chat ID (91XXXXXXXXXX@c.us, or
// @s.whatsapp.net, perhaps with a device suffix), or "".
func phoneOf(chat string) string {
	user, server, ok := strings.Cut(chat, "@")
	if !ok || (server != "c.us" && server != "s.whatsapp.net") {
		return ""
	}
	user, _, _ = strings.Cut(user, ":")
	if len(user) < 8 || len(user) > 15 || !digits(user) {
		return ""
	}
	return user
}

// splitID splits the gateway's serialized message ID,
// <true|false>_<chat>_<id>, with a fourth part (the participant) for
// group messages.
func splitID(id string) (fromMe bool, chat, bare string, ok bool) {
	parts := strings.Split(id, "_")
	if len(parts) < 3 || len(parts) > 4 || (parts[0] != "true" && parts[0] != "false") ||
		!strings.Contains(parts[1], "@") || parts[2] == "" {
		return false, "", "", false
	}
	return parts[0] == "true", parts[1], parts[2], true
}

// candidateIDs lists the IDs under which a record may keep the message
// the gateway names id, in the order to try them: id as the gateway
// sends it (the WEBJS engine's send answer is the same serialized ID),
// then, for a serialized ID, its bare message ID (the NOWEB and GOWS
// engines answer a send with that alone). A bare id has no other form:
// the chat it would need is not in it.
func candidateIDs(id string) []string {
	if _, _, bare, ok := splitID(id); ok && bare != id {
		return []string{id, bare}
	}
	return []string{id}
}

// candidateReporter hands a report to rep under each ID a record may
// keep for its message (candidateIDs), in order, and returns the first
// answer other than "no record has this ID": NotFound, or Unavailable
// with notify.ErrNotRecordedYet while the provider has a send in flight
// (a store failure is such another answer, and stops the tries). When no
// ID matched, the answer is "not recorded yet" if any ID got it (the
// gateway sends the event again: it may have outrun the move to sent of a
// send still in flight), else the last NotFound. The report that matches
// carries the ID the record has.
type candidateReporter struct{ rep notify.Reporter }

func (c candidateReporter) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	var (
		res       *notify.ReportResult
		err, soon error
	)
	for i, id := range candidateIDs(r.ProviderMessageID) {
		try := r
		if i > 0 {
			cp := *r
			cp.ProviderMessageID = id
			try = &cp
		}
		res, err = c.rep.Report(ctx, try)
		switch {
		case errors.Is(err, notify.ErrNotRecordedYet):
			soon = err
		case notify.CodeOf(err) != notify.CodeNotFound:
			return res, err
		}
	}
	if soon != nil {
		return nil, soon
	}
	return res, err
}

var _ http.Handler = (*Webhook)(nil)
