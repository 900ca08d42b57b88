package record

import "time"

// Kind names a channel: what sort of message a request asks for
// (notify.Kind). Each channel package names its own: "sms", "chat",
// "email", "otp" for the dual OTP's combined receipt.
type Kind string

// PriceClass is the commercial category of a message: transactional
// messages (OTPs, receipts, alerts) and promotional ones are priced apart
// (Transactional, Promotional).
type PriceClass string

// The price classes.
const (
	Transactional PriceClass = "transactional"
	Promotional   PriceClass = "promotional"
)

// State is where a message's durable record stands. A record moves
// only forward, along the edges CanMove allows, but for one step back
// while nothing is in flight:
//
//	queued, scheduled ──> attempting (a worker takes it) | failed (canceled)
//	         ^                    │
//	         └────────────────────┘ (a queue retry)
//	pending <─> attempting ──> sent ──> delivered ──> read
//	   │            │  │        │  └───────────────────^
//	   │            │  │        └─────> failed (reported)
//	   │            │  └─────> unknown ──> sent | delivered | read | failed
//	   └────────────┴────────> failed
//
// queued and scheduled: written, and charged when metered, in one step
// with a job on a queue (package queue), which a worker runs now (queued)
// or at Message.SendAt (scheduled); nothing has gone to a vendor. A
// worker claims the record by moving it to attempting, so no two send it;
// a cancel moves it to failed, refunded, while no worker has. After a
// certain, temporary refusal a worker may move it back to queued, charge
// held, to try again later.
//
// pending: written, and charged when metered, in one step; the vendor has
// not been called, or has certainly refused every call so far and the
// Notifier waits to try again (attempting goes back to pending for that
// wait, so that a process dying in it leaves a record the reconciler
// refunds). attempting: written before each vendor call; the vendor may
// have the message from here on. sent: a vendor accepted it.
// failed: certainly not accepted, or reported undelivered after it was;
// the charge was refunded in the same step unless the refund policy kept
// it (Message.Refunded says which). unknown: the vendor may have it; the
// charge stands until a delivery report or an operator settles it.
// delivered and read: the vendor's delivery reports (Notifier.Report) say
// the message reached the recipient, and that the recipient read it.
type State string

// The message states.
const (
	StatePending    State = "pending"
	StateAttempting State = "attempting"
	StateSent       State = "sent"
	StateFailed     State = "failed"
	StateUnknown    State = "unknown"
	StateDelivered  State = "delivered"
	StateRead       State = "read"
	StateQueued     State = "queued"
	StateScheduled  State = "scheduled"
)

// States returns every state, in the order a message meets them,
// in a new slice.
func States() []State {
	return []State{StateQueued, StateScheduled, StatePending, StateAttempting, StateSent, StateUnknown,
		StateDelivered, StateRead, StateFailed}
}

// CanMove reports whether a record may move from state from to state to.
// It is the one definition of the state machine: every Ledger
// applies it, under the record's lock, to every Move.
func CanMove(from, to State) bool {
	switch from {
	case StatePending, StateQueued, StateScheduled:
		return to == StateAttempting || to == StateFailed
	case StateAttempting:
		return to == StateSent || to == StateFailed || to == StateUnknown || to == StatePending || to == StateQueued
	case StateUnknown:
		return to == StateSent || to == StateDelivered || to == StateRead || to == StateFailed
	case StateSent:
		return to == StateDelivered || to == StateRead || to == StateFailed
	case StateDelivered:
		return to == StateRead
	}
	return false
}

// CanBackfill reports whether a report of state to that reaches a record
// already further along, in state from, is kept as a step of the record's
// history without moving it: a delivered report after the read one (the
// vendor's reports arrive out of order), or a sent one after either. A
// record keeps such a step once, and never goes back.
func CanBackfill(from, to State) bool {
	return deliveryRank(to) > 0 && deliveryRank(to) < deliveryRank(from)
}

// deliveryRank orders the states of an accepted message: sent, delivered,
// read; zero for the others.
func deliveryRank(s State) int {
	switch s {
	case StateSent:
		return 1
	case StateDelivered:
		return 2
	case StateRead:
		return 3
	}
	return 0
}

// Open reports whether s is a state a live send passes through (pending or
// attempting): a record that stays in one longer than a send can take was
// left by a holder that died, and Notifier.Reconcile settles it.
func (s State) Open() bool { return s == StatePending || s == StateAttempting }

// Waiting reports whether s is a state of a record on a queue (queued or
// scheduled): charged, not yet sent, and left alone by the reconciler,
// since a job will take it. A store keeps such a record, with its
// Payload, however long it waits.
func (s State) Waiting() bool { return s == StateQueued || s == StateScheduled }

// Live reports whether a record in s may still be sent: open or
// waiting. A record keeps its Payload while it is live; a move out of the
// live states clears it.
func (s State) Live() bool { return s.Open() || s.Waiting() }

// OpenStates returns the state and the history of a record that
// Ledger.Open writes when asked for state st at time at, or ok false when
// Open may not start a record in st: StatePending (or the zero State) is
// one step, StateAttempting two, pending then attempting; StateQueued and
// StateScheduled, a record a queue opens with its job, one step each. It
// is the one rule of which states a record starts in, for stores to
// follow. The history has room for the steps a send adds after it.
func OpenStates(st State, at time.Time) (state State, history []StateChange, ok bool) {
	history = make([]StateChange, 1, 4)
	history[0] = StateChange{State: StatePending, At: at}
	switch st {
	case "", StatePending:
		return StatePending, history, true
	case StateAttempting:
		return StateAttempting, append(history, StateChange{State: StateAttempting, At: at}), true
	case StateQueued, StateScheduled:
		history[0].State = st
		return st, history, true
	}
	return "", nil, false
}

// StateChange is one step of a record's history.
type StateChange struct {
	State State
	At    time.Time
}
