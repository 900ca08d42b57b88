package msg91

import (
	"cmp"
	"errors"
	"net/http"
	"strconv"
	"strings"

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
//
// Its ServeHTTP takes one POST of MSG91's, which may report on several
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
//
// Its Stats counts what it did: reports applied (or repeated), unmatched,
// ignored, refused, malformed and failed. Both are the kit's TokenWebhook's,
// given the vendor's wire format.
type Webhook struct {
	*vendorhttp.TokenWebhook
}

// NewWebhook returns a Webhook for cfg. It fails, naming the field but
// never repeating the token, when Reporter is missing or Token is shorter
// than 16 bytes or holds '/', spaces or control characters.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	provider := cmp.Or(cfg.Provider, DefaultName)
	tw, err := vendorhttp.NewTokenWebhook(vendorhttp.TokenWebhookConfig{Name: "msg91", Reporter: cfg.Reporter,
		Token: cfg.Token, MaxBody: cfg.MaxBody, Methods: []string{http.MethodPost}, Entries: entries,
		Report: func(e vendorhttp.Entry) *notify.DeliveryReport { return report(provider, e) }})
	if err != nil {
		return nil, err
	}
	return &Webhook{tw}, nil
}

// entries reads the reports of a POST's body.
func entries(r *http.Request, body []byte) ([]vendorhttp.Entry, error) {
	return parseReports(r.Header.Get("Content-Type"), body)
}

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

// reportShape is how MSG91 wraps reports: the v2 body is a form field
// (data) holding a list of requests, each holding its list of reports.
var reportShape = vendorhttp.EntryShape{IDFields: idFields, Wrappers: []string{"report", "data"},
	XMLHint: "choose webhook version v2 or v3 in the MSG91 panel"}

// parseReports reads a report body: JSON (an object, a list of them, and
// the v2 shape, a requestId with its report list, under data, as a JSON
// string or as JSON itself), or a form whose data field holds that JSON
// (the v2 webhook), or whose fields are one report. Every report must have
// a request ID: nothing could match one without it.
func parseReports(contentType string, body []byte) ([]vendorhttp.Entry, error) {
	list, err := reportShape.ReadEntries(contentType, body)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no report in the body")
	}
	for _, e := range list {
		if e.Get(idFields...) == "" {
			return nil, errors.New("a report without a requestId (MSG91's webhook v4 carries none: choose v2 or v3, or add requestId to a Webhook (New) payload)")
		}
	}
	return list, nil
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

// report turns one entry into a report of provider's, or nil for a
// status that says nothing final.
func report(provider string, e vendorhttp.Entry) *notify.DeliveryReport {
	status := strings.TrimSpace(e.Get("status"))
	desc := e.Get(descFields...)
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
	r := &notify.DeliveryReport{Provider: provider, ProviderMessageID: vendorhttp.Clip(e.Get(idFields...)),
		To: e.Get(numberFields...), State: state, At: e.Time(vendorhttp.IST, timeFields...)}
	if state == record.StateFailed {
		r.VendorCode = code
		text := e.Get(reasonFields...)
		if text == "" {
			text = what
			if _, isStatus := statusWords[strings.ToUpper(desc)]; desc != "" && !isStatus {
				text += ": " + desc // a description, not the status again
			}
		}
		r.Error = "msg91: " + vendorhttp.CleanText(text, 200)
	}
	return r
}
