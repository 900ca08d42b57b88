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
	// EventFailed: the message failed for good; any charge was refunded.
	EventFailed
	// EventUnknown: the vendor may have the message (CodeOutcomeUnknown);
	// the charge stands.
	EventUnknown
)

// String returns "accepted", "sent", "failed" or "unknown".
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
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event describes a delivery event. Envelope carries message content (OTP
// codes included): observers must not log it whole.
//
// A dual OTP (SendOTP) gives each leg's events, with its envelope, and
// then one event for the combined receipt (Kind KindOTP), whose Envelope
// is nil.
type Event struct {
	Type EventType
	// Envelope is the message; nil for a dual OTP's combined receipt.
	Envelope *Envelope
	// Receipt is set for EventSent, EventFailed and EventUnknown.
	Receipt *Receipt
	// Err is the failure, for EventFailed and EventUnknown.
	Err error
}

// Observer receives delivery events, synchronously, on the sending
// goroutine: it must be quick, safe for concurrent use, and must not modify
// the event's envelope or receipt. A panicking observer is recovered and
// ignored.
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer, as http.HandlerFunc does.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }
