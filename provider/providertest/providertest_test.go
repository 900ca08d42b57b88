package providertest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/providertest"
)

const secret = "sk-test-7f3a9c"

// flawed is a provider with one chosen defect, for checking that the suite
// catches it.
type flawed struct {
	defect string
	fail   providertest.Failure
	n      atomic.Int64
	got    atomic.Int64
}

func (p *flawed) Name() string {
	if p.defect == "unstable-name" {
		return "flawed-" + strconv.FormatInt(p.n.Load(), 10)
	}
	return "flawed"
}

func (p *flawed) Send(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if p.defect != "ignores-ctx" {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if f := p.fail; f != 0 {
		p.fail = 0
		switch {
		case f == providertest.VendorErrorOn5xx && p.defect == "vendor-error-as-unknown":
			return nil, notify.Errorf(notify.CodeOutcomeUnknown, "flawed: HTTP 503 with an error code it does not know")
		case f == providertest.AnswerLost:
			p.got.Add(1) // the vendor took it; the answer is lost
			if p.defect == "lost-as-unavailable" {
				return nil, notify.Errorf(notify.CodeUnavailable, "flawed: connection reset")
			}
			return nil, errors.New("flawed: connection reset after the request")
		case p.defect == "leaks-in-failure":
			return nil, errors.New("flawed: bad key " + secret)
		case p.defect == "bare-errors":
			return nil, errors.New("flawed: vendor said no")
		case f == providertest.Permanent:
			return nil, notify.Errorf(notify.CodeRejected, "flawed: rejected")
		default:
			return nil, notify.Errorf(notify.CodeUnavailable, "flawed: down")
		}
	}
	switch p.defect {
	case "leaks-secret":
		if sms.MessageOf(env) == nil {
			return nil, notify.Errorf(notify.CodeInvalidArgument, "flawed: no content, key %s", secret)
		}
	case "panics":
		if sms.MessageOf(env) == nil {
			panic("flawed: nil content")
		}
	}
	if sms.MessageOf(env) == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "flawed: no content")
	}
	n := p.n.Add(1)
	p.got.Add(1)
	id := "f-" + strconv.FormatInt(n, 10)
	switch p.defect {
	case "no-id":
		id = ""
	case "same-id":
		id = "f-1"
	}
	return &notify.Result{ProviderMessageID: id}, nil
}

func envelope(int) *notify.Envelope {
	return &notify.Envelope{
		Kind:    sms.Kind,
		To:      "9876543210",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "hello"},
	}
}

// TestFlawedHelper runs the suite against a flawed provider when started
// by TestSuiteCatchesDefects in a child process; its failure is expected.
func TestFlawedHelper(t *testing.T) {
	defect := os.Getenv("PROVIDERTEST_DEFECT")
	if defect == "" {
		t.Skip("run by TestSuiteCatchesDefects")
	}
	p := &flawed{defect: defect}
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: envelope,
		Secrets:  []string{secret},
		FailNext: func(f providertest.Failure) bool {
			if f == providertest.RateLimited {
				return false
			}
			p.fail = f
			return true
		},
		Received: func() int { return int(p.got.Load()) },
	})
}

func TestSuiteCatchesDefects(t *testing.T) {
	if os.Getenv("PROVIDERTEST_DEFECT") != "" {
		t.Skip("child process")
	}
	tests := []struct {
		defect string
		want   string // in the child's output
	}{
		{"ignores-ctx", "though its context ended"},
		{"bare-errors", "want a retryable error"},
		{"lost-as-unavailable", "want outcome unknown"},
		{"vendor-error-as-unknown", "want a certain refusal"},
		{"leaks-secret", "contains Harness.Secrets[0]"},
		{"leaks-in-failure", "contains Harness.Secrets[0]"},
		{"panics", "Send panicked"},
		{"no-id", "empty ProviderMessageID"},
		{"same-id", "was returned"},
		{"unstable-name", "Name() changed"},
	}
	for _, tt := range tests {
		t.Run(tt.defect, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFlawedHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "PROVIDERTEST_DEFECT="+tt.defect)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("suite passed or did not run (err %v); output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(string(out), secret) {
				t.Errorf("the suite printed the secret:\n%s", out)
			}
		})
	}
}

// TestSkipsWithoutHooks checks that a harness without optional hooks
// passes with the hook-dependent subtests skipped.
func TestSkipsWithoutHooks(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		Provider: memprovider.New("bare"),
		Envelope: envelope,
	})
}
