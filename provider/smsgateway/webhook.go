package smsgateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier, which
	// finds the messages' records in its Ledger. Required.
	Reporter notify.Reporter
	// Provider is the Name of the Provider that sent the messages, as the
	// records keep it (Config.Name). Default DefaultName ("smsgateway"),
	// the default of Config.Name.
	Provider string
	// Token is the secret in the callback URL the vendor is given
	// (https://<host>/webhooks/smsgateway/<Token>): the vendor signs
	// nothing, so the token is the receiver's only authentication. At
	// least 16 bytes, without '/', spaces or control characters; use 32
	// random bytes in hex or base32. It never appears in errors. Required.
	Token string
	// MaxBody bounds a callback's body; a larger one is answered 413,
	// before it is read when its Content-Length says so. Zero or less:
	// DefaultMaxBody.
	MaxBody int64
}

// DefaultMaxBody is the default bound of a callback's body, 1 MiB
// (vendorhttp.MaxWebhookBody). The vendor documents no bound. A callback carries
// one report, or at most those of one bulk request: DefaultMaxBatch
// numbers at a few hundred bytes each, some 300 KB; 1 MiB leaves room for
// a verbose Standard body. The token is checked before the body is read,
// so only the vendor (or a leaked token) can make the receiver read this
// much.
const DefaultMaxBody = 1 << 20

// Webhook receives the vendor's delivery-report (DLR) callbacks and turns
// them into notify.DeliveryReports for WebhookConfig.Reporter; the
// package documentation's "Delivery reports" says what it reads and how
// it answers. Create it with NewWebhook and mount it at a path whose last
// segment is the token, such as POST /webhooks/smsgateway/{token} on a
// ServeMux (the {token} wildcard is read when the pattern has it). It
// keeps no state but its counts, and is safe for concurrent use.
type Webhook struct {
	cfg   WebhookConfig
	body  vendorhttp.WebhookBody // the vendor signs nothing: the token comes first
	count vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating the token, when Reporter is missing or Token is shorter
// than 16 bytes or holds '/', spaces or control characters.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if cfg.Reporter == nil {
		return nil, errors.New("smsgateway: WebhookConfig.Reporter is required")
	}
	if err := vendorhttp.CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("smsgateway: WebhookConfig.Token %w", err)
	}
	if cfg.Provider == "" {
		cfg.Provider = DefaultName
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	return &Webhook{cfg: cfg, body: vendorhttp.WebhookBody{Max: cfg.MaxBody}}, nil
}

