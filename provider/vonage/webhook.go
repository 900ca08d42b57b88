package vonage

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// SignatureMethod is how the account signs its webhooks: the dashboard's
// "signature method" of the API key.
type SignatureMethod string

// The signature methods Vonage offers.
const (
	// MD5Hash, Vonage's default: the MD5 of the signed string followed
	// by the signature secret, in lower-case hex.
	MD5Hash SignatureMethod = "md5hash"
	// MD5HMAC, SHA1HMAC, SHA256HMAC and SHA512HMAC: the HMAC of the signed
	// string under the signature secret, in upper-case hex.
	MD5HMAC    SignatureMethod = "md5"
	SHA1HMAC   SignatureMethod = "sha1"
	SHA256HMAC SignatureMethod = "sha256"
	SHA512HMAC SignatureMethod = "sha512"
)

// hasher returns the method's hash, or nil for a method not known here.
func (m SignatureMethod) hasher() func() hash.Hash {
	switch m {
	case MD5Hash, MD5HMAC:
		return md5.New
	case SHA1HMAC:
		return sha1.New
	case SHA256HMAC:
		return sha256.New
	case SHA512HMAC:
		return sha512.New
	}
	return nil
}

// The webhook's defaults.
const (
	// DefaultMaxBody bounds a delivery receipt's body, 64 KiB. Vonage
	// documents none; a receipt is a dozen short fields, under 1 KB.
	DefaultMaxBody = 64 << 10
	// DefaultMaxAge is how old a signed receipt's timestamp may be: the
	// 24 hours for which Vonage sends again a webhook that was not
	// acknowledged, so that none of its retries is refused for its age.
	// A receipt repeated within it changes nothing (reports are
	// idempotent).
	DefaultMaxAge = 24 * time.Hour
	// MaxClockSkew is how far ahead of the receiver's clock a signed
	// receipt's timestamp may be.
	MaxClockSkew = 5 * time.Minute
)

// WebhookConfig configures a Webhook. SignatureSecret, Token or both
// must be set: a receipt is authenticated by Vonage's signature, by a
// secret token in the callback URL, or by both.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier. Required.
	Reporter notify.Reporter
	// SignatureSecret is the API key's signature secret (the dashboard's
	// API settings), with which Vonage signs its webhooks once signed
	// webhooks are on for the account (Vonage support turns them on).
	// When set, a receipt without a valid sig, or whose timestamp is
	// older than MaxAge or more than MaxClockSkew ahead, is refused. It
	// never appears in errors. Default: none.
	SignatureSecret string
	// SignatureMethod is the dashboard's signature method of the key.
	// Default MD5Hash, Vonage's default.
	SignatureMethod SignatureMethod
	// Token, when set, is a secret last path segment of the callback URL
	// (https://<host>/webhooks/vonage/<Token>, or a ServeMux pattern's
	// {token}), checked in constant time before a byte of the body is
	// read: the receiver's authentication for an account without signed
	// webhooks. At least 16 bytes, without '/', spaces or control
	// characters. Default: none.
	Token string
	// APIKey, when set, is the API key the receipts must be of (their
	// api-key, Config.APIKey): an authentic receipt of another key is
	// refused, 401. Default: not checked.
	APIKey string
	// Provider is the Name of the Provider that sent the messages, as the
	// records keep it (Config.Name). Default DefaultName ("vonage").
	Provider string
	// MaxBody bounds a receipt's body; a larger one is answered 413.
	// Zero or less: DefaultMaxBody.
	MaxBody int64
	// MaxAge bounds the age of a signed receipt's timestamp. Zero or
	// less: DefaultMaxAge.
	MaxAge time.Duration
	// Now is the clock the timestamps are checked against. Default
	// time.Now.
	Now func() time.Time
}

