package store

import (
	"context"
	"time"

	"github.com/notifykit/notify/record"
)

// Moved is what Ledger.Move answers: where the record stands after the
// call, without the rest of the record, which few callers need (they read
// it with Ledger.Message).
type Moved struct {
	// State is the record's state: u.State after a move, the state
	// further along after a backfilled step, the state that stands on
	// ErrConflict.
	State record.State
	// Charge is what the record charged, after any reprice; Refunded
	// reports that it was credited back.
	Charge   record.Money
	Refunded bool
	// UpdatedAt is when the record last moved.
	UpdatedAt time.Time
	// Balance is the account's balance right after the move, when the
	// move itself moved money (a refund, a reprice's credit) and the
	// store answers it with the move, as memstore and pgstore do; zero
	// (no currency) otherwise, when the caller reads the wallet if it
	// needs it.
	Balance record.Money
}

// Update moves a record to State at At, setting the fields it
// carries; empty fields leave the record's values as they are.
type Update struct {
	State record.State
	// From, when set, makes the move conditional on the record standing
	// in From: from any other state the move is ErrConflict and changes
	// nothing (no backfill either). A cancel of a queued record uses it,
	// so that it never fails a record a worker took meanwhile (an
	// attempting record may move to failed too).
	From              record.State
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
	Tried []record.Attempt
	// KeepCharge, on a move into StateFailed, keeps the charge instead of
	// refunding it (a failure reported after the vendor billed the
	// message).
	KeepCharge bool
	// Reprice, on a move into StateSent, lowers the record's Charge to it
	// when it is lower (zero included), and credits the difference back
	// under ref AdjustRefPrefix + id in the same step: a chat message that fell
	// over to a cheaper gateway costs what that gateway costs, and a later
	// refund gives back only that. Nil or negative: the charge stays (see
	// storeutil.Repricing). A Reprice in another currency than a positive charge is
	// ErrInvalid, and the move does not happen (see storeutil.RepriceMismatch).
	Reprice *record.Money
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
// ErrInvalid. Every ability the Notifier uses is a method of this
// interface, never found by a type assertion: a wrapper that embeds a
// Ledger forwards them all. Methods are safe for concurrent use and do not retain
// their arguments, but for the record Open takes; records they return are
// copies the caller may keep.
type Ledger interface {
	// Balance, Credit and Statement are the wallet's, as a host app sees
	// it: notify.WalletStore, whose contract is written there. Credit is
	// for top-ups; the Notifier's refunds and price cuts are made by
	// Move, with the record.
	Balance(ctx context.Context, account string) (record.Balance, error)
	Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)
	Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error)

	// The suppression list the Notifier enforces before it charges a
	// send, and to which it adds a provider's hard bounces (Bounce). It
	// is part of the contract rather than an optional interface, so that
	// a ledger wrapped for logging or metrics (a struct embedding a
	// Ledger) keeps it: a list a wrapper hid would let mail through to
	// someone who opted out, and nothing would say so.
	Suppressions

	// The categories and the recipients' choices of them, which the
	// Notifier reads before it charges a send that names a category; a
	// contract's part for the same reason as the list.
	Preferences

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
	Open(ctx context.Context, m *record.Message) (record.Balance, error)

	// OpenUnlisted is Open, unless the account's suppression list of
	// m.Kind holds to (a recipient in the list's form, as
	// LookupSuppression takes it) with a reason among stopping: then it
	// writes and charges nothing, takes nothing of m, and answers that
	// entry, whose Reason is set only then. It is the list's read and
	// the opening in one step: a database makes them one statement, so
	// that a send pays one round trip for both. to is checked as
	// LookupSuppression checks it (a recipient the list's rules refuse
	// can have no entry), stopping must hold valid reasons (else
	// ErrInvalid); an entry written while the call runs may be seen or
	// not, as with a read before Open. Its other answers are Open's.
	// storeutil.OpenUnlisted makes it of a ledger's LookupSuppression
	// and Open, for a store without one statement for both; a wrapper
	// that overrides Open to watch the openings overrides OpenUnlisted
	// too (storeutil.OpenUnlisted over the wrapper routes it through the
	// wrapper's Open).
	OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []SuppressionReason) (record.Balance, Suppression, error)

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
	Message(ctx context.Context, account, id string) (*record.Message, error)

	// ByKey returns the account's records opened with idempotency key key
	// at or after since, oldest first.
	ByKey(ctx context.Context, account, key string, since time.Time) ([]*record.Message, error)

	// ByProviderID returns the records of any account that provider
	// accepted under its message ID id, oldest first (several when one
	// vendor request carried several recipients). Delivery reports find
	// their records through it.
	ByProviderID(ctx context.Context, provider, id string) ([]*record.Message, error)

	// Stale returns up to limit records of any account in an open state
	// (pending or attempting) that last moved before cutoff, least
	// recently moved first.
	Stale(ctx context.Context, cutoff time.Time, limit int) ([]*record.Message, error)

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
	Kind record.Kind
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
