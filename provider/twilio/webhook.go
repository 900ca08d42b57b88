package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// SignatureHeader is the header in which Twilio signs its requests.
const SignatureHeader = "X-Twilio-Signature"

// DefaultMaxBody is the default bound of a status callback's body, 64
// KiB. Twilio documents none; a callback is a dozen short form
// parameters, under 1 KB, so the bound keeps what a forged request whose
// signature header has the right shape can make the receiver read small.
const DefaultMaxBody = 64 << 10

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier. Required.
	Reporter notify.Reporter
	// AuthToken is the account's auth token, with which Twilio signs every
	// callback (X-Twilio-Signature). It is the auth token even when the
	// Provider authenticates with an API key: an API key secret does not
	// sign callbacks. It never appears in errors. Required.
	AuthToken string
	// URL is the receiver's public URL as Twilio calls it: the scheme,
	// host (and port, when not the scheme's default) and path of
	// Config.StatusCallback, and its fragment when it has one (connection
	// overrides, such as #rc=2). The signature covers the whole URL Twilio
	// called; the query is taken from each callback as it arrived (Send
	// adds RefParam to it), so URL must have none. Set it whenever a proxy
	// in front of the receiver terminates TLS or changes the host or path.
	// Default: the request's own URL: https when it came over TLS, else
	// http, its Host header and its request target as received.
	URL string
	// AccountSID, when set, is the account the callbacks must be of
	// (Config.AccountSID, "AC" and 32 hex digits): a signed callback whose
	// AccountSid is another (a subaccount's callbacks pointed here, an
	// auth token two accounts share) is refused, 401, and reports nothing.
	// Empty: not checked.
	AccountSID string
	// Provider is the Name of the Provider that sent the messages, as the
	// records keep it (Config.Name). Default DefaultName ("twilio").
	Provider string
	// MaxBody bounds a callback's body; a larger one is answered 413,
	// before it is read when its Content-Length says so. Zero or less:
	// DefaultMaxBody (64 KiB).
	MaxBody int64
}

// Webhook receives Twilio's message status callbacks and turns them into
// notify.DeliveryReports for WebhookConfig.Reporter; the package
// documentation's "Status callbacks" says what it reads and how it
// answers. Create it with NewWebhook and mount it at the path of
// Config.StatusCallback. It keeps no state but its counts, and is safe for
// concurrent use.
type Webhook struct {
	cfg      WebhookConfig
	base     string // URL without its fragment; "" for the request's own
	fragment string // URL's fragment, with its '#'; "" for none
	body     vendorhttp.WebhookBody
	count    vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating the token, when Reporter or AuthToken is missing,
// AuthToken holds control characters, or URL is not an absolute http(s)
// URL without a query.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if err := vendorhttp.CheckSignedReceiver("twilio", cfg.Reporter, "AuthToken", cfg.AuthToken,
		"Twilio signs callbacks with the account's auth token"); err != nil {
		return nil, err
	}
	if cfg.AccountSID != "" && !validSID(cfg.AccountSID, "AC") {
		return nil, errors.New(`twilio: WebhookConfig.AccountSID must be "AC" and 32 hex digits, or empty`)
	}
	h := &Webhook{cfg: cfg}
	if cfg.URL != "" {
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.ForceQuery {
			return nil, errors.New("twilio: WebhookConfig.URL must be an absolute http(s) URL without a query (each callback's query is read from the request)")
		}
		base, frag, hasFrag := strings.Cut(cfg.URL, "#")
		h.base = base
		if hasFrag {
			h.fragment = "#" + frag
		}
	}
	if h.cfg.Provider == "" {
		h.cfg.Provider = DefaultName
	}
	if h.cfg.MaxBody <= 0 {
		h.cfg.MaxBody = DefaultMaxBody
	}
	h.body = vendorhttp.WebhookBody{Max: h.cfg.MaxBody}
	return h, nil
}

