package smsgateway

import (
	"bytes"
	"cmp"
	"errors"
	"net/http"
	"strings"

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
const DefaultMaxBody = vendorhttp.MaxWebhookBody

// Webhook receives the vendor's delivery-report (DLR) callbacks and turns
// them into notify.DeliveryReports for WebhookConfig.Reporter; the
// package documentation's "Delivery reports" says what it reads and how
// it answers. Create it with NewWebhook and mount it at a path whose last
// segment is the token, such as POST /webhooks/smsgateway/{token} on a
// ServeMux (the {token} wildcard is read when the pattern has it). It
// keeps no state but its counts, and is safe for concurrent use.
//
// Its ServeHTTP takes one callback: POST or PUT with a JSON or form body, or
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
	tw, err := vendorhttp.NewTokenWebhook(vendorhttp.TokenWebhookConfig{
		Name: "smsgateway", Reporter: cfg.Reporter, Token: cfg.Token, MaxBody: cfg.MaxBody,
		Methods: []string{http.MethodGet, http.MethodPost, http.MethodPut},
		Entries: entries, Report: func(e vendorhttp.Entry) *notify.DeliveryReport { return report(provider, e) },
	})
	if err != nil {
		return nil, err
	}
	return &Webhook{tw}, nil
}

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

// reportShape is how the vendor wraps reports: {"data": [...]}, the
// CleverTap template's {"statuses": [...]}, the delivery-report API's
// {"delivery_status": [...]}, up to three deep.
var reportShape = vendorhttp.EntryShape{
	IDFields:     idFields,
	Wrappers:     []string{"data", "reports", "statuses", "delivery_status"},
	StatusFields: statusFields,
	MaxDepth:     3,
	XMLHint:      "choose JSON or Form URL Encoded in the vendor's webhook settings",
}

// entries reads the callback's reports: the query of a GET, and the body
// of a POST or PUT (or its query, when the body is empty). An entry
// without a request ID is an error: nothing could match it, and a
// receiver that is sent what it cannot read says so.
func entries(r *http.Request, body []byte) ([]vendorhttp.Entry, error) {
	var (
		list []vendorhttp.Entry
		err  error
	)
	if len(bytes.TrimSpace(body)) == 0 {
		list, err = reportShape.Form(r.URL.Query())
	} else {
		list, err = reportShape.ReadEntries(r.Header.Get("Content-Type"), body)
	}
	if err != nil {
		return nil, err
	}
	return list, checkEntries(list)
}

func checkEntries(list []vendorhttp.Entry) error {
	if len(list) == 0 {
		return errors.New("no report in the callback")
	}
	for _, e := range list {
		if e.Get(idFields...) == "" {
			return errors.New("a report without a request_id")
		}
	}
	return nil
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

// report turns one entry into a report of provider's, or nil for a
// status that says nothing final.
func report(provider string, e vendorhttp.Entry) *notify.DeliveryReport {
	status := strings.ToUpper(e.Get(statusFields...))
	state, ok := dlrStates[status]
	if !ok {
		return nil
	}
	r := &notify.DeliveryReport{Provider: provider, ProviderMessageID: e.Get(idFields...),
		To: e.Get(numberFields...), State: state}
	if state == record.StateSent {
		r.At = e.Time(vendorhttp.IST, sentTimeFields...)
	}
	if r.At.IsZero() {
		r.At = e.Time(vendorhttp.IST, timeFields...)
	}
	if state == record.StateFailed {
		r.VendorCode = status
		if code := e.Get(codeFields...); code != "" {
			r.VendorCode += ":" + vendorhttp.Clip(code)
		}
		text := vendorhttp.Clip(e.Get(textFields...))
		if text == "" {
			text = "the operator reported the SMS " + strings.ToLower(status)
		}
		r.Error = "smsgateway: " + text
	}
	return r
}
