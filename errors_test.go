package notify

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/notifykit/notify/record"
)

func TestCodeOf(t *testing.T) {
	inner := Errorf(CodeRejected, "bad number")
	cases := []struct {
		err  error
		want Code
	}{
		{nil, ""},
		{errors.New("x"), CodeInternal},
		{context.Canceled, CodeCanceled},
		{fmt.Errorf("op: %w", context.DeadlineExceeded), CodeDeadlineExceeded},
		{inner, CodeRejected},
		{fmt.Errorf("wrapped: %w", inner), CodeRejected},
	}
	for _, c := range cases {
		if got := CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestErrorMessageAndWrap(t *testing.T) {
	var fe record.FieldErrors
	fe.Add("to", "must be 10 digits")
	fe.Addf("route", "must be one of sms, otp, dlt, not %q", "x")
	err := InvalidFields(fe)
	want := `invalid_argument: to: must be 10 digits; route: must be one of sms, otp, dlt, not "x"`
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err.Error(), want)
	}
	if InvalidFields(record.FieldErrors{}) != nil {
		t.Error("empty FieldErrors gave an error")
	}

	// wrap copies a top-level *Error instead of nesting it.
	w := wrap("notify.SendSMS", "smsgateway", CodeInternal, Errorf(CodeUnavailable, "down"))
	if w.Op != "notify.SendSMS" || w.Provider != "smsgateway" || w.Code != CodeUnavailable {
		t.Errorf("wrap = %+v", w)
	}
	if got := w.Error(); got != "notify.SendSMS: provider smsgateway: unavailable: down" {
		t.Errorf("wrapped message = %q", got)
	}
	c := wrap("op", "", CodeInternal, fmt.Errorf("x: %w", context.Canceled))
	if c.Code != CodeCanceled || !errors.Is(c, context.Canceled) {
		t.Errorf("context error wrapped as %+v", c)
	}
}
