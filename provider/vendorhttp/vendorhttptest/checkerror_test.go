package vendorhttptest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// fatal is a testing.TB whose Fatalf keeps the failure and ends the
// goroutine, as testing's does.
type fatal struct {
	testing.TB
	failed string
}

func (f *fatal) Helper() {}

func (f *fatal) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// check runs CheckError and returns its failure, "" for none.
func check(err error, own, unknown bool, secrets ...string) string {
	f := &fatal{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		vendorhttptest.CheckError(f, err, own, unknown, "HTTP 400", secrets...)
	}()
	<-done
	return f.failed
}

func TestCheckError(t *testing.T) {
	refused := notify.Errorf(notify.CodeRejected, "the vendor refused the number")
	for _, c := range []struct {
		name    string
		err     error
		own     bool // the vendor's own error answer
		unknown bool // an answer that leaves the outcome unknown
		secrets []string
		says    string // in the failure, "" for none
	}{
		{"the vendor's refusal", refused, true, false, []string{"482913"}, ""},
		{"the vendor's refusal, a 5xx", refused, true, true, nil, ""},
		{"another answer, any outcome", refused, false, false, nil, ""},
		{"another answer, certain", refused, false, true, nil, "is certain"},
		{"the vendor's answer, unknown", notify.Errorf(notify.CodeOutcomeUnknown, "lost"), true, false, nil, "not a certain refusal"},
		{"an unclassified code", notify.Errorf(notify.CodeInvalidArgument, "bad"), false, false, nil, "code"},
		{"two lines", notify.Errorf(notify.CodeRejected, "one\ntwo"), false, false, nil, "control characters"},
		{"a secret", notify.Errorf(notify.CodeRejected, "code 482913 refused"), false, false, []string{"", "482913"}, "secret"},
	} {
		if got := check(c.err, c.own, c.unknown, c.secrets...); c.says == "" && got != "" || !strings.Contains(got, c.says) {
			t.Errorf("%s: failure %q, want one saying %q", c.name, got, c.says)
		}
	}
}
