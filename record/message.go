package record

import (
	"slices"
	"time"
)

// Attempt is one call of a provider for a message, as Message.Tried
// lists them.
type Attempt struct {
	// Provider names the provider called.
	Provider string
	// Outcome is StateSent (the provider accepted the message),
	// StateUnknown (it may have it) or StateFailed (it certainly has
	// not: ErrorCode says why).
	Outcome State
	// ErrorCode is the notify.Code of a refusal or an unknown outcome
	// ("unavailable", "rate_limited"); empty for an acceptance.
	ErrorCode string
	// At is when the call ended.
	At time.Time
}

// Message is the durable record of one message: what was sent to whom,
// what it cost, and where it stands. Stores return copies the caller may
// keep; the root package names it record.Message.
type Message struct {
	// ID is the message ID, also the wallet reference of its charge.
	ID      string
	Account string
	// Kind is the channel: sms, email or chat.
	Kind Kind
	// Request is the kind of request that sent it: Kind, or "otp"
	// (otp.Kind) for a leg of a dual OTP.
	Request Kind
	// To is the normalised recipient: an E.164 number for SMS and chat.
	To string
	// Country is the ISO 3166-1 alpha-2 code of the recipient's country,
	// for a phone number; empty otherwise.
	Country string
	State   State
	// Provider is the provider chosen in Prepare, then the one being
	// called (a failover to the next provider names it before the call),
	// then the one that accepted or may have the message (after a chat
	// failover, the second); ProviderMessageID is that provider's ID of
	// the message, which delivery reports find it by
	// (Ledger.ByProviderID).
	Provider          string
	ProviderMessageID string
	// Gateway is the chat gateway that delivered, for chat messages.
	Gateway string
	// IdempotencyKey is the request's key, if any; stores index it.
	IdempotencyKey string
	Domain         string
	Units          int
	// Metered reports that the send was priced and charged.
	Metered bool
	// Charge is what Open debited (zero when unmetered or free), lowered
	// by a move into sent with a Reprice.
	Charge Money
	// Attempts counts vendor attempts, retries included.
	Attempts int
	// Tried lists the provider calls in order, when the channel offered
	// the message more than one provider (failover): each refusal that
	// sent it on to the next, and the call that settled it. Nil when it
	// had one provider (Attempts says how often it was called).
	Tried []Attempt
	// ErrorCode (a notify.Code, such as "unavailable") and Error say why
	// a failed or unknown record is so; VendorCode is the vendor's own
	// error code from a delivery report (131047, say), when it gave one.
	ErrorCode  string
	Error      string
	VendorCode string
	Note       string
	// Resend is what is sent again through the QR gateway when a delivery
	// report says the cloud gateway failed for a reason it can overcome
	// (notify.DeliveryReport.Failover): the JSON of the chat.Request. It is kept
	// only for chat messages of chat.GatewayAuto sent first through the cloud
	// gateway whose content the QR gateway can carry and that carry no
	// one-time code (a code resent minutes later is of no use, and a
	// record must not keep one). Empty for every other message.
	Resend []byte
	// SendAt is when a scheduled record is due (StateScheduled); zero for
	// a record opened in any other state. It does not change.
	SendAt time.Time
	// Payload is the request a queued or scheduled record sends, as its
	// channel encoded it (notify.RequestCodec), for the worker that takes
	// it to decode. It may hold a one-time code, so a store keeps it only
	// while the record is live (State.Live) and drops it on the move that
	// settles the record; Ledger.Move never sets it. Nil for a record
	// opened in any other state.
	Payload []byte
	// Fallback is the ID of the message that follows this one unless this
	// one is confirmed in time (queued.Sender.SendWithFallback): a
	// scheduled record of the same account. Follows is, on that fallback,
	// the ID of the message it follows, and Confirm the state of that
	// message (delivered or read) that makes the fallback unneeded. Empty
	// on every other record; none of them changes.
	Fallback string
	Follows  string
	Confirm  State
	// Refunded reports that the charge was credited back, when the record
	// moved to failed (a failure reported after acceptance may keep it:
	// see notify.ReportHandler.Refund).
	Refunded bool
	// History lists the states the record entered, with when, oldest
	// first; the first entry is pending, or queued or scheduled for a
	// record a queue opened.
	History []StateChange
	// CreatedAt is when the record was opened; UpdatedAt when it last
	// moved.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Cost is what stays charged for the message: zero once it was refunded,
// the charge otherwise.
func (m *Message) Cost() Money {
	if m.Refunded {
		return Money{Currency: m.Charge.Currency}
	}
	return m.Charge
}

// Entered reports whether the record's history has a step in s. A
// history only grows, and no state a report brings (sent, delivered,
// read, failed) can be entered twice (CanMove) or backfilled once entered
// (CanBackfill), so a move into a state the record has entered changes
// nothing.
func (m *Message) Entered(s State) bool {
	return slices.ContainsFunc(m.History, func(c StateChange) bool { return c.State == s })
}
