package pgstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// connRetries is how many times an operation is run again after its
// connection was lost. A pool keeps connections a restarted server has
// already dropped; the first use of each fails, and a fresh connection
// usually succeeds.
const connRetries = 2

// How an operation may be repeated after its connection was lost.
const (
	// onceOnly operations are repeated only when nothing reached the
	// server: repeating one that may have run would change its answer
	// (a Reserve would find its own reservation "in flight").
	onceOnly = false
	// repeatable operations give the same result and effect however often
	// they run: reads, upserts, and Debit and Credit thanks to their ref.
	repeatable = true
)

// do runs op, and runs it again (at most connRetries times) when its
// connection was lost and repeating it is safe. ctx ending stops it.
func (s *Store) do(ctx context.Context, kind bool, op func() error) error {
	for try := 0; ; try++ {
		err := op()
		if err == nil || try >= connRetries || ctx.Err() != nil || !retryConn(err, kind) {
			return err
		}
	}
}

func retryConn(err error, kind bool) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return false // the server is down: trying again at once won't help
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	return kind && connLost(err) // kind is repeatable
}

// connLost reports whether err says the connection died, before or during
// the statement: the server terminated the backend, or the socket closed.
// Whatever the statement did was then rolled back, unless its commit had
// completed just before, which only a repeatable operation can tolerate.
func connLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "57P01" || pe.Code == "57P02" || strings.HasPrefix(pe.Code, "08")
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, pgconn.ErrConnClosed) || strings.Contains(err.Error(), "conn closed")
}
