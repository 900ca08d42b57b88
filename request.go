package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
)

// Request is a send request: *SMSRequest, *EmailRequest or *ChatRequest.
// Channels receive one in Prepare and type-switch on it. The interface is
// sealed; the dual-channel OTP (*OTPRequest) is split by SendOTP into an
// SMS and a chat request.
type Request interface {
	// Kind is the channel kind the request is for.
	Kind() Kind
	// common returns the fields every request shares.
	common() (account, idempotencyKey string)
}

// SMSRequest asks for one SMS (spec 4.1).
type SMSRequest struct {
	// Account is the ID of the sending account. Required.
	Account string
	// To is the recipient: 10 digits starting 6-9; +91, 91 and 0 prefixes,
	// spaces and dashes are accepted and removed. Required.
	To string
	// Message is the text, or the numeric code on the otp route. Required
	// unless TemplateSlug is set.
	Message string
	// SenderID is the sender header; default the account's VendorID.
	SenderID string
	// Route is sms (default), otp or dlt.
	Route SMSRoute
	// DLTTemplateID and DLTEntityID identify the registered template on the
	// dlt route; when empty they come from the account's DLT templates.
	DLTTemplateID string
	DLTEntityID   string
	// Brand is the brand named in the OTP text of the otp route; SendOTP
	// sets it from OTPRequest.BrandName.
	Brand string
	// TemplateSlug renders a stock or custom SMS template with Variables
	// instead of Message.
	TemplateSlug string
	Variables    Vars
	// Domain is the calling application's domain, recorded with the message.
	Domain string
	// IdempotencyKey, when set, makes a repeat within the retention window
	// return the first receipt without sending or charging again.
	IdempotencyKey string
}

// OTPRequest asks for the dual-channel OTP (spec 4.2): the same code by SMS
// and by chat at once.
type OTPRequest struct {
	Account string
	// To is the recipient mobile number, as for SMSRequest.To. Required.
	To string
	// OTP is the numeric code, 4-8 digits. Required.
	OTP string
	// BrandName is the brand or app name shown in both messages.
	BrandName string
	// Action is what the code is for (see ChatRequest.Action).
	Action         string
	Domain         string
	IdempotencyKey string
}

// ValidOTP reports whether code is an OTP as notify sends them: 4 to 8
// ASCII digits. Channels, templates and providers all hold codes to it.
func ValidOTP(code string) bool {
	if len(code) < 4 || len(code) > 8 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}

// EmailRequest asks for one e-mail (spec 4.3).
type EmailRequest struct {
	Account string
	// To is the recipient address, as parsed by net/mail. Required.
	To string
	// Subject is required unless TemplateSlug is set (the template then
	// supplies it; a non-empty Subject overrides the template's).
	Subject string
	// Message is the body, HTML or plain text. Required unless
	// TemplateSlug is set.
	Message      string
	TemplateSlug string
	Variables    Vars
	// FromName is the sender's display name; default the SMTP setup's.
	FromName string
	// ReplyTo is an address for replies.
	ReplyTo string
	// Purpose selects the SMTP configuration and price.
	Purpose        EmailPurpose
	Domain         string
	IdempotencyKey string
}

// ChatRequest asks for one chat message (spec 4.4). When several contents
// are present the first of MediaURL, TemplateSlug/TemplateName, OTP and
// Message wins; see the chat channel's documentation for the full rule.
type ChatRequest struct {
	Account string
	// To is the recipient mobile number, as for SMSRequest.To. Required.
	To string
	// OTP is a numeric code sent as a priority authentication message;
	// it also fills a template's OTP variable.
	OTP string
	// Action is what the OTP is for: login, two-step verification,
	// registration, password reset, transaction; default verification.
	Action string
	// Brand is the brand or business name shown in the message.
	Brand        string
	TemplateSlug string
	Variables    Vars
	// Message is the direct body, or the caption under a media file.
	Message string
	// Type is otp (transactional, default) or promotional.
	Type ChatType
	// Gateway is cloud, qr or auto (default).
	Gateway ChatGateway
	// TemplateName, Language (default en_US) and HeaderURL describe a cloud
	// channel template.
	TemplateName string
	Language     string
	HeaderURL    string
	// MediaURL is a public HTTPS URL of a PDF or image to attach.
	MediaURL string
	// FileName is the attachment's display name; default Document.pdf.
	FileName       string
	Domain         string
	IdempotencyKey string
}

// Kind implements Request.
func (*SMSRequest) Kind() Kind { return KindSMS }

// Kind implements Request.
func (*EmailRequest) Kind() Kind { return KindEmail }

// Kind implements Request.
func (*ChatRequest) Kind() Kind { return KindChat }

func (r *SMSRequest) common() (string, string)   { return r.Account, r.IdempotencyKey }
func (r *EmailRequest) common() (string, string) { return r.Account, r.IdempotencyKey }
func (r *ChatRequest) common() (string, string)  { return r.Account, r.IdempotencyKey }

// writeFields writes each field length-prefixed, so that no two different
// field lists hash alike.
func writeFields(h hash.Hash, fields ...string) {
	var n [8]byte
	for _, f := range fields {
		l := len(f)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(f))
	}
}

// fingerprintOf returns a hex SHA-256 digest of the prepared messages:
// every field of their content, after validation and normalisation (so
// "+91 98765 43210" and "9876543210" are the same request), but not their
// IDs, prices, providers or idempotency key. A reused key with another request is
// told apart by it. A nil envelope (a dual OTP leg without its channel)
// is hashed as absent.
func fingerprintOf(envs ...*Envelope) string {
	h := sha256.New()
	for _, e := range envs {
		if e == nil {
			writeFields(h, "-")
			continue
		}
		e.fingerprint(h)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (e *Envelope) fingerprint(h hash.Hash) {
	otp := ""
	if e.CarriesOTP {
		otp = "otp"
	}
	// Not the provider, nor the gateway that auto resolved to: those are
	// this instance's choice, not the request's, and instances sharing an
	// idempotency store may be configured apart.
	writeFields(h, string(e.Kind), e.To, string(e.Class), e.Domain, otp, strconv.Itoa(e.Units))
	if m := e.SMS; m != nil {
		writeFields(h, "sms", string(m.Route), m.Text, m.OTP, m.SenderID, m.DLTTemplateID, m.DLTEntityID,
			string(m.Encoding), strconv.Itoa(m.Segments), strconv.Itoa(len(m.DLTValues)))
		writeFields(h, m.DLTValues...)
	}
	if m := e.Email; m != nil {
		writeFields(h, "email", string(m.Purpose), m.FromName, m.ReplyTo, m.Subject, m.HTML, m.Text)
	}
	if m := e.Chat; m != nil {
		gw := string(m.Gateway)
		if m.Auto {
			gw = string(GatewayAuto)
		}
		writeFields(h, "chat", gw, string(m.Type), m.Text, m.OTP)
		if t := m.Template; t != nil {
			writeFields(h, "template", t.Name, t.Language, t.HeaderURL, string(t.HeaderKind), strconv.Itoa(len(t.Params)))
			writeFields(h, t.Params...)
		}
		if md := m.Media; md != nil {
			writeFields(h, "media", md.URL, string(md.Kind), md.FileName, md.MIMEType)
		}
	}
}
