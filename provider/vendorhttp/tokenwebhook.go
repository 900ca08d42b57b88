package vendorhttp

import (
	"fmt"
	"net/http"

	"github.com/notifykit/notify"
)

// TokenWebhookConfig configures a TokenWebhook: the vendor's wire format
// (Methods, Entries, Report) and the receiver's settings.
type TokenWebhookConfig struct {
	// Name is the provider's name, which prefixes errors ("msg91").
	Name string
	// Reporter takes the reports. Required.
	Reporter notify.Reporter
	// Token is the secret last segment of the callback URL (see
	// CheckTokenReceiver). Required; it never appears in errors.
	Token string
	// MaxBody bounds a body; default MaxWebhookBody.
	MaxBody int64
	// Methods are the methods the vendor calls with. Required. A GET carries its
	// reports in its query and has no body.
	Methods []string
	// Entries reads the reports of an admitted request: body is its body,
	// read whole (nil for a GET). An error is answered 400, counted
	// malformed, reporting nothing of the request. Required.
	Entries func(r *http.Request, body []byte) ([]Entry, error)
	// Report turns one entry into a report, or nil for one that says
	// nothing final (counted ignored). Required.
	Report func(Entry) *notify.DeliveryReport
}

// TokenWebhook receives the delivery reports of a vendor that signs
// nothing, so that a secret token in the callback URL is the receiver's
// only authentication: a request passes the method and the token (in
// constant time) before a byte of its body is read, its reports are read
// into Entries and handed to the Reporter one by one (Receiver.Deliver
// says how it answers). A provider's webhook holds one and gives it the
// vendor's wire format. It keeps no state but its counts, and is safe for
// concurrent use.
type TokenWebhook struct {
	cfg  TokenWebhookConfig
	body WebhookBody // the vendor signs nothing: the token comes first
	recv Receiver
}

// NewTokenWebhook returns a TokenWebhook for cfg, or the error of
// CheckTokenReceiver, or one naming the field when Methods is empty or
// Entries or Report is nil (a receiver that would refuse or fail every
// call).
func NewTokenWebhook(cfg TokenWebhookConfig) (*TokenWebhook, error) {
	if err := CheckTokenReceiver(cfg.Name, cfg.Reporter, cfg.Token); err != nil {
		return nil, err
	}
	switch {
	case len(cfg.Methods) == 0:
		return nil, fmt.Errorf("%s: TokenWebhookConfig.Methods is required", cfg.Name)
	case cfg.Entries == nil:
		return nil, fmt.Errorf("%s: TokenWebhookConfig.Entries is required", cfg.Name)
	case cfg.Report == nil:
		return nil, fmt.Errorf("%s: TokenWebhookConfig.Report is required", cfg.Name)
	}
	return &TokenWebhook{cfg: cfg, body: WebhookBody{Max: cfg.MaxBody}}, nil
}

// Stats returns what the webhook did so far: reports applied (or
// repeated), unmatched, ignored, refused, malformed and failed.
func (h *TokenWebhook) Stats() notify.WebhookStats { return h.recv.Stats() }

// ServeHTTP takes one call of the vendor's: 405 (with Allow) for a method
// not in Methods; 401 when the token is missing or wrong, before the body
// is read; 413 for a body over MaxBody (before it is read when its
// Content-Length says so); 400 for one that cannot be read or whose
// entries cannot; then as Receiver.Deliver answers.
func (h *TokenWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.recv.AdmitToken(w, r, h.cfg.Token, h.cfg.Methods...) {
		return
	}
	var body []byte
	if r.Method != http.MethodGet {
		var ok bool
		if body, ok = h.recv.Read(w, r, &h.body); !ok {
			return
		}
	}
	entries, err := h.cfg.Entries(r, body)
	if err != nil {
		h.recv.Malformed(w, err)
		return
	}
	h.recv.DeliverEntries(r.Context(), w, h.cfg.Reporter, entries, h.cfg.Report)
}
