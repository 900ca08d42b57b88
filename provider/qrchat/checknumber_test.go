package qrchat_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/record"
)

// TestCheckNumber: with Config.CheckNumber the provider asks check-exists
// before each send: a number that is not on the network is Rejected on
// "to" and nothing is sent; the send goes to the chat ID the answer
// names.
func TestCheckNumber(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{CheckNumber: true})

	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatal(err)
	}
	if gw.checkCount() != 1 || gw.last().ChatID != "919876543210@c.us" {
		t.Fatalf("%d checks, sent to %q", gw.checkCount(), gw.last().ChatID)
	}

	gw.setMissing("919876543210")
	posts := gw.requests()
	_, err := p.Send(context.Background(), textEnv("482915 is your code", "482915"))
	var ne *notify.Error
	if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed || notify.IsRetryable(err) ||
		!errors.As(err, &ne) || len(ne.Fields) != 1 || ne.Fields[0].Field != "to" {
		t.Fatalf("missing number: %v, want Rejected on to", err)
	}
	if gw.requests() != posts || strings.Contains(err.Error(), "482915") {
		t.Fatalf("a send reached the gateway (%d), or the error holds the OTP: %v", gw.requests()-posts, err)
	}

	// The network keeps the number in another form: the send goes there.
	gw.setRemap("919812345678", "91981234567@c.us")
	env := textEnv("hi", "")
	env.To = "9812345678"
	if _, err := p.Send(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if got := gw.last().ChatID; got != "91981234567@c.us" {
		t.Fatalf("sent to %q, want the chat ID check-exists named", got)
	}
	gw.setRemap("919812345678", "123456789012345@lid")
	if _, err := p.Send(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if got := gw.last().ChatID; got != "123456789012345@lid" {
		t.Fatalf("sent to %q, want the lid check-exists named", got)
	}
}

// TestCheckNumberFailures: a check that fails sends nothing and is a
// certain refusal: Unavailable (retryable), or Rejected for a refused key.
func TestCheckNumberFailures(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{CheckNumber: true})
	for _, tt := range []struct {
		name   string
		status int
		body   string
		code   notify.Code
	}{
		{"engine error", 500, `{"statusCode":500,"exception":{"message":"Evaluation failed: t: Protocol error (Runtime.callFunctionOn): Target closed.","name":"Error"}}`, notify.CodeUnavailable},
		{"proxy", 502, `{"message":"bad gateway"}`, notify.CodeUnavailable},
		{"unreadable", 200, `{"exists":true}`, notify.CodeUnavailable},
		{"session", 422, `{"error":"Session status is not as expected","session":"default","status":"STARTING","expected":["WORKING"]}`, notify.CodeUnavailable},
		{"key", 401, `{"message":"Unauthorized","statusCode":401}`, notify.CodeRejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			posts := gw.requests()
			gw.failNextCheck(tt.status, tt.body)
			_, err := p.Send(context.Background(), textEnv("hi", ""))
			if notify.CodeOf(err) != tt.code || notify.OutcomeOf(err) != record.StateFailed {
				t.Fatalf("got %v (%s), want %s", err, notify.CodeOf(err), tt.code)
			}
			if gw.requests() != posts {
				t.Fatal("the message was sent after a failed check")
			}
		})
	}
	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatalf("after the failures: %v", err)
	}
}
