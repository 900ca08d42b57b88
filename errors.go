package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Code classifies an error. Its string is the snake_case code that the
// HTTP adapter puts in error bodies.
type Code string

// The error codes. See each for when it is returned.
const (
	// CodeInvalidArgument: the request breaks a rule; Error.Fields names
	// every bad field. Nothing was charged.
	CodeInvalidArgument Code = "invalid_argument"
	// CodeUnauthenticated: no credentials, or wrong ones.
	CodeUnauthenticated Code = "unauthenticated"
	// CodePermissionDenied: the account may not do this (for example it is
	// disabled).
	CodePermissionDenied Code = "permission_denied"
	// CodeNotFound: the account, message or template does not exist.
	CodeNotFound Code = "not_found"
	// CodeInsufficientFunds: the wallet cannot pay for the message. No
	// provider was called.
	CodeInsufficientFunds Code = "insufficient_funds"
	// CodeRateLimited: too many requests; Error.RetryAfter may say when to
	// try again.
	CodeRateLimited Code = "rate_limited"
	// CodeConflict: an idempotency key was reused with another request, or
	// is in use by a send still in flight.
	CodeConflict Code = "conflict"
	// CodeUnavailable: a temporary failure (provider down, not configured,
	// network error before the request was written) that outlasted the
	// retries. The vendor certainly does not have the message; any charge
	// was refunded.
	CodeUnavailable Code = "unavailable"
	// CodeRejected: the provider refused the message for good. Any charge
	// was refunded.
	CodeRejected Code = "rejected"
	// CodeOutcomeUnknown: the vendor may have the message (its answer was
	// lost, the call timed out or was cut after the request was written, an
	// answer that proves no refusal). The charge stands, the receipt's
	// status is StateUnknown, and nothing retries it: a repeat with the
	// same idempotency key returns that receipt and never sends again.
	CodeOutcomeUnknown Code = "outcome_unknown"
	// CodeDeadlineExceeded: the caller's deadline passed before the vendor
	// took the message (a timeout in the middle of a vendor call is
	// CodeOutcomeUnknown instead); any charge was refunded.
	// errors.Is(err, context.DeadlineExceeded) holds.
	CodeDeadlineExceeded Code = "deadline_exceeded"
	// CodeCanceled: the caller's context was canceled before the vendor
	// took the message; any charge was refunded.
	// errors.Is(err, context.Canceled) holds.
	CodeCanceled Code = "canceled"
	// CodeInternal: a bug or an unexpected failure, such as a panicking
	// channel or store. A provider that panics, or claims success without
	// a message ID, may have sent the message: that send is
	// CodeOutcomeUnknown, with the Internal error as its cause.
	CodeInternal Code = "internal"
	// CodeSuppressed: the recipient is on the account's suppression list
	// for the channel (store.Suppressions): a promotional send is refused
	// for any entry (unsubscribed, hard bounce, complaint, manual), a
	// transactional one only for a hard bounce. Checked before anything
	// is charged; sending again changes nothing until the entry is
	// removed.
	CodeSuppressed Code = "suppressed"
	// CodeDeclined: the recipient does not want messages of the
	// request's category on the channel (store.Preferences): they
	// declined it, or it is opt-in and they have not allowed it. Checked
	// before anything is charged; the error names the category, the
	// channel and which of the two it is. A critical category is never
	// declined.
	CodeDeclined Code = "declined"
)

// temporary reports whether errors of this code may succeed when retried
// unchanged: Unavailable and RateLimited. Whether a retry is safe is
// another question, answered by IsRetryable.
func (c Code) temporary() bool { return c == CodeUnavailable || c == CodeRateLimited }

// Error is the one error type of notify. The Notifier returns every error
// as an *Error, wrapping the cause exactly once; CodeOf reads the code
// through any further wrapping.
//
// Messages never contain secrets: API keys, OTP codes and SMTP passwords
// are kept out of Err by every package of this module.
type Error struct {
	// Code classifies the error.
	Code Code
	// Op is the operation that failed, such as "notify.Send".
	Op string
	// Provider names the provider involved, if any.
	Provider string
	// Fields lists every bad field of an InvalidArgument error.
	Fields record.FieldErrors
	// RetryAfter, when positive, is how long a RateLimited caller should
	// wait before trying again.
	RetryAfter time.Duration
	// Err is the underlying cause; it may be nil.
	Err error
}

// Error formats the error as "op: provider p: code: cause; field: rule".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Provider != "" {
		b.WriteString("provider ")
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Code))
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if len(e.Fields) > 0 {
		b.WriteString(": ")
		b.WriteString(e.Fields.Error())
	}
	return b.String()
}

