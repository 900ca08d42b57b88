package errtext

import (
	"context"
	"errors"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

func TestNamesPackage(t *testing.T) {
	for _, tc := range []struct {
		cause string
		want  bool
	}{
		{"memstore: idempotency key \"k\" is in flight", true},
		{"conflict: pgstore: debit: short", true},
		{"a send with idempotency key \"k\" is in flight", false},
		{"debit of ₹1.00: account \"a\" has ₹0.00", false},
		{"account \"a\": not found", false},
	} {
		if got := namesPackage(tc.cause); got != tc.want {
			t.Errorf("namesPackage(%q) = %v, want %v", tc.cause, got, tc.want)
		}
	}
}

func TestShown(t *testing.T) {
	const own notify.Code = "method_not_allowed"
	provider := &notify.Error{Code: notify.CodeRateLimited, Provider: "smsgateway", Err: errors.New("HTTP 429 from 10.0.0.7")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"fields", notify.InvalidField("to", "must be 10 digits"), true},
		{"fields of an operation", &notify.Error{Code: notify.CodeInvalidArgument, Op: "notify.SendSMS", Fields: []record.FieldError{{Field: "to", Message: "x"}}}, true},
		{"insufficient funds", notify.Errorf(notify.CodeInsufficientFunds, "debit of 0.25 INR: account %q has 0.10 INR", "a"), true},
		{"not found", notify.Errorf(notify.CodeNotFound, "no message %q", "m"), true},
		{"an adapter's own code", notify.Errorf(own, "GET is not allowed here"), true},
		{"an adapter's code not declared", notify.Errorf(own, "GET is not allowed here"), false},
		{"internal", notify.Errorf(notify.CodeInternal, "panic: nil map"), false},
		{"unavailable", notify.Errorf(notify.CodeUnavailable, "no sms channel is configured"), false},
		{"rejected", notify.Errorf(notify.CodeRejected, "invalid number"), false},
		{"outcome unknown", notify.Errorf(notify.CodeOutcomeUnknown, "lost"), false},
		{"deadline", context.DeadlineExceeded, false},
		{"not an *Error", errors.New("boom"), false},
		{"an unknown code", notify.Errorf("vendor_busy", "busy"), false},
		{"a provider's caller code", provider, false},
		{"a provider's field rules", &notify.Error{Code: notify.CodeInvalidArgument, Op: "notify.SendEmail", Provider: "smtp",
			Fields: []record.FieldError{{Field: "to", Message: "needs SMTPUTF8"}}}, true},
		{"a provider's invalid argument in its words", &notify.Error{Code: notify.CodeInvalidArgument, Provider: "smtp",
			Err: errors.New("relay 10.0.0.7:25 says no")}, false},
		{"a provider's, wrapped", &notify.Error{Code: notify.CodeRateLimited, Op: "notify.SendSMS", Err: provider}, false},
		{"a store's", &notify.Error{Code: notify.CodeConflict, Err: &notify.StoreError{Store: "wallet", Err: errors.New("x")}}, false},
		{"a package's words", notify.Errorf(notify.CodeConflict, "pgstore: message %q is recorded already", "m"), false},
		{"a package's words under a code", &notify.Error{Code: notify.CodeNotFound, Err: notify.Errorf(notify.CodeNotFound, "memstore: no wallet")}, false},
	} {
		var owns []notify.Code
		if tc.name == "an adapter's own code" {
			owns = append(owns, own)
		}
		if got := Shown(tc.err, owns...); got != tc.want {
			t.Errorf("%s: Shown(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestShownText(t *testing.T) {
	for _, tc := range []struct {
		code       notify.Code
		text, want string
		ok         bool
	}{
		{notify.CodeInsufficientFunds, "notify.SendOTP: insufficient_funds: debit of 0.20 INR: short", "debit of 0.20 INR: short", true},
		{notify.CodeRejected, "notify.SendOTP: provider cloudchat: rejected: cloudchat: (#131026) undeliverable", "", false},
		{notify.CodeRateLimited, "notify.SendOTP: provider smsgateway: rate_limited: HTTP 429", "", false},
		{notify.CodeUnavailable, "notify.SendOTP: unavailable: wallet store: pgstore: dial tcp", "", false},
		{notify.CodeConflict, "notify.SendOTP: conflict: pgstore: recorded already", "", false},
	} {
		got, ok := ShownText(tc.code, tc.text)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ShownText(%s, %q) = %q, %v; want %q, %v", tc.code, tc.text, got, ok, tc.want, tc.ok)
		}
	}
	if p, c := SplitText(notify.CodeRejected, "notify.SendOTP: provider qr-mem: rejected: no"); p != "qr-mem" || c != "no" {
		t.Errorf("SplitText: %q, %q", p, c)
	}
}

func TestPublicNote(t *testing.T) {
	const pg = "unavailable: pgstore: record: failed to connect to `user=postgres database=notify host=127.0.0.1:5432`; dial error"
	for _, tc := range []struct{ note, want string }{
		{"", ""},
		{"sent by the cloud gateway, the account's primary", "sent by the cloud gateway, the account's primary"},
		{"sent by the qr gateway: the cloud gateway failed first (provider cloudchat: unavailable: cloudchat: Post \"https://graph.example/v21.0/1234/messages\": EOF (x))",
			"sent by the qr gateway: the cloud gateway failed first"},
		{"delivery log: " + pg, "the delivery log could not be written"},
		{"sent by the qr gateway: the cloud gateway failed first (HTTP 503; busy); price adjustment for the qr gateway failed: " + pg +
			"; message record: " + pg + "; delivery log: " + pg + "; idempotency record failed: " + pg,
			"sent by the qr gateway: the cloud gateway failed first; price adjustment for the qr gateway failed; " +
				"the message record could not be updated; the delivery log could not be written; the idempotency record could not be written"},
	} {
		if got := PublicNote(tc.note); got != tc.want {
			t.Errorf("PublicNote(%q)\n = %q\nwant %q", tc.note, got, tc.want)
		}
	}
}
