package store

import (
	"context"
	"time"

	"github.com/notifykit/notify/record"
)

// SuppressionReason is why a recipient is on an account's suppression
// list.
type SuppressionReason string

// The suppression reasons. A hard bounce stops every message to the
// recipient; the others stop promotional messages only (the Notifier's
// rule, package notify).
const (
	// SuppressUnsubscribed: the recipient asked to receive no more
	// (one-click unsubscribe, an unsubscribe link).
	SuppressUnsubscribed SuppressionReason = "unsubscribed"
	// SuppressHardBounce: the recipient's server said the address does
	// not exist (an SMTP 5.1.x answer) or the number is dead.
	SuppressHardBounce SuppressionReason = "hard_bounce"
	// SuppressComplaint: the recipient reported a message as spam.
	SuppressComplaint SuppressionReason = "complaint"
	// SuppressManual: an operator added the recipient.
	SuppressManual SuppressionReason = "manual"
)

// rank orders the reasons by how much they stop: a hard bounce stops
// transactional messages too, so it must win over any other; among the
// rest, the recipient's own word (a complaint, then an unsubscribe)
// outranks an operator's.
func (r SuppressionReason) rank() int {
	switch r {
	case SuppressHardBounce:
		return 4
	case SuppressComplaint:
		return 3
	case SuppressUnsubscribed:
		return 2
	case SuppressManual:
		return 1
	}
	return 0
}

// Outranks reports whether r is a stronger reason than s: hard_bounce >
// complaint > unsubscribed > manual > any other, so that r is one of the
// four exactly when it outranks the empty reason. AddSuppression replaces an entry's
// reason only with one that outranks it.
func (r SuppressionReason) Outranks(s SuppressionReason) bool { return r.rank() > s.rank() }

// Suppression is one entry of an account's suppression list: messages of
// channel Kind to To are refused before they are charged.
type Suppression struct {
	// Account is the ID of the account whose list holds the entry.
	Account string
	// Kind is the channel: "sms", "chat", "email", "push" or a channel
	// of the host's own (SuppressibleKind).
	Kind record.Kind
	// To is the recipient in its channel's canonical form
	// (notify.Channel.Recipient), kept and compared as given.
	To string
	// Reason is why the recipient is suppressed.
	Reason SuppressionReason
	// At is when the entry took its Reason, in UTC at microsecond
	// precision.
	At time.Time
}

// The bounds of ListSuppressions' pages.
const (
	// DefaultSuppressionPage is the page size of a query whose Limit is 0.
	DefaultSuppressionPage = 100
	// MaxSuppressionPage is the largest Limit a query may ask.
	MaxSuppressionPage = 1000
)

// SuppressionQuery selects a page of an account's suppression list,
// ordered by Kind and then To (byte order), which never changes: page on
// by setting AfterKind and AfterTo to the last entry of the page before.
type SuppressionQuery struct {
	// Kind keeps only the entries of one channel; empty: every channel.
	Kind record.Kind
	// AfterKind and AfterTo start the page after this entry (which need
	// not exist); both empty: from the first entry.
	AfterKind record.Kind
	AfterTo   string
	// Limit is the most entries returned, 0 to MaxSuppressionPage; 0
	// means DefaultSuppressionPage.
	Limit int
}

// Check returns ErrInvalid naming the fields of q that break its rules:
// a Kind or AfterKind that is not a channel, a Limit out of range.
func (q SuppressionQuery) Check() error {
	var fe record.FieldErrors
	if q.Kind != "" && !SuppressibleKind(q.Kind) {
		fe.Add("channel", kindRule)
	}
	if q.AfterKind != "" && !SuppressibleKind(q.AfterKind) {
		fe.Add("after", "must start with a channel name")
	}
	if q.Limit < 0 || q.Limit > MaxSuppressionPage {
		fe.Add("limit", "must be 0 to 1000")
	}
	return InvalidFields(fe)
}

