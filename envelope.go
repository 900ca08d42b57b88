package notify

import "time"

// Envelope is a prepared message: validated, normalised and rendered by a
// Channel, priced by the Notifier, and handed to a Provider. The Notifier
// fills ID, Account, Price and IdempotencyKey after Prepare; nothing
// changes an Envelope once Deliver is called, so providers may read it
// from several goroutines and may retain it.
//
// An Envelope carries the message content, OTP codes included: never log
// it whole.
type Envelope struct {
	// ID is the message ID (a UUID), also the wallet reference of its charge.
	ID string
	// Kind is the channel kind; exactly the matching content field below is
	// set.
	Kind Kind
	// Account is the sending account.
	Account *Account
	// To is the normalised recipient: a 10-digit mobile number or an e-mail
	// address.
	To string
	// Provider is the name of the provider the channel chose in Prepare;
	// per-provider timeouts are looked up by it.
	Provider string
	// Units is the number of billable units: SMS segments, otherwise 1.
	Units int
	// Class is the price class of the content.
	Class PriceClass
	// Price is what the message costs; zero when unmetered.
	Price Money
	// Domain is the calling application's domain, recorded with the message.
	Domain string
	// IdempotencyKey is the request's key, if any.
	IdempotencyKey string
	// CarriesOTP reports that the message carries a one-time code: the SMS
	// otp route, a chat OTP, e-mail of purpose otp, or any template
	// rendered with an OTP variable.
	// Channels set it; the Notifier's OTP throttle counts these messages.
	CarriesOTP bool

	SMS   *SMSMessage
	Email *EmailMessage
	Chat  *ChatMessage
}

// SMSEncoding is the character set an SMS travels in.
type SMSEncoding string

// The SMS encodings.
const (
	// GSM7 is the GSM 03.38 7-bit alphabet: 160 characters in one segment,
	// 153 per segment when concatenated.
	GSM7 SMSEncoding = "gsm7"
	// UCS2 is used as soon as one character is outside GSM 03.38: 70
	// characters in one segment, 67 per segment when concatenated.
	UCS2 SMSEncoding = "ucs2"
)

// SMSMessage is the content of an SMS envelope.
type SMSMessage struct {
	Route SMSRoute
	// Text is the text as it will be delivered. On the otp route it is the
	// rendered OTP text; providers with an OTP API may send OTP instead.
	Text string
	// OTP is the numeric code on the otp route.
	OTP string
	// SenderID is the sender header.
	SenderID string
	// DLTTemplateID and DLTEntityID are set on the dlt route.
	DLTTemplateID string
	DLTEntityID   string
	// DLTValues are the values of the DLT template's {#var#} slots, in order.
	DLTValues []string
	// DLTMessageID is the registered template's ID in the vendor's DLT
	// manager (notify.DLTTemplate.MessageID), when it has one: a provider
	// may send it with DLTValues instead of Text.
	DLTMessageID string
	Encoding     SMSEncoding
	Segments     int
}

// EmailMessage is the content of an e-mail envelope. From addresses come
// from the provider's configuration for the purpose.
type EmailMessage struct {
	Purpose EmailPurpose
	// FromName overrides the configured sender display name when set.
	FromName string
	// ReplyTo is a bare address, or empty.
	ReplyTo string
	Subject string
	// HTML is the HTML body, or empty for a plain-text message.
	HTML string
	// Text is the plain-text body; for HTML mail, the generated alternative.
	Text string
}

// MediaKind tells how an attached file is shown.
type MediaKind string

// The media kinds.
const (
	MediaDocument MediaKind = "document"
	MediaImage    MediaKind = "image"
	MediaVideo    MediaKind = "video"
)

