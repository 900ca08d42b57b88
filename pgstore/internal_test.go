package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/store"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind error // nil: the store failing
	}{
		{&pgconn.PgError{Code: "57P01"}, store.ErrUnavailable},
		{&pgconn.PgError{Code: "08006"}, store.ErrUnavailable},
		{&pgconn.PgError{Code: "53300"}, store.ErrUnavailable},
		{&pgconn.PgError{Code: "40001"}, store.ErrUnavailable},
		{&pgconn.PgError{Code: "22003"}, store.ErrInvalid},
		{&pgconn.PgError{Code: "42P01"}, nil},
		{&pgconn.PgError{Code: "23505"}, nil},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), store.ErrUnavailable},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), store.ErrUnavailable},
		{puddle.ErrClosedPool, store.ErrUnavailable},
		{errors.New("something else"), nil},
	} {
		if got := classify(tc.err); got != tc.kind {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.kind)
		}
	}

	s := &Store{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.fail(ctx, "x", io.EOF)
	if notify.CodeOf(err) != notify.CodeCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("fail with a canceled ctx = %v", err)
	}
	err = s.fail(context.Background(), "x", fmt.Errorf("wrapped: %w", context.DeadlineExceeded))
	if notify.CodeOf(err) != notify.CodeDeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("fail(DeadlineExceeded) = %v", err)
	}
	pe := &pgconn.PgError{Code: "57P01"}
	err = s.fail(context.Background(), "x", pe)
	if !errors.Is(err, pe) {
		t.Errorf("fail dropped the cause: %v", err)
	}
	if !errors.Is(err, store.ErrUnavailable) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("fail(57P01) = %v, want store.ErrUnavailable", err)
	}
	if again := s.fail(context.Background(), "y", err); again != err {
		t.Errorf("fail wrapped its own answer again: %v", again)
	}
	internal := s.fail(context.Background(), "x", &pgconn.PgError{Code: "42P01"})
	if notify.CodeOf(internal) != notify.CodeInternal || !strings.Contains(internal.Error(), "Migrate") {
		t.Errorf("fail(42P01) = %v, want a plain error that suggests Migrate", internal)
	}
	for _, kind := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInsufficientFunds,
		store.ErrInvalid, store.ErrUnauthenticated, store.ErrUnavailable} {
		if internal != nil && errors.Is(internal, kind) {
			t.Errorf("fail(42P01) matches %v", kind)
		}
	}
	nf := fmt.Errorf("account %q: %w", "a", store.ErrNotFound)
	if got := s.fail(ctx, "x", nf); got != nf {
		t.Errorf("fail(%v) with an ended ctx = %v, want it as it is", nf, got)
	}
	if s.fail(context.Background(), "x", nil) != nil {
		t.Error("fail(nil) != nil")
	}
}

func TestRetryConn(t *testing.T) {
	for _, tc := range []struct {
		err              error
		once, repeatable bool
	}{
		{&pgconn.PgError{Code: "57P01"}, false, true},
		{io.EOF, false, true},
		{&pgconn.PgError{Code: "23505"}, false, false},
		{&pgconn.PgError{Code: "57014"}, false, false}, // canceled by someone: don't insist
		{&pgconn.ConnectError{}, false, false},         // server down: waiting is the caller's call
		{errors.New("other"), false, false},
	} {
		if got := retryConn(tc.err, onceOnly); got != tc.once {
			t.Errorf("retryConn(%v, onceOnly) = %v", tc.err, got)
		}
		if got := retryConn(tc.err, repeatable); got != tc.repeatable {
			t.Errorf("retryConn(%v, repeatable) = %v", tc.err, got)
		}
	}
}

func TestMigrationsEmbedded(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.version != i+1 {
			t.Fatalf("migration %s has version %d, want %d (no gaps)", m.name, m.version, i+1)
		}
		body := expand(m.sql, `"s".`, "p_")
		if strings.Contains(body, "{{") {
			t.Fatalf("migration %s has an unknown placeholder", m.name)
		}
	}
}

// FuzzTablePrefix checks that only identifiers that need no quoting get
// into SQL text.
func FuzzTablePrefix(f *testing.F) {
	for _, s := range []string{"notify_", "", "A", "x;drop", `a"b`, "é", "_9", strings.Repeat("a", 41)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prefix string) {
		s := &Store{}
		if err := WithTablePrefix(prefix)(s); err != nil {
			return
		}
		if len(prefix) > 40 {
			t.Fatalf("accepted %d bytes", len(prefix))
		}
		for _, c := range prefix {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				t.Fatalf("accepted %q", prefix)
			}
		}
	})
}
