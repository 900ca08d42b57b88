package smsgateway

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/vendorhttp"
	"github.com/notifykit/notify/internal/webhook"
)

// minTokenLen is the shortest callback token NewWebhook accepts: the
// token is the receiver's only authentication.
const minTokenLen = 16

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier (which
	// needs a message store: notify.WithMessageStore). Required.
	Reporter notify.Reporter
	// Token is the secret in the callback URL the vendor is given
	// (https://<host>/<path>/<Token>): the vendor signs nothing, so the
	// token is the receiver's authentication. At least 16 bytes, without
	// '/' or spaces; use 32 random bytes, base32 or hex. Required.
	Token string
	// Provider is the Name of the Provider that sent the messages, as the
	// records keep it (Config.Name). Default "smsgateway" (DefaultName).
	Provider string
	// MaxBody bounds a callback's body; a larger one is answered 413.
	// Default 1 MiB.
	MaxBody int64
}

// Webhook receives the vendor's delivery-report callbacks and turns them
// into notify.DeliveryReports for WebhookConfig.Reporter; see the package
// documentation's "Delivery reports". Create it with NewWebhook and mount
// it at a path whose last segment is the token (or under a ServeMux
// pattern with a {token} wildcard). It is safe for concurrent use.
type Webhook struct {
	cfg   WebhookConfig
	count webhook.Counter
}

// NewWebhook returns a Webhook for cfg. It fails when Reporter is
// missing or Token is too short or holds '/', spaces or control
// characters, naming the field but never repeating the token.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	switch {
	case cfg.Reporter == nil:
		return nil, errors.New("smsgateway: WebhookConfig.Reporter is required")
	case len(cfg.Token) < minTokenLen:
		return nil, errors.New("smsgateway: WebhookConfig.Token must be at least 16 bytes: it is the callback's only authentication")
	case strings.ContainsFunc(cfg.Token, func(r rune) bool { return r <= ' ' || r == '/' || r == 0x7f }):
		return nil, errors.New("smsgateway: WebhookConfig.Token must not contain '/', spaces or control characters")
	}
	if cfg.Provider == "" {
		cfg.Provider = DefaultName
	}
	return &Webhook{cfg: cfg}, nil
}

// Stats returns what the webhook did so far.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// ServeHTTP takes one callback (POST with a JSON or form body, or GET
// with query parameters). It answers 401 when the token is missing or
// wrong (compared in constant time, before the body is read), 405 for
// another method, 413 for a body over MaxBody, 400 for one that cannot
// be read, 503 when a report could not be applied now (the vendor calls
// again), and 200 otherwise, for reports of unknown messages too.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !webhook.Equal(tokenOf(r), h.cfg.Token) {
		h.count.Refuse(w)
		return
	}
	entries, err := h.entries(r)
	if err != nil {
		h.count.Malformed(w, err)
		return
	}
	reports := make([]*notify.DeliveryReport, 0, len(entries))
	for _, e := range entries {
		if rep := h.report(e); rep != nil {
			reports = append(reports, rep)
		}
	}
	h.count.Ignore(len(entries) - len(reports))
	h.count.Deliver(r.Context(), w, h.cfg.Reporter, reports)
}

