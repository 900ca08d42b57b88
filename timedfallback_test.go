package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

const (
	chatPrice  = 35 // wallet.DefaultINR: cloud chat, transactional
	emailPrice = 8  // e-mail notification
)

// fallbackRig is a queue rig with chat (cloud) and e-mail channels too.
type fallbackRig struct {
	*queueRig
	cloud, mail *memprovider.Provider
}

func newFallbackRig(t *testing.T) *fallbackRig {
	t.Helper()
	f := &fallbackRig{cloud: memprovider.New("cloudchat"), mail: memprovider.New("smtp")}
	chatCh, err := chat.New(chat.Config{Cloud: f.cloud})
	if err != nil {
		t.Fatal(err)
	}
	emailCh, err := email.New(email.Config{Provider: f.mail})
	if err != nil {
		t.Fatal(err)
	}
	f.queueRig = newQueueRig(t, notify.WithChannel(chatCh), notify.WithChannel(emailCh))
	return f
}

func chatFirst() *chat.Request {
	return &chat.Request{Account: "acme", To: "9876543210", Message: "Your order #4411 is out for delivery", Gateway: chat.GatewayCloud}
}

func smsAfter(d time.Duration) queued.Fallback {
	return queued.Fallback{Request: &sms.Request{Account: "acme", To: "9876543210", Message: "Your order #4411 is out for delivery"}, After: d}
}

// report tells the Notifier that the chat vendor moved message id to st.
func (f *fallbackRig) report(t *testing.T, rc *notify.Receipt, st record.State) {
	t.Helper()
	if _, err := f.n.Report(context.Background(), &notify.DeliveryReport{Provider: "cloudchat",
		ProviderMessageID: rc.ProviderMessageID, State: st}); err != nil {
		t.Fatalf("report %s: %v", st, err)
	}
}

func TestFallbackFiresWhenNoReportCame(t *testing.T) {
	f := newFallbackRig(t)
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateSent || rc.Fallback == "" || f.cloud.Len() != 1 {
		t.Fatalf("first receipt %+v: want sent, naming its fallback", rc)
	}
	if got := f.balance(t); got != opening-chatPrice-smsPrice {
		t.Fatalf("balance %d, want the chat and the scheduled SMS charged (%d)", got, opening-chatPrice-smsPrice)
	}
	step := f.message(t, rc.Fallback)
	if step.State != record.StateScheduled || step.Follows != rc.MessageID || step.Confirm != record.StateDelivered {
		t.Fatalf("fallback record %+v", step)
	}
	f.clock.Advance(2*time.Minute - time.Second)
	if f.run() != 0 || f.vendor.Len() != 0 {
		t.Fatal("the fallback went before its time")
	}
	f.report(t, rc, record.StateSent) // sent is no confirmation
	f.clock.Advance(time.Second)
	if f.run() != 1 || f.vendor.Len() != 1 {
		t.Fatalf("at its time the SMS vendor got %d, want 1", f.vendor.Len())
	}
	if m := f.message(t, rc.Fallback); m.State != record.StateSent || m.Cost().Minor != smsPrice {
		t.Fatalf("fallback %s costing %v, want sent at the SMS price", m.State, m.Cost())
	}
	// A report after the timer changes nothing: the SMS went once.
	f.report(t, rc, record.StateDelivered)
	f.clock.Advance(time.Hour)
	if f.run() != 0 || f.vendor.Len() != 1 || f.balance(t) != opening-chatPrice-smsPrice {
		t.Fatalf("after a late report: SMS %d, balance %d", f.vendor.Len(), f.balance(t))
	}
}

func TestFallbackNeverFiresWhenDeliveredCameFirst(t *testing.T) {
	f := newFallbackRig(t)
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	f.report(t, rc, record.StateDelivered)
	// The report canceled the fallback at once, refunded.
	step := f.message(t, rc.Fallback)
	if step.State != record.StateFailed || !step.Refunded || f.balance(t) != opening-chatPrice {
		t.Fatalf("fallback %s (refunded %v), balance %d: want canceled and refunded", step.State, step.Refunded, f.balance(t))
	}
	f.clock.Advance(time.Hour)
	f.run()
	if f.vendor.Len() != 0 || f.balance(t) != opening-chatPrice {
		t.Fatalf("SMS %d, balance %d: the fallback must not go", f.vendor.Len(), f.balance(t))
	}
}

