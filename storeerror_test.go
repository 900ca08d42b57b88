package notify_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// failingLimiter fails every Take with err.
type failingLimiter struct{ err error }

func (l failingLimiter) Take(context.Context, string, time.Time) error { return l.err }
func (failingLimiter) Undo(context.Context, string, time.Time) error   { return nil }

// A store's failure reaches the caller with the store's code and a
// StoreError naming the store; a store's refusal that is the sender's to
// act on reaches it as it is.
func TestStoreFailureIsAStoreError(t *testing.T) {
	down := notify.Errorf(notify.CodeUnavailable, "pgstore: dial tcp 10.0.0.1:5432: connection refused")
	for _, tc := range []struct {
		name      string
		err       error
		code      notify.Code
		storeSide bool
	}{
		{"database down", down, notify.CodeUnavailable, true},
		{"bare error", errors.New("boom"), notify.CodeInternal, true},
		{"deadline", context.DeadlineExceeded, notify.CodeDeadlineExceeded, true},
		{"the limit itself", &notify.Error{Code: notify.CodeRateLimited, RetryAfter: time.Second}, notify.CodeRateLimited, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithRateLimit(failingLimiter{tc.err})))
			_, err := k.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "hi"})
			if notify.CodeOf(err) != tc.code {
				t.Fatalf("code %q (%v), want %q", notify.CodeOf(err), err, tc.code)
			}
			var se *notify.StoreError
			if got := errors.As(err, &se); got != tc.storeSide {
				t.Fatalf("StoreError %v (%v), want %v", got, err, tc.storeSide)
			}
			if tc.storeSide && (se.Store != "limits" || !errors.Is(err, tc.err)) {
				t.Errorf("StoreError %+v does not name the limits store or lost the cause", se)
			}
			if n := len(k.SentSMS()); n != 0 {
				t.Errorf("%d sent", n)
			}
		})
	}
}

// An app tells a store's failure (retry later, page the operator) from a
// refusal meant for the sender.
func ExampleStoreError() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	down := failingLimiter{notify.Errorf(notify.CodeUnavailable, "database unreachable")}
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh), notify.WithRateLimit(down))

	_, err := n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	var se *notify.StoreError
	if errors.As(err, &se) {
		fmt.Printf("the %s store failed (%s); retryable: %v\n", se.Store, notify.CodeOf(err), notify.IsRetryable(err))
	}
	// Output: the limits store failed (unavailable); retryable: true
}
