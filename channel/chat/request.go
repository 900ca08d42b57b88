package chat

import (
	"hash"
	"strconv"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/record"
)

// Kind is the kind of the chat channel and its requests.
const Kind notify.Kind = "chat"

// Request asks for one chat message; send it with notify.Notifier.Send. When several contents
// are present the first of MediaURL, TemplateSlug/TemplateName, OTP and
// Message wins; see the chat channel's documentation for the full rule.
type Request struct {
	Account string `json:"-"`
	// To is the recipient's number, as for sms.Request.To, except that
	// any kind of line is accepted (a business may chat from a fixed
	// line). Required.
	To string `json:"to"`
	// OTP is a numeric code (4-8 digits) sent as a priority
	// authentication message; it also fills a template's OTP variable.
	OTP string `json:"otp" validate:"omitempty,otp"`
	// Action is what the OTP is for: login, two-step verification,
	// registration, password reset, transaction; default verification.
	Action string `json:"action"`
	// Brand is the brand or business name shown in the message, at most
	// 60 characters.
	Brand        string      `json:"brand" validate:"omitempty,max=60,text"`
	TemplateSlug string      `json:"template_slug"`
	Variables    record.Vars `json:"variables"`
	// Message is the direct body, or the caption under a media file.
	Message string `json:"message"`
	// Type is otp (transactional, default) or promotional.
	Type Type `json:"type" validate:"omitempty,oneof=otp promotional"`
	// Gateway is cloud, qr or auto (default).
	Gateway Gateway `json:"gateway" validate:"omitempty,oneof=cloud qr auto"`
	// TemplateName, Language (default en_US) and HeaderURL describe a cloud
	// channel template.
	TemplateName string `json:"template_name" validate:"omitempty,templatename"`
	Language     string `json:"language"`
	HeaderURL    string `json:"header_url"`
	// NamedParams, HeaderText, HeaderName and Buttons fill a TemplateName
	// template's values as Template's fields of the same names describe:
	// the body parameters of a template approved with named parameters
	// (instead of positional Variables), its text header's variable and
	// its buttons' values. They go with TemplateName only.
	NamedParams map[string]string `json:"named_params"`
	HeaderText  string            `json:"header_text"`
	HeaderName  string            `json:"header_name"`
	Buttons     []Button          `json:"buttons"`
	// MediaURL is a public HTTPS URL of a PDF or image to attach.
	MediaURL string `json:"media_url"`
	// FileName is the attachment's display name; default Document.pdf.
	FileName string `json:"file_name" validate:"omitempty,filename"`
	Domain   string `json:"domain" validate:"omitempty,domain"`
	// Category names a category of the account's (store.Category: "order",
	// "marketing"): the message goes only to a recipient whose preferences
	// take it on this channel (notify.CodeDeclined otherwise). Empty: none.
	Category string `json:"category" validate:"omitempty,category"`
	// Locale picks the template's variant (a BCP 47 tag: "hi", "hi-IN"),
	// through the chain the tag, its language, the account's default
	// (notify.Account.Locale), the template's base. Empty: the recipient's
	// stored locale (store.Preferences.SetLocale), else the account's
	// default. It matters only with TemplateSlug; the cloud
	// template then goes in the variant's language, unless Language names one.
	Locale         string `json:"locale" validate:"omitempty,locale"`
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
	fingerprint.Fields(h, "chat", fingerprint.Mobile(r.To), r.OTP, r.Action, r.Brand, r.TemplateSlug, r.Message, string(r.Type),
		string(r.Gateway), r.TemplateName, r.Language, r.HeaderURL, r.MediaURL, r.FileName, r.Domain)
	fingerprint.Vars(h, r.Variables)
	fingerprint.Optional(h, "category", r.Category)
	fingerprint.Optional(h, "locale", r.Locale)
	if len(r.NamedParams) == 0 && r.HeaderText == "" && r.HeaderName == "" && len(r.Buttons) == 0 {
		return // the fingerprint of a request without template values, as before they existed
	}
	fingerprint.Fields(h, "template-values", r.HeaderText, r.HeaderName, strconv.Itoa(len(r.Buttons)))
	fingerprint.Vars(h, r.NamedParams)
	for _, b := range r.Buttons {
		fingerprint.Fields(h, string(b.Kind), strconv.Itoa(b.Index), b.Value)
	}
}

