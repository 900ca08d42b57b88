package notify

import "context"

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
)

// String returns "accepted", "sent" or "failed".
func (t EventType) String() string {
	switch t {
	case EventAccepted:
		return "accepted"
	case EventSent:
		return "sent"
	case EventFailed:
		return "failed"
	}
	return "unknown"
}

// Event describes a delivery event. Envelope carries message content (OTP
// codes included): observers must not log it whole.
type Event struct {
	Type     EventType
	Envelope *Envelope
	// Receipt is set for EventSent and EventFailed.
	Receipt *Receipt
	// Err is the failure, for EventFailed.
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
