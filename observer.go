package notify

import (
	"context"
	"strconv"
)

// EventType says what happened to a message.
type EventType int

// The event types, in the order a message meets them.
const (
	// EventAccepted: the message was prepared and charged and is about to
	// be delivered.
	EventAccepted EventType = iota + 1
	// EventSent: a provider accepted the message.
	EventSent
	// EventFailed: the message failed for good; its charge was refunded,
	// unless a delivery report failed it after acceptance and the refund
	// policy kept the charge (Receipt.Cost says which).
	EventFailed
	// EventUnknown: the vendor may have the message (CodeOutcomeUnknown);
	// the charge stands.
	EventUnknown
	// EventDelivered: a delivery report says the message reached the
	// recipient (Notifier.Report).
	EventDelivered
	// EventRead: a delivery report says the recipient read the message.
	EventRead
	// EventRefused: a limit refused the send before anything was charged
	// or sent (WithRateLimit, WithOTPThrottle). Err is the *Error with
	// CodeRateLimited, whose cause is ErrRateLimited or ErrOTPThrottled
	// (errors.Is tells which); Receipt has the request's Kind (KindOTP for
	// a dual OTP), Account and To (empty for a bulk send), Status
	// StatusFailed and no MessageID, since no message was made; it is not
	// recorded in the delivery log. Envelope is the refused message, nil
	// for a dual OTP and a bulk send.
	EventRefused
)

// String returns "accepted", "sent", "failed", "unknown", "delivered",
// "read" or "refused".
func (t EventType) String() string {
	switch t {
	case EventAccepted:
		return "accepted"
	case EventSent:
		return "sent"
	case EventFailed:
		return "failed"
	case EventUnknown:
		return "unknown"
	case EventDelivered:
		return "delivered"
	case EventRead:
		return "read"
	case EventRefused:
		return "refused"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event describes a delivery event. Envelope carries message content (OTP
// codes included): observers must not log it whole.
//
// A Composite request (the dual OTP) gives each leg's events, with its envelope, and
// then one event for the combined receipt (Kind KindOTP), whose Envelope
// is nil.
//
// Events after the send come from Notifier.Report (Report set, Envelope
// nil): EventDelivered and EventRead, EventFailed for a message reported
// undelivered after its vendor accepted it (Receipt.Cost says whether the
// charge was kept), and EventSent for an unknown one reported sent.
// Notifier.Reconcile's events have a nil Envelope too, and so has the
// second EventFailed of a refused message whose refund the MessageStore
// failed at the time: it comes once the refund is written, from the
// goroutine that retried it, with the refund in Refund (the send's own
// EventFailed had none, its Receipt.Cost the charge standing).
//
// Money: an EventAccepted debited Envelope.Price; every later event says
// in Refund what it credited back, so that what a message costs in the
// end is Envelope.Price less the Refunds of its events.
type Event struct {
	Type EventType
	// Envelope is the message; nil for a dual OTP's combined receipt.
	Envelope *Envelope
	// Receipt is set for every event but EventAccepted.
	Receipt *Receipt
	// Report is the delivery report behind an event of Notifier.Report.
	Report *DeliveryReport
	// Err is the failure, for EventFailed, EventUnknown and EventRefused.
	Err error
	// Refund is what this event's step credited back to the account: the
	// charge of a send that failed (EventFailed with Receipt.Cost zero),
	// the price cut of a chat failover through a cheaper gateway
	// (EventSent), the charge of a message a delivery report failed when
	// the RefundPolicy refunds it, of a send Notifier.Reconcile found
	// abandoned before its vendor was called, or of a refused send whose
	// refund was written late (see "Events after the send" above). Zero
	// otherwise, and always for a dual OTP's combined receipt (its legs'
	// events carry theirs).
	Refund Money
}

// Observer receives delivery events, synchronously, on the goroutine of
// the step that made them (the send's, Report's, Reconcile's, or that of
// a refund written late): it must be quick, safe for concurrent use, and
// must not modify the event's envelope or receipt. A panicking observer
// is recovered and ignored.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer, as http.HandlerFunc does.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }
