package otp

import (
	"hash"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/fingerprint"
)

// Kind is the kind of the dual OTP's combined receipt and of the records
// of its parts (record.Message.Request). No channel has this kind: the
// parts go through the SMS and chat channels.
const Kind notify.Kind = "otp"

// Request asks for the dual-channel OTP: the same code by SMS (otp route)
// and by chat at once, each part with its own message ID, price and
// charge. It is a notify.Composite: send it with notify.Notifier.Send,
// which checks it as the SMS and chat requests it is split into (a bad
// field is named once, in this request's own words), skips a part whose
// channel is not configured, counts the pair once against the limits and
// answers one receipt of Kind with both legs, SMS first.
type Request struct {
	Account string `json:"-"`
	// To is the recipient mobile number, as for sms.Request.To. Required.
	To string `json:"to"`
	// OTP is the numeric code, 4-8 digits. Required.
	OTP string `json:"otp"`
	// BrandName is the brand or app name shown in both messages.
	BrandName string `json:"brand_name"`
	// Action is what the code is for (see chat.Request.Action).
	Action string `json:"action"`
	Domain string `json:"domain"`
	// Category names a category of the account's, as sms.Request.Category:
	// both parts carry it, and a part whose channel the recipient's
	// preferences decline is skipped (usually a critical one: "otp").
	Category string `json:"category"`
	// TemplateSlug is the SMS part's template (sms.Request.TemplateSlug,
	// filled with the code as OTP), rendered in Locale; empty: the otp
	// route's text.
	TemplateSlug string `json:"template_slug"`
	// Locale picks the variant of both parts' templates, as
	// sms.Request.Locale; Language still names the chat's cloud language.
	Locale string `json:"locale"`
	// WebOTPHost and AppHash end the SMS with the lines that let a phone
	// fill the code in (see sms.Request.WebOTPHost); Language is the
	// chat template's language (see chat.Request.Language).
	WebOTPHost     string `json:"webotp_host"`
	AppHash        string `json:"app_hash"`
	Language       string `json:"language"`
	IdempotencyKey string `json:"-"`
}

// Kind implements notify.Request.
func (*Request) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *Request) AccountID() string { return r.Account }

// Key implements notify.Request.
func (r *Request) Key() string { return r.IdempotencyKey }

// Fingerprint implements notify.Request.
func (r *Request) Fingerprint(h hash.Hash) {
	fingerprint.Fields(h, "otp", fingerprint.Mobile(r.To), r.OTP, r.BrandName, r.Action, r.Domain,
		r.WebOTPHost, r.AppHash, r.Language)
	fingerprint.Optional(h, "category", r.Category)
	fingerprint.Optional(h, "locale", r.Locale)
	fingerprint.Optional(h, "template_slug", r.TemplateSlug)
}

// Parts implements notify.Composite: the SMS part, then the chat part.
func (r *Request) Parts() []notify.Request {
	return []notify.Request{
		&sms.Request{Account: r.Account, To: r.To, Message: r.OTP, Route: sms.RouteOTP,
			Brand: r.BrandName, Domain: r.Domain, Category: r.Category, TemplateSlug: r.TemplateSlug, Locale: r.Locale, WebOTPHost: r.WebOTPHost, AppHash: r.AppHash,
			IdempotencyKey: r.IdempotencyKey},
		&chat.Request{Account: r.Account, To: r.To, OTP: r.OTP, Action: r.Action,
			Brand: r.BrandName, Domain: r.Domain, Category: r.Category, Locale: r.Locale, Language: r.Language, IdempotencyKey: r.IdempotencyKey},
	}
}

// PartField implements notify.Composite: either part's message is this
// request's otp (the SMS part's message is the code; the chat part asks
// for a message only when it has no code), and either part's brand its
// brand_name.
func (r *Request) PartField(part int, field string) string {
	switch {
	case field == "message":
		return "otp"
	case field == "brand":
		return "brand_name"
	}
	return field
}