// Stats returns what the webhook did so far: reports applied (or
// repeated), unmatched, ignored, refused, malformed and failed.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// ServeHTTP takes one callback: POST or PUT with a JSON or form body, or
// GET with query parameters. It answers 405 (with Allow) for another
// method; 401 when the token is missing or wrong, compared in constant
// time before a byte of the body is read, reporting nothing; 413 for a
// body over MaxBody (before it is read when its Content-Length says so);
// 400 for one that cannot be read or a report without a request_id; 503
// when the Reporter could not apply a report now (a store failure, a
// message still being sent, a request ID not recorded yet while a send is
// in flight), so that the vendor calls again; and 200 otherwise, for
// reports of unknown request IDs (counted Unmatched) and statuses that
// say nothing final (counted Ignored) too.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !vendorhttp.AllowMethods(w, r, http.MethodGet, http.MethodPost, http.MethodPut) {
		return
	}
	if !vendorhttp.SecretEqual(vendorhttp.PathToken(r), h.cfg.Token) {
		h.count.Refuse(w, r)
		return
	}
	entries, ok := h.entries(w, r)
	if !ok {
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

// entry is one report as the vendor sent it: its scalar fields, names in
// lower case, values as strings.
type entry map[string]string

// The names each field of a report goes by, in order of preference: the
// vendor's Standard webhook variables first (request_id, mobile, status,
// failure_reason, status_description, delivery_timestamp, delivery_time),
// then the CleverTap template's (msgId, description, timestamp) and the
// names other Indian DLRs use.
var (
	idFields     = []string{"request_id", "requestid", "msgid"}
	numberFields = []string{"mobile", "number", "recipient_id", "msisdn", "phone", "to"}
	statusFields = []string{"status", "dlr_status", "delivery_status"}
	codeFields   = []string{"error_code", "err_code", "status_code", "code"}
	textFields   = []string{"failure_reason", "status_description", "description", "reason", "error"}
	timeFields   = []string{"delivery_timestamp", "delivery_time", "delivered_at", "done_date", "timestamp", "time"}
	// sentTimeFields come first for a report of the sent state.
	sentTimeFields = []string{"sent_timestamp", "sent_time"}
)

// wrapperFields hold a list of reports (or one) inside a JSON callback:
// {"data": [...]}, the CleverTap template's {"statuses": [...]}, the
// delivery-report API's {"delivery_status": [...]}.
var wrapperFields = []string{"data", "reports", "statuses", "delivery_status"}

// maxDepth bounds how deep reports may be wrapped.
const maxDepth = 3

// entries reads the callback's reports: the query of a GET, and the body
// of a POST or PUT (or its query, when the body is empty). An entry
// without a request ID is an error: nothing could match it, and a
// receiver that is sent what it cannot read says so. It answers the
// request when it reports false.
func (h *Webhook) entries(w http.ResponseWriter, r *http.Request) ([]entry, bool) {
	var (
		list []entry
		err  error
	)
	if r.Method == http.MethodGet {
		list = formEntries(r.URL.Query())
	} else {
		body, ok := h.count.Read(w, r, &h.body)
		if !ok {
			return nil, false
		}
		if body = bytes.TrimSpace(body); len(body) == 0 {
			list = formEntries(r.URL.Query())
		} else if list, err = bodyEntries(r.Header.Get("Content-Type"), body); err != nil {
			h.count.Malformed(w, err)
			return nil, false
		}
	}
	if list, err = checkEntries(list); err != nil {
		h.count.Malformed(w, err)
		return nil, false
	}
	return list, true
}

// bodyEntries reads a non-empty body: JSON when it looks like JSON,
// whatever its Content-Type (the vendor's "Raw JSON" payload transform
// sends JSON as a form), else a form.
func bodyEntries(contentType string, body []byte) ([]entry, error) {
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case body[0] == '{' || body[0] == '[':
		return jsonEntries(body)
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return nil, errors.New("the body is not a JSON object or array")
	case body[0] == '<' || strings.HasSuffix(ct, "/xml") || strings.HasSuffix(ct, "+xml"):
		return nil, errors.New("XML callbacks are not read: choose JSON or Form URL Encoded in the vendor's webhook settings")
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return formEntries(q), nil
}

func checkEntries(list []entry) ([]entry, error) {
	if len(list) == 0 {
		return nil, errors.New("no report in the callback")
	}
	for _, e := range list {
		if e.get(idFields...) == "" {
			return nil, errors.New("a report without a request_id")
		}
	}
	return list, nil
}

// formEntries reads a form or query: one report of its first values,
// unless a wrapper field holds JSON (a form carrying data=[...]).
func formEntries(q url.Values) []entry {
	e := entry{}
	for k, v := range q {
		if len(v) > 0 {
			e.set(k, strings.TrimSpace(v[0]))
		}
	}
	for _, k := range wrapperFields {
		if s := e[k]; strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			if list, err := jsonEntries([]byte(s)); err == nil {
				return list
			}
		}
	}
	if len(e) == 0 {
		return nil
	}
	return []entry{e}
}

// jsonEntries reads a JSON callback: a report object, an array of them,
// or an object wrapping them (wrapperFields), up to maxDepth levels.
func jsonEntries(body []byte) ([]entry, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value in the body")
	}
	var out []entry
	if err := walk(v, "", 0, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// walk appends the reports in v; id is the request ID of the object that
// wraps v, which a wrapped report without its own inherits.
func walk(v any, id string, depth int, out *[]entry) error {
	switch v := v.(type) {
	case []any:
		return walkList(v, id, depth, out)
	case map[string]any:
		e := objectEntry(v, id)
		if depth < maxDepth {
			inner, err := wrapped(v, e)
			if err != nil {
				return err
			}
			if inner != nil {
				return walk(inner, e.get(idFields...), depth+1, out)
			}
		}
		*out = append(*out, e)
		return nil
	}
	return errors.New("a callback must be a JSON object or array")
}

// walkList appends the reports of the list v, each of which must be an
// object; id is as for walk.
func walkList(v []any, id string, depth int, out *[]entry) error {
	for _, item := range v {
		if _, ok := item.(map[string]any); !ok {
			return errors.New("a report must be a JSON object")
		}
		if err := walk(item, id, depth, out); err != nil {
			return err
		}
	}
	return nil
}

// objectEntry returns the string and number fields of the JSON object v
// as an entry; one without a request ID of its own takes id, the ID of
// the object that wraps it, if any.
func objectEntry(v map[string]any, id string) entry {
	e := entry{}
	for k, val := range v {
		switch val := val.(type) {
		case string:
			e.set(k, strings.TrimSpace(val))
		case json.Number:
			e.set(k, val.String())
		}
	}
	if e.get(idFields...) == "" && id != "" {
		e["request_id"] = id
	}
	return e
}

// wrapped returns the reports the object v (read as e) wraps in the
// first of wrapperFields that holds some, as a list or an object, or nil
// when v is a report itself. A wrapper may hold them as JSON in a
// string, {"data": "[...]"}, which must then decode. A list is always
// reports; an object is a wrapped report unless v has a status of its
// own (then v is the report).
func wrapped(v map[string]any, e entry) (any, error) {
	for _, k := range wrapperFields {
		inner, ok := field(v, k)
		if !ok {
			continue
		}
		if s, isString := inner.(string); isString {
			s = strings.TrimSpace(s)
			if !strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "{") {
				continue
			}
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			if d.Decode(&inner) != nil {
				return nil, errors.New("a wrapped report list that is not JSON")
			}
		}
		switch inner.(type) {
		case []any:
			return inner, nil
		case map[string]any:
			if e.get(statusFields...) == "" {
				return inner, nil
			}
		}
	}
	return nil, nil
}