// Stats returns what the webhook did so far: reports applied (or
// repeated), unmatched, ignored, refused, malformed and failed.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// errNotForm is a callback whose body is not a form.
var errNotForm = errors.New("twilio: a status callback is a form (application/x-www-form-urlencoded)")

// ServeHTTP takes one status callback: a POST of form parameters signed in
// X-Twilio-Signature. It answers 405 (with Allow) for another method; 401,
// reporting nothing, when the signature is missing or not of its shape
// (before a byte of the body is read) or does not match the URL and
// parameters under the auth token (compared in constant time), and for a
// callback of another account than WebhookConfig.AccountSID; 400 for a
// body that is not a form or a callback without MessageSid; 413 for a body
// over MaxBody; 503 when the Reporter could not apply the report now (a
// store failure, a message still being sent, a message SID not recorded
// yet while a send is in flight); and 200 otherwise, for callbacks of
// unknown messages (counted Unmatched) and statuses that say nothing final
// (queued, sending, accepted, ...: counted Ignored) too.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !vendorhttp.AllowMethods(w, r, http.MethodPost) {
		return
	}
	sig, ok := signatureOf(r.Header)
	if !ok {
		h.count.Refuse(w, r)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
			closeUnread(w, r)
			h.count.Malformed(w, errNotForm)
			return
		}
	}
	body, ok := h.count.Read(w, r, &h.body)
	if !ok {
		return
	}
	params, err := url.ParseQuery(string(body))
	if err != nil {
		h.count.Malformed(w, err)
		return
	}
	if !h.verify(r, sig, params) || h.cfg.AccountSID != "" && params.Get("AccountSid") != h.cfg.AccountSID {
		h.count.Refuse(w, r)
		return
	}
	sid := first(params, "MessageSid", "SmsSid")
	if sid == "" {
		h.count.Malformed(w, errors.New("twilio: a status callback without MessageSid"))
		return
	}
	var reports []*notify.DeliveryReport
	if rep := h.report(r, sid, params); rep != nil {
		reports = append(reports, rep)
	} else {
		h.count.Ignore(1)
	}
	h.count.Deliver(r.Context(), w, h.cfg.Reporter, reports)
}

// signatureOf returns the HMAC-SHA1 that the request's X-Twilio-Signature
// carries, in base64; false when there is none or it is not 20 bytes.
func signatureOf(h http.Header) ([]byte, bool) {
	v := strings.TrimSpace(h.Get(SignatureHeader))
	if len(v) != base64.StdEncoding.EncodedLen(sha1.Size) {
		return nil, false
	}
	mac, err := base64.StdEncoding.DecodeString(v)
	return mac, err == nil && len(mac) == sha1.Size
}

// verify reports whether sig is Twilio's signature of the callback: the
// HMAC-SHA1, under the auth token, of the URL Twilio called followed by
// each POST parameter's name and value, sorted by name. As Twilio's own
// libraries do, the URL is tried with and without its port (Twilio signs
// some callbacks with the scheme's default port in the URL, some
// without), and with and without a configured fragment.
func (h *Webhook) verify(r *http.Request, sig []byte, params url.Values) bool {
	data := signedParams(params)
	ok := false
	for _, u := range h.candidates(r) {
		// Every candidate is computed and compared in constant time.
		if hmac.Equal(sig, mac(h.cfg.AuthToken, u, data)) {
			ok = true
		}
	}
	return ok
}

// candidates returns the URLs Twilio may have signed the request with.
func (h *Webhook) candidates(r *http.Request) []string {
	target := r.RequestURI
	if !strings.HasPrefix(target, "/") {
		target = r.URL.RequestURI()
	}
	var urls []string
	if h.base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		urls = []string{scheme + "://" + r.Host + target}
	} else {
		u := h.base
		if _, query, ok := strings.Cut(target, "?"); ok && query != "" {
			u += "?" + query
		}
		urls = []string{u}
		if h.fragment != "" {
			urls = append(urls, u+h.fragment)
		}
	}
	for _, u := range urls {
		if alt := togglePort(u); alt != u {
			urls = append(urls, alt)
		}
	}
	return urls
}

