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
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// categories defines the suite's categories for account in prefs: order
// (opt-out), marketing (opt-in) and otp (critical).
func categories(t *testing.T, prefs store.Preferences, account string) {
	t.Helper()
	for _, c := range []store.Category{
		{Account: account, Name: "order", Description: "Order updates"},
		{Account: account, Name: "marketing", Description: "Offers", OptIn: true},
		{Account: account, Name: "otp", Description: "Sign-in codes", Critical: true},
	} {
		if _, err := prefs.PutCategory(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
}

// choose records the recipient's choice of category on kind, in the form
// its channel writes (Notifier.Recipient), as the preference API does.
func choose(t *testing.T, n *notify.Notifier, prefs store.Preferences, account string, kind notify.Kind, to, category string, allowed bool) {
	t.Helper()
	key, err := n.Recipient(kind, to)
	if err != nil {
		t.Fatal(err)
	}
	if err := prefs.SetChoice(context.Background(), account, kind, key, category, allowed); err != nil {
		t.Fatal(err)
	}
}

// wantDeclined fails t unless err is CodeDeclined naming category and
// channel, not the recipient, and nothing was charged, recorded or sent.
func wantDeclined(t *testing.T, kit *notifytest.Kit, what string, rc *notify.Receipt, err error, category, channel string) {
	t.Helper()
	if notify.CodeOf(err) != notify.CodeDeclined {
		t.Fatalf("%s: %+v, %v; want CodeDeclined", what, rc, err)
	}
	if !strings.Contains(err.Error(), category) || !strings.Contains(err.Error(), channel) || strings.Contains(err.Error(), "9876543210") {
		t.Errorf("%s: error %q must name %s and %s, not the recipient", what, err, category, channel)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
	if n := records(t, kit.Ledger); n != 0 {
		t.Errorf("%s: %d records; want none", what, n)
	}
	if len(kit.SentSMS())+len(kit.SentChat())+len(kit.SentEmail()) != 0 || kit.RunQueue(t) != 0 {
		t.Errorf("%s: something was sent or queued", what)
	}
}

// A recipient who declined marketing on SMS is refused a marketing SMS on
// every way in (Send, Enqueue, SendAt, a bulk send naming it by index),
// before any charge, with CodeDeclined; a critical otp send and an order
// send to the same number go, and marketing to them on chat, which they
// allowed, goes too.
func TestDeclinedPaths(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "marketing", false)
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "otp", false) // kept, never read
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, chat.Kind, "+919876543210", "marketing", true)
	promo := &sms.Request{Account: notifytest.AccountID, To: "98765 43210", Message: "Half price today", Category: "marketing"}

	rc, err := kit.Notifier.Send(ctx, promo)
	wantDeclined(t, kit, "Send", rc, err, "marketing", "sms")
	if !strings.Contains(err.Error(), "declined") {
		t.Errorf("Send: error %q does not say the recipient declined", err)
	}
	rc, err = queued.New(kit.Notifier).Enqueue(ctx, promo)
	wantDeclined(t, kit, "Enqueue", rc, err, "marketing", "sms")
	rc, err = queued.New(kit.Notifier).SendAt(ctx, promo, time.Now().Add(time.Hour))
	wantDeclined(t, kit, "SendAt", rc, err, "marketing", "sms")
	rc, err = kit.Notifier.Send(ctx, &sms.BulkRequest{Message: sms.Request{Account: notifytest.AccountID, Message: "Half price", Category: "marketing"},
		To: []string{"9876543211", "+91 98765 43210"}})
	wantDeclined(t, kit, "bulk", rc, err, "marketing", "sms")
	// Both are named: to.1 declined, to.0 made no choice of an opt-in
	// category.
	var ne *notify.Error
	if !errors.As(err, &ne) || len(ne.Fields) != 2 || ne.Fields[0].Field != "to.0" || !strings.Contains(ne.Fields[0].Message, "opt-in") ||
		ne.Fields[1].Field != "to.1" || !strings.Contains(ne.Fields[1].Message, "declined") {
		t.Errorf("bulk error %+v: want to.0 (opt-in) and to.1 (declined)", ne)
	}
	// Sent alone, the recipient without a choice is refused for that
	// reason.
	rc, err = kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543211", Message: "Half price", Category: "marketing"})
	wantDeclined(t, kit, "opt-in without a choice", rc, err, "marketing", "sms")
	if !strings.Contains(err.Error(), "opt-in") {
		t.Errorf("error %q does not say the category is opt-in", err)
	}

	// Critical goes whatever was chosen; an opt-out category without a
	// choice goes; marketing on chat, allowed there, goes.
	for _, req := range []notify.Request{
		&sms.Request{Account: notifytest.AccountID, To: "9876543210", Route: sms.RouteOTP, Message: "482913", Category: "otp"},
		&sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Order 77 shipped", Category: "order"},
		&chat.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Half price today", Category: "marketing", Gateway: chat.GatewayQR},
	} {
		if rc, err := kit.Notifier.Send(ctx, req); err != nil || rc.Status != record.StateSent {
			t.Fatalf("%T %+v: %+v, %v; want sent", req, req, rc, err)
		}
	}
	kit.AssertSent(t, sms.Kind, 2)
	// Allowed now, the marketing SMS goes.
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "marketing", true)
	if _, err := kit.Notifier.Send(ctx, promo); err != nil {
		t.Fatalf("marketing after the recipient allowed it: %v", err)
	}
}