// Gateway selects how a chat message travels (the "gateway" field).
type Gateway string

// The chat gateways. The zero value means GatewayAuto.
const (
	// GatewayAuto uses the account's primary chat gateway and, on a
	// temporary failure before acceptance, falls over to the other once.
	GatewayAuto Gateway = "auto"
	// GatewayCloud is the official cloud messaging API.
	GatewayCloud Gateway = "cloud"
	// GatewayQR is a QR-session gateway.
	GatewayQR Gateway = "qr"
)

// Type is the price class a chat message is sent at (the "type" field).
type Type string

// The chat types. The zero value means TypeOTP.
const (
	// TypeOTP is the transactional rate: OTPs, invoices and notifications.
	TypeOTP Type = "otp"
	// TypePromotional is the promotional rate.
	TypePromotional Type = "promotional"
)

// MediaKind tells how an attached file is shown.
type MediaKind string

// The media kinds.
const (
	MediaDocument MediaKind = "document"
	MediaImage    MediaKind = "image"
	MediaVideo    MediaKind = "video"
)

// Message is the content of a chat envelope (notify.Envelope.Content). Media, when set, is the
// message (with Text as its caption); else Template, for gateways that
// send cloud templates (Text may then hold the rendered text, for a
// gateway without templates); else Text. Providers read them in that
// order.
type Message struct {
	// Gateway is the gateway to use first: GatewayCloud or GatewayQR (the
	// channel resolves GatewayAuto in Prepare). Failover records the other.
	Gateway Gateway
	// Auto reports whether the request asked for GatewayAuto, allowing a
	// failover to the other gateway.
	Auto bool
	// Fallback reports, under Auto, that the other gateway is configured
	// and can carry the content: only then does the Notifier keep the
	// request for a failover after a late failure (record.Message.Resend).
	Fallback bool
	Type     Type
	// Text is the message body, or the caption of Media.
	Text string
	// OTP is the code of an OTP message, if any.
	OTP      string
	Template *Template
	Media    *Media
}

// Template is a cloud-channel template message: the approved
// template's name and language and the values of its variables. A
// template takes either positional parameters (Params) or named ones
// (NamedParams), as it was approved; giving both is an error of the
// provider.
type Template struct {
	Name string
	// Language is the template's language code, such as en_US.
	Language string
	// Params are the positional body parameters, {{1}}, {{2}}, ...
	Params []string
	// NamedParams are the body parameters of a template approved with
	// named parameters ({{first_name}}), by name: lower-case letters,
	// digits and '_'.
	NamedParams map[string]string
	// HeaderText fills the one variable of a text header, if the template
	// has one. HeaderName is that variable's name in a template with named
	// parameters; empty for a positional {{1}}.
	HeaderText string
	HeaderName string
	// HeaderURL is the media header's public HTTPS URL, if any, of kind
	// HeaderKind. A template has a text or a media header, not both.
	HeaderURL  string
	HeaderKind MediaKind
	// Buttons fill the variables of the template's buttons, by index.
	Buttons []Button
}

// ButtonKind is the kind of a template button that takes a value.
type ButtonKind string

// The button kinds.
const (
	// ButtonURL fills the variable suffix of a URL button. The OTP button
	// of an authentication template (copy code or one-tap) is sent as a
	// URL button whose value is the code.
	ButtonURL ButtonKind = "url"
	// ButtonQuickReply sets the payload a quick-reply button returns
	// when tapped.
	ButtonQuickReply ButtonKind = "quick_reply"
	// ButtonCopyCode sets the coupon code of a copy-code button of a
	// marketing template.
	ButtonCopyCode ButtonKind = "copy_code"
)

// Button is the value of one button of a template.
type Button struct {
	Kind ButtonKind
	// Index is the button's position in the template, 0 to 9.
	Index int
	// Value is the URL suffix, the quick-reply payload or the code.
	Value string
}

// Media is a file sent by URL.
type Media struct {
	// URL is a public HTTPS URL, already checked by the channel.
	URL      string
	Kind     MediaKind
	FileName string
	// MIMEType is the type expected from the file name, such as
	// application/pdf.
	MIMEType string
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
