package smsgateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
)

// TestVendorBusy503IsARefusal: the vendor answers HTTP 503 with its own
// error body and a status_code it does not document. It formed that
// answer itself and took nothing: a certain, temporary refusal
// (CodeUnavailable, retried, refunded), not an unknown outcome. A proxy's
// page on the same status proves nothing and stays unknown.
func TestVendorBusy503IsARefusal(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)

	v.RefuseNext(1, http.StatusServiceUnavailable, 503, "busy")
	_, err := p.Send(t.Context(), envelope(1))
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeUnavailable || !notify.IsRetryable(err) || notify.OutcomeOf(err) != record.StateFailed {
		t.Fatalf("503 with return false: %v (code %q, outcome %v), want a retryable unavailable", err, notify.CodeOf(err), notify.OutcomeOf(err))
	}
	if msg := err.Error(); !strings.Contains(msg, "vendor status 503: busy") || strings.Contains(msg, testKey) || strings.Contains(msg, testOTP) {
		t.Errorf("503 with return false: message %q, want the vendor's status and text and no secret", msg)
	}
	if strings.Contains(err.Error(), "may have accepted the message") {
		t.Errorf("503 with return false: message %q says the vendor may have the message", err)
	}

	// The same status from a proxy in front of the vendor, and the
	// vendor's answer cut short: nothing shows that it refused.
	v.FailNextHTTP(http.StatusBadGateway)
	if _, err := p.Send(t.Context(), envelope(0)); notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.IsRetryable(err) {
		t.Errorf("a proxy's 502 page: %v, want outcome_unknown", err)
	}
	if v.Accepted() != 0 || v.Requests() != 2 {
		t.Fatalf("the vendor accepted %d of %d requests, want 0 of 2", v.Accepted(), v.Requests())
	}
}

// TestBusyRefusalsChargeNothing runs five sends through a Notifier whose
// vendor refuses every request with {"return": false, "status_code": 503,
// "message": "busy"} on HTTP 503. Each is retried, then failed and
// refunded once: the wallet ends where it started.
func TestBusyRefusalsChargeNothing(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	w := memstore.NewWallet()
	opening := notify.Money{Minor: 10_000, Currency: record.INR()}
	if err := w.Open("acme", opening); err != nil {
		t.Fatal(err)
	}
	records := memstore.NewLedger(w)
	const attempts = 3
	n := newNotifier(t, p, records, nil,
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: attempts, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}))
	v.RefuseNext(-1, http.StatusServiceUnavailable, 503, "busy")

	ctx := context.Background()
	const sends = 5
	for i := range sends {
		r, err := n.Send(ctx, &sms.Request{Account: "acme", To: fmt.Sprintf("98765%05d", i), Message: "Your order shipped"})
		if notify.CodeOf(err) != notify.CodeUnavailable || notify.OutcomeOf(err) != record.StateFailed {
			t.Errorf("send %d: %v (code %q), want unavailable, not accepted", i, err, notify.CodeOf(err))
		}
		if r == nil {
			t.Fatalf("send %d: no receipt (%v)", i, err)
		}
		if r.Status != record.StateFailed {
			t.Errorf("send %d: receipt status %s, want failed", i, r.Status)
		}
		m, err := records.Message(ctx, "acme", r.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.State != record.StateFailed || !m.Refunded || m.Cost().Minor != 0 || m.Charge.Minor == 0 {
			t.Errorf("send %d: record %s, refunded %v, charge %d, cost %d; want failed and its charge refunded",
				i, m.State, m.Refunded, m.Charge.Minor, m.Cost().Minor)
		}
	}
	if got, want := v.Requests(), sends*attempts; got != want {
		t.Errorf("the vendor got %d requests, want %d (each send tried %d times)", got, want, attempts)
	}
	if v.Accepted() != 0 {
		t.Fatalf("the vendor accepted %d", v.Accepted())
	}
	b, err := w.Balance(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if b.Available != opening {
		t.Errorf("balance %v after %d refusals, want the opening %v", b.Available, sends, opening)
	}
	// Each charge came back exactly once.
	entries, _, err := w.Ledger("acme")
	if err != nil {
		t.Fatal(err)
	}
	debits, refunds := 0, map[string]int{}
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Ref, "refund:"); ok && e.Kind == memstore.Credit {
			refunds[id]++
		} else if e.Kind == memstore.Debit {
			debits++
		}
	}
	if debits != sends || len(refunds) != sends {
		t.Errorf("%d debits and refunds of %d messages, want %d of each", debits, len(refunds), sends)
	}
	for id, k := range refunds {
		if k != 1 {
			t.Errorf("message %s refunded %d times", id, k)
		}
	}
}
