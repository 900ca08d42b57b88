package vendorhttptest

import (
	"strings"
	"testing"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// CheckError fails t (t.Fatalf) unless err, the error a provider made of
// a vendor's answer, keeps what notify.Provider promises of it, as a fuzz
// test of the provider's decoder checks on every answer that fails: its
// code is CodeRejected, CodeUnavailable, CodeRateLimited or
// CodeOutcomeUnknown; when own says the answer is the vendor's own error
// answer, it is a certain refusal (notify.OutcomeOf is
// record.StateFailed), and otherwise, when unknown says the answer leaves
// the outcome unknown (such as a 5xx that is not the vendor's), its
// outcome is record.StateUnknown; and its text is one printable line
// holding none of secrets. answer describes the answer in the failure,
// such as `HTTP 503 "busy"`.
func CheckError(t testing.TB, err error, own, unknown bool, answer string, secrets ...string) {
	t.Helper()
	switch code := notify.CodeOf(err); code {
	case notify.CodeRejected, notify.CodeUnavailable, notify.CodeRateLimited, notify.CodeOutcomeUnknown:
	default:
		t.Fatalf("%s: code %q: %v", answer, code, err)
	}
	switch got := notify.OutcomeOf(err); {
	case own && got != record.StateFailed:
		t.Fatalf("%s, the vendor's own error answer, is not a certain refusal: %v", answer, err)
	case !own && unknown && got != record.StateUnknown:
		t.Fatalf("%s, not the vendor's own error answer, is certain: %v", answer, err)
	}
	msg := err.Error()
	if strings.IndexFunc(msg, unicode.IsControl) >= 0 {
		t.Fatalf("%s: error %q has control characters", answer, msg)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			t.Fatalf("%s: error %q holds a secret", answer, msg)
		}
	}
}