// The timer's job runs after a report that the report's own cancel
// missed (the step's record was read before): the worker asks again.
func TestFallbackWorkerChecksTheMessageItFollows(t *testing.T) {
	f := newFallbackRig(t)
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// A report that reached the record by another path, without the
	// report's cancel of the step (as if it failed on the way).
	if _, err := f.ledger.Move(context.Background(), "acme", rc.MessageID, store.Update{State: record.StateDelivered, At: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	if f.run() != 1 || f.vendor.Len() != 0 {
		t.Fatalf("SMS vendor got %d: a fallback of a delivered message went", f.vendor.Len())
	}
	if m := f.message(t, rc.Fallback); m.State != record.StateFailed || !m.Refunded || !strings.Contains(m.Error, "not needed") {
		t.Fatalf("fallback %s (%s), want failed, refunded, not needed", m.State, m.Error)
	}
}

func TestFallbackConfirmRead(t *testing.T) {
	f := newFallbackRig(t)
	step := smsAfter(2 * time.Minute)
	step.Confirm = record.StateRead
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), step)
	if err != nil {
		t.Fatal(err)
	}
	f.report(t, rc, record.StateDelivered)
	if m := f.message(t, rc.Fallback); m.State != record.StateScheduled {
		t.Fatalf("delivered canceled a step that waits for read: %s", m.State)
	}
	f.report(t, rc, record.StateRead)
	if m := f.message(t, rc.Fallback); m.State != record.StateFailed {
		t.Fatalf("read did not cancel the step: %s", m.State)
	}
}

func TestFallbackChain(t *testing.T) {
	f := newFallbackRig(t)
	mail := queued.Fallback{Request: &email.Request{Account: "acme", To: "buyer@example.com", Subject: "Out for delivery",
		Message: "Your order #4411 is out for delivery", Purpose: email.PurposeNotification}, After: 5 * time.Minute}
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(2*time.Minute), mail)
	if err != nil {
		t.Fatal(err)
	}
	smsStep := f.message(t, rc.Fallback)
	mailStep := f.message(t, smsStep.Fallback)
	if mailStep.Follows != smsStep.ID || !mailStep.SendAt.Equal(smsStep.SendAt.Add(5*time.Minute)) {
		t.Fatalf("chain: sms %+v, mail %+v", smsStep, mailStep)
	}
	if f.balance(t) != opening-chatPrice-smsPrice-emailPrice {
		t.Fatalf("balance %d: every step is charged when scheduled", f.balance(t))
	}
	f.clock.Advance(2 * time.Minute)
	f.run()
	if f.vendor.Len() != 1 {
		t.Fatal("the SMS step did not go")
	}
	// The SMS is delivered: the e-mail step is not needed.
	sent := f.message(t, smsStep.ID)
	if _, err := f.n.Report(context.Background(), &notify.DeliveryReport{Provider: "memsms",
		ProviderMessageID: sent.ProviderMessageID, State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	f.run()
	if f.mail.Len() != 0 || f.balance(t) != opening-chatPrice-smsPrice {
		t.Fatalf("mail %d, balance %d: the last step must not go, refunded", f.mail.Len(), f.balance(t))
	}

	// Without any report, every step goes, each at its time.
	rc, err = queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(2*time.Minute), mail)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	f.run()
	f.clock.Advance(5*time.Minute - time.Second)
	f.run()
	if f.vendor.Len() != 2 || f.mail.Len() != 0 {
		t.Fatalf("sms %d, mail %d before the mail's time", f.vendor.Len(), f.mail.Len())
	}
	f.clock.Advance(time.Second)
	f.run()
	if f.mail.Len() != 1 {
		t.Fatal("the e-mail step did not go")
	}
	_ = rc
}

