package notify

// Kind names a channel: what sort of message a request asks for.
type Kind string

// The channel kinds. KindOTP names only the combined receipt of the
// dual-channel OTP (package channel/otp); no Channel has that kind.
const (
	KindSMS   Kind = "sms"
	KindEmail Kind = "email"
	KindChat  Kind = "chat"
	KindOTP   Kind = "otp"
)

// PriceClass is the commercial category of a message: transactional
// messages (OTPs, receipts, alerts) and promotional ones are priced apart.
type PriceClass string

// The price classes.
const (
	Transactional PriceClass = "transactional"
	Promotional   PriceClass = "promotional"
)