// Webhook receives Vonage's SMS delivery receipts and turns them into
// notify.DeliveryReports for WebhookConfig.Reporter; the package
// documentation's "Delivery receipts" says what it reads and how it
// answers. Create it with NewWebhook and mount it at the path of
// Config.Callback (or the dashboard's delivery receipt webhook). It keeps
// no state but its counts, and is safe for concurrent use.
type Webhook struct {
	cfg   WebhookConfig
	body  vendorhttp.WebhookBody
	count vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating a secret, when Reporter is missing, when neither
// SignatureSecret nor Token is set, when SignatureSecret holds control
// characters or SignatureMethod is not one of Vonage's, or when Token is
// shorter than 16 bytes or holds '/', spaces or control characters.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	switch {
	case cfg.SignatureSecret == "" && cfg.Token == "":
		if cfg.Reporter == nil {
			return nil, errors.New("vonage: WebhookConfig.Reporter is required")
		}
		return nil, errors.New("vonage: WebhookConfig.SignatureSecret (with signed webhooks on for the Vonage account) or WebhookConfig.Token is required: nothing else tells Vonage's receipts from forgeries")
	case cfg.SignatureSecret != "":
		if err := vendorhttp.CheckSignedReceiver("vonage", cfg.Reporter, "SignatureSecret", cfg.SignatureSecret,
			"Vonage signs webhooks with the API key's signature secret"); err != nil {
			return nil, err
		}
	}
	if cfg.Token != "" {
		if err := vendorhttp.CheckTokenReceiver("vonage", cfg.Reporter, cfg.Token); err != nil {
			return nil, err
		}
	}
	cfg.SignatureMethod = cmp.Or(cfg.SignatureMethod, MD5Hash)
	if cfg.SignatureMethod.hasher() == nil {
		return nil, errors.New("vonage: WebhookConfig.SignatureMethod must be md5hash, md5, sha1, sha256 or sha512")
	}
	cfg.Provider = cmp.Or(cfg.Provider, DefaultName)
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Webhook{cfg: cfg, body: vendorhttp.WebhookBody{Max: cfg.MaxBody}}, nil
}

// Stats returns what the webhook did so far: reports applied (or
// repeated), unmatched, ignored, refused, malformed and failed.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// ServeHTTP takes one delivery receipt, as Vonage sends it: a GET with
// its fields in the query, or a POST of a form or of a JSON object. It
// answers 405 (with Allow) for another method; 401, reporting nothing,
// for a wrong or missing Token (before the body is read), for a receipt
// whose signature is missing or wrong or whose timestamp is out of
// bounds when SignatureSecret is set, and for one of another API key
// than WebhookConfig.APIKey; 413 for a body over MaxBody; 400 for a body
// that cannot be read or a receipt without messageId; 503 when the
// Reporter could not apply the report now (a store failure, a message
// still being sent, a message-id not recorded yet while a send is in
// flight), so that Vonage sends it again; and 200 otherwise, for receipts
// of unknown messages (counted Unmatched) and statuses that say nothing
// final (buffered, unknown: counted Ignored) too.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	methods := []string{http.MethodGet, http.MethodPost}
	if h.cfg.Token != "" {
		if !h.count.AdmitToken(w, r, h.cfg.Token, methods...) {
			return
		}
	} else if !vendorhttp.AllowMethods(w, r, methods...) {
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = h.count.Read(w, r, &h.body); !ok {
			return
		}
	}
	params, err := parseReceipt(r.Header.Get("Content-Type"), r.URL.Query(), body)
	if err != nil {
		h.count.Malformed(w, err)
		return
	}
	if !h.authentic(params) {
		h.count.Refuse(w, r)
		return
	}
	if params.Get("messageId") == "" {
		h.count.Malformed(w, errors.New("vonage: a delivery receipt without messageId"))
		return
	}
	var reports []*notify.DeliveryReport
	if rep := receiptReport(h.cfg.Provider, params); rep != nil {
		reports = append(reports, rep)
	} else {
		h.count.Ignore(1)
	}
	h.count.Deliver(r.Context(), w, h.cfg.Reporter, reports)
}

