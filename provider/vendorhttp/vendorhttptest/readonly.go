package vendorhttptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// CheckReadOnlyContext fails t (t.Fatalf) unless call, a provider's call
// that sends nothing (a balance or a health check), fails as it must when
// its context ends: canceled before the call, and past its deadline while
// the vendor, slowed by slow(time.Hour), has not answered (slow(0) then
// speeds it up again). Each error must be CodeUnavailable, a certain
// failure, keep the context's error visible to errors.Is, and be one
// printable line holding none of secrets.
func CheckReadOnlyContext(t testing.TB, call func(context.Context) error, slow func(time.Duration), secrets ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checkEnded(t, "a canceled context", call(ctx), context.Canceled, secrets)
	slow(time.Hour)
	defer slow(0)
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	checkEnded(t, "a deadline that passed before the answer", call(ctx), context.DeadlineExceeded, secrets)
}

// checkEnded fails t unless err is the certain CodeUnavailable of an
// ended context, errors.Is want, without secrets.
func checkEnded(t testing.TB, what string, err, want error, secrets []string) {
	t.Helper()
	if notify.CodeOf(err) != notify.CodeUnavailable || notify.OutcomeOf(err) == record.StateUnknown || !errors.Is(err, want) {
		t.Fatalf("%s: %s %v, want a certain %s that is %v", what, notify.CodeOf(err), err, notify.CodeUnavailable, want)
	}
	CheckError(t, err, false, false, what, secrets...)
}
