package vendorhttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

func TestForeign(t *testing.T) {
	h := http.Header{"Retry-After": {" 30 "}}
	cases := []struct {
		status  int
		code    notify.Code
		outcome record.State
	}{
		{429, notify.CodeRateLimited, record.StateFailed},
		{502, notify.CodeOutcomeUnknown, record.StateUnknown},
		{200, notify.CodeOutcomeUnknown, record.StateUnknown},
		{201, notify.CodeOutcomeUnknown, record.StateUnknown},
		{404, notify.CodeRejected, record.StateFailed},
		{302, notify.CodeRejected, record.StateFailed},
	}
	for _, c := range cases {
		err := vendorhttp.Foreign("acme", c.status, h, "is not JSON")
		if notify.CodeOf(err) != c.code || notify.OutcomeOf(err) != c.outcome {
			t.Errorf("HTTP %d: %v (%s), want %s", c.status, err, notify.OutcomeOf(err), c.code)
		}
	}
	var e *notify.Error
	if err := vendorhttp.Foreign("acme", 429, h, ""); !asError(err, &e) || e.RetryAfter != 30*time.Second {
		t.Errorf("429: %+v", err)
	}
}

func TestRefusalCode(t *testing.T) {
	for status, want := range map[int]notify.Code{429: notify.CodeRateLimited, 500: notify.CodeUnavailable,
		503: notify.CodeUnavailable, 400: notify.CodeRejected, 404: notify.CodeRejected, 200: notify.CodeRejected} {
		if got := vendorhttp.RefusalCode(status); got != want {
			t.Errorf("RefusalCode(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "5": 5 * time.Second, " 7 ": 7 * time.Second, "0": 0, "-3": 0,
		"86400": 24 * time.Hour, "86401": 0, "Wed, 21 Oct 2015 07:28:00 GMT": 0} {
		if got := vendorhttp.RetryAfter(http.Header{"Retry-After": {v}}); got != want {
			t.Errorf("Retry-After %q = %v, want %v", v, got, want)
		}
	}
	if vendorhttp.RetryAfter(nil) != 0 {
		t.Error("a nil header")
	}
	// An HTTP date ahead: the time until it (the header has whole seconds).
	at := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := vendorhttp.RetryAfter(http.Header{"Retry-After": {at}}); got <= 58*time.Minute || got > time.Hour {
		t.Errorf("Retry-After %q = %v, want about an hour", at, got)
	}
	far := time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat)
	if got := vendorhttp.RetryAfter(http.Header{"Retry-After": {far}}); got != 0 {
		t.Errorf("Retry-After %q (two days ahead) = %v, want 0", far, got)
	}
}

func asError(err error, target **notify.Error) bool {
	e, ok := err.(*notify.Error)
	*target = e
	return ok
}
