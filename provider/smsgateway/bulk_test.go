package smsgateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
)

// TestBulkOneCallManyRecords: a bulk send to 25 numbers is one vendor
// call carrying them comma-separated; each number is its own record,
// charged once, sharing the vendor's request_id; the vendor's per-number
// reports move each record on its own (one delivered, one failed).
func TestBulkOneCallManyRecords(t *testing.T) {
	l := newDLRLoop(t, "")
	before := l.balance(t)
	to := numbers("+91 98765 %05d", 25)
	r, err := l.n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Sale ends tonight"}, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if n := l.vendor.Requests(); n != 1 {
		t.Fatalf("vendor calls = %d, want 1", n)
	}
	sent := l.vendor.Sent()
	if len(sent) != 1 || len(sent[0].Numbers) != 25 || sent[0].Numbers[3] != "9876500003" {
		t.Fatalf("vendor got %+v", sent)
	}
	if r.Status != record.StateSent || len(r.Legs) != 25 || r.Units != 25 || r.Cost.Minor != 25*25 {
		t.Fatalf("receipt %+v", r)
	}
	if got := l.balance(t); got != before-25*25 {
		t.Fatalf("balance %d, want %d", got, before-25*25)
	}
	for i, leg := range r.Legs {
		if leg.Status != record.StateSent || leg.ProviderMessageID != sent[0].RequestID || leg.To != fmt.Sprintf("+9198765%05d", i) {
			t.Fatalf("leg %d: %+v", i, leg)
		}
	}
	// Reports name the request and the number.
	if err := l.vendor.ReportNumber(context.Background(), sent[0].RequestID, "9876500003", "delivered"); err != nil {
		t.Fatal(err)
	}
	if err := l.vendor.ReportNumber(context.Background(), sent[0].RequestID, "9876500007", "undelivered"); err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, r.Legs[3].MessageID); m.State != record.StateDelivered {
		t.Errorf("recipient 3: %s", m.State)
	}
	if m := l.message(t, r.Legs[7].MessageID); m.State != record.StateFailed {
		t.Errorf("recipient 7: %s", m.State)
	}
	if m := l.message(t, r.Legs[4].MessageID); m.State != record.StateSent {
		t.Errorf("recipient 4: %s", m.State)
	}
}

// TestBulkBatchesAndOutcomes: MaxBatch splits the recipients; a batch the
// vendor certainly refused is refunded recipient by recipient, and one
// whose answer was lost stays charged and unknown, never sent again.
func TestBulkBatchesAndOutcomes(t *testing.T) {
	l := newDLRLoop(t, "")
	p, err := smsgateway.New(smsgateway.Config{BaseURL: l.vendor.URL, APIKey: "vendor-key", HTTPClient: l.vendor.Client(), MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	n := newNotifier(t, p, l.records, nil)
	to := numbers("98765%05d", 10)
	before := l.balance(t)
	// The first batch is refused for good (an unapproved sender), the
	// second's answer is lost after the vendor took it, the third goes.
	l.vendor.FailNext(smsgatewaytest.InvalidSender)
	r, err := n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Sale ends tonight"}, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.vendor.Requests(); got != 3 {
		t.Fatalf("vendor calls = %d, want 3 (batches of 4, 4, 2)", got)
	}
	want := []record.State{record.StateFailed, record.StateFailed, record.StateFailed, record.StateFailed,
		record.StateSent, record.StateSent, record.StateSent, record.StateSent, record.StateSent, record.StateSent}
	for i, leg := range r.Legs {
		if leg.Status != want[i] {
			t.Errorf("leg %d: %s (%s)", i, leg.Status, leg.Error)
		}
	}
	if got := l.balance(t); got != before-6*25 {
		t.Fatalf("balance %d, want %d: the refused batch refunded", got, before-6*25)
	}

	// A lost answer: every recipient of the batch is unknown and charged.
	l.vendor.BreakNext()
	r, err = n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Last call"}, To: to[:3]})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || r.Status != record.StateUnknown {
		t.Fatalf("lost answer: %v %+v", err, r)
	}
	for i, leg := range r.Legs {
		if leg.Status != record.StateUnknown || leg.Cost.Minor != 25 {
			t.Errorf("leg %d: %+v", i, leg)
		}
	}
	if got := l.vendor.Requests(); got != 4 {
		t.Fatalf("vendor calls = %d, want 4: an unknown batch is not sent again", got)
	}
}

