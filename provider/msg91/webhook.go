package msg91

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// DefaultMaxBody is the default bound of a report's body, 1 MiB
// (vendorhttp.MaxWebhookBody). MSG91 documents no bound. A v2 report carries the
// numbers of one request, DefaultMaxBatch of them at a few hundred bytes
// each, some 30 KB; the rest is room. The token is checked before the body
// is read, so only MSG91 (or a leaked token) can make the receiver read
// this much.
const DefaultMaxBody = vendorhttp.MaxWebhookBody

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier, which
	// finds the messages' records in its Ledger. Required.
	Reporter notify.Reporter
	// Provider is the Name of the Provider that sent the messages, as the
	// records keep it (Config.Name). Default DefaultName ("msg91"), the
	// default of Config.Name.
	Provider string
	// Token is the secret in the webhook URL MSG91 is given
	// (https://<host>/webhooks/msg91/<Token>): MSG91 signs nothing, so the
	// token is the receiver's only authentication. At least 16 bytes,
	// without '/', spaces or control characters; use 32 random bytes in
	// hex or base32. It never appears in errors. Required.
	Token string
	// MaxBody bounds a report's body; a larger one is answered 413,
	// before it is read when its Content-Length says so. Zero or less:
	// DefaultMaxBody.
	MaxBody int64
}

// Webhook receives MSG91's delivery reports and turns them into
// notify.DeliveryReports for WebhookConfig.Reporter; the package
// documentation's "Delivery reports" says what it reads and how it
// answers. Create it with NewWebhook and mount it at a path whose last
// segment is the token, such as POST /webhooks/msg91/{token} on a
// ServeMux (the {token} wildcard is read when the pattern has it). It
// keeps no state but its counts, and is safe for concurrent use.
type Webhook struct {
	cfg   WebhookConfig
	body  vendorhttp.WebhookBody // MSG91 signs nothing: the token comes first
	count vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating the token, when Reporter is missing or Token is shorter
// than 16 bytes or holds '/', spaces or control characters.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if cfg.Reporter == nil {
		return nil, errors.New("msg91: WebhookConfig.Reporter is required")
	}
	if err := vendorhttp.CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("msg91: WebhookConfig.Token %w", err)
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

// ServeHTTP takes one POST of MSG91's, which may report on several
// numbers. It answers 405 (with Allow) for another method; 401 when the
// token is missing or wrong, compared in constant time before a byte of
// the body is read, reporting nothing; 413 for a body over MaxBody
// (before it is read when its Content-Length says so); 400 for a body
// that cannot be read or a report without a request ID (nothing of that
// POST is reported); 503 when the Reporter could not apply a report now
// (a store failure, a message still being sent, a request ID not recorded
// yet while a send is in flight), so that MSG91 posts again; and 200
// otherwise, for reports of unknown request IDs (counted Unmatched) and
// statuses that say nothing final (counted Ignored) too.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !vendorhttp.AllowMethods(w, r, http.MethodPost) {
		return
	}
	if !vendorhttp.SecretEqual(vendorhttp.PathToken(r), h.cfg.Token) {
		h.count.Refuse(w, r)
		return
	}
	body, ok := h.count.Read(w, r, &h.body)
	if !ok {
		return
	}
	entries, err := parseReports(r.Header.Get("Content-Type"), body)
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

// entry is one report as MSG91 sent it: its scalar fields, names in lower
// case, values as strings.
type entry map[string]string

// The names each field of a report goes by, in order of preference: the
// v2 and v3 webhooks' names first (requestId, number, status, desc,
// failedReason, date), then the Webhook (New) variables' (telNum,
// failureReason, deliveryTime).
var (
	idFields     = []string{"requestid", "request_id"}
	numberFields = []string{"number", "telnum", "mobile", "mobiles"}
	reasonFields = []string{"failedreason", "failurereason", "failure_reason"}
	descFields   = []string{"desc", "description"}
	timeFields   = []string{"date", "deliverytime", "delivery_time", "deliverydate", "ts"}
)

// maxDepth bounds how deeply reports may be wrapped: the v2 body is a
// form field holding a list of requests each holding a list of reports.
const maxDepth = 4

// parseReports reads a report body: JSON (an object, a list of them, and
// the v2 shape, a requestId with its report list, under data, as a JSON
// string or as JSON itself), recognised by its first character whatever
// the Content-Type, or a form whose data field holds that JSON (the v2
// webhook), or whose fields are one report. Every report must have a
// request ID: nothing could match one without it.
func parseReports(contentType string, body []byte) ([]entry, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errors.New("an empty body")
	}
	var list []entry
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case body[0] == '{' || body[0] == '[':
		v, err := decodeJSON(body)
		if err != nil {
			return nil, err
		}
		if err := walk(v, "", 0, &list); err != nil {
			return nil, err
		}
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return nil, errors.New("the body is not a JSON object or array")
	case body[0] == '<' || strings.HasSuffix(ct, "/xml") || strings.HasSuffix(ct, "+xml"):
		return nil, errors.New("XML reports are not read: choose webhook version v2 or v3 in the MSG91 panel")
	default:
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		if data := strings.TrimSpace(q.Get("data")); data != "" {
			v, err := decodeJSON([]byte(data))
			if err != nil {
				return nil, errors.New("the data field is not JSON")
			}
			if err := walk(v, "", 0, &list); err != nil {
				return nil, err
			}
			break
		}
		e := entry{}
		for k, v := range q {
			if len(v) > 0 {
				e.set(k, strings.TrimSpace(v[0]))
			}
		}
		list = []entry{e}
	}
	if len(list) == 0 {
		return nil, errors.New("no report in the body")
	}
	for _, e := range list {
		if e.get(idFields...) == "" {
			return nil, errors.New("a report without a requestId (MSG91's webhook v4 carries none: choose v2 or v3, or add requestId to a Webhook (New) payload)")
		}
	}
	return list, nil
}

