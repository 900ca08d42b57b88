package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code notify.Code
	}{
		{&pgconn.PgError{Code: "57P01"}, notify.CodeUnavailable},
		{&pgconn.PgError{Code: "08006"}, notify.CodeUnavailable},
		{&pgconn.PgError{Code: "53300"}, notify.CodeUnavailable},
		{&pgconn.PgError{Code: "40001"}, notify.CodeUnavailable},
		{&pgconn.PgError{Code: "22003"}, notify.CodeInvalidArgument},
		{&pgconn.PgError{Code: "42P01"}, notify.CodeInternal},
		{&pgconn.PgError{Code: "23505"}, notify.CodeInternal},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), notify.CodeUnavailable},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), notify.CodeUnavailable},
		{puddle.ErrClosedPool, notify.CodeUnavailable},
		{errors.New("something else"), notify.CodeInternal},
	} {
		if got := classify(tc.err); got != tc.code {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.code)
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
	if err := s.fail(context.Background(), "x", pe); !errors.Is(err, pe) {
		t.Errorf("fail dropped the cause: %v", err)
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

// FuzzDecodeReceipt feeds the stored-receipt decoder arbitrary bytes: it
// never panics, and what it accepts survives another round trip intact.
func FuzzDecodeReceipt(f *testing.F) {
	r := &notify.Receipt{MessageID: "m1", Account: "a", Kind: otp.Kind, Status: notify.StateSent,
		Cost: notify.Money{Minor: 40, Currency: notify.INR()}, CreatedAt: time.Unix(1700000000, 5).UTC(),
		Legs: []*notify.Receipt{{MessageID: "m2", Kind: sms.Kind, ErrorCode: notify.CodeRejected}}}
	body, err := encodeReceipt(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"legs":[null,{"legs":[{}]}]}`))
	f.Add([]byte(`{"cost":{"minor":-9223372036854775808}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeReceipt(body)
		if err != nil {
			return
		}
		again, err := encodeReceipt(r)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		r2, err := decodeReceipt(again)
		if err != nil {
			t.Fatalf("decode of our own encoding: %v", err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the receipt:\n%+v\n%+v", r, r2)
		}
	})
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
