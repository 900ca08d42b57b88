package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/gateway"
	"github.com/notifykit/notify/record"
)

// errBody is the remote's (httpapi's) error body for code.
func errBody(code, msg string) string {
	return fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":%q}}`, code, msg)
}

// unknownBody is httpapi's 202 answer for a send whose outcome is unknown
// at the remote: the whole receipt, charged, and the error.
const unknownBody = `{"success":false,"message_id":"remote-77","channel":"sms","to":"9876543210","status":"unknown",` +
	`"provider":"sms-mem","units":1,"cost":"0.25","cost_minor":25,` +
	`"error":{"code":"outcome_unknown","message":"the vendor may have the message (its answer was lost or unclear): cause: provider sms-mem: timeout"}}`

// TestErrorClassification walks the table of the package documentation:
// each answer of the remote, its outcome and its local code.
func TestErrorClassification(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url())
	const (
		notAccepted = record.StateFailed
		unknown     = record.StateUnknown
	)
	cases := []struct {
		name    string
		r       reply
		code    notify.Code
		outcome record.State
		retry   time.Duration
		fields  []string
		hint    string
	}{
		// Bodies that prove the remote did not take the message.
		{"400 invalid_argument", reply{status: 400, body: `{"success":false,"error":{"code":"invalid_argument","message":"invalid request","fields":{"to":"must be 10 digits","message":"is required"}}}`},
			notify.CodeInvalidArgument, notAccepted, 0, []string{"message", "to"}, ""},
		{"401 unauthenticated", reply{status: 401, body: errBody("unauthenticated", "the API key is not valid")}, notify.CodeRejected, notAccepted, 0, nil, "Config.APIKey"},
		{"403 permission_denied", reply{status: 403, body: errBody("permission_denied", "disabled")}, notify.CodeRejected, notAccepted, 0, nil, "Config.APIKey"},
		{"402 insufficient_funds", reply{status: 402, body: errBody("insufficient_funds", "low")}, notify.CodeRejected, notAccepted, 0, nil, "top-up"},
		{"404 not_found", reply{status: 404, body: errBody("not_found", "no such endpoint")}, notify.CodeRejected, notAccepted, 0, nil, "Config.BaseURL"},
		{"405 method_not_allowed", reply{status: 405, body: errBody("method_not_allowed", "use POST")}, notify.CodeRejected, notAccepted, 0, nil, "Config.BaseURL"},
		{"413 request_too_large", reply{status: 413, body: errBody("request_too_large", "over 1 MiB")}, notify.CodeRejected, notAccepted, 0, nil, "size limit"},
		{"431 request_headers_too_large", reply{status: 431, body: errBody("request_headers_too_large", "over 64 KiB")}, notify.CodeRejected, notAccepted, 0, nil, "headers"},
		{"415 unsupported_media_type", reply{status: 415, body: errBody("unsupported_media_type", "send JSON")}, notify.CodeRejected, notAccepted, 0, nil, "Config.BaseURL"},
		{"429 Retry-After", reply{status: 429, header: map[string]string{"Retry-After": "7"}, body: errBody("rate_limited", "slow down")},
			notify.CodeRateLimited, notAccepted, 7 * time.Second, nil, ""},
		{"429 retry_after_seconds", reply{status: 429, body: `{"success":false,"error":{"code":"rate_limited","message":"slow down","retry_after_seconds":3}}`},
			notify.CodeRateLimited, notAccepted, 3 * time.Second, nil, ""},
		{"502 rejected", reply{status: 502, body: errBody("rejected", "number barred")}, notify.CodeRejected, notAccepted, 0, nil, "number barred"},
		{"503 unavailable", reply{status: 503, body: errBody("unavailable", "down")}, notify.CodeUnavailable, notAccepted, 0, nil, "down"},

		// Answers that prove nothing: the remote may have sent it.
		{"202 outcome_unknown", reply{status: 202, body: unknownBody}, notify.CodeOutcomeUnknown, unknown, 0, nil, "remote-77"},
		{"202 without a body", reply{status: 202}, notify.CodeOutcomeUnknown, unknown, 0, nil, "202"},
		{"202 with a proving code", reply{status: 202, body: errBody("unavailable", "down")}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"409 conflict", reply{status: 409, body: errBody("conflict", "in flight")}, notify.CodeOutcomeUnknown, unknown, 0, nil, "in flight"},
		{"500 internal", reply{status: 500, body: errBody("internal", "internal error")}, notify.CodeOutcomeUnknown, unknown, 0, nil, "internal"},
		{"503 canceled", reply{status: 503, body: errBody("canceled", "the request was canceled")}, notify.CodeOutcomeUnknown, unknown, 0, nil, "canceled"},
		{"504 deadline_exceeded", reply{status: 504, body: errBody("deadline_exceeded", "slow")}, notify.CodeOutcomeUnknown, unknown, 0, nil, "deadline_exceeded"},
		{"500 a code from the future", reply{status: 500, body: errBody("vendor_exploded", "?")}, notify.CodeOutcomeUnknown, unknown, 0, nil, "vendor_exploded"},
		{"503 JSON without an error", reply{status: 503, body: `{}`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"503 JSON null", reply{status: 503, body: `null`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"503 empty", reply{status: 503}, notify.CodeOutcomeUnknown, unknown, 0, nil, "without the API's JSON body"},
		{"502 proxy page", reply{status: 502, body: `<html>Bad Gateway</html>`}, notify.CodeOutcomeUnknown, unknown, 0, nil, "without the API's JSON body"},
		{"504 proxy page", reply{status: 504, body: `<html>Gateway Timeout</html>`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"404 proxy page", reply{status: 404, body: `<html>Not Found</html>`}, notify.CodeRejected, notAccepted, 0, nil, "check Config.BaseURL"},
		{"429 proxy page", reply{status: 429, body: `<html>Too Many</html>`}, notify.CodeRateLimited, notAccepted, 0, nil, ""},
		{"409 not JSON", reply{status: 409, body: `conflict`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"302 without Location", reply{status: 302}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"200 not JSON", reply{status: 200, body: `<html>ok</html>`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"200 no message_id", reply{status: 200, body: `{"success":true}`}, notify.CodeOutcomeUnknown, unknown, 0, nil, "message_id"},
		{"200 success false", reply{status: 200, body: `{"success":false}`}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"200 success false, proving code", reply{status: 200, body: errBody("unavailable", "down")}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"503 body cut short", reply{status: 503, body: errBody("unavailable", "down"), network: cutBody}, notify.CodeOutcomeUnknown, unknown, 0, nil, "could not be read"},
		{"200 body cut short", reply{status: 200, body: `{"success":true,"message_id":"remote-88"}`, network: cutBody}, notify.CodeOutcomeUnknown, unknown, 0, nil, ""},
		{"no answer", reply{network: hangUp}, notify.CodeOutcomeUnknown, unknown, 0, nil, "no answer: EOF (the vendor may have accepted the message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.failWith(c.r)
			before, _ := f.counts()
			_, err := p.Send(context.Background(), smsEnv(0))
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if got := notify.OutcomeOf(err); got != c.outcome {
				t.Errorf("outcome %v, want %v", got, c.outcome)
			}
			if want := c.outcome == notAccepted && (c.code == notify.CodeUnavailable || c.code == notify.CodeRateLimited); notify.IsRetryable(err) != want {
				t.Errorf("IsRetryable = %v, want %v", !want, want)
			}
			if e.RetryAfter != c.retry {
				t.Errorf("RetryAfter %v, want %v", e.RetryAfter, c.retry)
			}
			var fields []string
			for _, fe := range e.Fields {
				fields = append(fields, fe.Field)
			}
			if !reflect.DeepEqual(fields, c.fields) {
				t.Errorf("fields %v, want %v", fields, c.fields)
			}
			if c.hint != "" && !strings.Contains(err.Error(), c.hint) {
				t.Errorf("%q does not mention %q", err, c.hint)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error carries the key: %v", err)
			}
			if after, _ := f.counts(); after != before+1 {
				t.Errorf("the remote got %d requests, want 1", after-before)
			}
		})
	}
}

// TestRemote503WithoutBodyIsUnknown: a 503 whose body does not prove a
// refusal (a proxy's, or none) may come after the remote sent the
// message, so it is an unknown outcome, not a retryable one.
func TestRemote503WithoutBodyIsUnknown(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url())
	for _, r := range []reply{
		{status: 503},
		{status: 503, body: "Service Unavailable\n", header: map[string]string{"Content-Type": "text/plain"}},
	} {
		f.failWith(r)
		_, err := p.Send(context.Background(), smsEnv(0))
		if notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) {
			t.Errorf("503 %q: %v (code %q), want outcome_unknown", r.body, err, notify.CodeOf(err))
		}
	}
	if req, _ := f.counts(); req != 2 {
		t.Errorf("the remote got %d requests, want 2", req)
	}
}

// TestRemote202UnknownIsUnknown: the remote's own unknown outcome comes
// back as an unknown outcome naming the remote message.
func TestRemote202UnknownIsUnknown(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url())
	f.failWith(reply{status: 202, body: unknownBody})
	res, err := p.Send(context.Background(), smsEnv(0))
	if res != nil {
		t.Errorf("a Result came with the error: %+v", res)
	}
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) {
		t.Fatalf("got %v (code %q), want outcome_unknown", err, notify.CodeOf(err))
	}
	if !strings.Contains(err.Error(), "remote-77") || !strings.Contains(err.Error(), "outcome_unknown") {
		t.Errorf("%q does not name the remote message remote-77 and its code", err)
	}
}