// ChatMessage is the content of a chat envelope. Media, when set, is the
// message (with Text as its caption); else Template, for gateways that
// send cloud templates (Text may then hold the rendered text, for a
// gateway without templates); else Text. Providers read them in that
// order.
type ChatMessage struct {
	// Gateway is the gateway to use first: GatewayCloud or GatewayQR (the
	// channel resolves GatewayAuto in Prepare). Failover records the other.
	Gateway ChatGateway
	// Auto reports whether the request asked for GatewayAuto, allowing a
	// failover to the other gateway.
	Auto bool
	// Fallback reports, under Auto, that the other gateway is configured
	// and can carry the content: only then does the Notifier keep the
	// request for a failover after a late failure (Message.Resend).
	Fallback bool
	Type     ChatType
	// Text is the message body, or the caption of Media.
	Text string
	// OTP is the code of an OTP message, if any.
	OTP      string
	Template *ChatTemplate
	Media    *ChatMedia
}

// ChatTemplate is a cloud-channel template message: the approved
// template's name and language and the values of its variables. A
// template takes either positional parameters (Params) or named ones
// (NamedParams), as it was approved; giving both is an error of the
// provider.
type ChatTemplate struct {
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
	Buttons []TemplateButton
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

// TemplateButton is the value of one button of a template.
type TemplateButton struct {
	Kind ButtonKind
	// Index is the button's position in the template, 0 to 9.
	Index int
	// Value is the URL suffix, the quick-reply payload or the code.
	Value string
}

// ChatMedia is a file sent by URL.
type ChatMedia struct {
	// URL is a public HTTPS URL, already checked by the channel.
	URL      string
	Kind     MediaKind
	FileName string
	// MIMEType is the type expected from the file name, such as
	// application/pdf.
	MIMEType string
}

// Result is what a provider reports for an accepted message.
type Result struct {
	// Provider names the provider that accepted the message; the Notifier
	// fills it with Provider.Name() when a channel leaves it empty.
	Provider string
	// ProviderMessageID is the provider's ID of the message. Required.
	ProviderMessageID string
	// Gateway is the chat gateway that delivered, for chat messages.
	Gateway ChatGateway
	// Note explains anything the caller should know, such as a failover.
	Note string
}

// Status is the outcome of a send.
type Status string

// The statuses.
const (
	// StatusSent: the provider accepted the message.
	StatusSent Status = "sent"
	// StatusFailed: the message was not accepted, and any charge was
	// refunded; or, on a record's receipt, a delivery report failed it
	// after acceptance (Message.Refunded says whether the charge came
	// back).
	StatusFailed Status = "failed"
	// StatusUnknown: the vendor may have the message (see
	// CodeOutcomeUnknown); the charge stands until a delivery report or an
	// operator settles it.
	StatusUnknown Status = "unknown"
)

// Receipt records one send. The Notifier returns it, keeps it in the
// delivery log and passes it to observers; receipts are shared, so treat
// them as read-only.
type Receipt struct {
	// MessageID is the message's UUID.
	MessageID string
	Account   string
	Kind      Kind
	// To is the normalised recipient.
	To     string
	Status Status
	// Provider and ProviderMessageID identify the message at the provider.
	Provider          string
	ProviderMessageID string
	// Gateway is the chat gateway that delivered, for chat messages.
	Gateway ChatGateway
	// Note explains a failover or anything else worth knowing.
	Note string
	// Units is the number of billable units (SMS segments, otherwise 1).
	Units int
	// Cost is what stays charged: the price on success (the cheaper
	// gateway's, after a chat failover to it) and on an unknown outcome;
	// zero on failure (the charge was refunded) and for unmetered sending.
	// When a refund itself failed, Cost is the price still held and Error
	// says so; a record's receipt after a failure a delivery report brought
	// keeps the charge when the refund policy kept it.
	Cost Money
	// Balance is the wallet balance after the send; Metered is false when
	// no wallet is configured, and Balance is then zero.
	Balance Money
	Metered bool
	// Attempts counts provider attempts (retries included).
	Attempts int
	// ErrorCode and Error describe the failure of a failed send, or why the
	// outcome of an unknown one is not known.
	ErrorCode Code
	Error     string
	Domain    string
	// IdempotencyKey is the request's key, if any.
	IdempotencyKey string
	CreatedAt      time.Time
	// Legs holds one receipt per channel for the dual-channel OTP
	// (Kind KindOTP), SMS first.
	Legs []*Receipt
}

// Balance is an account's wallet balance.
type Balance struct {
	Account string
	// Name is the account's name; the Notifier fills it in.
	Name      string
	Available Money
}