// field returns v's field named k in any letter case, the exact name
// first.
func field(v map[string]any, k string) (any, bool) {
	if x, ok := v[k]; ok {
		return x, true
	}
	for name, x := range v {
		if strings.EqualFold(name, k) {
			return x, true
		}
	}
	return nil, false
}

// set records a field under its lower-case name; a name already in lower
// case wins over another spelling of it.
func (e entry) set(k, v string) {
	lk := strings.ToLower(k)
	if _, taken := e[lk]; taken && lk != k {
		return
	}
	e[lk] = v
}

// get returns the first of names the entry has a value for.
func (e entry) get(names ...string) string {
	for _, n := range names {
		if v := e[n]; v != "" {
			return v
		}
	}
	return ""
}

// dlrStates is the one table of the vendor's delivery statuses (read
// without regard to case) and the states they report. The vendor's
// Standard webhook says delivered or failed; the rest are the operators'
// SMPP words other Indian DLRs pass on. Any other status (PENDING,
// QUEUED, UNKNOWN, ...) says nothing final: the report is ignored and
// counted (Stats().Ignored).
var dlrStates = map[string]record.State{
	// Delivered to the handset.
	"DELIVERED": record.StateDelivered, "DELIVRD": record.StateDelivered, "SUCCESS": record.StateDelivered,
	// Handed on to the operator, not yet delivered.
	"SENT": record.StateSent, "SUBMITTED": record.StateSent, "ACCEPTED": record.StateSent,
	"ENROUTE": record.StateSent,
	// Final failures: VendorCode is the status (and the vendor's code).
	"FAILED": record.StateFailed, "FAIL": record.StateFailed,
	"UNDELIVERED": record.StateFailed, "UNDELIV": record.StateFailed, "UNDELIVERABLE": record.StateFailed,
	"REJECTED": record.StateFailed, "REJECTD": record.StateFailed,
	"EXPIRED": record.StateFailed, "EXPIRD": record.StateFailed, "DELETED": record.StateFailed,
	"DND": record.StateFailed, "NDNC": record.StateFailed,
	"BLOCKED": record.StateFailed, "BLACKLISTED": record.StateFailed, "INVALID": record.StateFailed,
}

// report turns one entry into a report, or nil for a status that says
// nothing final.
func (h *Webhook) report(e entry) *notify.DeliveryReport {
	status := strings.ToUpper(e.get(statusFields...))
	state, ok := dlrStates[status]
	if !ok {
		return nil
	}
	r := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: e.get(idFields...),
		To: e.get(numberFields...), State: state}
	if state == record.StateSent {
		r.At = e.time(sentTimeFields...)
	}
	if r.At.IsZero() {
		r.At = e.time(timeFields...)
	}
	if state == record.StateFailed {
		r.VendorCode = status
		if code := e.get(codeFields...); code != "" {
			r.VendorCode += ":" + vendorhttp.Clip(code)
		}
		text := vendorhttp.Clip(e.get(textFields...))
		if text == "" {
			text = "the operator reported the SMS " + strings.ToLower(status)
		}
		r.Error = "smsgateway: " + text
	}
	return r
}

// time returns the first of names whose value is a time vendorhttp.ReportTime reads;
// zero (the Notifier's now) when none is.
func (e entry) time(names ...string) time.Time {
	for _, n := range names {
		if t := vendorhttp.ReportTime(e[n], vendorhttp.IST); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
