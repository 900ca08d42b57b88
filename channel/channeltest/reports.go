package channeltest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
)

// recordOf returns the record the Notifier keeps of env once sent, in
// state, with the vendor ID id.
func (k *kit) recordOf(env *notify.Envelope, req notify.Request, state record.State, id string) *record.Message {
	at := time.Date(2025, 1, 6, 10, 0, 0, 0, time.UTC)
	return &record.Message{
		ID: env.ID, Account: k.h.Account.ID, Kind: env.Kind, Request: req.Kind(), To: env.To, Country: env.Country,
		State: state, Provider: env.Provider, ProviderMessageID: id, Gateway: env.Route,
		IdempotencyKey: req.Key(), Domain: env.Domain, Units: env.Units, Attempts: 1,
		Resend: bytes.Clone(env.Resend), CreatedAt: at, UpdatedAt: at,
	}
}

// testReports asks the ReportHandler about a failed report of each valid
// request's message, and checks that its answers hold still.
func (k *kit) testReports(t *testing.T) {
	rh := k.h.Reports
	if rh == nil {
		t.Skip("Harness.Reports is nil")
	}
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d]", i)
		env := k.forDelivery(t, what, i, req)
		vendorID := fmt.Sprintf("channeltest-vendor-%d", i)
		for _, failover := range []bool{false, true} {
			r := &notify.DeliveryReport{Provider: env.Provider, ProviderMessageID: vendorID, To: env.To,
				State: record.StateFailed, VendorCode: "channeltest", Error: "failed, as channeltest reports", Failover: failover}
			for _, state := range []record.State{record.StateSent, record.StateUnknown} {
				w := fmt.Sprintf("%s, a record %s, a failed report (Failover %t)", what, state, failover)
				k.checkRefund(t, w, rh, k.recordOf(env, req, state, vendorID), r)
			}
			if len(env.Resend) == 0 {
				continue // the Notifier asks Failed only of a record with a Resend
			}
			w := fmt.Sprintf("%s, its Resend, a failed report (Failover %t)", what, failover)
			k.checkFailed(t, w, rh, k.recordOf(env, req, record.StateFailed, vendorID), r)
		}
	}
}

// checkRefund asks Refund about m and r from several goroutines, twice
// each: one answer.
func (k *kit) checkRefund(t *testing.T, what string, rh notify.ReportHandler, m *record.Message, r *notify.DeliveryReport) {
	t.Helper()
	first := rh.Refund(m, r)
	answers := make([][2]bool, concurrency)
	var wg sync.WaitGroup
	for g := range concurrency {
		wg.Go(func() { answers[g] = [2]bool{rh.Refund(m, r), rh.Refund(m, r)} })
	}
	wg.Wait()
	for _, a := range answers {
		if a[0] != first || a[1] != first {
			t.Errorf("%s: Refund answered %t, then %t and %t: one record and report, one answer (notify.ReportHandler.Refund)", what, first, a[0], a[1])
			return
		}
	}
}

// checkFailed asks Failed about m and r twice: it reads m.Resend, which
// Prepare wrote, and answers the same request each time, with the key.
func (k *kit) checkFailed(t *testing.T, what string, rh notify.ReportHandler, m *record.Message, r *notify.DeliveryReport) {
	t.Helper()
	key := "failover:" + m.ID
	resend := bytes.Clone(m.Resend)
	first, err := rh.Failed(t.Context(), m, r, key)
	if err != nil {
		t.Errorf("%s: Failed: %v; the Resend is what Prepare kept, which it must read (notify.ReportHandler.Failed)", what, err)
		return
	}
	again, err := rh.Failed(t.Context(), m, r, key)
	if err != nil {
		t.Errorf("%s: Failed, asked again: %v", what, err)
		return
	}
	if !bytes.Equal(m.Resend, resend) {
		t.Errorf("%s: Failed changed the record's Resend", what)
	}
	switch {
	case first == nil && again == nil:
		return
	case first == nil || again == nil:
		t.Errorf("%s: Failed answered %v, then %v: one record and report, one answer", what, first, again)
		return
	}
	if first.Key() != key {
		t.Errorf("%s: Failed's request has the key %q, not %q (notify.ReportHandler.Failed: key as its idempotency key)", what, first.Key(), key)
	}
	if first.Kind() != again.Kind() || first.AccountID() != again.AccountID() || first.Key() != again.Key() ||
		fingerprint(first) != fingerprint(again) {
		t.Errorf("%s: Failed answered two different requests for one record and report", what)
	}
}
