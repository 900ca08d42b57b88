package pgqueue

import (
	"context"
	"errors"
	"testing"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/store"
)

// unsent is an error pgx marks as sent before anything reached the
// server (pgconn.SafeToRetry).
type unsent struct{ error }

func (unsent) SafeToRetry() bool { return true }

// TestCommitError: a commit that failed before it sent anything wrote
// nothing, and says what ended it; any other failed commit, a context
// that ended while the server committed included, may have taken effect
// and is ErrUnavailable, never the context's error, which the Notifier
// would read as nothing written.
func TestCommitError(t *testing.T) {
	q := &Queue{st: &pgstore.Store{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.commitError(ctx, unsent{context.Canceled}); !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a commit never sent: %v, want the context's error", err)
	}
	for _, cause := range []error{context.Canceled, context.DeadlineExceeded, errors.New("unexpected EOF")} {
		err := q.commitError(ctx, cause)
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a commit sent, then %v: %v, want ErrUnavailable only", cause, err)
		}
	}
}
