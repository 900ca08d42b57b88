package notifytest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
)

func TestKitSendsAndCharges(t *testing.T) {
	kit := notifytest.New(t)
	ctx := context.Background()

	rc, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "+91 98765 43210", Message: "Your parcel is out for delivery."})
	if err != nil {
		t.Fatal(err)
	}
	msg := kit.LastSMS(t)
	if msg.To != "+919876543210" || sms.MessageOf(msg).SenderID != "TESTCO" || msg.ID != rc.MessageID {
		t.Fatalf("captured %+v", msg)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance-rc.Cost.Minor)
	if m := kit.Message(t, rc.MessageID); m.State != record.StateSent || m.Charge != rc.Cost || m.To != "+919876543210" {
		t.Fatalf("record = %+v, receipt %+v", m, rc)
	}

	otp, err := kit.Notifier.Send(ctx, &otp.Request{Account: notifytest.AccountID, To: "9876543210", OTP: "482913", BrandName: "Acme"})
	if err != nil || len(otp.Legs) != 2 {
		t.Fatalf("dual OTP: %+v, %v", otp, err)
	}
	kit.AssertSent(t, sms.Kind, 2)
	kit.AssertSent(t, chat.Kind, 1)
	if c := kit.LastChat(t); chat.MessageOf(c).OTP != "482913" {
		t.Fatalf("chat leg = %+v", chat.MessageOf(c))
	}
	kit.AssertBalance(t, notifytest.DefaultBalance-rc.Cost.Minor-otp.Cost.Minor)

	if _, err := kit.Notifier.Send(ctx, &chat.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "Your invoice", MediaURL: "https://files.example.com/inv-42.pdf"}); err != nil {
		t.Fatal(err)
	}
	if m := chat.MessageOf(kit.LastChat(t)).Media; m == nil || m.Kind != chat.MediaDocument || m.FileName != "Document.pdf" {
		t.Fatalf("media = %+v", m)
	}

	if _, err := kit.Notifier.Send(ctx, &email.Request{Account: notifytest.AccountID, To: "asha@example.com",
		TemplateSlug: "wallet-credited", Variables: record.Vars{"NAME": "Asha", "AMOUNT": "Rs 500", "BALANCE": "Rs 1,500"}}); err != nil {
		t.Fatal(err)
	}
	if m := kit.LastEmail(t); m.To != "asha@example.com" || email.MessageOf(m).Subject == "" || email.MessageOf(m).HTML == "" || email.MessageOf(m).Text == "" {
		t.Fatalf("e-mail = %+v", email.MessageOf(m))
	}
	kit.AssertSent(t, email.Kind, 1)
}

func TestKitOptionsAndFailures(t *testing.T) {
	kit := notifytest.New(t, notifytest.WithBalance(10))
	_, err := kit.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "hi"})
	if notify.CodeOf(err) != notify.CodeInsufficientFunds {
		t.Fatalf("err = %v", err)
	}
	kit.AssertSent(t, sms.Kind, 0)

	kit = notifytest.New(t)
	kit.SMS.FailNext(1, notify.CodeRejected)
	rc, err := kit.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "hi"})
	if notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("err = %v", err)
	}
	kit.AssertBalance(t, notifytest.DefaultBalance)
	if m := kit.Message(t, rc.MessageID); m.State != record.StateFailed || !m.Refunded || notify.Code(m.ErrorCode) != notify.CodeRejected {
		t.Fatalf("record = %+v", m)
	}
}

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

func TestAssertionsFail(t *testing.T) {
	kit := notifytest.New(t)
	r := &recorder{TB: t}
	kit.AssertBalance(r, 1)
	if !r.failed {
		t.Error("AssertBalance passed on a wrong balance")
	}
	r.failed = false
	kit.AssertSent(r, email.Kind, 1)
	if !r.failed {
		t.Error("AssertSent passed on a wrong count")
	}
}

func TestKitQueue(t *testing.T) {
	clock := testclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	kit := notifytest.New(t, notifytest.WithClock(clock.Now))
	rc, err := queued.New(kit.Notifier).SendAt(t.Context(), &sms.Request{Account: notifytest.AccountID, To: "9876543210",
		Message: "Your appointment is tomorrow at 10:00"}, clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateScheduled || kit.RunQueue(t) != 0 || len(kit.SentSMS()) != 0 {
		t.Fatalf("receipt %+v: want scheduled, nothing sent before its time", rc)
	}
	clock.Advance(time.Hour)
	if kit.RunQueue(t) != 1 || len(kit.SentSMS()) != 1 {
		t.Fatalf("at its time %d SMS went, want 1", len(kit.SentSMS()))
	}
	if m := kit.Message(t, rc.MessageID); m.State != record.StateSent {
		t.Fatalf("record %s, want sent", m.State)
	}
}

// A wrong option is Start's error, naming what is wrong; nothing is built.
func TestStartRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		opt  notifytest.Option
		want string
	}{
		{notifytest.WithCurrency("usd", "sms=0.01"), "ISO 4217"},
		{notifytest.WithCurrency("XAU", "sms=0.01"), "ISO 4217"},
		{notifytest.WithCurrency("USD", "sms=0.001"), "at most 2 decimals"},
		{notifytest.WithCurrency("USD", "fax=1"), `"fax" is not a price`},
	} {
		kit, err := notifytest.Start(c.opt)
		if kit != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start = %v, %v; want an error containing %q", kit, err, c.want)
		}
	}
	// WithCurrency wins over WithAccount's currency, in either order.
	acct := notifytest.New(t).Account
	kit := notifytest.New(t, notifytest.WithCurrency("JPY", "sms=3"), notifytest.WithAccount(*acct))
	if kit.Account.Currency.Code != "JPY" {
		t.Errorf("account currency %+v, want JPY", kit.Account.Currency)
	}
}

// Summary writes a refused send's receipt and its error on one line.
func TestSummaryOfARefusal(t *testing.T) {
	kit := notifytest.New(t)
	kit.SMS.FailNext(1, notify.CodeRejected)
	got := notifytest.Summary(kit.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: "9876543210", Message: "hi"}))
	if !strings.HasPrefix(got, "sms to +919876543210: failed via sms (rejected), cost 0.00 INR, balance 1000.00 INR: notify.Send: ") ||
		!strings.Contains(got, "rejected") || strings.Contains(got, "hi\"") {
		t.Errorf("Summary = %q", got)
	}
	if got := notifytest.Summary(nil, nil); got != "" {
		t.Errorf("Summary(nil, nil) = %q", got)
	}
}
