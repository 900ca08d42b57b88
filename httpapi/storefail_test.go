package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/httpapienv"
)

// downLimiter is a limits store whose database is down, and says so in a
// store's own words: its package and the database's address.
type downLimiter struct{}

func (downLimiter) Take(context.Context, string, time.Time) error {
	return notify.Errorf(notify.CodeUnavailable, "pgstore: rate limit %q: dial tcp 10.20.30.40:5432: connect: connection refused", "sends")
}

func (downLimiter) Undo(context.Context, string, time.Time) error { return nil }

// A store that fails answers 503 naming which store, never the store's
// package or hosts; the details go to the log.
func TestStoreFailureHidesTheStoresWords(t *testing.T) {
	e := httpapienv.NewFull(t, httpapienv.OpeningBal, []notify.Option{notify.WithRateLimit(downLimiter{})})
	r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hello"}`, nil)
	httpapienv.WantError(t, r, 503, "unavailable")
	httpapienv.WantNoLeaks(t, "send", r, "pgstore", "10.20.30.40", "dial tcp")
	if !strings.Contains(r.Raw, "limits store") {
		t.Errorf("the answer does not say which store failed: %s", r.Raw)
	}
	if logs := e.Logs.String(); !strings.Contains(logs, "10.20.30.40") {
		t.Errorf("the log lacks the store's error:\n%s", logs)
	}
	if n := e.Sent(); n != 0 {
		t.Errorf("%d sent", n)
	}
}
