package notify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// suppress puts to on the test account's list of kind, in the form the
// channel writes (Notifier.Recipient), as a host app writing to the list
// must.
func suppress(t *testing.T, kit *notifytest.Kit, kind notify.Kind, to string, reason store.SuppressionReason) {
	t.Helper()
	key, err := kit.Notifier.Recipient(kind, to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Ledger.AddSuppression(context.Background(), store.Suppression{Account: notifytest.AccountID,
		Kind: kind, To: key, Reason: reason, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// records counts the account's message records.
func records(t *testing.T, l *memstore.Ledger) int {
	t.Helper()
	recs, err := l.ByAccount(context.Background(), notifytest.AccountID, store.MessageCursor{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// Every way into the pipeline refuses a suppressed recipient before it
// charges: Send, Enqueue, SendAt and SendWithFallback's first step, and
// a bulk request (whole, naming the recipient by index). Nothing is
// charged, recorded, queued or sent, and the error names the reason but
// not the recipient.
func TestSuppressedPaths(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	suppress(t, kit, email.Kind, "Promo.Out@Example.com", store.SuppressUnsubscribed)
	suppress(t, kit, sms.Kind, "+919876543210", store.SuppressHardBounce)
	campaign := &email.Request{Account: notifytest.AccountID, To: "promo.out@example.com", Subject: "Sale",
		Message: "<p>Half price</p>", Purpose: email.PurposeCampaign}

	check := func(name string, rc *notify.Receipt, err error) {
		t.Helper()
		if notify.CodeOf(err) != notify.CodeSuppressed {
			t.Fatalf("%s: %+v, %v; want CodeSuppressed", name, rc, err)
		}
		if strings.Contains(err.Error(), "promo.out") || strings.Contains(err.Error(), "9876543210") {
			t.Errorf("%s: error %q shows the recipient", name, err)
		}
		kit.AssertBalance(t, notifytest.DefaultBalance)
		if n := records(t, kit.Ledger); n != 0 {
			t.Errorf("%s: %d records; want none", name, n)
		}
		if len(kit.SentEmail())+len(kit.SentSMS()) != 0 || kit.RunQueue(t) != 0 {
			t.Errorf("%s: something was sent or queued", name)
		}
	}
	rc, err := kit.Notifier.Send(ctx, campaign)
	check("Send", rc, err)
	if !strings.Contains(err.Error(), "unsubscribed") {
		t.Errorf("error %q does not name the reason", err)
	}
	rc, err = queued.New(kit.Notifier).Enqueue(ctx, campaign)
	check("Enqueue", rc, err)
	rc, err = queued.New(kit.Notifier).SendAt(ctx, campaign, time.Now().Add(time.Hour))
	check("SendAt", rc, err)
	otpSMS := &sms.Request{Account: notifytest.AccountID, To: "9876543210", Route: sms.RouteOTP, Message: "4821"}
	rc, err = kit.Notifier.Send(ctx, otpSMS) // transactional, but a hard bounce
	check("Send OTP SMS", rc, err)
	rc, err = kit.Notifier.Send(ctx, &sms.BulkRequest{Message: sms.Request{Account: notifytest.AccountID, Message: "Store closed today"},
		To: []string{"9876543211", "98765 43210"}})
	check("bulk", rc, err)
	var ne *notify.Error
	if !errors.As(err, &ne) || len(ne.Fields) != 1 || ne.Fields[0].Field != "to.1" || !strings.Contains(ne.Fields[0].Message, "hard_bounce") {
		t.Errorf("bulk error %+v: want field to.1 naming hard_bounce", ne)
	}

	// Transactional mail to the unsubscribed address goes, and is charged.
	rc, err = kit.Notifier.Send(ctx, &email.Request{Account: notifytest.AccountID, To: "promo.out@example.com",
		Subject: "Receipt", Message: "Paid ₹499", Purpose: email.PurposeInvoice})
	if err != nil || rc.Status != record.StateSent || kit.Balance(t) != notifytest.DefaultBalance-rc.Cost.Minor {
		t.Fatalf("invoice mail to an unsubscribed address: %+v, %v", rc, err)
	}
	// Removed, the campaign goes.
	if err := kit.Ledger.RemoveSuppression(ctx, notifytest.AccountID, email.Kind, "promo.out@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := kit.Notifier.Send(ctx, campaign); err != nil {
		t.Fatalf("campaign after removal: %v", err)
	}
}

// A campaign queued before its recipient opted out is checked again when
// a worker takes it: refunded, never sent. A transactional message
// queued the same way still goes.
func TestSuppressedAfterEnqueue(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	campaign := &email.Request{Account: notifytest.AccountID, To: "late.out@example.com", Subject: "Sale",
		Message: "<p>Half price</p>", Purpose: email.PurposeCampaign}
	rc, err := queued.New(kit.Notifier).Enqueue(ctx, campaign)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	invoice := &email.Request{Account: notifytest.AccountID, To: "late.out@example.com", Subject: "Invoice 81",
		Message: "Your invoice.", Purpose: email.PurposeInvoice}
	if _, err := queued.New(kit.Notifier).Enqueue(ctx, invoice); err != nil {
		t.Fatalf("Enqueue invoice: %v", err)
	}
	suppress(t, kit, email.Kind, "late.out@example.com", store.SuppressUnsubscribed)
	before := kit.Balance(t)
	kit.RunQueue(t)
	m, err := kit.Notifier.Message(ctx, notifytest.AccountID, rc.MessageID)
	if err != nil || m.State != record.StateFailed || m.Cost().Minor != 0 {
		t.Fatalf("the queued campaign is %+v, %v; want failed and refunded", m, err)
	}
	if got := kit.Balance(t) - before; got != rc.Cost.Minor {
		t.Errorf("refunded %d, want the campaign's %d", got, rc.Cost.Minor)
	}
	sent := kit.SentEmail()
	if len(sent) != 1 || email.MessageOf(sent[0]).Subject != "Invoice 81" {
		t.Errorf("sent %d e-mails, want the invoice alone", len(sent))
	}
}

// A cc or bcc recipient on the list stops a campaign as its To would:
// refused whole before anything is charged. An invoice copied to the
// same address still goes (an unsubscribe stops promotions only).
func TestSuppressedCcAndBcc(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	suppress(t, kit, email.Kind, "copy.out@example.com", store.SuppressUnsubscribed)
	for _, mod := range []func(r *email.Request){
		func(r *email.Request) { r.Cc = []string{"ok@example.com", "Copy.Out@example.com"} },
		func(r *email.Request) { r.Bcc = []string{"copy.out@example.com"} },
	} {
		campaign := &email.Request{Account: notifytest.AccountID, To: "asha@example.com", Subject: "Sale",
			Message: "<p>Half price</p>", Purpose: email.PurposeCampaign}
		mod(campaign)
		_, err := kit.Notifier.Send(ctx, campaign)
		if notify.CodeOf(err) != notify.CodeSuppressed || strings.Contains(err.Error(), "copy.out") {
			t.Fatalf("a campaign copied to an unsubscribed address: %v; want CodeSuppressed not naming it", err)
		}
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
	if n := len(kit.SentEmail()); n != 0 {
		t.Fatalf("%d e-mails sent", n)
	}
	invoice := &email.Request{Account: notifytest.AccountID, To: "asha@example.com", Subject: "Invoice 81",
		Message: "Your invoice.", Purpose: email.PurposeInvoice, Cc: []string{"copy.out@example.com"}}
	if _, err := kit.Notifier.Send(ctx, invoice); err != nil {
		t.Fatalf("an invoice copied to an unsubscribed address: %v", err)
	}
}

// countingLists is a memstore ledger that counts the reads of its
// suppression list: one recipient at a time, and many at once.
type countingLists struct {
	*memstore.Ledger
	one, many atomic.Int32
}

func (c *countingLists) LookupSuppression(ctx context.Context, account string, kind record.Kind, to string) (store.Suppression, bool, error) {
	c.one.Add(1)
	return c.Ledger.LookupSuppression(ctx, account, kind, to)
}

func (c *countingLists) LookupSuppressions(ctx context.Context, account string, kind record.Kind, tos []string) ([]store.Suppression, error) {
	c.many.Add(1)
	return c.Ledger.LookupSuppressions(ctx, account, kind, tos)
}

// EnqueueTxMany checks every recipient against the list before anything
// is written or counted, and refuses the batch naming each one stopped,
// in one read of the list.
func TestEnqueueTxManySuppressed(t *testing.T) {
	r := newQueueRig(t)
	ctx := context.Background()
	lists := &countingLists{Ledger: r.ledger}
	var ledger store.Ledger = lists
	if _, err := lists.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: sms.Kind, To: "+919876543217",
		Reason: store.SuppressHardBounce, At: queueEpoch}); err != nil {
		t.Fatal(err)
	}
	n := r.notifierOn(t, ledger)
	reqs := make([]notify.Request, 40)
	for i := range reqs {
		reqs[i] = &sms.Request{Account: "acme", To: fmt.Sprintf("98765432%02d", i%20), Message: "Your order has shipped."}
	}
	tx := r.q.Begin()
	_, err := queued.New(n).EnqueueTxMany(ctx, tx, reqs)
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeSuppressed || !errors.As(err, &e) || len(e.Fields) != 2 ||
		e.Fields[0].Field != "requests.17.to" || e.Fields[1].Field != "requests.37.to" ||
		!strings.Contains(e.Fields[0].Message, "hard_bounce") || strings.Contains(err.Error(), "9876543217") {
		t.Fatalf("%v (%+v): want CodeSuppressed naming requests.17.to and requests.37.to, never the number", err, e)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r.run() != 0 || r.balance(t) != opening {
		t.Fatal("a refused batch wrote or charged something")
	}
	if lists.many.Load() != 1 || lists.one.Load() != 0 {
		t.Errorf("the list was read %d times at once and %d one at a time; want once, at once", lists.many.Load(), lists.one.Load())
	}
	// Without the stopped ones the batch goes.
	reqs = append(append(reqs[:17:17], reqs[18:37]...), reqs[38:]...)
	tx = r.q.Begin()
	if _, err := queued.New(n).EnqueueTxMany(ctx, tx, reqs); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.q.RunDue(ctx, queued.New(n)); got != len(reqs) || r.vendor.Len() != len(reqs) {
		t.Fatalf("ran %d, vendor has %d; want %d", got, r.vendor.Len(), len(reqs))
	}
}

// An address on the list is one mailbox however it is spelt: case, and
// its domain in Unicode or in ASCII (IDNA A-labels). A send to it, a cc,
// a bcc, a queued send and a batch of queued sends are refused before
// anything is charged, whichever spelling the list and the request use;
// the OTP throttle counts every spelling as one recipient.
func TestEverySpellingOfASuppressedAddress(t *testing.T) {
	limit, err := memstore.NewWindowLimit(1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kit := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithOTPThrottle(limit)))
	ctx := context.Background()
	suppress(t, kit, email.Kind, "Ann@Bücher.example", store.SuppressUnsubscribed)
	if key, err := kit.Notifier.Recipient(email.Kind, "ANN@BÜCHER.EXAMPLE"); err != nil || key != "ann@xn--bcher-kva.example" {
		t.Fatalf("Recipient = %q, %v; want the address in lower case, its domain in ASCII", key, err)
	}
	spellings := []string{"ann@xn--bcher-kva.example", "ANN@XN--BCHER-KVA.EXAMPLE", "ann@bücher.example", "Ann@BÜCHER.example"}
	campaign := func(mod func(*email.Request)) *email.Request {
		r := &email.Request{Account: notifytest.AccountID, To: "asha@example.com", Subject: "Sale",
			Message: "<p>Half price</p>", Purpose: email.PurposeCampaign}
		mod(r)
		return r
	}
	for _, spelt := range spellings {
		reqs := map[string]*email.Request{
			"to":  campaign(func(r *email.Request) { r.To = spelt }),
			"cc":  campaign(func(r *email.Request) { r.Cc = []string{"ok@example.com", spelt} }),
			"bcc": campaign(func(r *email.Request) { r.Bcc = []string{spelt} }),
		}
		for name, req := range reqs {
			if rc, err := kit.Notifier.Send(ctx, req); notify.CodeOf(err) != notify.CodeSuppressed {
				t.Errorf("%s %q: %+v, %v; want CodeSuppressed", name, spelt, rc, err)
			}
		}
		if rc, err := queued.New(kit.Notifier).Enqueue(ctx, reqs["to"]); notify.CodeOf(err) != notify.CodeSuppressed {
			t.Errorf("Enqueue to %q: %+v, %v; want CodeSuppressed", spelt, rc, err)
		}
		_, err := queued.New(kit.Notifier).EnqueueTxMany(ctx, kit.Queue.Begin(), []notify.Request{
			campaign(func(*email.Request) {}), reqs["to"]})
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeSuppressed || len(e.Fields) != 1 || e.Fields[0].Field != "requests.1.to" {
			t.Errorf("EnqueueTxMany with %q second: %v; want CodeSuppressed naming requests.1.to", spelt, err)
		}
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
	if n := records(t, kit.Ledger); n != 0 || len(kit.SentEmail()) != 0 {
		t.Fatalf("%d records, %d e-mails sent; want none", n, len(kit.SentEmail()))
	}

	// One code per hour to a mailbox, however its address is spelt.
	code := func(to string) error {
		_, err := kit.Notifier.Send(ctx, &email.Request{Account: notifytest.AccountID, To: to, Subject: "Code",
			Message: "Your code is 4829", Purpose: email.PurposeOTP, OTP: "4829"})
		return err
	}
	if err := code("Ravi@Bücher.example"); err != nil {
		t.Fatalf("first code: %v", err)
	}
	if err := code("ravi@xn--bcher-kva.example"); !errors.Is(err, notify.ErrOTPThrottled) {
		t.Fatalf("a second code to the other spelling: %v; want ErrOTPThrottled", err)
	}
}

// A dual OTP whose SMS recipient hard-bounced still sends its code by
// chat: the SMS leg is failed, suppressed and not charged; only the chat
// leg is charged. With both legs' recipients on their lists, the request
// is refused whole, nothing charged.
func TestDualOTPSendsTheLegNotSuppressed(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()
	suppress(t, kit, sms.Kind, "+919876543210", store.SuppressHardBounce)
	req := &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913"}
	rc, err := kit.Notifier.Send(ctx, req)
	if err != nil || rc.Status != record.StateSent || len(rc.Legs) != 2 {
		t.Fatalf("dual OTP with its SMS recipient suppressed: %+v, %v; want sent by chat", rc, err)
	}
	if l := rc.Legs[0]; l.Status != record.StateFailed || l.ErrorCode != notify.CodeSuppressed || l.Cost.Minor != 0 {
		t.Errorf("SMS leg %+v: want failed, suppressed, free", l)
	}
	if l := rc.Legs[1]; l.Status != record.StateSent || l.Cost.Minor == 0 {
		t.Errorf("chat leg %+v: want sent and charged", l)
	}
	if len(kit.SentSMS()) != 0 || len(kit.SentChat()) != 1 {
		t.Fatalf("sent %d SMS and %d chat messages; want the chat one alone", len(kit.SentSMS()), len(kit.SentChat()))
	}
	kit.AssertBalance(t, notifytest.DefaultBalance-rc.Legs[1].Cost.Minor)

	suppress(t, kit, chat.Kind, "+919876543210", store.SuppressHardBounce)
	before := kit.Balance(t)
	if rc, err := kit.Notifier.Send(ctx, &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "551204"}); notify.CodeOf(err) != notify.CodeSuppressed || rc != nil {
		t.Fatalf("both legs suppressed: %+v, %v; want CodeSuppressed, no receipt", rc, err)
	}
	kit.AssertBalance(t, before)
}

// A send the list stops at its opening (the read and the opening are one
// step, store.Ledger.OpenUnlisted) gives back the rate limit's unit it
// took: the next send of the account goes, as it did when the list was
// read before any unit was taken.
func TestSuppressedSendKeepsNoRateUnit(t *testing.T) {
	rate, err := memstore.NewRateLimit(0.001, 1) // one send, then one every ~17 minutes
	if err != nil {
		t.Fatal(err)
	}
	kit := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithRateLimit(rate)))
	ctx := context.Background()
	suppress(t, kit, sms.Kind, "+919876543210", store.SuppressHardBounce)
	_, err = kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Your order has shipped"})
	if notify.CodeOf(err) != notify.CodeSuppressed {
		t.Fatalf("send to a hard-bounced number: %v; want CodeSuppressed", err)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
	if n := records(t, kit.Ledger); n != 0 {
		t.Fatalf("%d records of a suppressed send; want none", n)
	}
	if _, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543211", Message: "Your order has shipped"}); err != nil {
		t.Fatalf("the next send, whose unit the suppressed one gave back: %v", err)
	}
	if _, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543211", Message: "Again"}); notify.CodeOf(err) != notify.CodeRateLimited {
		t.Fatalf("a send beyond the limit: %v; want CodeRateLimited (the limit is on)", err)
	}
	// The limits answer before the list is read at the opening: the
	// suppressed recipient beyond the limit is rate limited.
	if _, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "Again"}); notify.CodeOf(err) != notify.CodeRateLimited {
		t.Fatalf("a suppressed recipient beyond the limit: %v; want CodeRateLimited", err)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance-kit.SentSMS()[0].Price.Minor)
}
