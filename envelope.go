package notify

import (
	"time"

	"github.com/notifykit/notify/record"
)

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
	// Kind is the channel kind; Content is of that channel's type.
	Kind Kind
	// Account is the sending account.
	Account *Account
	// To is the normalised recipient, in the channel's form: an E.164
	// number ("+919876543210"), an e-mail address, a URL.
	To string
	// Country is the ISO 3166-1 alpha-2 code of the recipient's country
	// ("IN"), set by channels that send to phone numbers; prices may
	// depend on it. Empty otherwise.
	Country string
	// Provider is the name of the provider the channel chose in Prepare;
	// per-provider timeouts are looked up by it.
	Provider string
	// Providers, when the channel offers the message more than one
	// provider, names them in its order of preference, Provider first.
	// The Notifier then calls the next (as a copy of the envelope whose
	// Provider names it) after a certain, temporary refusal of one, never
	// after an unknown outcome, skipping those whose circuit breaker is
	// open (WithBreaker); a Channel's Deliver must send to env.Provider.
	// Nil: Provider only.
	Providers []string
	// Units is the number of billable units: SMS segments, e-mail
	// recipients (to, cc and bcc), otherwise 1.
	Units int
	// Class is the price class of the content.
	Class record.PriceClass
	// Price is what the message costs; zero when unmetered.
	Price Money
	// Domain is the calling application's domain, recorded with the message.
	Domain string
	// Category is the account's category the request names (a request's
	// category field): the Notifier sends the message only to a recipient
	// whose preferences take it on the channel (store.Preferences). Empty:
	// no category, no preference read.
	Category string
	// IdempotencyKey is the request's key, if any.
	IdempotencyKey string
	// CarriesOTP reports that the message carries a one-time code: the SMS
	// otp route, a chat OTP, e-mail of purpose otp or that declares its
	// code (email.Request.OTP), or any template rendered with an OTP
	// variable.
	// Channels set it; the Notifier's OTP throttle counts these messages.
	CarriesOTP bool
	// Window, when set, returns the first instant at or after now at
	// which the message may go: its channel's send window (package
	// sendwindow; promotional SMS to India from 09:00 to 21:00 IST). A
	// message due later is scheduled on the queue for then (or, without
	// a queue, refused CodeRateLimited with the wait as RetryAfter); one
	// that carries a one-time code is never held. Nil: any time.
	Window func(now time.Time) time.Time
	// Localized, when set, returns a copy of the message's request that
	// names locale, a canonical BCP 47 tag. A channel sets it on a message
	// it rendered from a template with variants (Rendered.Varies) for a
	// request that named no locale and nothing the wording is pinned by
	// (a DLT template ID, a chat language): the Notifier then reads the
	// recipient's stored locale (store.Preferences.Locales) and, when
	// there is one, prepares and sends that copy in the message's place,
	// its payload queued in that locale. Nil: no locale can change the
	// message. The Notifier clears it once read.
	Localized func(locale string) Request

	// Route is the way within its channel the channel chose for the
	// message, in the channel's words, which its price depends on: the
	// SMS route, the chat gateway, the e-mail purpose. Empty when the
	// channel has one way.
	Route string
	// Resend is what the record keeps so that the channel can send the
	// message again after a delivery report fails it (ReportHandler):
	// the channel's own encoding, nil for none. It must carry no secret,
	// one-time codes included.
	Resend []byte

	// Content is the message itself, in the channel's own type:
	// *sms.Message, *chat.Message, *email.Message, or a type of your own
	// channel's. Providers type-assert it to the content they send.
	Content any
}

// Result is what a provider reports for an accepted message.
type Result struct {
	// Provider names the provider that accepted the message; the Notifier
	// fills it with Provider.Name() when a channel leaves it empty.
	Provider string
	// ProviderMessageID is the provider's ID of the message. Required.
	ProviderMessageID string
	// Route names the way within the channel that took the message, when
	// the provider or channel names one (the chat gateway); receipts and
	// records show it as Gateway. When it differs from the Envelope's
	// Route (a chat failover to the other gateway) the Notifier prices the
	// message again for it and keeps the lower price.
	Route string
	// Note explains anything the caller should know, such as a failover.
	Note string
}

// Receipt records one send. The Notifier returns it and passes it to
// observers; receipts are shared, so treat
// them as read-only.
type Receipt struct {
	// MessageID is the message's UUID.
	MessageID string
	Account   string
	Kind      Kind
	// To is the normalised recipient: an E.164 number for SMS and chat.
	To string
	// Country is the ISO 3166-1 alpha-2 code of the recipient's country,
	// for a phone number; empty otherwise.
	Country string
	Status  record.State
	// Provider and ProviderMessageID identify the message at the provider.
	Provider          string
	ProviderMessageID string
	// Gateway is the route within the channel that carried the message,
	// when a provider named it (the chat gateway).
	Gateway string
	// Note explains a failover or anything else worth knowing.
	Note string
	// Units is the number of billable units (SMS segments, e-mail
	// recipients, otherwise 1).
	Units int
	// Cost is what stays charged: the price on success (the cheaper
	// gateway's, after a chat failover to it) and on an unknown outcome;
	// zero on failure (the charge was refunded) and for unmetered sending.
	// When a refund itself failed, Cost is the price still held and Error
	// says so; a record's receipt after a failure a delivery report brought
	// keeps the charge when the refund policy kept it.
	Cost Money
	// Balance is the wallet balance after the send; Metered is false when
	// sending is unmetered (no WithPrices), and Balance is then zero.
	Balance Money
	Metered bool
	// Attempts counts provider attempts (retries included).
	Attempts int
	// Tried lists the provider calls, in order, when the channel offered
	// the message more than one provider (Envelope.Providers): each
	// refusal that sent it on to the next, and the call that settled it.
	// Nil otherwise.
	Tried []record.Attempt
	// ErrorCode and Error describe the failure of a failed send, or why the
	// outcome of an unknown one is not known.
	ErrorCode Code
	Error     string
	Domain    string
	// IdempotencyKey is the request's key, if any.
	IdempotencyKey string
	CreatedAt      time.Time
	// SendAt is when a scheduled message is due (StateScheduled, from
	// queued.Sender.SendAt); zero otherwise.
	SendAt time.Time
	// Fallback is the ID of the message scheduled to follow this one
	// unless it is confirmed in time (queued.Sender.SendWithFallback); empty
	// otherwise.
	Fallback string
	// Legs holds one receipt per channel for the dual-channel OTP
	// (Kind "otp", otp.Kind), SMS first.
	Legs []*Receipt
}