// TestNoRetryAcrossHopForUnknown: a Notifier whose provider is the gateway
// does not retry a send the remote answered without proving a refusal.
// The remote sees the message once; the local outcome is unknown, its
// charge kept. A proven temporary refusal, by contrast, is retried.
func TestNoRetryAcrossHopForUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    reply
	}{
		{"503 canceled", reply{status: 503, body: errBody("canceled", "the request was canceled")}},
		{"503 without a body", reply{status: 503}},
		{"504 proxy page", reply{status: 504, body: "<html>Gateway Timeout</html>"}},
		{"202 outcome_unknown", reply{status: 202, body: unknownBody}},
		{"no answer", reply{network: hangUp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRemote(t)
			local := newLocalFor(t, f.url(), testKey, 3)
			lb := local.balance(t)
			f.failWith(tc.r, tc.r, tc.r) // what a retry would get, too
			rec, err := local.n.Send(context.Background(), &sms.Request{Account: "local", To: "9876543210", Message: "once only"})
			if req, _ := f.counts(); req != 1 {
				t.Errorf("the remote got the message %d times, want once", req)
			}
			if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
				t.Errorf("local error %v (code %q), want outcome_unknown", err, notify.CodeOf(err))
			}
			if rec == nil || rec.Status != record.StateUnknown || rec.Attempts != 1 {
				t.Errorf("receipt %+v, want status unknown after 1 attempt", rec)
			}
			if local.balance(t) == lb {
				t.Error("the local charge was refunded for a message the remote may have sent")
			}
		})
	}
	t.Run("503 unavailable is retried", func(t *testing.T) {
		f := newFakeRemote(t)
		local := newLocalFor(t, f.url(), testKey, 3)
		f.failWith(reply{status: 503, body: errBody("unavailable", "provider sms-mem: down")})
		rec, err := local.n.Send(context.Background(), &sms.Request{Account: "local", To: "9876543210", Message: "again"})
		if err != nil {
			t.Fatal(err)
		}
		if req, sent := f.counts(); req != 2 || sent != 1 || rec.Attempts != 2 {
			t.Errorf("requests %d, sent %d, attempts %d; want 2, 1, 2", req, sent, rec.Attempts)
		}
	})
}

