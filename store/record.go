package store

import (
	"context"
	"slices"
	"time"
)

// Kind names a channel: what sort of message a request asks for
// (notify.Kind). Each channel package names its own: "sms", "chat",
// "email", "otp" for the dual OTP's combined receipt.
type Kind string

// PriceClass is the commercial category of a message: transactional
// messages (OTPs, receipts, alerts) and promotional ones are priced apart
// (notify.Transactional, notify.Promotional).
type PriceClass string

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
// or at Record.SendAt (scheduled); nothing has gone to a vendor. A
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

// Attempt is one call of a provider for a message, as Record.Tried lists
// them.
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

// Record is the durable record of one message: what was sent to whom,
// what it cost, and where it stands. Stores return copies the caller may
// keep.
type Record struct {
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
	// one is confirmed in time (notify.Notifier.SendWithFallback): a
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
func (m *Record) Cost() Money {
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
func (m *Record) Entered(s State) bool {
	return slices.ContainsFunc(m.History, func(c StateChange) bool { return c.State == s })
}

// Moved is what Ledger.Move answers: where the record stands after the
// call, without the rest of the record, which few callers need (they read
// it with Ledger.Message).
type Moved struct {
	// State is the record's state: u.State after a move, the state
	// further along after a backfilled step, the state that stands on
	// ErrConflict.
	State State
	// Charge is what the record charged, after any reprice; Refunded
	// reports that it was credited back.
	Charge   Money
	Refunded bool
	// UpdatedAt is when the record last moved.
	UpdatedAt time.Time
}

// Cost is what stays charged for the message: zero once it was refunded,
// the charge otherwise.
func (m Moved) Cost() Money {
	if m.Refunded {
		return Money{Currency: m.Charge.Currency}
	}
	return m.Charge
}

// Update moves a record to State at At, setting the fields it
// carries; empty fields leave the record's values as they are.
type Update struct {
	State State
	// From, when set, makes the move conditional on the record standing
	// in From: from any other state the move is ErrConflict and changes
	// nothing (no backfill either). A cancel of a queued record uses it,
	// so that it never fails a record a worker took meanwhile (an
	// attempting record may move to failed too).
	From              State
	At                time.Time
	Provider          string
	ProviderMessageID string
	Gateway           string
	Attempts          int
	ErrorCode         string
	Error             string
	VendorCode        string
	Note              string
	// Tried, when not nil, replaces the record's Tried.
	Tried []Attempt
	// KeepCharge, on a move into StateFailed, keeps the charge instead of
	// refunding it (a failure reported after the vendor billed the
	// message).
	KeepCharge bool
	// Reprice, on a move into StateSent, lowers the record's Charge to it
	// when it is lower (zero included), and credits the difference back
	// under ref AdjustRefPrefix + id in the same step: a chat message that fell
	// over to a cheaper gateway costs what that gateway costs, and a later
	// refund gives back only that. Nil or negative: the charge stays (see
	// Repricing). A Reprice in another currency than a positive charge is
	// ErrInvalid, and the move does not happen (see RepriceMismatch).
	Reprice *Money
}

// Repricing reports whether u asks to lower a record's charge: a move
// into StateSent with a Reprice of zero or more.
func (u Update) Repricing() bool {
	return u.State == StateSent && u.Reprice != nil && u.Reprice.Minor >= 0
}

// RepriceMismatch reports whether u reprices a positive charge in another
// currency than the charge's, which a Ledger refuses with ErrInvalid.
func (u Update) RepriceMismatch(charge Money) bool {
	return u.Repricing() && charge.Minor > 0 && !u.Reprice.Currency.Same(charge.Currency)
}

// The refs under which a Ledger moves a record's money after its opening
// debit (whose ref is the message ID itself): RefundRefPrefix + ID for the
// refund of a move into StateFailed, AdjustRefPrefix + ID for the credit
// of an Update.Reprice. A wallet's history shows them (notify's admin
// API lists them), so every Ledger writes these and no others.
const (
	RefundRefPrefix = "refund:"
	AdjustRefPrefix = "adjust:"
)

// Ledger keeps the money of each account and the durable record of every
// message, and moves them together: a record and its charge are written
// in one atomic step, and so are a failure and its refund, so that a crash
// at any point leaves a record that says what happened and what it cost.
// It is the one store a Notifier cannot do without (notify.New takes it).
// memstore.Ledger keeps everything in memory; pgstore.Store keeps it in
// PostgreSQL, each move one transaction. storetest.RunLedger is its
// conformance suite.
//
// Amounts are in the account's currency; another currency is
// ErrInvalid. Methods are safe for concurrent use and do not retain
// their arguments, but for the record Open takes; records they return are
// copies the caller may keep.
type Ledger interface {
	// Balance returns the account's balance; an account without a
	// wallet is ErrNotFound.
	Balance(ctx context.Context, account string) (Balance, error)

	// Credit adds amount (> 0) to the account's wallet under ref
	// (non-empty, else ErrInvalid): top-ups (the Notifier's refunds
	// and price cuts are made by Move, with the record). A ref already recorded with the same amount returns the balance
	// recorded with it and moves no money, so a retried call never credits
	// twice; the same ref with another amount is ErrConflict. A credit that
	// would overflow int64 fails and moves nothing. An account without a
	// wallet is ErrNotFound.
	Credit(ctx context.Context, account string, amount Money, ref string) (Balance, error)

	// Open writes m as a new record in m.State, with m.History set to its
	// steps at m.CreatedAt: StatePending (the zero State too) is one step;
	// StateAttempting, for a send whose vendor call follows at once, is
	// two, pending then attempting, so that the send needs one write fewer
	// (see OpenStates). StateQueued and StateScheduled, for a record a
	// queue opens with its job, are one step. Any other state is
	// ErrInvalid. The record keeps m.SendAt, m.Payload, m.Fallback,
	// m.Follows and m.Confirm. When m.Charge
	// is positive, Open also debits
	// it from m.Account's wallet under ref m.ID, as one atomic step: the
	// record exists if and only if the money moved. It returns the balance
	// after the debit (zero without a charge: an unmetered send needs no
	// wallet). A short wallet is
	// ErrInsufficientFunds, a missing wallet ErrNotFound, another currency
	// ErrInvalid, a record of the ID already there ErrConflict; then
	// nothing is written. Any other error leaves the outcome unknown: the
	// record and its debit are both there or both missing.
	//
	// Open takes m: a store may keep it as the record rather than a copy
	// (memstore does, which saves each send a copy of the record), so the
	// caller must not use or change m after the call, whatever it answers.
	Open(ctx context.Context, m *Record) (Balance, error)

	// Move moves the account's record id to u.State when CanMove allows it
	// from the record's current state, appends the step to its history
	// and sets u's fields; a move into StateFailed of a record with a
	// charge credits the charge back under ref RefundRefPrefix + id in the same
	// atomic step and sets Refunded, unless u.KeepCharge; a move into
	// StateSent with u.Reprice lowers the charge as Update.Reprice
	// says, in the same step. It answers where the record stands after
	// the move. When CanMove forbids the move but CanBackfill allows it and
	// the history has no step in u.State yet, Move adds that step, before
	// the first step of a state further along, and changes nothing else:
	// the answer's State then differs from u.State. Any other move is
	// ErrConflict and changes nothing, and its Moved is where the record
	// stands (so a caller learns who moved it first); a missing record is
	// ErrNotFound.
	Move(ctx context.Context, account, id string, u Update) (Moved, error)

	// Message returns the account's record id, or ErrNotFound: a record of
	// another account is ErrNotFound too.
	Message(ctx context.Context, account, id string) (*Record, error)

	// ByKey returns the account's records opened with idempotency key key
	// at or after since, oldest first.
	ByKey(ctx context.Context, account, key string, since time.Time) ([]*Record, error)

	// ByProviderID returns the records of any account that provider
	// accepted under its message ID id, oldest first (several when one
	// vendor request carried several recipients). Delivery reports find
	// their records through it.
	ByProviderID(ctx context.Context, provider, id string) ([]*Record, error)

	// Stale returns up to limit records of any account in an open state
	// (pending or attempting) that last moved before cutoff, least
	// recently moved first.
	Stale(ctx context.Context, cutoff time.Time, limit int) ([]*Record, error)

	// Attempting reports whether provider has a record, of any account,
	// in StateAttempting that last moved at or after since: a send of its
	// in flight, which the vendor may have accepted already although the
	// record has no vendor ID yet. Provider is the record's as it stands
	// (the one Prepare chose; a move out of attempting may change it).
	// Notifier.Report asks it for a report named by a vendor ID that no
	// record has (one that outran the move to sent that records the ID),
	// with since the settle threshold ago, so every such report asks:
	// it must read an index of the attempting records or a count kept
	// beside them, never scan every record. False, nil when there is
	// none.
	Attempting(ctx context.Context, provider string, since time.Time) (bool, error)

	// OpenRequest writes r, the record of a Composite or Bulk request
	// sent with an idempotency key, before the first of its parts is
	// opened: its parts' message IDs in order, so that a repeat of the key
	// after the process died answers the whole request's receipt (see
	// RequestByKey). A record of r.ID already there is ErrConflict. Stores
	// keep request records as long as message records.
	OpenRequest(ctx context.Context, r *RequestRecord) error

	// RequestByKey returns the account's newest request record with
	// idempotency key key opened at or after since, or ErrNotFound.
	RequestByKey(ctx context.Context, account, key string, since time.Time) (*RequestRecord, error)
}

// RequestRecord is the durable record of a request with several parts (a
// Composite or Bulk request): which messages it made, in order. Its ID is
// the MessageID of the request's combined receipt.
type RequestRecord struct {
	ID      string
	Account string
	// Kind is the request's kind ("otp", otp.Kind, for the dual OTP).
	Kind Kind
	// Bulk reports a Bulk request (one content to many recipients) rather
	// than a Composite one; their receipts are combined differently.
	Bulk bool
	// IdempotencyKey is the request's key; stores index it.
	IdempotencyKey string
	// Parts are the message IDs of the parts, in the request's order; an
	// empty ID is a part that was not sent (its channel not configured).
	Parts     []string
	CreatedAt time.Time
}
