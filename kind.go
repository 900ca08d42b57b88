package notify

// Kind names a channel: what sort of message a request asks for.
type Kind string

// The channel kinds. KindOTP names only the combined receipt of the
// dual-channel OTP (SendOTP); no Channel has that kind.
const (
	KindSMS   Kind = "sms"
	KindEmail Kind = "email"
	KindChat  Kind = "chat"
	KindOTP   Kind = "otp"
)

// SMSRoute is the route an SMS takes (the "route" field).
type SMSRoute string

// The SMS routes. The zero value means RouteSMS.
const (
	// RouteSMS is the default, non-DLT route: the message text is sent as is.
	RouteSMS SMSRoute = "sms"
	// RouteOTP sends a numeric code of 4-8 digits in the provider's OTP text.
	RouteOTP SMSRoute = "otp"
	// RouteDLT sends operator-registered (DLT) template text with its
	// template and entity IDs and a 6-character sender header.
	RouteDLT SMSRoute = "dlt"
)

// ChatGateway selects how a chat message travels (the "gateway" field).
type ChatGateway string

// The chat gateways. The zero value means GatewayAuto.
const (
	// GatewayAuto uses the account's primary chat gateway and, on a
	// temporary failure before acceptance, falls over to the other once.
	GatewayAuto ChatGateway = "auto"
	// GatewayCloud is the official cloud messaging API.
	GatewayCloud ChatGateway = "cloud"
	// GatewayQR is a QR-session gateway.
	GatewayQR ChatGateway = "qr"
)

// ChatType is the price class a chat message is sent at (the "type" field).
type ChatType string

// The chat types. The zero value means ChatOTP.
const (
	// ChatOTP is the transactional rate: OTPs, invoices and notifications.
	ChatOTP ChatType = "otp"
	// ChatPromotional is the promotional rate.
	ChatPromotional ChatType = "promotional"
)

// EmailPurpose selects the dedicated SMTP configuration and the price of an
// e-mail (the "purpose" field). The zero value uses the default SMTP
// configuration and the notification price.
type EmailPurpose string

// The e-mail purposes.
const (
	PurposeOTP          EmailPurpose = "otp"
	PurposeInvoice      EmailPurpose = "invoice"
	PurposeNotification EmailPurpose = "notification"
	PurposeCampaign     EmailPurpose = "campaign"
)

// PriceClass is the commercial category of a message: transactional
// messages (OTPs, receipts, alerts) and promotional ones are priced apart.
type PriceClass string

// The price classes.
const (
	Transactional PriceClass = "transactional"
	Promotional   PriceClass = "promotional"
)