// A category the account has not defined is the request's mistake:
// InvalidArgument naming category, nothing charged; a name no category
// can have is refused by the request's rules.
func TestUndefinedCategory(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	for _, c := range []string{"newsletter", "News Letter"} {
		_, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Hi", Category: c})
		var ne *notify.Error
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || len(ne.Fields) != 1 || ne.Fields[0].Field != "category" {
			t.Fatalf("category %q: %v; want InvalidArgument naming category", c, err)
		}
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
}

// A marketing e-mail copied to a recipient who declined it is refused
// whole, as a suppressed copy is; the same e-mail without the copy goes.
func TestDeclinedCc(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, email.Kind, "asha@example.com", "marketing", true)
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, email.Kind, "Copy@Example.com", "marketing", false)
	news := &email.Request{Account: notifytest.AccountID, To: "asha@example.com", Subject: "Sale", Message: "<p>Half price</p>",
		Purpose: email.PurposeCampaign, Category: "marketing", Cc: []string{"copy@example.com"}}
	_, err := kit.Notifier.Send(ctx, news)
	if notify.CodeOf(err) != notify.CodeDeclined || strings.Contains(err.Error(), "copy@") {
		t.Fatalf("a campaign copied to a recipient who declined it: %v; want CodeDeclined not naming them", err)
	}
	news.Cc = nil
	if _, err := kit.Notifier.Send(ctx, news); err != nil {
		t.Fatalf("the campaign to the recipient who allowed it: %v", err)
	}
}

// The dual OTP skips a leg whose channel the recipient declined for a
// non-critical category (the other leg goes, charged alone), and is
// refused only when both are declined.
func TestDeclinedDualOTPLeg(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	if _, err := kit.Ledger.PutCategory(ctx, store.Category{Account: notifytest.AccountID, Name: "login"}); err != nil {
		t.Fatal(err)
	}
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, chat.Kind, "+919876543210", "login", false)
	req := &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913", BrandName: "Acme", Category: "login"}
	rc, err := kit.Notifier.Send(ctx, req)
	if err != nil || len(rc.Legs) != 2 || rc.Legs[0].Status != record.StateSent || rc.Legs[1].ErrorCode != notify.CodeDeclined {
		t.Fatalf("dual OTP with chat declined: %+v, %v; want the SMS leg sent and the chat leg declined", rc, err)
	}
	if len(kit.SentChat()) != 0 || kit.Balance(t) != notifytest.DefaultBalance-rc.Legs[0].Cost.Minor || rc.Legs[1].Cost.Minor != 0 {
		t.Fatalf("chat sent %d, balance %d: want the SMS leg charged alone", len(kit.SentChat()), kit.Balance(t))
	}
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "login", false)
	before := kit.Balance(t)
	if _, err := kit.Notifier.Send(ctx, req); notify.CodeOf(err) != notify.CodeDeclined || kit.Balance(t) != before {
		t.Fatalf("dual OTP with both legs declined: %v; want CodeDeclined, nothing charged", err)
	}
	// A critical category sends both legs whatever was chosen.
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "otp", false)
	req.Category = "otp"
	if rc, err := kit.Notifier.Send(ctx, req); err != nil || rc.Legs[0].Status != record.StateSent || rc.Legs[1].Status != record.StateSent {
		t.Fatalf("critical dual OTP: %+v, %v; want both legs sent", rc, err)
	}
}