// tokenOf is the request's token: the {token} wildcard of a ServeMux
// pattern, else the last segment of the path.
func tokenOf(r *http.Request) string {
	if t := r.PathValue("token"); t != "" {
		return t
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// entry is one report as the vendor sent it, its field names in lower
// case.
type entry map[string]string

// entries reads the callback's reports: the query of a GET; a POST body
// of JSON (one object, an array of them, or an object whose "data" or
// "reports" holds them) or a form. An entry without a request ID is an
// error: nothing could match it.
func (h *Webhook) entries(r *http.Request) ([]entry, error) {
	if r.Method == http.MethodGet {
		return checkEntries([]entry{formEntry(r.URL.Query())})
	}
	body, err := webhook.ReadBody(r, h.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		return checkEntries([]entry{formEntry(q)})
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	list, err := jsonEntries(raw, 0)
	if err != nil {
		return nil, err
	}
	return checkEntries(list)
}

func checkEntries(list []entry) ([]entry, error) {
	if len(list) == 0 {
		return nil, errors.New("no report in the callback")
	}
	for _, e := range list {
		if e.get("request_id") == "" {
			return nil, errors.New("a report without a request_id")
		}
	}
	return list, nil
}

func formEntry(q url.Values) entry {
	e := entry{}
	for k, v := range q {
		if len(v) > 0 {
			e[strings.ToLower(k)] = v[0]
		}
	}
	return e
}

// jsonEntries reads a JSON callback: an object, an array of objects, or
// an object wrapping them under "data" or "reports" (one level deep).
func jsonEntries(raw json.RawMessage, depth int) ([]entry, error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []entry
		for _, item := range list {
			e, err := jsonEntry(item)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("a callback must be a JSON object or array")
	}
	if depth == 0 {
		for k, v := range obj {
			if k := strings.ToLower(k); k == "data" || k == "reports" {
				return jsonEntries(v, 1)
			}
		}
	}
	e, err := jsonEntry(raw)
	if err != nil {
		return nil, err
	}
	return []entry{e}, nil
}

// jsonEntry reads one report object; numbers and strings alike become
// strings (vendors send request IDs and codes as either).
func jsonEntry(raw json.RawMessage) (entry, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("a report must be a JSON object")
	}
	e := entry{}
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) != nil {
			var n json.Number
			if json.Unmarshal(v, &n) != nil {
				continue // objects, arrays, null: not a field we read
			}
			s = n.String()
		}
		e[strings.ToLower(k)] = strings.TrimSpace(s)
	}
	return e, nil
}

// get returns the first of names the entry has.
func (e entry) get(names ...string) string {
	for _, n := range names {
		if v := e[n]; v != "" {
			return v
		}
	}
	return ""
}

// dlrStates maps the vendor's delivery statuses (upper case, as operators
// write them) to states. Any other status (PENDING, QUEUED, UNKNOWN,
// ...) says nothing final and is ignored.
var dlrStates = map[string]notify.MessageState{
	"DELIVERED": notify.StateDelivered, "DELIVRD": notify.StateDelivered, "SUCCESS": notify.StateDelivered,
	"SENT": notify.StateSent, "SUBMITTED": notify.StateSent, "ACCEPTED": notify.StateSent,
	"FAILED": notify.StateFailed, "UNDELIVERED": notify.StateFailed, "UNDELIV": notify.StateFailed,
	"REJECTED": notify.StateFailed, "REJECTD": notify.StateFailed, "EXPIRED": notify.StateFailed,
	"EXPIRD": notify.StateFailed, "DND": notify.StateFailed, "BLOCKED": notify.StateFailed,
	"BLACKLISTED": notify.StateFailed, "INVALID": notify.StateFailed, "NDNC": notify.StateFailed,
}

// report turns one entry into a report, or nil for a status that says
// nothing final.
func (h *Webhook) report(e entry) *notify.DeliveryReport {
	status := strings.ToUpper(e.get("status", "dlr_status", "delivery_status"))
	state, ok := dlrStates[status]
	if !ok {
		return nil
	}
	r := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: e.get("request_id"),
		To: e.get("number", "mobile", "phone", "to"), State: state,
		At: dlrTime(e.get("delivered_at", "delivery_time", "time", "timestamp"))}
	if state == notify.StateFailed {
		r.VendorCode = status
		if code := e.get("error_code", "status_code", "code"); code != "" {
			r.VendorCode += ":" + vendorhttp.Clip(code)
		}
		text := vendorhttp.Clip(e.get("description", "reason", "error", "message"))
		if text == "" {
			text = "the operator reported the SMS " + strings.ToLower(status)
		}
		r.Error = "smsgateway: " + text
	}
	return r
}

// ist is Indian Standard Time: the vendor's times carry no zone.
var ist = time.FixedZone("IST", 5*3600+1800)

// dlrTime reads a report's time: "2006-01-02 15:04:05" in IST, RFC 3339,
// or Unix seconds (or milliseconds). Zero (the Notifier's now) when it
// is missing or unreadable.
func dlrTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		if n > 1e12 {
			return time.UnixMilli(n).UTC()
		}
		return time.Unix(n, 0).UTC()
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	if t, err := time.ParseInLocation(time.DateTime, s, ist); err == nil {
		return t.UTC()
	}
	return time.Time{}
}
