package pgstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/notifykit/notify/store"
)

// SQLSTATE codes the store tells apart.
const (
	stateUniqueViolation = "23505"
	stateOutOfRange      = "22003"
	stateUndefinedTable  = "42P01"
	stateQueryCanceled   = "57014"
	// The server's refusals of the text of a jsonb value.
	stateBadText        = "22P02" // invalid_text_representation
	stateUntranslatable = "22P05" // untranslatable_character
	// The refusal of a choice whose category a concurrent RemoveCategory
	// took (SetChoice): the category is not there.
	stateForeignKeyViolation = "23503"
)

// failure is an error of the database or the context, as fail words it:
// what failed, the sentinel of package store it matches (nil for none:
// the store failing) and the cause, which errors.Is and errors.As see
// too.
type failure struct {
	what string
	kind error
	err  error
	hint string
}

func (f *failure) Error() string {
	var b strings.Builder
	b.WriteString("pgstore: ")
	b.WriteString(f.what)
	b.WriteString(": ")
	if f.kind != nil {
		b.WriteString(f.kind.Error())
		b.WriteString(": ")
	}
	b.WriteString(f.err.Error())
	b.WriteString(f.hint)
	return b.String()
}

func (f *failure) Unwrap() []error {
	if f.kind == nil {
		return []error{f.err}
	}
	return []error{f.kind, f.err}
}

// fail turns an error of pgx into an error of the store contract; nil
// stays nil, and an answer of this package (a failure, an error matching
// a sentinel of package store) is returned as it is. The context comes
// first: once ctx has ended, whatever pgx says (a canceled statement, a
// dropped connection) is a consequence of it, and the error is the
// context's, wrapped. A server that cannot be reached or lost the
// connection is store.ErrUnavailable, a value out of range
// store.ErrInvalid, with pgx's error kept as the cause; anything else is
// a plain error, the store failing.
func (s *Store) fail(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if answered(err) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return ctxError(what, cerr)
	}
	for _, cerr := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, cerr) {
			return ctxError(what, cerr)
		}
	}
	f := &failure{what: what, kind: classify(err), err: err}
	if pgCode(err) == stateUndefinedTable {
		f.hint = " (has Migrate been called?)"
	}
	return f
}

// answered reports whether err is an answer of this package already: one
// fail made, or one that matches a sentinel of package store.
func answered(err error) bool {
	var f *failure
	if errors.As(err, &f) {
		return true
	}
	for _, kind := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInsufficientFunds,
		store.ErrInvalid, store.ErrUnauthenticated, store.ErrUnavailable} {
		if errors.Is(err, kind) {
			return true
		}
	}
	var limit *store.LimitError
	return errors.As(err, &limit)
}

// ctxError is the error of an operation that ctx ended: the context's
// error, wrapped.
func ctxError(what string, cerr error) error {
	return &failure{what: what, err: cerr}
}

// classify decides whether an error is the server's or the network's
// temporary trouble (store.ErrUnavailable), a value out of range
// (store.ErrInvalid), or something retrying will not fix (nil: the store
// failing).
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", // admin_shutdown (pg_terminate_backend, fast shutdown)
			pe.Code == "57P02", // crash_shutdown
			pe.Code == "57P03", // cannot_connect_now (starting up, recovering)
			pe.Code == "53300", // too_many_connections
			pe.Code == "40001", // serialization_failure
			pe.Code == "40P01", // deadlock_detected
			pe.Code == stateQueryCanceled:
			return store.ErrUnavailable
		case pe.Code == stateOutOfRange:
			return store.ErrInvalid
		}
		return nil
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, puddle.ErrClosedPool),
		pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return store.ErrUnavailable
	}
	// pgx reports a connection that died mid-statement with plain errors
	// ("conn closed", "unexpected EOF" wrapped in its own types).
	if strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection reset") {
		return store.ErrUnavailable
	}
	return nil
}

// pgCode returns the SQLSTATE of err, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