// Suppressions keeps each account's suppression list: at most one entry
// per account, channel and recipient. Methods are safe for concurrent
// use. Recipients arrive in their channel's canonical form
// (notify.Channel.Recipient: the Notifier, the admin API and unsubscribe
// links put them so, and so must any other writer, through
// notify.Notifier.Recipient), and a store keeps and compares them byte
// for byte: the channel, not the store, makes "Ann@Example.com" and
// "ann@example.com" one recipient. A store checks only the shape every
// form has (storeutil.CheckSuppression and its kin). An invalid
// account (empty), channel or recipient is ErrInvalid naming the field;
// a store that cannot answer returns ErrUnavailable. The lists of two
// accounts never meet.
//
// Every Ledger is one (memstore's and pgstore's keep the list beside the
// records): the list the Notifier enforces before it charges a send, and
// writes a provider's hard bounces to (see Bounce). storetest's
// RunSuppressions is its conformance suite.
type Suppressions interface {
	// AddSuppression puts e on its account's list, e.At in UTC at
	// microsecond precision, and answers the entry as the
	// list then holds it. It is idempotent: when the recipient is
	// already on the list, the entry keeps its reason and time unless
	// e.Reason outranks its reason (SuppressionReason.Outranks), and then
	// takes e's reason and time; so a second add with the same reason
	// changes nothing, and a hard bounce always lands. A reason not of
	// the four, or a zero At, is ErrInvalid.
	AddSuppression(ctx context.Context, e Suppression) (Suppression, error)

	// RemoveSuppression takes the recipient off the account's list, or
	// answers ErrNotFound when it is not on it.
	RemoveSuppression(ctx context.Context, account string, kind record.Kind, to string) error

	// LookupSuppression answers the account's entry for the recipient
	// and true, or false when there is none.
	LookupSuppression(ctx context.Context, account string, kind record.Kind, to string) (Suppression, bool, error)

	// ListSuppressions answers a page of the account's list as q selects
	// it (see SuppressionQuery); a q that fails Check is ErrInvalid. An
	// account with no entries, or none that is known, has an empty list.
	ListSuppressions(ctx context.Context, account string, q SuppressionQuery) ([]Suppression, error)

	// LookupSuppressions answers the account's entries for the
	// recipients tos of kind, in their order: the entry, or the zero
	// Suppression (empty Reason) where the list has none. Its answers
	// must be what LookupSuppression would answer for each recipient,
	// but a store reads them at once where it can (pgstore in one
	// statement, memstore under one lock): the Notifier checks a bulk
	// send and EnqueueTxMany through it, 10,000 recipients in one read.
	// A recipient the list's rules refuse (which LookupSuppression
	// answers ErrInvalid) has no entry and the zero Suppression; an
	// empty account or a kind that is not a channel's name is
	// ErrInvalid.
	LookupSuppressions(ctx context.Context, account string, kind record.Kind, tos []string) ([]Suppression, error)
}

// Bounce is implemented by a provider's error that says the recipient
// can never receive the message (an SMTP server's 5.1.1 "user unknown").
// When a send settles as certainly not accepted with a Bounce in its
// error's chain (errors.As), the Notifier adds the recipient to the
// account's suppression list with BounceReason's reason, so that later
// sends to it are refused before they are charged.
type Bounce interface {
	error
	// BounceReason returns the suppression reason (SuppressHardBounce)
	// and the recipient refused; an empty recipient means the message's
	// own (its envelope's To). Providers that send a message to several
	// recipients must name the one refused.
	BounceReason() (reason SuppressionReason, recipient string)
}

// SuppressibleKind reports whether kind can name a suppression list's
// channel: 1 to 32 bytes of lower-case ASCII letters, digits, "_" or
// "-", starting with a letter. Any channel may have a list, a channel of
// a host's own as well as "sms", "chat" and "email".
func SuppressibleKind(kind record.Kind) bool {
	if len(kind) == 0 || len(kind) > 32 || kind[0] < 'a' || kind[0] > 'z' {
		return false
	}
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// kindRule is the rule a channel name breaks.
const kindRule = "must be a channel name such as sms, chat or email (lower-case letters, digits, _ and -)"
