package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/notifykit/notify"
)

// SQLSTATE codes the store tells apart.
const (
	stateUniqueViolation = "23505"
	stateOutOfRange      = "22003"
	stateUndefinedTable  = "42P01"
	stateQueryCanceled   = "57014"
)

// fail turns an error of pgx into a *notify.Error; nil stays nil. The
// context comes first: once ctx has ended, whatever pgx says (a canceled
// statement, a dropped connection) is a consequence of it.
func (s *Store) fail(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	var ne *notify.Error
	if errors.As(err, &ne) {
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
	code := classify(err)
	if pgCode(err) == stateUndefinedTable {
		return &notify.Error{Code: code, Err: fmt.Errorf("pgstore: %s: %w (has Migrate been called?)", what, err)}
	}
	return &notify.Error{Code: code, Err: fmt.Errorf("pgstore: %s: %w", what, err)}
}

func ctxError(what string, cerr error) error {
	code := notify.CodeCanceled
	if errors.Is(cerr, context.DeadlineExceeded) {
		code = notify.CodeDeadlineExceeded
	}
	return &notify.Error{Code: code, Err: fmt.Errorf("pgstore: %s: %w", what, cerr)}
}

// classify decides whether an error is the server's or the network's
// temporary trouble (Unavailable) or something retrying will not fix.
func classify(err error) notify.Code {
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
			return notify.CodeUnavailable
		case pe.Code == stateOutOfRange:
			return notify.CodeInvalidArgument
		}
		return notify.CodeInternal
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
		return notify.CodeUnavailable
	}
	// pgx reports a connection that died mid-statement with plain errors
	// ("conn closed", "unexpected EOF" wrapped in its own types).
	if strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "connection reset") {
		return notify.CodeUnavailable
	}
	return notify.CodeInternal
}

// pgCode returns the SQLSTATE of err, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
