package store

import (
	"errors"
	"strings"
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
	// another currency, an empty ref). FieldErrors names the fields.
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

// FieldErrors is ErrInvalid naming every bad field of a call. The zero
// value is ready to use; Err returns it as an error when it holds any.
type FieldErrors []record.FieldError

// Add records that field breaks the rule message states.
func (fe *FieldErrors) Add(field, message string) {
	*fe = append(*fe, record.FieldError{Field: field, Message: message})
}

// Err returns fe as an error, or nil when it is empty.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return fe
}

// Error lists the fields and their rules.
func (fe FieldErrors) Error() string {
	var b strings.Builder
	for i, f := range fe {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + ": " + f.Message)
	}
	return b.String()
}

// Is reports that fe matches ErrInvalid.
func (fe FieldErrors) Is(target error) bool { return target == ErrInvalid }

// Invalid returns ErrInvalid naming one field.
func Invalid(field, message string) error { return FieldErrors{{Field: field, Message: message}} }