// togglePort returns u with the scheme's default port added when it has
// no port, or its port removed when it has one.
func togglePort(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo, host := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, host = authority[:i+1], authority[i+1:]
	}
	// The port follows the last ':' outside an IPv6 literal's brackets.
	if i := strings.LastIndexByte(host, ':'); i >= 0 && i > strings.LastIndexByte(host, ']') {
		host = host[:i]
	} else {
		port := ":80"
		if strings.EqualFold(scheme, "https") {
			port = ":443"
		}
		host += port
	}
	return scheme + "://" + userinfo + host + tail
}

// signedParams is the parameters as Twilio signs them: each name followed
// by its value, names sorted, a name's values sorted and each once.
func signedParams(params url.Values) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(params)) {
		vals := slices.Compact(slices.Sorted(slices.Values(params[k])))
		for _, v := range vals {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	return b.String()
}

// mac is the HMAC-SHA1, under token, of u followed by the signed
// parameters: Twilio's signature before base64.
func mac(token, u, params string) []byte {
	m := hmac.New(sha1.New, []byte(token))
	m.Write([]byte(u))
	m.Write([]byte(params))
	return m.Sum(nil)
}

// first returns the first of names params has a value for.
func first(params url.Values, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(params.Get(n)); v != "" {
			return v
		}
	}
	return ""
}

// callbackStates is the one table of Twilio's message statuses that a
// report moves a record on for. The others (accepted, scheduled, queued,
// sending, canceled, partially_delivered, receiving, received) say nothing
// final about an outbound message: acknowledged, reported nothing, and
// counted Ignored.
var callbackStates = map[string]record.State{
	"sent":        record.StateSent,
	"delivered":   record.StateDelivered,
	"read":        record.StateRead, // channels with read receipts
	"undelivered": record.StateFailed,
	"failed":      record.StateFailed,
}

// errorTexts describe the failure codes Twilio's callbacks carry most.
var errorTexts = map[string]string{
	"30001": "queue overflow",
	"30002": "account suspended",
	"30003": "unreachable destination handset",
	"30004": "message blocked",
	"30005": "unknown destination handset",
	"30006": "landline or unreachable carrier",
	"30007": "filtered by the carrier",
	"30008": "unknown error",
	"30034": "sent from a US number not registered for A2P 10DLC",
	"21610": "the recipient has unsubscribed (STOP)",
}

// report turns a verified callback into a report, or nil for a status
// that says nothing final.
func (h *Webhook) report(r *http.Request, sid string, params url.Values) *notify.DeliveryReport {
	status := strings.ToLower(first(params, "MessageStatus", "SmsStatus"))
	state, ok := callbackStates[status]
	if !ok {
		return nil
	}
	rep := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: vendorhttp.Clip(sid), State: state}
	// The reference Send put in the callback URL, which the signature
	// covers: it names the message even when its send's answer was lost.
	if acct, id, ok := notify.ParseMessageRef(r.URL.Query().Get(RefParam)); ok {
		rep.Account, rep.MessageID = acct, id
	}
	if state == record.StateFailed {
		code := first(params, "ErrorCode")
		rep.VendorCode = vendorhttp.Clip(code)
		if code == "" {
			rep.VendorCode = status
		}
		text := "twilio: the message was " + status
		if d := clean(first(params, "ErrorMessage"), ""); d != "" {
			text += ": " + d
		} else if d := errorTexts[code]; d != "" {
			text += ": " + d
		}
		if code != "" {
			text += " (error " + rep.VendorCode + ")"
		}
		rep.Error = text
	}
	return rep
}

// closeUnread makes the answer close the connection when r may have a
// body no one read, so that net/http does not read it to keep the
// connection (as provider/vendorhttp does for its own refusals).
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}
