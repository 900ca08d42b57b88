package cloudchat

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// WebhookConfig configures a Webhook.
type WebhookConfig struct {
	// Reporter takes the reports, usually the *notify.Notifier. Required.
	Reporter notify.Reporter
	// AppSecret is the app's secret, with which the vendor signs every
	// notification (X-Hub-Signature-256). Required.
	AppSecret string
	// VerifyToken is the token set in the app's webhook configuration,
	// which the vendor's subscription handshake repeats. Empty: the
	// handshake is refused (a webhook subscribed already keeps working).
	VerifyToken string
	// Provider is the Name of the Provider that sends the messages
	// reported on. Default "cloudchat", New's default.
	Provider string
	// MaxBody bounds a notification's body; a larger one is answered
	// 413, before it is read when its Content-Length says so. Default
	// DefaultMaxBody.
	MaxBody int64
}

// DefaultMaxBody is the default bound of a notification's body: the
// vendor documents that webhook payloads can be up to 3 MB (Cloud API,
// Webhooks: "Webhooks payloads can be up to 3MB"), taken as MiB so that
// neither reading of "MB" is refused.
const DefaultMaxBody = 3 << 20

// signature is how the vendor signs a notification: X-Hub-Signature-256,
// "sha256=" and the hex HMAC-SHA256 of the raw body under the app secret.
var signature = vendorhttp.Signature{Header: "X-Hub-Signature-256", Prefix: "sha256=", Hash: sha256.New, Size: sha256.Size}

// Webhook receives the cloud API's webhooks: the subscription handshake
// and the status notifications of messages sent, which it turns into
// notify.DeliveryReports. Mount it at the callback URL of the app's
// webhook configuration; create it with NewWebhook. It is safe for
// concurrent use.
type Webhook struct {
	cfg   WebhookConfig
	body  vendorhttp.WebhookBody
	count vendorhttp.Receiver
}

// NewWebhook returns a Webhook for cfg. It fails when Reporter or
// AppSecret is missing or AppSecret holds control characters, naming the
// field but never repeating the secret.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if err := vendorhttp.CheckSignedReceiver("cloudchat", cfg.Reporter, "AppSecret", cfg.AppSecret, "the vendor signs notifications with it"); err != nil {
		return nil, err
	}
	if cfg.Provider == "" {
		cfg.Provider = DefaultName
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	return &Webhook{cfg: cfg, body: vendorhttp.WebhookBody{Signature: &signature, Secret: cfg.AppSecret, JSON: true, Max: cfg.MaxBody,
		Budget: vendorhttp.NewUnverifiedBudget()}}, nil
}

// Stats returns what the webhook did so far.
func (h *Webhook) Stats() notify.WebhookStats { return h.count.Stats() }

// ServeHTTP answers the handshake (GET) and takes notifications (POST),
// as the package documentation describes; another method is 405.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !vendorhttp.AllowMethods(w, r, http.MethodGet, http.MethodPost) {
		return
	}
	if r.Method == http.MethodGet {
		h.handshake(w, r)
		return
	}
	h.notification(w, r)
}

// handshake answers the vendor's subscription check with its challenge,
// when it carries the verify token.
func (h *Webhook) handshake(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("hub.mode") != "subscribe" || !vendorhttp.SecretEqual(q.Get("hub.verify_token"), h.cfg.VerifyToken) {
		h.count.Refuse(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(q.Get("hub.challenge")))
}

// notification checks a notification's signature and reports its
// statuses. What can be checked without the body is checked first
// (vendorhttp.Receiver.Read): a notification without X-Hub-Signature-256 of
// the vendor's shape ("sha256=" and 64 hex digits) is 401, one that is
// not JSON 415, one whose Content-Length is over MaxBody 413, and one
// that comes while forgeries have spent this receiver's budget of reading
// unauthenticated bodies 503 (the vendor sends it again), all before a
// byte of the body is read; then the body is read, within MaxBody, and
// its signature checked (401).
func (h *Webhook) notification(w http.ResponseWriter, r *http.Request) {
	body, ok := h.count.Read(w, r, &h.body)
	if !ok {
		return
	}
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		h.count.Malformed(w, err)
		return
	}
	h.count.Deliver(r.Context(), w, h.cfg.Reporter, h.reports(&n))
}