// Unwrap returns the cause, so errors.Is(err, context.Canceled) and
// errors.As see through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a cause formatted as by
// fmt.Errorf (so %w wraps). Providers and channels use it to say how a
// failure should be treated; the Notifier adds Op and Provider.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// WithCode returns err classified as code, keeping err as the cause. A nil
// err gives nil.
func WithCode(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// CodeOf returns the code of err: the Code of the first *Error in its
// chain; CodeCanceled or CodeDeadlineExceeded for bare context errors;
// "" for nil; CodeInternal for anything else.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeDeadlineExceeded
	}
	return storeCode(err)
}

// storeCode is the code of a store's error (package store): its
// sentinel's, or RateLimited for a *store.LimitError; Internal for any
// other error, a store failing.
func storeCode(err error) Code {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return CodeNotFound
	case errors.Is(err, store.ErrConflict):
		return CodeConflict
	case errors.Is(err, store.ErrInsufficientFunds):
		return CodeInsufficientFunds
	case errors.Is(err, store.ErrInvalid):
		return CodeInvalidArgument
	case errors.Is(err, store.ErrUnauthenticated):
		return CodeUnauthenticated
	case errors.Is(err, store.ErrUnavailable):
		return CodeUnavailable
	}
	var limit *store.LimitError
	if errors.As(err, &limit) {
		return CodeRateLimited
	}
	return CodeInternal
}

// StoreError is the cause of an error the Notifier returns when one of
// the stores it depends on failed (a database down, a timeout, a bug)
// rather than refusing the request for the sender's reasons: the
// service's trouble, not the sender's. The *Error around it keeps the
// store's code (Unavailable, DeadlineExceeded, Internal, ...), so
// retries and statuses are unchanged; an adapter answering clients, such
// as httpapi, tells them only which store failed and logs the rest,
// since the store's own words name its package and may name hosts. A
// send its vendor certainly refused, whose refund the messages store
// failed to write at the time, keeps the refusal's code (Rejected,
// Unavailable, ...) with the StoreError further down its chain.
//
// A store's refusals that are the sender's to act on (InsufficientFunds,
// Conflict, RateLimited, NotFound, InvalidArgument, PermissionDenied,
// Unauthenticated) are returned as they are, not as a StoreError.
type StoreError struct {
	// Store names the store: "accounts", "idempotency", "limits" or
	// "ledger".
	Store string
	// Err is the store's error.
	Err error
}

// Error returns "<store> store: <the store's error>".
func (e *StoreError) Error() string { return e.Store + " store: " + e.Err.Error() }

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// storeFailure is the *Error of a store's answer err to op, the one place
// where a store's errors (package store) become codes: a refusal the
// sender can act on (a sentinel, store.InvalidFields naming fields, a
// *store.LimitError with its RetryAfter) as it is; anything else with a
// StoreError naming the store, name, as the cause.
func storeFailure(op, name string, err error) *Error {
	code := CodeOf(err)
	switch code {
	case CodeInsufficientFunds, CodeConflict, CodeRateLimited, CodeNotFound,
		CodeInvalidArgument, CodePermissionDenied, CodeUnauthenticated:
		if e := (*Error)(nil); errors.As(err, &e) {
			return wrap(op, "", code, err)
		}
		e := &Error{Code: code, Op: op, Err: err}
		var fields record.FieldErrors
		if errors.As(err, &fields) {
			e.Fields = slices.Clone(fields)
			if err.Error() == fields.Error() {
				// Nothing but field rules (store.InvalidFields): the
				// fields are the whole cause.
				e.Err = nil
			}
		}
		var limit *store.LimitError
		if errors.As(err, &limit) {
			e.RetryAfter = limit.RetryAfter
		}
		return e
	}
	return &Error{Code: code, Op: op, Err: &StoreError{Store: name, Err: err}}
}

// wrap returns err as an *Error of operation op, wrapping it at most once:
// an *Error at the top of the chain is copied with Op and Provider filled
// in; an *Error deeper in the chain lends its code; context errors become
// Canceled or DeadlineExceeded; anything else gets the code def.
func wrap(op, provider string, def Code, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		out := *e
		if e != err { // wrapped by the caller: keep the whole chain as cause
			out.Err = err
		}
		if out.Op == "" {
			out.Op = op
		}
		if out.Provider == "" {
			out.Provider = provider
		}
		return &out
	}
	code := def
	switch {
	case errors.Is(err, context.Canceled):
		code = CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		code = CodeDeadlineExceeded
	}
	return &Error{Code: code, Op: op, Provider: provider, Err: err}
}
