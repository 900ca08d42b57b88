package email

import (
	"hash"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/fingerprint"
)

// Kind is the kind of the e-mail channel and its requests.
const Kind notify.Kind = "email"

// Request asks for one e-mail; send it with notify.Notifier.Send.
type Request struct {
	Account string `json:"-"`
	// To is the recipient: a bare address such as name@example.com whose
	// domain has at least two labels. Required.
	To string `json:"to" validate:"required,mailbox"`
	// Subject is required unless TemplateSlug is set (the template then
	// supplies it; a non-empty Subject overrides the template's).
	Subject string `json:"subject" validate:"required_without=TemplateSlug,omitempty,notblank,header"`
	// Message is the body, HTML or plain text. Required unless
	// TemplateSlug is set.
	Message      string      `json:"message" validate:"required_without=TemplateSlug,omitempty,notblank"`
	TemplateSlug string      `json:"template_slug"`
	Variables    notify.Vars `json:"variables"`
	// OTP is the one-time code the message carries, declared so that logs
	// and the development outbox hide it wherever it shows, subject
	// included: MinOTPDigits to MaxOTPDigits ASCII digits, which must
	// appear in the subject or the body (the rendered template's, with
	// TemplateSlug), not as part of a longer run of digits. Setting it
	// makes the envelope CarriesOTP. Optional; its rule is code, in
	// Prepare, since it needs the final text.
	OTP string `json:"otp"`
	// FromName is the sender's display name, at most 100 characters;
	// default the SMTP setup's.
	FromName string `json:"from_name" validate:"omitempty,displayname,max=100"`
	// ReplyTo is an address for replies, as To.
	ReplyTo string `json:"reply_to" validate:"omitempty,mailbox"`
	// Purpose selects the SMTP configuration and price: otp, invoice,
	// notification or campaign; default the channel's.
	Purpose        Purpose `json:"purpose" validate:"omitempty,oneof=otp invoice notification campaign"`
	Domain         string  `json:"domain" validate:"omitempty,domain"`
	IdempotencyKey string  `json:"-"`
}

// Kind implements notify.Request.
func (*Request) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *Request) AccountID() string { return r.Account }

// Key implements notify.Request.
func (r *Request) Key() string { return r.IdempotencyKey }

// Fingerprint implements notify.Request. The OTP is written last and only
// when set, so that requests without one keep the fingerprints they had
// before the field existed (an idempotency key kept across an upgrade
// still matches its request).
func (r *Request) Fingerprint(h hash.Hash) {
	fingerprint.Fields(h, "email", strings.TrimSpace(r.To), r.Subject, r.Message, r.TemplateSlug, r.FromName,
		strings.TrimSpace(r.ReplyTo), string(r.Purpose), r.Domain)
	fingerprint.Vars(h, r.Variables)
	if r.OTP != "" {
		fingerprint.Fields(h, "otp", r.OTP)
	}
}

// Purpose selects the dedicated SMTP configuration and the price of an
// e-mail (the "purpose" field). The zero value uses the default SMTP
// configuration and the notification price.
type Purpose string

// The e-mail purposes.
const (
	PurposeOTP          Purpose = "otp"
	PurposeInvoice      Purpose = "invoice"
	PurposeNotification Purpose = "notification"
	PurposeCampaign     Purpose = "campaign"
)

// Message is the content of an e-mail envelope (notify.Envelope.Content). From addresses come
// from the provider's configuration for the purpose.
type Message struct {
	Purpose Purpose
	// FromName overrides the configured sender display name when set.
	FromName string
	// ReplyTo is a bare address, or empty.
	ReplyTo string
	Subject string
	// HTML is the HTML body, or empty for a plain-text message.
	HTML string
	// Text is the plain-text body; for HTML mail, the generated alternative.
	Text string
	// OTP is the one-time code the request declared (Request.OTP), or
	// empty. It appears in Subject, HTML or Text; whatever shows the
	// message (logs, the development outbox) hides it everywhere there.
	OTP string
}

// MessageOf returns the content of an envelope of this channel, or nil
// when env is nil or carries another channel's content.
func MessageOf(env *notify.Envelope) *Message {
	if env == nil {
		return nil
	}
	m, _ := env.Content.(*Message)
	return m
}