// notification is the part of a webhook body that carries statuses.
type notification struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Statuses []statusEntry `json:"statuses"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type statusEntry struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Timestamp    string `json:"timestamp"`
	RecipientID  string `json:"recipient_id"`
	CallbackData string `json:"biz_opaque_callback_data"`
	Errors       []struct {
		Code      int    `json:"code"`
		Title     string `json:"title"`
		Message   string `json:"message"`
		ErrorData struct {
			Details string `json:"details"`
		} `json:"error_data"`
	} `json:"errors"`
}

// reportedStates maps the vendor's statuses to states; the others
// (deleted, warning) are not about delivery and are ignored.
var reportedStates = map[string]record.State{
	"sent":      record.StateSent,
	"delivered": record.StateDelivered,
	"read":      record.StateRead,
	"played":    record.StateRead, // a voice message was listened to
	"failed":    record.StateFailed,
}

// failoverCodes are the cloud API's failure codes, reported after it
// accepted a message, that the QR gateway can overcome, so that a message
// of the auto gateway is sent again through it
// (notify.DeliveryReport.Failover). From the vendor's error-code
// reference:
var failoverCodes = map[int]string{
	// Re-engagement message: more than 24 hours have passed since the
	// recipient last wrote, so only a template may go; a QR session is
	// not bound by the window.
	131047: "outside the 24-hour customer service window",
	// Not delivered to maintain healthy ecosystem engagement: the
	// vendor's per-recipient limit on business marketing messages.
	131049: "held back by the vendor's per-recipient marketing limit",
	// The recipient's number is part of an experiment that drops business
	// messages.
	130472: "the recipient is part of the vendor's experiment",
}

// Codes the QR gateway cannot overcome stay failed: 131026 (the number
// cannot receive messages), 131050 (the recipient stopped marketing
// messages: their wish), 131051 (an unsupported message type), and the
// rest.

// reports turns n's statuses into reports, counting those it ignores.
func (h *Webhook) reports(n *notification) []*notify.DeliveryReport {
	var out []*notify.DeliveryReport
	ignored := 0
	for _, e := range n.Entry {
		for _, c := range e.Changes {
			if c.Field != "messages" {
				continue
			}
			for _, st := range c.Value.Statuses {
				r := h.report(&st)
				if r == nil {
					ignored++
					continue
				}
				out = append(out, r)
			}
		}
	}
	h.count.Ignore(ignored)
	return out
}

func (h *Webhook) report(st *statusEntry) *notify.DeliveryReport {
	state, ok := reportedStates[st.Status]
	if !ok || st.ID == "" {
		return nil
	}
	r := &notify.DeliveryReport{Provider: h.cfg.Provider, ProviderMessageID: st.ID, To: st.RecipientID, State: state}
	if sec, err := strconv.ParseInt(st.Timestamp, 10, 64); err == nil && sec > 0 {
		r.At = time.Unix(sec, 0).UTC()
	}
	if acct, id, ok := notify.ParseMessageRef(st.CallbackData); ok {
		r.Account, r.MessageID = acct, id
	}
	if len(st.Errors) > 0 {
		e := st.Errors[0]
		r.VendorCode = strconv.Itoa(e.Code)
		text := e.Title
		if text == "" {
			text = e.Message
		}
		if d := e.ErrorData.Details; d != "" {
			text += ": " + d
		}
		r.Error = "cloudchat: " + strings.TrimSpace(text) + " (code " + r.VendorCode + ")"
		_, r.Failover = failoverCodes[e.Code]
	}
	return r
}
