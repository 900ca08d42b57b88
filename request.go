package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify/internal/phone"
)

// Request is a send request: *SMSRequest, *EmailRequest or *ChatRequest.
// Channels receive one in Prepare and type-switch on it. The interface is
// sealed; the dual-channel OTP (*OTPRequest) is split by SendOTP into an
// SMS and a chat request.
//
// The request types declare their per-field rules as `validate` struct
// tags (github.com/go-playground/validator/v10 syntax, with the custom
// rules otp, text, mailbox, header, filename, templatename, notblank and
// the alias domain); the channels check them and then the rules that need
// code, such as normalising a mobile number (which checks it too). Their json tags are the HTTP API's field names, which errors use.
type Request interface {
	// Kind is the channel kind the request is for.
	Kind() Kind
	// common returns the fields every request shares.
	common() (account, idempotencyKey string)
	// fingerprint writes the request's content (see fingerprintOf).
	fingerprint(h hash.Hash)
}

// SMSRequest asks for one SMS.
type SMSRequest struct {
	// Account is the ID of the sending account. Required.
	Account string `json:"-"`
	// To is the recipient: 10 digits starting 6-9; +91, 91 and 0 prefixes,
	// spaces and dashes are accepted and removed. Required. Its rule is
	// the normalisation itself, in code: checking it apart would parse
	// every number twice.
	To string `json:"to"`
	// Message is the text, or the numeric code on the otp route. Required
	// unless TemplateSlug is set (on the otp route the code may then come
	// from Variables["OTP"]).
	Message string `json:"message"`
	// SenderID is the sender header; default the account's VendorID.
	SenderID string `json:"sender_id"`
	// Route is sms (default), otp or dlt.
	Route SMSRoute `json:"route" validate:"omitempty,oneof=sms otp dlt"`
	// DLTTemplateID and DLTEntityID identify the operator-registered
	// template on the dlt route (DLTTemplateID is required there). A
	// template the account has registered is checked against the text
	// and its entity ID is used when DLTEntityID is empty; see the SMS
	// channel for one the account has not registered.
	DLTTemplateID string `json:"dlt_template_id" validate:"omitempty,max=64,text"`
	DLTEntityID   string `json:"dlt_entity_id" validate:"omitempty,max=64,text"`
	// Brand is the brand named in the OTP text of the otp route; SendOTP
	// sets it from OTPRequest.BrandName. At most 30 characters, the
	// length of a DLT variable.
	Brand string `json:"brand" validate:"omitempty,max=30,text"`
	// TemplateSlug renders a stock or custom SMS template with Variables
	// instead of Message.
	TemplateSlug string `json:"template_slug"`
	Variables    Vars   `json:"variables"`
	// Domain is the calling application's domain, recorded with the
	// message: at most 253 characters of text.
	Domain string `json:"domain" validate:"omitempty,domain"`
	// IdempotencyKey, when set, makes a repeat within the retention window
	// return the first receipt without sending or charging again. It
	// needs WithIdempotency: without it, a request with a key is refused
	// (InvalidArgument on idempotency_key). The other requests' keys do
	// the same.
	IdempotencyKey string `json:"-"`
}

