package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/record"
)

// The chat send's fallback field over a real server: an SMS two minutes
// later unless the chat is delivered.
func TestChatFallback(t *testing.T) {
	e, q := newQueuedEnv(t)
	before := e.Minor(t, httpapienv.TestAccount)
	body := `{"to":"9876543210","message":"Your order #4411 has shipped.","gateway":"cloud",` +
		`"fallback":[{"channel":"sms","after_seconds":120,"message":"Your order #4411 has shipped."}]}`
	r := e.Post(t, "/api/v1/messenger/send", body, map[string]string{"Idempotency-Key": "fb-1"})
	if r.Status != http.StatusOK || r.Body["status"] != "sent" {
		t.Fatalf("chat with fallback: %d %s", r.Status, r.Raw)
	}
	if e.Cloud.Len() != 1 || e.SMS.Len() != 0 {
		t.Fatalf("cloud %d, sms %d: want the chat now and the SMS later", e.Cloud.Len(), e.SMS.Len())
	}
	charged := before - e.Minor(t, httpapienv.TestAccount)
	e.Clock.Advance(2 * time.Minute)
	if runDue(e, q) != 1 || e.SMS.Len() != 1 {
		t.Fatalf("after 2 minutes without a report: %d SMS, want 1", e.SMS.Len())
	}
	if got := e.SMS.Sent()[0].To; got != "+919876543210" {
		t.Fatalf("the SMS step went to %s, want the chat's recipient", got)
	}
	// A repeat of the key answers the first receipt and schedules nothing.
	again := e.Post(t, "/api/v1/messenger/send", body, map[string]string{"Idempotency-Key": "fb-1"})
	if again.Body["message_id"] != r.Body["message_id"] || e.Minor(t, httpapienv.TestAccount) != before-charged {
		t.Fatalf("repeat: %s, balance %d", again.Raw, e.Minor(t, httpapienv.TestAccount))
	}
	e.Clock.Advance(time.Hour)
	if runDue(e, q) != 0 || e.SMS.Len() != 1 {
		t.Fatal("a repeat of the key scheduled a second fallback")
	}
}

func TestChatFallbackCanceledByAReport(t *testing.T) {
	e, q := newQueuedEnv(t)
	before := e.Minor(t, httpapienv.TestAccount)
	r := e.Post(t, "/api/v1/messenger/send", `{"to":"9876543210","message":"hi","gateway":"cloud",`+
		`"fallback":[{"channel":"email","to":"buyer@example.com","subject":"Order","message":"hi","after_seconds":60}]}`, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	vendorID := e.Cloud.Sent()[0].ID
	m, err := e.Notifier.Message(context.Background(), httpapienv.TestAccount, vendorID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Notifier.Report(context.Background(), &notify.DeliveryReport{Provider: m.Provider,
		ProviderMessageID: m.ProviderMessageID, State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	runDue(e, q)
	if e.Mail.Len() != 0 || e.Minor(t, httpapienv.TestAccount) != before-m.Charge.Minor {
		t.Fatalf("mail %d, balance %d: the step must not go, refunded", e.Mail.Len(), e.Minor(t, httpapienv.TestAccount))
	}
}

func TestChatFallbackRefused(t *testing.T) {
	e, _ := newQueuedEnv(t)
	for _, tc := range []struct{ body, field string }{
		{`{"to":"9876543210","message":"x","fallback":{"channel":"sms"}}`, "fallback"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"fax","after_seconds":60}]}`, "fallback.0.channel"},
		{`{"to":"9876543210","message":"x","fallback":[{"message":"y","after_seconds":60}]}`, "fallback.0.channel"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","message":"y"}]}`, "fallback.0.after_seconds"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","message":"y","after_seconds":0}]}`, "fallback.0.after_seconds"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","message":"y","after_seconds":60,"confirm":"sent"}]}`, "fallback.0.confirm"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","route":"otp","message":"482913","after_seconds":60}]}`, "fallback.0.request"},
		{`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","message":"y","after_seconds":60,"send_at":"` + inAnHour + `"}]}`, "fallback.0.send_at"},
		{`{"to":"9876543210","message":"x","send_at":"` + inAnHour + `","fallback":[{"channel":"sms","message":"y","after_seconds":60}]}`, "send_at"},
		{`{"to":"9876543210","otp":"482913","fallback":[{"channel":"sms","message":"y","after_seconds":60}]}`, "fallback"},
	} {
		path := "/api/v1/messenger/send"
		if strings.Contains(tc.body, `"otp":"482913"`) {
			path = "/api/v1/messenger/send-otp"
		}
		r := e.Post(t, path, tc.body, nil)
		errObj, _ := r.Body["error"].(map[string]any)
		fields, _ := errObj["fields"].(map[string]any)
		if r.Status != http.StatusBadRequest || fields[tc.field] == nil {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.body, r.Status, r.Raw, tc.field)
		}
		if strings.Contains(r.Raw, "482913") {
			t.Errorf("%s: the answer shows the code: %s", tc.body, r.Raw)
		}
	}
	if e.Sent() != 0 || e.Minor(t, httpapienv.TestAccount) != httpapienv.OpeningBal {
		t.Fatal("a refused fallback sent or charged")
	}
}
