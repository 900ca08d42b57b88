package email

import (
	"crypto/sha256"
	"hash"
	"strconv"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/record"
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
	Variables    record.Vars `json:"variables"`
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
	Purpose Purpose `json:"purpose" validate:"omitempty,oneof=otp invoice notification campaign"`
	Domain  string  `json:"domain" validate:"omitempty,domain"`
	// Category names a category of the account's (store.Category: "order",
	// "marketing"): the message goes only to a recipient whose preferences
	// take it on this channel (notify.CodeDeclined otherwise). Empty: none.
	Category string `json:"category" validate:"omitempty,category"`
	// Locale picks the template's variant (a BCP 47 tag: "hi", "hi-IN"),
	// through the chain the tag, its language, the account's default
	// (notify.Account.Locale), the template's base. Empty: the recipient's
	// stored locale (store.Preferences.SetLocale), else the account's
	// default. It matters only with TemplateSlug.
	Locale         string `json:"locale" validate:"omitempty,locale"`
	IdempotencyKey string `json:"-"`
	// Cc are further recipients shown in the Cc header, each checked as
	// To is (an error names "cc[1]"). Bcc are recipients that receive
	// the message without appearing in any delivered header. Each
	// recipient is priced as one unit (see the package documentation);
	// to, cc and bcc together are at most MaxRecipients addresses, none
	// repeated, and none with an OTP or purpose otp (a code goes to
	// its one recipient). Default none.
	Cc  []string `json:"cc,omitempty" validate:"dive,mailbox"`
	Bcc []string `json:"bcc,omitempty" validate:"dive,mailbox"`
	// Attachments are files sent with the message, at most
	// MaxAttachments; see Attachment. Their total size is bounded by the
	// provider (provider/smtp's Config.MaxAttachmentBytes). Default none.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Attachment is one file attached to an e-mail: its bytes (Data, from Go
// only) or a public HTTPS URL the provider fetches when it sends the
// message, through the same guard as chat media (internal/netguard: https
// only, no IP literal or local-only name, every address dialled public,
// a size limit and timeouts). Exactly one of Data and URL is set.
type Attachment struct {
	// FileName is the name the recipient sees: at most MaxFileNameLen
	// bytes of UTF-8 without control characters (CR, LF and NUL
	// included), no path (/ or \) and not "." or "..". Required with Data;
	// with URL, default the last segment of the URL's path, else
	// "attachment".
	FileName string `json:"file_name,omitempty"`
	// ContentType is the file's media type, such as application/pdf,
	// without parameters other than charset. Default: the type of the
	// file name's extension (mime.TypeByExtension), else
	// application/octet-stream.
	ContentType string `json:"content_type,omitempty"`
	// URL is a public https URL of the file. The channel checks its form
	// without looking the host up (Prepare has no side effects); the
	// provider refuses at dial time a host that resolves to an address
	// that is not public.
	URL string `json:"url,omitempty"`
	// Data is the file itself. Go callers only: the HTTP API takes URLs.
	// It is kept in a queued send's record (as base64 JSON).
	Data []byte `json:"data,omitempty"`
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
	fingerprint.Fields(h, "email", fingerprintAddress(r.To), r.Subject, r.Message, r.TemplateSlug, r.FromName,
		strings.TrimSpace(r.ReplyTo), string(r.Purpose), r.Domain)
	fingerprint.Vars(h, r.Variables)
	if r.OTP != "" {
		fingerprint.Fields(h, "otp", r.OTP)
	}
	// Written only when set, as the OTP is, so older fingerprints hold.
	if len(r.Cc) > 0 || len(r.Bcc) > 0 {
		fingerprint.Fields(h, "cc", strconv.Itoa(len(r.Cc)))
		for _, a := range r.Cc {
			fingerprint.Fields(h, fingerprintAddress(a))
		}
		fingerprint.Fields(h, "bcc", strconv.Itoa(len(r.Bcc)))
		for _, a := range r.Bcc {
			fingerprint.Fields(h, fingerprintAddress(a))
		}
	}
	if len(r.Attachments) > 0 {
		fingerprint.Fields(h, "attachments", strconv.Itoa(len(r.Attachments)))
		for _, a := range r.Attachments {
			// The data's digest, not the data: a fingerprint need not
			// copy megabytes.
			sum := sha256.Sum256(a.Data)
			fingerprint.Fields(h, a.FileName, a.ContentType, a.URL, strconv.Itoa(len(a.Data)), string(sum[:]))
		}
	}
	fingerprint.Optional(h, "category", r.Category)
	fingerprint.Optional(h, "locale", r.Locale)
}

// fingerprintAddress is a recipient as a fingerprint sees it: its
// canonical form (Recipient), so that a repeat that spells the address
// otherwise ("Ann@Bücher.example", "ann@xn--bcher-kva.example") is the
// same request, or the address trimmed when it has none (Prepare refuses
// it). An address already canonical keeps the fingerprint it had.
func fingerprintAddress(addr string) string {
	if to, err := Recipient(addr); err == nil {
		return to
	}
	return strings.TrimSpace(addr)
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
	// Cc and Bcc are the further recipients, bare addresses, trimmed; the
	// envelope's To is the first recipient. The provider puts every
	// recipient in the SMTP envelope, Cc in the Cc header, and Bcc in no
	// header.
	Cc, Bcc []string
	// Attachments are the files, checked: each has a FileName and a
	// ContentType, and exactly one of URL and Data.
	Attachments []Attachment
}

// Recipients returns every recipient of m for an envelope addressed to
// to: to, then Cc, then Bcc.
func (m *Message) Recipients(to string) []string {
	out := make([]string, 0, 1+len(m.Cc)+len(m.Bcc))
	out = append(out, to)
	out = append(out, m.Cc...)
	return append(out, m.Bcc...)
}

// OtherRecipients returns the message's cc and bcc recipients: the
// Notifier checks each against the account's suppression list as it
// checks the envelope's To, so that a campaign is not copied to someone
// who opted out.
func (m *Message) OtherRecipients() []string {
	if len(m.Cc) == 0 {
		return m.Bcc
	}
	return append(append(make([]string, 0, len(m.Cc)+len(m.Bcc)), m.Cc...), m.Bcc...)
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
