package memprovider_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

func send(t *testing.T, p *memprovider.Provider) (*notify.Result, error) {
	t.Helper()
	return p.Send(t.Context(), otpEnvelope("1234"))
}

func TestCaptureAndIDs(t *testing.T) {
	p := memprovider.New("mem")
	for i := 1; i <= 3; i++ {
		res, err := send(t, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("mem-%d", i); res.ProviderMessageID != want {
			t.Errorf("send %d: ProviderMessageID = %q, want %q", i, res.ProviderMessageID, want)
		}
		if res.Provider != "mem" {
			t.Errorf("Result.Provider = %q, want mem", res.Provider)
		}
	}
	if p.Len() != 3 {
		t.Fatalf("Len = %d, want 3", p.Len())
	}
	sent := p.Sent()
	sent[0] = nil // the caller's copy only
	if p.Sent()[0] == nil {
		t.Error("Sent returned the provider's own slice")
	}
	p.Reset()
	if p.Len() != 0 || len(p.Sent()) != 0 {
		t.Errorf("after Reset: Len = %d, Sent has %d", p.Len(), len(p.Sent()))
	}
	res, err := send(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProviderMessageID != "mem-4" {
		t.Errorf("after Reset: ProviderMessageID = %q, want mem-4 (IDs keep counting)", res.ProviderMessageID)
	}
}

func TestDefaultName(t *testing.T) {
	if got := memprovider.New("").Name(); got != "memprovider" {
		t.Errorf(`New("").Name() = %q, want "memprovider"`, got)
	}
}

func TestFailNext(t *testing.T) {
	tests := []struct {
		n        int
		code     notify.Code
		wantCode notify.Code
		fails    int
	}{
		{n: 2, code: notify.CodeUnavailable, wantCode: notify.CodeUnavailable, fails: 2},
		{n: 1, code: notify.CodeRejected, wantCode: notify.CodeRejected, fails: 1},
		{n: 1, code: notify.CodeRateLimited, wantCode: notify.CodeRateLimited, fails: 1},
		{n: 1, code: "", wantCode: notify.CodeUnavailable, fails: 1},
		{n: 0, code: notify.CodeRejected, fails: 0},
		{n: -3, code: notify.CodeRejected, fails: 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%s", tt.n, tt.code), func(t *testing.T) {
			p := memprovider.New("mem")
			p.FailNext(tt.n, tt.code)
			for i := range tt.fails {
				res, err := send(t, p)
				if err == nil {
					t.Fatalf("send %d succeeded (%s), want failure", i, res.ProviderMessageID)
				}
				if got := notify.CodeOf(err); got != tt.wantCode {
					t.Errorf("send %d: code %q, want %q", i, got, tt.wantCode)
				}
			}
			if p.Len() != 0 {
				t.Errorf("failed sends captured %d envelopes", p.Len())
			}
			res, err := send(t, p)
			if err != nil {
				t.Fatalf("send after the failures: %v", err)
			}
			if res.ProviderMessageID != "mem-1" {
				t.Errorf("ProviderMessageID = %q, want mem-1 (failures use no ID)", res.ProviderMessageID)
			}
		})
	}
}

// TestFailNextOutcomeUnknown: CodeOutcomeUnknown models a vendor that took
// the message and whose answer was lost: the envelope is captured, with a
// message ID, and the send fails with an unknown outcome.
func TestFailNextOutcomeUnknown(t *testing.T) {
	p := memprovider.New("mem")
	p.FailNext(2, notify.CodeOutcomeUnknown)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		_, err := p.Send(ctx, otpEnvelope("1"))
		errs <- err
	}()
	if err := p.Wait(ctx, 1); err != nil {
		t.Fatalf("Wait does not see the envelope whose answer was lost: %v", err)
	}
	for i := range 2 {
		var err error
		if i == 0 {
			err = <-errs
		} else {
			_, err = send(t, p)
		}
		if err == nil {
			t.Fatalf("send %d succeeded, want an unknown outcome", i)
		}
		if notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) {
			t.Errorf("send %d: %v (code %q), want outcome_unknown", i, err, notify.CodeOf(err))
		}
		if want := fmt.Sprintf("mem-%d", i+1); !strings.Contains(err.Error(), want) {
			t.Errorf("send %d: %q does not name the message ID %s", i, err, want)
		}
	}
	if p.Len() != 2 || len(p.Sent()) != 2 {
		t.Errorf("Len = %d, want 2: the vendor has both messages", p.Len())
	}
	res, err := send(t, p)
	if err != nil || res.ProviderMessageID != "mem-3" {
		t.Errorf("send after the failures: %v, %v; want mem-3", res, err)
	}
}

// TestFailNextUnknownCodesCaptureNothing: codes OutcomeOf reads as unknown,
// other than CodeOutcomeUnknown, keep capturing nothing.
func TestFailNextUnknownCodesCaptureNothing(t *testing.T) {
	for _, code := range []notify.Code{notify.CodeInternal, notify.CodeDeadlineExceeded, notify.CodeCanceled} {
		p := memprovider.New("mem")
		p.FailNext(1, code)
		if _, err := send(t, p); notify.CodeOf(err) != code {
			t.Errorf("FailNext(%s): %v", code, err)
		}
		if p.Len() != 0 {
			t.Errorf("FailNext(%s) captured the envelope", code)
		}
	}
}

