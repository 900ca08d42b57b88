package notify

import "github.com/notifykit/notify/store"

// MessageState is where a message's durable record stands
// (store.State, whose doc draws the state machine, store.CanMove).
type MessageState = store.State

// The message states.
const (
	StatePending    = store.StatePending
	StateAttempting = store.StateAttempting
	StateSent       = store.StateSent
	StateFailed     = store.StateFailed
	StateUnknown    = store.StateUnknown
	StateDelivered  = store.StateDelivered
	StateRead       = store.StateRead
	// StateRefused is no record's state: it is the state of an Event of a
	// send a limit refused before anything was charged or recorded
	// (WithRateLimit, WithOTPThrottle).
	StateRefused MessageState = "refused"
)

// StateChange is one step of a record's history (store.StateChange).
type StateChange = store.StateChange

// Message is the durable record of one message: what was sent to whom,
// what it cost, and where it stands (store.Record, which documents each
// field). Notifier.Message reads one.
type Message = store.Record

// receiptStatus is the receipt status of a record in state s.
func receiptStatus(s MessageState) MessageState {
	switch s {
	case StateSent, StateDelivered, StateRead:
		return StateSent
	case StateFailed:
		return StateFailed
	case StateQueued, StateScheduled:
		return s
	}
	return StateUnknown
}

// ReceiptOf returns the receipt of the record m as the Notifier reports
// it. Its Balance is zero: a record does not keep the balance of the
// moment.
func ReceiptOf(m *Message) *Receipt {
	return &Receipt{
		MessageID:         m.ID,
		Account:           m.Account,
		Kind:              m.Kind,
		To:                m.To,
		Country:           m.Country,
		Status:            receiptStatus(m.State),
		Provider:          m.Provider,
		ProviderMessageID: m.ProviderMessageID,
		Gateway:           m.Gateway,
		Note:              m.Note,
		Units:             m.Units,
		Cost:              m.Cost(),
		Metered:           m.Metered,
		Attempts:          m.Attempts,
		Tried:             m.Tried,
		ErrorCode:         Code(m.ErrorCode),
		Error:             m.Error,
		Domain:            m.Domain,
		IdempotencyKey:    m.IdempotencyKey,
		CreatedAt:         m.CreatedAt,
		SendAt:            m.SendAt,
		Fallback:          m.Fallback,
	}
}
