package world_test

import (
	"context"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/phone/world"
	"github.com/notifykit/notify/verify"
)

// Linking this package is the one setting: SMS, chat, verify and
// notifytest, none given a plan, read +1, +44 and +49 numbers; a channel
// given phone.IndiaOnly does not.
func TestOnePlanForEveryPart(t *testing.T) {
	if _, ok := phone.RegisteredPlan().(world.Plan); !ok {
		t.Fatalf("linking phone/world registered %T, want world.Plan", phone.RegisteredPlan())
	}
	kit := notifytest.New(t, notifytest.WithRegion("US", phone.AnyCountry))
	svc, err := verify.New(verify.Config{Notifier: kit.Notifier, Accounts: kit.Accounts, Store: memstore.NewVerifications(),
		Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	numbers := map[string]string{"+1 415 555 0100": "+14155550100", "+44 7911 123456": "+447911123456", "+49 1512 3456789": "+4915123456789"}
	for raw, e164 := range numbers {
		rc, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: raw, Message: "hello"})
		if err != nil || rc.To != e164 {
			t.Errorf("sms to %s: %+v, %v", raw, rc, err)
		}
		rc, err = kit.Notifier.Send(ctx, &chat.Request{Account: notifytest.AccountID, To: raw, OTP: "482913"})
		if err != nil || rc.To != e164 {
			t.Errorf("chat to %s: %+v, %v", raw, rc, err)
		}
		v, err := svc.Start(ctx, notifytest.AccountID, raw, verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
		if err != nil || v.To != e164 {
			t.Errorf("verify to %s: %+v, %v", raw, v, err)
		}
	}
	// The account's region reads its national numbers.
	if rc, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "(415) 555-0100", Message: "hi"}); err != nil || rc.To != "+14155550100" {
		t.Errorf("a US national number on a US account: %+v, %v", rc, err)
	}
	// A channel of its own choice stays with India.
	indian := notifytest.New(t, notifytest.WithRegion("IN", phone.AnyCountry), notifytest.WithNumbers(phone.IndiaOnly{}))
	_, err = indian.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "+1 415 555 0100", Message: "hi"})
	if !hasFieldRule(err, "to", "not an Indian number") {
		t.Errorf("IndiaOnly channel: %v", err)
	}
	// A bare US number on an Indian account names the fix.
	_, err = indian.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "4155550100", Message: "hi"})
	if !hasFieldRule(err, "to", "with its country code, such as +1 415 555 0100") {
		t.Errorf("a bare US number on an Indian account: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "4155550100") {
		t.Errorf("the error repeats the number: %v", err)
	}
}