// OTPRequest asks for the dual-channel OTP: the same code by SMS and by
// chat at once. SendOTP checks it as the SMS and chat requests it is
// split into, so a bad field is named once, as the legs name it.
type OTPRequest struct {
	Account string `json:"-"`
	// To is the recipient mobile number, as for SMSRequest.To. Required.
	To string `json:"to"`
	// OTP is the numeric code, 4-8 digits. Required.
	OTP string `json:"otp"`
	// BrandName is the brand or app name shown in both messages.
	BrandName string `json:"brand_name"`
	// Action is what the code is for (see ChatRequest.Action).
	Action         string `json:"action"`
	Domain         string `json:"domain"`
	IdempotencyKey string `json:"-"`
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

// EmailRequest asks for one e-mail.
type EmailRequest struct {
	Account string `json:"-"`
	// To is the recipient: a bare address such as name@example.com whose
	// domain has at least two labels. Required.
	To string `json:"to" validate:"required,mailbox"`
	// Subject is required unless TemplateSlug is set (the template then
	// supplies it; a non-empty Subject overrides the template's).
	Subject string `json:"subject" validate:"required_without=TemplateSlug,omitempty,notblank,header"`
	// Message is the body, HTML or plain text. Required unless
	// TemplateSlug is set.
	Message      string `json:"message" validate:"required_without=TemplateSlug,omitempty,notblank"`
	TemplateSlug string `json:"template_slug"`
	Variables    Vars   `json:"variables"`
	// FromName is the sender's display name, at most 100 characters;
	// default the SMTP setup's.
	FromName string `json:"from_name" validate:"omitempty,displayname,max=100"`
	// ReplyTo is an address for replies, as To.
	ReplyTo string `json:"reply_to" validate:"omitempty,mailbox"`
	// Purpose selects the SMTP configuration and price: otp, invoice,
	// notification or campaign; default the channel's.
	Purpose        EmailPurpose `json:"purpose" validate:"omitempty,oneof=otp invoice notification campaign"`
	Domain         string       `json:"domain" validate:"omitempty,domain"`
	IdempotencyKey string       `json:"-"`
}

// ChatRequest asks for one chat message. When several contents
// are present the first of MediaURL, TemplateSlug/TemplateName, OTP and
// Message wins; see the chat channel's documentation for the full rule.
type ChatRequest struct {
	Account string `json:"-"`
	// To is the recipient mobile number, as for SMSRequest.To. Required.
	To string `json:"to"`
	// OTP is a numeric code (4-8 digits) sent as a priority
	// authentication message; it also fills a template's OTP variable.
	OTP string `json:"otp" validate:"omitempty,otp"`
	// Action is what the OTP is for: login, two-step verification,
	// registration, password reset, transaction; default verification.
	Action string `json:"action"`
	// Brand is the brand or business name shown in the message, at most
	// 60 characters.
	Brand        string `json:"brand" validate:"omitempty,max=60,text"`
	TemplateSlug string `json:"template_slug"`
	Variables    Vars   `json:"variables"`
	// Message is the direct body, or the caption under a media file.
	Message string `json:"message"`
	// Type is otp (transactional, default) or promotional.
	Type ChatType `json:"type" validate:"omitempty,oneof=otp promotional"`
	// Gateway is cloud, qr or auto (default).
	Gateway ChatGateway `json:"gateway" validate:"omitempty,oneof=cloud qr auto"`
	// TemplateName, Language (default en_US) and HeaderURL describe a cloud
	// channel template.
	TemplateName string `json:"template_name" validate:"omitempty,templatename"`
	Language     string `json:"language"`
	HeaderURL    string `json:"header_url"`
	// MediaURL is a public HTTPS URL of a PDF or image to attach.
	MediaURL string `json:"media_url"`
	// FileName is the attachment's display name; default Document.pdf.
	FileName       string `json:"file_name" validate:"omitempty,filename"`
	Domain         string `json:"domain" validate:"omitempty,domain"`
	IdempotencyKey string `json:"-"`
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

// fingerprinter is a request that can be fingerprinted: the three send
// requests and the dual OTP.
type fingerprinter interface{ fingerprint(h hash.Hash) }

// fingerprintOf returns a hex SHA-256 digest of a request's content: every
// field but the account and the idempotency key, with the recipient
// normalised (so "+91 98765 43210" and "9876543210", or an address with
// and without surrounding spaces, are the same request). A reused key with
// another request is told apart by it.
//
// It is taken from the request, not the prepared message, so that a
// repeat is answered from the idempotency store before Prepare runs: a
// repeat must get the first receipt even when preparing it again would
// now fail or differ (a resolver down, a template edited), or a client
// told "unavailable" could send again under a new key what the vendor
// may already have.
func fingerprintOf(r fingerprinter) string {
	h := sha256.New()
	r.fingerprint(h)
	return hex.EncodeToString(h.Sum(nil))
}

// mobileKey is a number as the fingerprint sees it: normalised when it is
// a mobile number, as given otherwise (it will be refused by Prepare).
func mobileKey(s string) string {
	if n, err := phone.Normalize(s); err == nil {
		return n
	}
	return s
}

// writeVars writes variables in key order.
func writeVars(h hash.Hash, v Vars) {
	keys := slices.Sorted(maps.Keys(v))
	writeFields(h, strconv.Itoa(len(keys)))
	for _, k := range keys {
		writeFields(h, k, v[k])
	}
}

func (r *SMSRequest) fingerprint(h hash.Hash) {
	writeFields(h, "sms", mobileKey(r.To), r.Message, r.SenderID, string(r.Route), r.DLTTemplateID, r.DLTEntityID,
		r.Brand, r.TemplateSlug, r.Domain)
	writeVars(h, r.Variables)
}

func (r *EmailRequest) fingerprint(h hash.Hash) {
	writeFields(h, "email", strings.TrimSpace(r.To), r.Subject, r.Message, r.TemplateSlug, r.FromName,
		strings.TrimSpace(r.ReplyTo), string(r.Purpose), r.Domain)
	writeVars(h, r.Variables)
}

func (r *ChatRequest) fingerprint(h hash.Hash) {
	writeFields(h, "chat", mobileKey(r.To), r.OTP, r.Action, r.Brand, r.TemplateSlug, r.Message, string(r.Type),
		string(r.Gateway), r.TemplateName, r.Language, r.HeaderURL, r.MediaURL, r.FileName, r.Domain)
	writeVars(h, r.Variables)
}

func (r *OTPRequest) fingerprint(h hash.Hash) {
	writeFields(h, "otp", mobileKey(r.To), r.OTP, r.BrandName, r.Action, r.Domain)
}