// TestEndedContextIsCertain: a send abandoned because ctx ended captures
// nothing, so its error must read as a certain non-acceptance, while still
// being ctx's error.
func TestEndedContextIsCertain(t *testing.T) {
	check := func(t *testing.T, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%v: errors.Is(err, %v) = false", err, want)
		}
		if notify.OutcomeOf(err) != record.StateFailed || notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("%v: code %q, outcome %v; want unavailable, not accepted", err, notify.CodeOf(err), notify.OutcomeOf(err))
		}
	}
	p := memprovider.New("mem")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Send(ctx, otpEnvelope("1"))
	check(t, err, context.Canceled)

	p.SetLatency(time.Hour)
	ctx, cancel = context.WithCancel(t.Context())
	p.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		t.Error("the handler ran for a send abandoned during the latency")
		return nil, nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := p.Send(ctx, otpEnvelope("1"))
		done <- err
	}()
	cancel()
	check(t, <-done, context.Canceled)
	if p.Len() != 0 {
		t.Errorf("captured %d envelopes", p.Len())
	}
}

func TestFailNextKeptForEndedContext(t *testing.T) {
	p := memprovider.New("mem")
	p.FailNext(1, notify.CodeRejected)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Send(ctx, otpEnvelope("1")); !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("canceled send: %v, want unavailable wrapping context.Canceled", err)
	}
	if _, err := send(t, p); notify.CodeOf(err) != notify.CodeRejected {
		t.Errorf("next send: %v, want the pending rejected failure", err)
	}
}

func TestLatency(t *testing.T) {
	p := memprovider.New("mem")
	p.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Send(ctx, otpEnvelope("1"))
	if !errors.Is(err, context.DeadlineExceeded) || notify.OutcomeOf(err) != record.StateFailed {
		t.Fatalf("slow send: %v, want a certain refusal wrapping context.DeadlineExceeded", err)
	}
	if p.Len() != 0 {
		t.Errorf("a send abandoned during latency was captured")
	}
	p.SetLatency(time.Millisecond)
	start := time.Now()
	if _, err := send(t, p); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Millisecond {
		t.Errorf("send took %v, want at least the 1ms latency", d)
	}
	p.SetLatency(-time.Second) // treated as none
	if _, err := send(t, p); err != nil {
		t.Fatal(err)
	}
}

func TestHandler(t *testing.T) {
	errLost := errors.New("reply lost")
	tests := []struct {
		name        string
		h           memprovider.Handler
		wantErr     error
		wantCode    notify.Code
		wantCapture bool
		wantID      string
	}{
		{
			name: "result",
			h: func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return &notify.Result{Note: "ok"}, nil
			},
			wantCapture: true,
			wantID:      "mem-1",
		},
		{
			name: "own ID",
			h: func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return &notify.Result{ProviderMessageID: "vendor-9"}, nil
			},
			wantCapture: true,
			wantID:      "vendor-9",
		},
		{
			name:        "failure after acceptance",
			h:           func(context.Context, *notify.Envelope) (*notify.Result, error) { return &notify.Result{}, errLost },
			wantErr:     errLost,
			wantCapture: true,
		},
		{
			name: "outcome unknown after acceptance",
			h: func(context.Context, *notify.Envelope) (*notify.Result, error) {
				return &notify.Result{}, notify.WithCode(notify.CodeOutcomeUnknown, errLost)
			},
			wantErr:     errLost,
			wantCode:    notify.CodeOutcomeUnknown,
			wantCapture: true,
		},
		{
			name: "failure before acceptance",
			h: func(_ context.Context, env *notify.Envelope) (*notify.Result, error) {
				return nil, notify.Errorf(notify.CodeUnavailable, "down for %s", env.To)
			},
			wantCode: notify.CodeUnavailable,
		},
		{
			name:     "neither",
			h:        func(context.Context, *notify.Envelope) (*notify.Result, error) { return nil, nil },
			wantCode: notify.CodeRejected,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := memprovider.New("mem")
			p.SetHandler(tt.h)
			res, err := send(t, p)
			switch {
			case tt.wantErr != nil || tt.wantCode != "":
				if err == nil {
					t.Fatalf("send succeeded, want an error")
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v, want %v", err, tt.wantErr)
				}
				if tt.wantCode != "" && notify.CodeOf(err) != tt.wantCode {
					t.Errorf("code %q, want %q", notify.CodeOf(err), tt.wantCode)
				}
				if res != nil {
					t.Errorf("a Result came with the error")
				}
			case err != nil:
				t.Fatal(err)
			case res.ProviderMessageID != tt.wantID || res.Provider != "mem":
				t.Errorf("Result = %+v, want ID %q, provider mem", res, tt.wantID)
			}
			if got := p.Len() == 1; got != tt.wantCapture {
				t.Errorf("captured = %v, want %v", got, tt.wantCapture)
			}
		})
	}
}

func TestHandlerPanicReachesCaller(t *testing.T) {
	p := memprovider.New("mem")
	p.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) { panic("boom") })
	defer func() {
		if recover() == nil {
			t.Error("the handler's panic did not reach the caller")
		}
		p.SetHandler(nil)
		if _, err := send(t, p); err != nil {
			t.Errorf("after SetHandler(nil): %v", err)
		}
	}()
	_, _ = send(t, p)
}

func TestNilEnvelope(t *testing.T) {
	_, err := memprovider.New("mem").Send(t.Context(), nil)
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("nil envelope: %v, want invalid_argument", err)
	}
}

func TestWait(t *testing.T) {
	p := memprovider.New("mem")
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := p.Send(context.Background(), otpEnvelope("1"))
			errs <- err
		}()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Wait(ctx, n); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if p.Len() < n {
		t.Errorf("Wait returned with Len = %d", p.Len())
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}

	short, cancel2 := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel2()
	if err := p.Wait(short, n+1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait for a send that never comes: %v, want context.DeadlineExceeded", err)
	}
}