// A send queued before its recipient declined its category is checked
// again when a worker takes it: failed and refunded, never sent; a send of
// another category queued with it goes.
func TestDeclinedAfterEnqueue(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	promo, err := queued.New(kit.Notifier).Enqueue(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "Half price", Category: "order"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queued.New(kit.Notifier).Enqueue(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "4821", Route: sms.RouteOTP, Category: "otp"}); err != nil {
		t.Fatal(err)
	}
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543210", "order", false)
	before := kit.Balance(t)
	kit.RunQueue(t)
	m := kit.Message(t, promo.MessageID)
	if m.State != record.StateFailed || m.ErrorCode != string(notify.CodeDeclined) || m.Cost().Minor != 0 {
		t.Fatalf("the queued order SMS is %s (%s), costing %v; want failed, declined, refunded", m.State, m.ErrorCode, m.Cost())
	}
	if got := kit.Balance(t) - before; got != promo.Cost.Minor {
		t.Errorf("refunded %d, want %d", got, promo.Cost.Minor)
	}
	if sent := kit.SentSMS(); len(sent) != 1 || !sent[0].CarriesOTP {
		t.Errorf("sent %d SMS, want the OTP alone", len(sent))
	}
}

// A send queued under a category the account removed before a worker
// took it can no longer be checked against what its recipient wants: the
// worker fails it, refunded, naming the category, and the job ends
// rather than running again and again with the charge held.
func TestCategoryRemovedAfterEnqueue(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	r, err := queued.New(kit.Notifier).Enqueue(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "Order 77 shipped", Category: "order"})
	if err != nil {
		t.Fatal(err)
	}
	if err := kit.Ledger.RemoveCategory(ctx, notifytest.AccountID, "order"); err != nil {
		t.Fatal(err)
	}
	before := kit.Balance(t)
	if _, err := kit.Queued.Work(ctx, queue.Job{Account: notifytest.AccountID, Message: r.MessageID}); err != nil {
		t.Fatalf("the worker's run: %v; want the job ended, the message failed", err)
	}
	m := kit.Message(t, r.MessageID)
	if m.State != record.StateFailed || m.ErrorCode != string(notify.CodeInvalidArgument) || !strings.Contains(m.Error, "category") || m.Cost().Minor != 0 {
		t.Fatalf("the queued SMS is %s (%s: %s), costing %v; want failed on its category, refunded", m.State, m.ErrorCode, m.Error, m.Cost())
	}
	if got := kit.Balance(t) - before; got != r.Cost.Minor {
		t.Errorf("refunded %d, want %d", got, r.Cost.Minor)
	}
	kit.AssertSent(t, sms.Kind, 0)
}