// parseReceipt reads a receipt's fields under their own names: a JSON
// object's strings, numbers and booleans (as written), a form's, or, for
// a GET or an empty POST, the query's; the first value of a field
// repeated.
func parseReceipt(contentType string, query url.Values, body []byte) (url.Values, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return query, nil
	}
	if body[0] != '{' {
		if strings.Contains(contentType, "json") {
			return nil, errors.New("vonage: a JSON receipt must be an object")
		}
		return url.ParseQuery(string(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, errors.New("vonage: the receipt is not a JSON object")
	}
	params := url.Values{}
	for k, v := range obj {
		switch v := v.(type) {
		case string:
			params.Set(k, v)
		case json.Number:
			params.Set(k, v.String())
		case bool:
			params.Set(k, strconv.FormatBool(v))
		}
	}
	return params, nil
}

// authentic reports whether params pass the receiver's checks: the
// signature and the age of its timestamp, when SignatureSecret is set,
// and the API key, when APIKey is.
func (h *Webhook) authentic(params url.Values) bool {
	if h.cfg.SignatureSecret != "" {
		ts, err := strconv.ParseInt(params.Get("timestamp"), 10, 64)
		now := h.cfg.Now()
		if err != nil || time.Unix(ts, 0).Before(now.Add(-h.cfg.MaxAge)) || time.Unix(ts, 0).After(now.Add(MaxClockSkew)) ||
			!verify(h.cfg.SignatureMethod, h.cfg.SignatureSecret, params) {
			return false
		}
	}
	return h.cfg.APIKey == "" || vendorhttp.SecretEqual(params.Get("api-key"), h.cfg.APIKey)
}

// verify reports whether params' sig is their signature under secret by
// method, compared in constant time; hex is read in either case.
func verify(method SignatureMethod, secret string, params url.Values) bool {
	got, err := hex.DecodeString(params.Get("sig"))
	if err != nil || len(got) == 0 {
		return false
	}
	want, ok := mac(method, secret, params)
	return ok && hmac.Equal(got, want)
}

// Sign returns the sig Vonage puts in a request with params, signed with
// secret by method: the parameters other than sig, sorted by name, each
// as "&name=value" with every '&' and '=' of the value made '_', hashed
// with the secret after them (MD5Hash, in lower-case hex) or under an
// HMAC keyed with it (the others, in upper-case hex). The first value of
// each parameter counts. It returns "" for a method not known here. A
// test signs the receipts it sends a Webhook with it.
func Sign(method SignatureMethod, secret string, params url.Values) string {
	sum, ok := mac(method, secret, params)
	if !ok {
		return ""
	}
	if method == MD5Hash {
		return hex.EncodeToString(sum)
	}
	return strings.ToUpper(hex.EncodeToString(sum))
}

// mac returns the raw signature of params; false for a method not known.
func mac(method SignatureMethod, secret string, params url.Values) ([]byte, bool) {
	newHash := method.hasher()
	if newHash == nil {
		return nil, false
	}
	h := newHash()
	if method != MD5Hash {
		h = hmac.New(newHash, []byte(secret))
	}
	fix := strings.NewReplacer("&", "_", "=", "_")
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if k != "sig" && len(params[k]) > 0 {
			fmt.Fprintf(h, "&%s=%s", k, fix.Replace(params[k][0]))
		}
	}
	if method == MD5Hash {
		h.Write([]byte(secret))
	}
	return h.Sum(nil), true
}

// receiptStates is the one table of Vonage's receipt statuses that a
// report moves a record on for. buffered (the message waits at the
// carrier), unknown and any other say nothing final: acknowledged,
// reported nothing, and counted Ignored.
var receiptStates = map[string]record.State{
	"delivered": record.StateDelivered,
	"accepted":  record.StateSent, // the downstream carrier took it
	"expired":   record.StateFailed,
	"failed":    record.StateFailed,
	"rejected":  record.StateFailed,
}

// errCodes are the meanings of the err-codes of Vonage's receipts (its
// knowledge base's "SMS Delivery Error Codes").
var errCodes = map[string]string{
	"1":  "unknown",
	"2":  "absent subscriber, temporary",
	"3":  "absent subscriber, permanent",
	"4":  "call barred by the user",
	"5":  "portability error",
	"6":  "anti-spam rejection",
	"7":  "handset busy",
	"8":  "network error",
	"9":  "illegal number (the user asked not to receive this service's messages)",
	"10": "illegal message",
	"11": "unroutable",
	"12": "destination unreachable",
	"13": "subscriber age restriction",
	"14": "number blocked by the carrier",
}

// receiptReport turns an authentic receipt into a report of provider's,
// or nil for a status that says nothing final.
func receiptReport(provider string, params url.Values) *notify.DeliveryReport {
	status := strings.ToLower(strings.TrimSpace(params.Get("status")))
	state, ok := receiptStates[status]
	if !ok {
		return nil
	}
	rep := &notify.DeliveryReport{Provider: provider, ProviderMessageID: vendorhttp.Clip(params.Get("messageId")), State: state}
	// The client-ref Send set names the message even when its send's
	// answer was lost; the signature covers it.
	if acct, id, ok := notify.ParseMessageRef(params.Get("client-ref")); ok {
		rep.Account, rep.MessageID = acct, id
	}
	if state == record.StateFailed {
		code := vendorhttp.CleanText(params.Get("err-code"), 16)
		rep.VendorCode = cmp.Or(code, status)
		text := "vonage: the message was " + status
		if what := errCodes[code]; what != "" {
			text += ": " + what
		}
		if code != "" {
			text += " (err-code " + code + ")"
		}
		rep.Error = text
	}
	return rep
}
