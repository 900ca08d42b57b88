package store

import (
	"errors"
	"time"

	"github.com/notifykit/notify/record"
)

// The errors a store answers with; a store wraps them with what it was
// asked, the sentinel last (fmt.Errorf("account %q: %w", id,
// store.ErrNotFound) reads `account "a1": not found`),
// and callers test them with errors.Is.
var (
	// ErrNotFound: the account, record, key or template asked for does
	// not exist (or belongs to another account).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the call contradicts what is stored: an ID in use, a
	// move the state machine forbids, a key held by another send or sent
	// with another fingerprint, a ref recorded with another amount.
	ErrConflict = errors.New("conflict")
	// ErrInsufficientFunds: a debit larger than the balance.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrInvalid: an argument breaks the method's rules (an amount in
	// another currency, an empty ref). InvalidFields names the fields.
	ErrInvalid = errors.New("invalid argument")
	// ErrUnauthenticated: an API key no account owns.
	ErrUnauthenticated = errors.New("unknown API key")
	// ErrUnavailable: the store cannot answer for the moment (its
	// database is unreachable or restarting); the call may be tried
	// again later. Whether a write took effect is unknown unless the
	// method says otherwise.
	ErrUnavailable = errors.New("store unavailable")
)

// LimitError is a Limiter's refusal: the budget is spent. It matches no
// sentinel.
type LimitError struct {
	// Rule states the limit, as "at most 5 per 15m0s".
	Rule string
	// RetryAfter (> 0) is how long until a unit frees up.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return "limit reached (" + e.Rule + "), retry after " + e.RetryAfter.String()
}

// InvalidFields returns ErrInvalid naming the fields of fe, or nil when
// fe is empty. The error matches ErrInvalid (errors.Is) and carries fe
// (errors.As with a *record.FieldErrors); its text is fe's.
func InvalidFields(fe record.FieldErrors) error {
	if len(fe) == 0 {
		return nil
	}
	return invalidFields{fe}
}

// InvalidField returns ErrInvalid naming one field, as InvalidFields.
func InvalidField(field, message string) error {
	return invalidFields{record.FieldErrors{{Field: field, Message: message}}}
}

// invalidFields is ErrInvalid naming fields.
type invalidFields struct{ fe record.FieldErrors }

func (e invalidFields) Error() string        { return e.fe.Error() }
func (e invalidFields) Is(target error) bool { return target == ErrInvalid }
func (e invalidFields) Unwrap() error        { return e.fe }
