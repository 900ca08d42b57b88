package notify

import "github.com/notifykit/notify/store"

// Kind names a channel: what sort of message a request asks for. Each
// channel package names its own (sms.Kind is "sms", chat.Kind "chat",
// email.Kind "email"; otp.Kind "otp" names the dual OTP's combined
// receipt, which no Channel has); any package may define another.
type Kind = store.Kind

// PriceClass is the commercial category of a message: transactional
// messages (OTPs, receipts, alerts) and promotional ones are priced apart.
type PriceClass = store.PriceClass

// The price classes.
const (
	Transactional PriceClass = "transactional"
	Promotional   PriceClass = "promotional"
)