// EnqueueTxMany refuses the batch naming each declined request, before
// anything is charged.
func TestDeclinedEnqueueMany(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	categories(t, kit.Ledger, notifytest.AccountID)
	choose(t, kit.Notifier, kit.Ledger, notifytest.AccountID, sms.Kind, "+919876543212", "order", false)
	reqs := []notify.Request{
		&sms.Request{Account: notifytest.AccountID, To: "9876543211", Message: "Order 1 shipped", Category: "order"},
		&sms.Request{Account: notifytest.AccountID, To: "9876543212", Message: "Order 2 shipped", Category: "order"},
	}
	_, err := queued.New(kit.Notifier).EnqueueTxMany(ctx, kit.Queue.Begin(), reqs)
	var ne *notify.Error
	if notify.CodeOf(err) != notify.CodeDeclined || !errors.As(err, &ne) || len(ne.Fields) != 1 || ne.Fields[0].Field != "requests.1.to" {
		t.Fatalf("EnqueueTxMany with a declined recipient: %v; want CodeDeclined naming requests.1.to", err)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
}

// A chat-first timed fallback to a recipient who declined the category on
// chat skips the chat step: the SMS goes at once, charged once, nothing
// scheduled. Declined on SMS instead, the chat goes with no fallback
// scheduled; declined on both, the request is refused.
func TestFallbackSkipsDeclinedChannel(t *testing.T) {
	f := newFallbackRig(t)
	ctx := context.Background()
	categories(t, f.ledger, "acme")
	chatOrder, smsStep := chatFirst(), smsAfter(2*time.Minute)
	chatOrder.Category = "order"
	smsStep.Request.(*sms.Request).Category = "order"

	choose(t, f.n, f.ledger, "acme", chat.Kind, "+919876543210", "order", false)
	rc, err := queued.New(f.n).SendWithFallback(ctx, chatOrder, smsStep)
	if err != nil || rc.Kind != sms.Kind || rc.Status != record.StateSent || rc.Fallback != "" || !strings.Contains(rc.Note, "chat") {
		t.Fatalf("chat declined: %+v, %v; want the SMS sent at once, no fallback, a note naming the skipped chat", rc, err)
	}
	if f.cloud.Len() != 0 || f.vendor.Len() != 1 || f.balance(t) != opening-smsPrice {
		t.Fatalf("chat %d, SMS %d, balance %d: want one SMS charged once (%d)", f.cloud.Len(), f.vendor.Len(), f.balance(t), opening-smsPrice)
	}
	f.clock.Advance(time.Hour)
	if f.run() != 0 || f.vendor.Len() != 1 {
		t.Fatal("something was scheduled after the skipped step")
	}

	choose(t, f.n, f.ledger, "acme", chat.Kind, "+919876543210", "order", true)
	choose(t, f.n, f.ledger, "acme", sms.Kind, "+919876543210", "order", false)
	rc, err = queued.New(f.n).SendWithFallback(ctx, chatOrder, smsStep)
	if err != nil || rc.Kind != chat.Kind || rc.Fallback != "" || f.balance(t) != opening-smsPrice-chatPrice {
		t.Fatalf("SMS declined: %+v, %v, balance %d; want the chat alone, no fallback", rc, err, f.balance(t))
	}

	choose(t, f.n, f.ledger, "acme", chat.Kind, "+919876543210", "order", false)
	before := f.balance(t)
	if _, err := queued.New(f.n).SendWithFallback(ctx, chatOrder, smsStep); notify.CodeOf(err) != notify.CodeDeclined || f.balance(t) != before {
		t.Fatalf("both declined: %v; want CodeDeclined, nothing charged", err)
	}
}

// A declined middle step of a chain is dropped and its wait added to the
// next step's, so that the step after it keeps its time.
func TestFallbackDeclinedMiddleStepKeepsTheTimes(t *testing.T) {
	f := newFallbackRig(t)
	ctx := context.Background()
	categories(t, f.ledger, "acme")
	chatOrder, smsStep := chatFirst(), smsAfter(2*time.Minute)
	chatOrder.Category = "order"
	smsStep.Request.(*sms.Request).Category = "order"
	mail := queued.Fallback{Request: &email.Request{Account: "acme", To: "buyer@example.com", Subject: "Out for delivery",
		Message: "Your order #4411 is out for delivery", Category: "order"}, After: 10 * time.Minute}
	choose(t, f.n, f.ledger, "acme", sms.Kind, "+919876543210", "order", false)
	rc, err := queued.New(f.n).SendWithFallback(ctx, chatOrder, smsStep, mail)
	if err != nil || rc.Fallback == "" {
		t.Fatalf("%+v, %v; want the chat sent with a fallback", rc, err)
	}
	step := f.message(t, rc.Fallback)
	if step.Kind != email.Kind || !step.SendAt.Equal(queueEpoch.Add(12*time.Minute)) || step.Follows != rc.MessageID {
		t.Fatalf("the step after the chat is %s at %v following %s; want the e-mail at +12m following the chat", step.Kind, step.SendAt, step.Follows)
	}
}