// decodeJSON decodes one JSON value, numbers kept as written.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value in the body")
	}
	return v, nil
}

// walk appends the reports in v; id is the request ID of the object that
// wraps v, which a report without its own takes.
func walk(v any, id string, depth int, out *[]entry) error {
	if depth > maxDepth {
		return errors.New("reports wrapped too deeply")
	}
	switch v := v.(type) {
	case []any:
		return walkList(v, id, depth, out)
	case map[string]any:
		e, own := objectEntry(v, id)
		inner, err := wrapped(v)
		if err != nil {
			return err
		}
		if inner != nil {
			return walk(inner, own, depth+1, out)
		}
		*out = append(*out, e)
		return nil
	}
	return errors.New("a report must be a JSON object or array")
}

// walkList appends the reports of the list v, each of which must be an
// object; id is as for walk.
func walkList(v []any, id string, depth int, out *[]entry) error {
	for _, item := range v {
		if _, ok := item.(map[string]any); !ok {
			return errors.New("a report must be a JSON object")
		}
		if err := walk(item, id, depth+1, out); err != nil {
			return err
		}
	}
	return nil
}

// objectEntry returns the string and number fields of the JSON object v
// as an entry, and its request ID: its own, or else id, the ID of the
// object that wraps it, which the entry then takes.
func objectEntry(v map[string]any, id string) (entry, string) {
	e := entry{}
	for k, val := range v {
		switch val := val.(type) {
		case string:
			e.set(k, strings.TrimSpace(val))
		case json.Number:
			e.set(k, val.String())
		}
	}
	own := e.get(idFields...)
	if own == "" && id != "" {
		e["requestid"] = id
		own = id
	}
	return e, own
}

// wrapped returns the list or object of reports that the object v wraps,
// or nil when v is a report itself. The v2 shape: {"requestId",
// "report": [...]} or a {"data": ...} wrapper, with the list itself or
// its JSON as a string, which must then decode.
func wrapped(v map[string]any) (any, error) {
	for _, k := range []string{"report", "data"} {
		inner, ok := field(v, k)
		if !ok {
			continue
		}
		if s, isString := inner.(string); isString {
			s = strings.TrimSpace(s)
			if !strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "{") {
				continue
			}
			decoded, err := decodeJSON([]byte(s))
			if err != nil {
				return nil, errors.New("a wrapped report list that is not JSON")
			}
			inner = decoded
		}
		switch inner.(type) {
		case []any, map[string]any:
			return inner, nil
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

// statusCodes is the one table of MSG91's numeric delivery statuses, as
// its webhook documentation lists them, with the words the failures are
// reported in. Any other code says nothing final here: the report is
// ignored and counted (Stats().Ignored).
var statusCodes = map[string]struct {
	state record.State
	what  string
}{
	"1":  {record.StateDelivered, ""},
	"2":  {record.StateFailed, "the operator reported the SMS failed"},
	"9":  {record.StateFailed, "the number is on the NDNC (do-not-call) registry"},
	"16": {record.StateFailed, "the SMS was rejected"},
	"17": {record.StateFailed, "the number is blocked"},
	"25": {record.StateFailed, "the SMS was rejected"},
}

// statusWords are the statuses reported in words (desc, and a Webhook
// (New) status that is not a number), read without regard to case.
var statusWords = map[string]record.State{
	"DELIVERED": record.StateDelivered, "DELIVRD": record.StateDelivered, "SUCCESS": record.StateDelivered,
	"SENT": record.StateSent, "SUBMITTED": record.StateSent,
	"FAILED": record.StateFailed, "FAIL": record.StateFailed, "UNDELIVERED": record.StateFailed, "UNDELIV": record.StateFailed,
	"REJECTED": record.StateFailed, "REJECTD": record.StateFailed, "EXPIRED": record.StateFailed,
	"NDNC": record.StateFailed, "DND": record.StateFailed, "BLOCKED": record.StateFailed, "BLACKLISTED": record.StateFailed,
}

// report turns one entry into a report, or nil for a status that says
// nothing final.
func (h *Webhook) report(e entry) *notify.DeliveryReport {
	status := strings.TrimSpace(e.get("status"))
	desc := e.get(descFields...)
	var (
		state record.State
		code  string
		what  string
	)
	if _, err := strconv.Atoi(status); err == nil {
		s, ok := statusCodes[strings.TrimLeft(status, "0")]
		if !ok {
			return nil
		}
		state, code, what = s.state, strings.TrimLeft(status, "0"), s.what
	} else {
		word := strings.ToUpper(status)
		if word == "" {
			word = strings.ToUpper(desc)
		}
		s, ok := statusWords[word]
		if !ok {
			return nil
		}
		state, code, what = s, word, "the operator reported the SMS "+strings.ToLower(word)
	}
	r := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: vendorhttp.Clip(e.get(idFields...)),
		To: e.get(numberFields...), State: state, At: e.time(timeFields...)}
	if state == record.StateFailed {
		r.VendorCode = code
		text := e.get(reasonFields...)
		if text == "" {
			text = what
			if _, isStatus := statusWords[strings.ToUpper(desc)]; desc != "" && !isStatus {
				text += ": " + desc // a description, not the status again
			}
		}
		r.Error = "msg91: " + clean(text, 200)
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