// TestTransportFailures: without an answer, what decides is whether the
// request was written.
func TestTransportFailures(t *testing.T) {
	unknown := func(t *testing.T, err error, target error) {
		t.Helper()
		if notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.IsRetryable(err) {
			t.Errorf("got %v (code %q), want outcome_unknown", err, notify.CodeOf(err))
		}
		if target != nil && !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	notSent := func(t *testing.T, err error, target error) {
		t.Helper()
		if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("got %v (code %q), want a retryable unavailable", err, notify.CodeOf(err))
		}
		if target != nil && !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}

	t.Run("connection refused", func(t *testing.T) {
		f := newFakeRemote(t)
		base := f.url()
		f.srv.Close()
		_, err := newProvider(t, base).Send(context.Background(), smsEnv(0))
		notSent(t, err, nil)
	})

	t.Run("context ended before Send", func(t *testing.T) {
		f := newFakeRemote(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := newProvider(t, f.url()).Send(ctx, smsEnv(0))
		notSent(t, err, context.Canceled)
		if req, _ := f.counts(); req != 0 {
			t.Errorf("the remote got %d requests", req)
		}
	})

	t.Run("context ends while connecting", func(t *testing.T) {
		dialing := make(chan struct{})
		tr := &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				close(dialing)
				<-ctx.Done()
				return nil, ctx.Err()
			},
		}
		defer tr.CloseIdleConnections()
		p, err := gateway.New(gateway.Config{BaseURL: "http://127.0.0.1:9/api/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-dialing; cancel() }()
		_, err = p.Send(ctx, smsEnv(0))
		notSent(t, err, context.Canceled)
	})

	t.Run("context ends after the request was written", func(t *testing.T) {
		f := newFakeRemote(t)
		f.arrived = make(chan struct{}, 1)
		f.failWith(reply{network: stall})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-f.arrived; cancel() }()
		_, err := newProvider(t, f.url()).Send(ctx, smsEnv(0))
		unknown(t, err, context.Canceled)
	})

	t.Run("client timeout after the request was written", func(t *testing.T) {
		f := newFakeRemote(t)
		f.failWith(reply{network: stall})
		p, err := gateway.New(gateway.Config{BaseURL: f.url(), APIKey: testKey, HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Send(context.Background(), smsEnv(0))
		unknown(t, err, nil)
		if req, _ := f.counts(); req != 1 {
			t.Errorf("the remote got %d requests, want 1", req)
		}
	})

	// net/http's Transport writes a request with an Idempotency-Key again
	// on a new connection when a reused one fails after the request was
	// written; the provider must not let it.
	t.Run("no answer on a reused connection", func(t *testing.T) {
		f := newFakeRemote(t)
		p := newProvider(t, f.url())
		if _, err := p.Send(context.Background(), smsEnv(0)); err != nil {
			t.Fatal(err)
		}
		f.failWith(reply{network: hangUp})
		_, err := p.Send(context.Background(), smsEnv(1))
		unknown(t, err, nil)
		if req, sent := f.counts(); req != 2 || sent != 1 {
			t.Errorf("the remote got %d requests (%d sent), want 2 (1): the lost one was written again", req, sent)
		}
		if got := f.lastRequest().header.Get("Idempotency-Key"); got != smsEnv(1).ID {
			t.Errorf("Idempotency-Key %q, want %q", got, smsEnv(1).ID)
		}
	})
}

// TestBadEnvelopeIsCertain: envelopes refused before any I/O are certain
// refusals.
func TestBadEnvelopeIsCertain(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url())
	for _, env := range []*notify.Envelope{
		nil,
		{Kind: sms.Kind, To: "9876543210", Content: &sms.Message{Route: sms.RouteSMS}},
		{Kind: chat.Kind, To: "9876543210", Content: &chat.Message{}},
		{Kind: email.Kind, To: "a@example.com", Content: &email.Message{Subject: "x"}},
		{Kind: sms.Kind, To: "9876543210"},
	} {
		_, err := p.Send(context.Background(), env)
		if notify.CodeOf(err) != notify.CodeInvalidArgument || notify.OutcomeOf(err) != record.StateFailed {
			t.Errorf("%+v: %v, want invalid_argument", env, err)
		}
	}
	if req, _ := f.counts(); req != 0 {
		t.Errorf("the remote got %d requests", req)
	}
}