// TestBulkRefusals: bad recipients are named by index, with nothing sent
// or charged; codes go to one recipient only.
func TestBulkRefusals(t *testing.T) {
	l := newDLRLoop(t, "")
	before := l.balance(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		req    *sms.BulkRequest
		fields []string
		text   string
	}{
		"bad numbers": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi"},
			To: []string{"9876543210", "12345", "9876543211", "banana"}}, fields: []string{"to.1", "to.3"}},
		"repeated number": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi"},
			To: []string{"9876543210", "+91 98765 43210"}}, fields: []string{"to.1"}},
		"bad message": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: " "},
			To: []string{"9876543210"}}, fields: []string{"message"}},
		"otp route": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "482913", Route: sms.RouteOTP}, To: []string{"9876543210"}}, text: "one recipient"},
		"otp in a template": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Your code",
			Variables: record.Vars{"OTP": "482913"}}, To: []string{"9876543210"}}, text: "one recipient"},
		"no recipients": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi"}}, text: "at least one"},
		"to in message": {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi", To: "9876543210"}, To: []string{"9876543211"}}, text: "must be empty"},
		"too many":      {req: &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "hi"}, To: make([]string, notify.MaxBulkRecipients+1)}, text: "at most"},
		"nil":           {req: nil, text: "is required"},
	} {
		_, err := l.n.Send(ctx, tc.req)
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, f := range tc.fields {
			found := false
			for _, g := range e.Fields {
				found = found || g.Field == f
			}
			if !found {
				t.Errorf("%s: fields %v, want %s", name, e.Fields, f)
			}
		}
		if tc.text != "" && !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if l.vendor.Requests() != 0 || l.balance(t) != before {
		t.Fatalf("a refused bulk reached the vendor (%d) or moved money", l.vendor.Requests())
	}
}

// TestBulkRunsOutOfMoney: recipients are charged in order; those the
// balance no longer covers are not sent, and say why.
func TestBulkRunsOutOfMoney(t *testing.T) {
	l := newDLRLoop(t, "")
	to := numbers("98765%05d", 500) // 500 × 25 paise = ₹125 > the ₹100 opening balance
	r, err := l.n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Sale"}, To: to})
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for i, leg := range r.Legs {
		switch {
		case leg.Status == record.StateSent:
			sent++
		case leg.ErrorCode != notify.CodeInsufficientFunds || leg.To != "+91"+to[i] || leg.Cost.Minor != 0:
			t.Fatalf("leg %d: %+v", i, leg)
		}
	}
	if sent != 400 || l.balance(t) != 0 || len(l.vendor.Sent()[0].Numbers) != 400 {
		t.Fatalf("sent %d, balance %d", sent, l.balance(t))
	}
}

// TestBulkIdempotent: a repeat of the key returns the first receipt and
// sends nothing.
func TestBulkIdempotent(t *testing.T) {
	l := newDLRLoop(t, "", notify.WithIdempotency(memstore.NewIdempotency(time.Hour)))
	req := &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale", IdempotencyKey: "camp-7"},
		To: []string{"9876543210", "9876543211"}}
	first, err := l.n.Send(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.n.Send(context.Background(), req)
	if err != nil || again.MessageID != first.MessageID || len(again.Legs) != 2 || l.vendor.Requests() != 1 {
		t.Fatalf("repeat: %v %+v, vendor calls %d", err, again, l.vendor.Requests())
	}
	req.To = req.To[:1]
	if _, err := l.n.Send(context.Background(), req); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("the key with other recipients: %v", err)
	}
}

// numbers returns n recipients, format filled with 0, 1, ... n-1.
func numbers(format string, n int) []string {
	to := make([]string, n)
	for i := range to {
		to[i] = fmt.Sprintf(format, i)
	}
	return to
}