func TestFallbackCancelOfAStepStopsTheRest(t *testing.T) {
	f := newFallbackRig(t)
	mail := queued.Fallback{Request: &email.Request{Account: "acme", To: "buyer@example.com", Subject: "S",
		Message: "M", Purpose: email.PurposeNotification}, After: time.Minute}
	rc, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(time.Minute), mail)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queued.New(f.n).Cancel(context.Background(), "acme", rc.Fallback); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	f.run()
	if f.vendor.Len() != 0 || f.mail.Len() != 0 || f.balance(t) != opening-chatPrice {
		t.Fatalf("sms %d, mail %d, balance %d: a canceled step stops the chain, refunded", f.vendor.Len(), f.mail.Len(), f.balance(t))
	}
}

func TestFallbackFirstNotRecordedCancelsTheSteps(t *testing.T) {
	f := newFallbackRig(t)
	// Room for the SMS step, not for the chat message.
	if _, err := f.wallet.Debit(context.Background(), "acme", notify.Money{Minor: opening - smsPrice - chatPrice + 1, Currency: record.INR()}, "drain"); err != nil {
		t.Fatal(err)
	}
	before := f.balance(t)
	_, err := queued.New(f.n).SendWithFallback(context.Background(), chatFirst(), smsAfter(time.Minute))
	if notify.CodeOf(err) != notify.CodeInsufficientFunds {
		t.Fatalf("%v, want InsufficientFunds", err)
	}
	f.clock.Advance(time.Hour)
	f.run()
	if f.balance(t) != before || f.vendor.Len() != 0 || f.cloud.Len() != 0 {
		t.Fatalf("balance %d (was %d), sms %d: the step must be refunded and never sent", f.balance(t), before, f.vendor.Len())
	}
}

func TestFallbackRefusals(t *testing.T) {
	f := newFallbackRig(t)
	ctx := context.Background()
	otp := queued.Fallback{Request: &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteOTP, Message: "482913"}, After: time.Minute}
	keyed := smsAfter(time.Minute)
	keyed.Request.(*sms.Request).IdempotencyKey = "k"
	other := smsAfter(time.Minute)
	other.Request.(*sms.Request).Account = "other"
	bad := smsAfter(time.Minute)
	bad.Request.(*sms.Request).To = "12"
	for name, tc := range map[string]struct {
		chain []queued.Fallback
		field string
	}{
		"a code":        {[]queued.Fallback{otp}, "fallback.0.request"},
		"a key":         {[]queued.Fallback{keyed}, "fallback.0.request"},
		"other account": {[]queued.Fallback{other}, "fallback.0.request"},
		"too soon":      {[]queued.Fallback{smsAfter(0)}, "fallback.0.after"},
		"too late":      {[]queued.Fallback{smsAfter(25 * time.Hour)}, "fallback.0.after"},
		"bad confirm":   {[]queued.Fallback{{Request: smsAfter(time.Minute).Request, After: time.Minute, Confirm: record.StateSent}}, "fallback.0.confirm"},
		"too many":      {[]queued.Fallback{smsAfter(time.Minute), smsAfter(time.Minute), smsAfter(time.Minute), smsAfter(time.Minute)}, "fallback"},
		"a bad number":  {[]queued.Fallback{bad}, "fallback.0.request.to"},
		"no request":    {[]queued.Fallback{{After: time.Minute}}, "fallback.0.request"},
	} {
		_, err := queued.New(f.n).SendWithFallback(ctx, chatFirst(), tc.chain...)
		var e *notify.Error
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != tc.field {
			t.Errorf("%s: %v, want InvalidArgument naming %s", name, err, tc.field)
		}
		if strings.Contains(err.Error(), "482913") {
			t.Errorf("%s: the error shows the code", name)
		}
	}
	if f.balance(t) != opening || f.cloud.Len() != 0 {
		t.Fatalf("refusals charged or sent: balance %d", f.balance(t))
	}
	// Without a queue there is no timer.
	r := newRig(t)
	if _, err := queued.New(r.n).SendWithFallback(ctx, chatTo("hi"), smsAfter(time.Minute)); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("no queue: %v, want Unavailable", err)
	}
}
