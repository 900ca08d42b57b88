package storeutil

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// checkRecipient checks to, a recipient of a list of kind, as every
// store does, or answers the rule it breaks, naming "to" (or "channel"
// for a kind not suppressible): 1 to 254 bytes, no spaces or control characters.
// The recipient arrives in its channel's canonical form
// (notify.Channel.Recipient; notify.Notifier.Recipient) and is kept and
// compared as it is: the channel owns the form, the store only the
// shape every form has.
func checkRecipient(kind record.Kind, to string) record.FieldErrors {
	if !store.SuppressibleKind(kind) {
		return channelRule()
	}
	return recipientShape(to)
}

// recipientShape is the rule of a recipient's shape, whatever its
// channel.
func recipientShape(to string) record.FieldErrors {
	if to == "" || len(to) > 254 || strings.IndexFunc(to, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0 {
		return record.FieldErrors{{Field: "to", Message: "must be 1 to 254 bytes without spaces or control characters"}}
	}
	return nil
}

// CheckSuppression returns e with At in UTC at microsecond precision, or
// ErrInvalid naming every field that breaks AddSuppression's rules.
// Stores call it first.
func CheckSuppression(e store.Suppression) (store.Suppression, error) {
	var fe record.FieldErrors
	if e.Account == "" {
		fe.Add("account", "is required")
	}
	fe = append(fe, checkRecipient(e.Kind, e.To)...)
	if !ValidReason(e.Reason) {
		fe.Add("reason", "must be unsubscribed, hard_bounce, complaint or manual")
	}
	if e.At.IsZero() {
		fe.Add("at", "is required")
	}
	e.At = e.At.UTC().Truncate(time.Microsecond)
	return e, store.InvalidFields(fe)
}

// CheckSuppressionKey returns the recipient of an account's lookup or
// removal, to as it is, or ErrInvalid naming the fields that break the
// rules.
func CheckSuppressionKey(account string, kind record.Kind, to string) (string, error) {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	fe = append(fe, checkRecipient(kind, to)...)
	if err := store.InvalidFields(fe); err != nil {
		return "", err
	}
	return to, nil
}

// CheckSuppressionKeys is CheckSuppressionKey for LookupSuppressions: it
// refuses an empty account or a kind that is not a channel's name with
// ErrInvalid, and returns each recipient of tos as it is, or "" for one
// the list's rules refuse (it can have no entry).
func CheckSuppressionKeys(account string, kind record.Kind, tos []string) ([]string, error) {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if !store.SuppressibleKind(kind) {
		fe = append(fe, channelRule()...)
	}
	if err := store.InvalidFields(fe); err != nil {
		return nil, err
	}
	keys := make([]string, len(tos))
	for i, to := range tos {
		if len(checkRecipient(kind, to)) == 0 {
			keys[i] = to
		}
	}
	return keys, nil
}

// channelRule is the refusal of a kind that is not a channel's name as
// the channel of a list: the rule store.SuppressionQuery.Check states, so
// that its text is written once. It asks the query about "-", which is
// never a channel's name: an empty kind would be no refusal there (a
// query's "every channel"), where a list's entry must name one.
func channelRule() record.FieldErrors {
	var fe record.FieldErrors
	errors.As(store.SuppressionQuery{Kind: "-"}.Check(), &fe)
	return fe
}

// ValidReason reports whether r is one of the four suppression reasons:
// every one of them outranks the empty reason (store.SuppressionReason.Outranks).
func ValidReason(r store.SuppressionReason) bool { return r.Outranks("") }

// CheckStopping refuses, with ErrInvalid naming "stopping", a list of
// stopping reasons (store.Ledger.OpenUnlisted's) that holds one that is
// not valid (ValidReason).
func CheckStopping(stopping []store.SuppressionReason) error {
	for _, r := range stopping {
		if !ValidReason(r) {
			return store.InvalidField("stopping", "must list suppression reasons: hard_bounce, complaint, unsubscribed or manual")
		}
	}
	return nil
}

// OpenUnlisted is store.Ledger.OpenUnlisted made of l's LookupSuppression
// and Open, for a store that has no single step for both (memstore's list
// and records are apart) and for a wrapper that passes its ledger's: the
// list is read, then m opened unless to's entry has a reason among
// stopping.
func OpenUnlisted(ctx context.Context, l store.Ledger, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	if err := CheckStopping(stopping); err != nil {
		return record.Balance{}, store.Suppression{}, err
	}
	if m == nil {
		b, err := l.Open(ctx, m) // Open's own refusal of a nil record
		return b, store.Suppression{}, err
	}
	e, found, err := l.LookupSuppression(ctx, m.Account, m.Kind, to)
	switch {
	case errors.Is(err, store.ErrInvalid) && m.Account != "" && store.SuppressibleKind(m.Kind):
		// A recipient the list's rules refuse: no entry can name it.
	case err != nil:
		return record.Balance{}, store.Suppression{}, err
	case found && slices.Contains(stopping, e.Reason):
		return record.Balance{}, e, nil
	}
	b, err := l.Open(ctx, m)
	return b, store.Suppression{}, err
}
