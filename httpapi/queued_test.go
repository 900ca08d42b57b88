package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
)

// newQueuedEnv is the test gateway with a queue: a memqueue over the
// env's ledger, on the env's clock. The test runs its due jobs with
// runDue, as a worker would.
func newQueuedEnv(t *testing.T, opts ...httpapi.Option) (*httpapienv.Env, *memqueue.Queue) {
	t.Helper()
	var q *memqueue.Queue
	e := httpapienv.NewOf(t, httpapienv.OpeningBal, func(e *httpapienv.Env) []notify.Option {
		var err error
		q, err = memqueue.New(memqueue.Config{Ledger: e.Ledger, Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return []notify.Option{notify.WithQueue(q)}
	}, opts...)
	return e, q
}

// runDue runs the due jobs of q with the env's Notifier.
func runDue(e *httpapienv.Env, q *memqueue.Queue) int {
	return q.RunDue(context.Background(), queued.New(e.Notifier))
}

// record answers GET /messages/{id}'s data, checking that it carries
// nothing of the message's request (the body a queued record keeps for
// its worker).
func recordOf(t *testing.T, e *httpapienv.Env, id string, secrets ...string) map[string]any {
	t.Helper()
	r := e.Do(t, http.MethodGet, "/api/v1/messages/"+id, nil, nil)
	if r.Status != 200 || r.Body["success"] != true {
		t.Fatalf("GET message %s: %d %s", id, r.Status, r.Raw)
	}
	for _, s := range append(secrets, "payload", "Payload") {
		if strings.Contains(r.Raw, s) {
			t.Errorf("GET message %s shows %q: %s", id, s, r.Raw)
		}
	}
	d, _ := r.Body["data"].(map[string]any)
	return d
}

// The env's clock stands at 2025-01-02T03:04:05Z.
const (
	inAnHour  = "2025-01-02T09:34:05+05:30" // 04:04:05Z
	inAnHourZ = "2025-01-02T04:04:05Z"
)

func TestScheduledSend(t *testing.T) {
	e, q := newQueuedEnv(t)
	const text = "Order 4711 has shipped"
	hdr := map[string]string{"Idempotency-Key": "sched-1", "Prefer": "respond-async"} // send_at wins
	r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"`+text+`","send_at":"`+inAnHour+`"}`, hdr)
	if r.Status != http.StatusAccepted {
		t.Fatalf("scheduled send: %d %s", r.Status, r.Raw)
	}
	for k, v := range map[string]any{"success": true, "status": "scheduled", "send_at": inAnHourZ, "channel": "sms",
		"to": "9876543210", "cost": "0.25", "cost_minor": 25.0, "balance": "99.75", "balance_minor": 9975.0} {
		if r.Body[k] != v {
			t.Errorf("%s = %v, want %v: %s", k, r.Body[k], v, r.Raw)
		}
	}
	if r.Header.Get("Preference-Applied") != "" {
		t.Errorf("Preference-Applied %q on a scheduled send", r.Header.Get("Preference-Applied"))
	}
	id, _ := r.Body["message_id"].(string)
	if id == "" || e.SMS.Len() != 0 {
		t.Fatalf("message_id %q, %d sent at once", id, e.SMS.Len())
	}

	// A repeat of the key answers the first receipt.
	again := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"`+text+`","send_at":"`+inAnHour+`"}`, hdr)
	if again.Status != http.StatusAccepted || again.Body["message_id"] != id || again.Body["status"] != "scheduled" ||
		again.Body["send_at"] != inAnHourZ {
		t.Fatalf("repeat: %d %s", again.Status, again.Raw)
	}

	d := recordOf(t, e, id, text)
	if d["status"] != "scheduled" || d["send_at"] != inAnHourZ || d["charged_minor"] != 25.0 {
		t.Fatalf("record before its time: %v", d)
	}
	if n := runDue(e, q); n != 0 || e.SMS.Len() != 0 {
		t.Fatalf("ran %d jobs, sent %d before the time", n, e.SMS.Len())
	}

	e.Clock.Advance(61 * time.Minute)
	if n := runDue(e, q); n != 1 {
		t.Fatalf("ran %d jobs at the time, want 1", n)
	}
	if n := runDue(e, q); n != 0 || e.SMS.Len() != 1 {
		t.Fatalf("ran %d more jobs; sent %d, want 1", n, e.SMS.Len())
	}
	d = recordOf(t, e, id, text)
	if d["status"] != "sent" || d["send_at"] != inAnHourZ || d["cost_minor"] != 25.0 || d["provider"] != "sms-mem" {
		t.Fatalf("record after its time: %v", d)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-25 {
		t.Errorf("balance %d, want %d: charged once", got, httpapienv.OpeningBal-25)
	}
}

func TestSendAtInThePastQueues(t *testing.T) {
	e, q := newQueuedEnv(t)
	r := e.Post(t, "/api/v1/messenger/send", `{"to":"9876543210","message":"hello","send_at":"2024-12-31T00:00:00Z"}`, nil)
	if r.Status != http.StatusAccepted || r.Body["status"] != "queued" || r.Body["send_at"] != nil || r.Body["success"] != true {
		t.Fatalf("past send_at: %d %s", r.Status, r.Raw)
	}
	if n := runDue(e, q); n != 1 || e.Cloud.Len()+e.QR.Len() != 1 {
		t.Fatalf("ran %d jobs, sent %d chat messages; want 1 and 1", n, e.Cloud.Len()+e.QR.Len())
	}
}

func TestRespondAsync(t *testing.T) {
	e, q := newQueuedEnv(t, httpapi.WithRespondAsync())
	const subject = "Your invoice 81"
	body := `{"to":"asha@example.com","subject":"` + subject + `","message":"<p>Attached</p>"}`
	r := e.Post(t, "/api/v1/email/send", body, map[string]string{"Prefer": `return=minimal; x="a,b", Respond-Async`})
	if r.Status != http.StatusAccepted || r.Body["success"] != true || r.Body["status"] != "queued" || r.Body["send_at"] != nil {
		t.Fatalf("respond-async: %d %s", r.Status, r.Raw)
	}
	if got := r.Header.Get("Preference-Applied"); got != "respond-async" {
		t.Errorf("Preference-Applied = %q, want respond-async", got)
	}
	if r.Body["cost_minor"] == nil || r.Body["balance_minor"] == nil || r.Body["currency"] == nil {
		t.Errorf("queued answer without cost and balance: %s", r.Raw)
	}
	id, _ := r.Body["message_id"].(string)
	if e.Mail.Len() != 0 {
		t.Fatal("sent at once")
	}
	if d := recordOf(t, e, id, subject, "Attached"); d["status"] != "queued" || d["send_at"] != nil {
		t.Fatalf("queued record: %v", d)
	}
	if n := runDue(e, q); n != 1 || e.Mail.Len() != 1 {
		t.Fatalf("ran %d jobs, sent %d; want 1 and 1", n, e.Mail.Len())
	}
	if n := runDue(e, q); n != 0 || e.Mail.Len() != 1 {
		t.Fatalf("ran %d more jobs, sent %d in all; want once", n, e.Mail.Len())
	}
	if d := recordOf(t, e, id, subject, "Attached"); d["status"] != "sent" {
		t.Fatalf("record after the worker: %v", d)
	}

	// A preference without respond-async, or inside a quoted value, is
	// not it: synchronous.
	for _, pref := range []string{"return=minimal", `foo="x, respond-async"`, "respond-asynchronous", "wait=5"} {
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"now"}`, map[string]string{"Prefer": pref})
		if r.Status != 200 || r.Body["status"] != "sent" || r.Header.Get("Preference-Applied") != "" {
			t.Errorf("Prefer %q: %d %v %s", pref, r.Status, r.Header, r.Raw)
		}
	}

	// The OTP endpoints cannot queue: the preference is ignored.
	for _, c := range []struct{ path, body string }{
		{"/api/v1/send-otp", `{"to":"9876543210","otp":"482915"}`},
		{"/api/v1/messenger/send-otp", `{"to":"9876543210","otp":"482916"}`},
	} {
		r := e.Post(t, c.path, c.body, map[string]string{"Prefer": "respond-async"})
		if r.Status != 200 || r.Body["success"] != true || r.Header.Get("Preference-Applied") != "" {
			t.Errorf("%s with Prefer: %d %v %s", c.path, r.Status, r.Header, r.Raw)
		}
	}
	if n := runDue(e, q); n != 0 {
		t.Errorf("the OTP sends queued %d jobs", n)
	}
}

func TestCancelMessage(t *testing.T) {
	e, q := newQueuedEnv(t)
	r := e.Post(t, "/api/v1/sms/send", `{"numbers":"9876543210","message":"Sale tomorrow","send_at":"`+inAnHour+`"}`, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("schedule: %d %s", r.Status, r.Raw)
	}
	id, _ := r.Body["message_id"].(string)
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-25 {
		t.Fatalf("balance %d after scheduling", got)
	}
	// Another account's message is as missing as a missing one.
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/"+id, map[string]string{"Authorization": httpapienv.OtherKey}, nil), 404, "not_found")
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/"+id, map[string]string{"Authorization": "<none>"}, nil), 401, "unauthenticated")

	c := e.Do(t, http.MethodDelete, "/api/v1/messages/"+id, nil, nil)
	if c.Status != 200 || c.Body["success"] != true {
		t.Fatalf("DELETE: %d %s", c.Status, c.Raw)
	}
	d, _ := c.Body["data"].(map[string]any)
	for k, v := range map[string]any{"message_id": id, "status": "failed", "error_code": "canceled", "cost_minor": 0.0,
		"charged_minor": 25.0, "refunded": true, "send_at": inAnHourZ} {
		if d[k] != v {
			t.Errorf("canceled %s = %v, want %v", k, d[k], v)
		}
	}
	if strings.Contains(c.Raw, "Sale tomorrow") {
		t.Errorf("the answer shows the message: %s", c.Raw)
	}
	// The same body GET gives.
	if g := e.Do(t, http.MethodGet, "/api/v1/messages/"+id, nil, nil); g.Raw != c.Raw {
		t.Errorf("DELETE answered\n%s\nGET answers\n%s", c.Raw, g.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal {
		t.Errorf("balance %d after the cancel, want %d", got, httpapienv.OpeningBal)
	}

	again := e.Do(t, http.MethodDelete, "/api/v1/messages/"+id, nil, nil)
	httpapienv.WantError(t, again, 409, "conflict")
	if again.Body["message_id"] != id || again.Body["status"] != "failed" {
		t.Errorf("second DELETE: %s", again.Raw)
	}
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/no-such-id", nil, nil), 404, "not_found")

	e.Clock.Advance(2 * time.Hour)
	runDue(e, q)
	if e.SMS.Len() != 0 || e.Minor(t, httpapienv.TestAccount) != httpapienv.OpeningBal {
		t.Errorf("after the time: %d sent, balance %d", e.SMS.Len(), e.Minor(t, httpapienv.TestAccount))
	}

	// A message a worker has sent is a conflict.
	r = e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"now"}`, nil)
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/"+r.Body["message_id"].(string), nil, nil), 409, "conflict")
}

func TestSendAtRefused(t *testing.T) {
	e, q := newQueuedEnv(t, httpapi.WithRespondAsync())
	for _, c := range []struct{ name, path, body, field string }{
		{"dual OTP", "/api/v1/send-otp", `{"to":"9876543210","otp":"482915","send_at":"` + inAnHour + `"}`, "send_at"},
		{"chat OTP endpoint", "/api/v1/messenger/send-otp", `{"to":"9876543210","message":"hi","send_at":"` + inAnHour + `"}`, "send_at"},
		{"chat code", "/api/v1/messenger/send", `{"to":"9876543210","otp":"482915","send_at":"` + inAnHour + `"}`, "send_at"},
		{"SMS code", "/api/v1/sms", `{"to":"9876543210","message":"482915","route":"otp","send_at":"` + inAnHour + `"}`, "send_at"},
		{"no offset", "/api/v1/sms", `{"to":"9876543210","message":"hi","send_at":"2025-01-02T09:00:00"}`, "send_at"},
		{"a date", "/api/v1/email/send", `{"to":"a@example.com","subject":"s","message":"m","send_at":"2025-01-03"}`, "send_at"},
		{"words", "/api/v1/send-messenger", `{"to":"9876543210","message":"hi","send_at":"tomorrow"}`, "send_at"},
		{"a number", "/api/v1/sms", `{"to":"9876543210","message":"hi","send_at":1735787045}`, "send_at"},
		{"too far", "/api/v1/sms", `{"to":"9876543210","message":"hi","send_at":"2026-02-01T00:00:00Z"}`, "send_at"},
		{"wrong case", "/api/v1/sms", `{"to":"9876543210","message":"hi","Send_At":"` + inAnHour + `"}`, "Send_At"},
		{"with other errors", "/api/v1/sms", `{"to":"12","message":"hi","send_at":"soon"}`, "send_at"},
	} {
		r := e.Post(t, c.path, c.body, map[string]string{"Prefer": "respond-async"})
		httpapienv.WantError(t, r, 400, "invalid_argument")
		if _, ok := r.ErrFields()[c.field]; !ok {
			t.Errorf("%s: fields %v, want %s", c.name, r.ErrFields(), c.field)
		}
		if r.Header.Get("Preference-Applied") != "" {
			t.Errorf("%s: Preference-Applied on a 400", c.name)
		}
	}
	wantNothingMoved(t, e, 0, httpapienv.OpeningBal)
	if n := runDue(e, q); n != 0 {
		t.Errorf("%d jobs queued by refused requests", n)
	}
	// null and "" are absent: sent at once.
	for _, v := range []string{"null", `""`} {
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hi","send_at":`+v+`}`, nil)
		if r.Status != 200 || r.Body["status"] != "sent" {
			t.Errorf("send_at %s: %d %s", v, r.Status, r.Raw)
		}
	}
	r := e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482915","send_at":null}`, nil)
	if r.Status != 200 {
		t.Errorf("send_at null on /send-otp: %d %s", r.Status, r.Raw)
	}
}

func TestNoQueue(t *testing.T) {
	e := httpapienv.New(t) // no queue, and no WithRespondAsync
	r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hi"}`, map[string]string{"Prefer": "respond-async"})
	if r.Status != 200 || r.Body["status"] != "sent" || r.Header.Get("Preference-Applied") != "" || e.SMS.Len() != 1 {
		t.Fatalf("Prefer without a queue: %d %v %s", r.Status, r.Header, r.Raw)
	}
	bal := e.Minor(t, httpapienv.TestAccount)
	r = e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hi","send_at":"`+inAnHour+`"}`, nil)
	httpapienv.WantError(t, r, 503, "unavailable")
	wantNothingMoved(t, e, 1, bal)
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/no-such-id", nil, nil), 404, "not_found")
}

// POST /sms/bulk with send_at schedules every recipient, and with
// Prefer: respond-async queues them: 202, a receipt per recipient, each
// sent once by a worker.
func TestBulkSMSQueuedAndScheduled(t *testing.T) {
	e, q := newQueuedEnv(t, httpapi.WithRespondAsync())
	body := `{"to":["9876543210","9123456789"],"message":"Our store opens at 10 tomorrow.","send_at":"` + inAnHour + `"}`
	r := e.Post(t, "/api/v1/sms/bulk", body, map[string]string{"Idempotency-Key": "camp-1"})
	if r.Status != http.StatusAccepted || r.Body["status"] != "scheduled" || r.Body["send_at"] != inAnHourZ ||
		r.Body["success"] != true || r.Body["queued"] != 2.0 || r.Body["accepted"] != 0.0 || r.Body["cost_minor"] != 50.0 {
		t.Fatalf("scheduled bulk: %d %s", r.Status, r.Raw)
	}
	receipts, _ := r.Body["receipts"].([]any)
	if len(receipts) != 2 {
		t.Fatalf("receipts: %s", r.Raw)
	}
	for _, x := range receipts {
		leg, _ := x.(map[string]any)
		if leg["status"] != "scheduled" || leg["success"] != true || leg["send_at"] != inAnHourZ || leg["message_id"] == "" {
			t.Fatalf("recipient %v: %s", leg, r.Raw)
		}
	}
	again := e.Post(t, "/api/v1/sms/bulk", body, map[string]string{"Idempotency-Key": "camp-1"})
	if again.Status != http.StatusAccepted || again.Body["message_id"] != r.Body["message_id"] {
		t.Fatalf("a repeat of the key: %d %s", again.Status, again.Raw)
	}
	if n := runDue(e, q); n != 0 || e.SMS.Len() != 0 {
		t.Fatalf("ran %d, sent %d before the time", n, e.SMS.Len())
	}
	e.Clock.Advance(61 * time.Minute)
	if n := runDue(e, q); n != 2 || e.SMS.Len() != 2 {
		t.Fatalf("at the time: ran %d, sent %d; want 2 and 2", n, e.SMS.Len())
	}

	r = e.Post(t, "/api/v1/sms/bulk", `{"to":["9876543210","9123456789","9988776655"],"message":"Sale ends tonight."}`,
		map[string]string{"Prefer": "respond-async"})
	if r.Status != http.StatusAccepted || r.Body["status"] != "queued" || r.Body["queued"] != 3.0 ||
		r.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("queued bulk: %d %s", r.Status, r.Raw)
	}
	if n := runDue(e, q); n != 3 || e.SMS.Len() != 5 {
		t.Fatalf("ran %d, sent %d in all; want 3 and 5", n, e.SMS.Len())
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-5*25 {
		t.Errorf("balance %d, want %d: each recipient charged once", got, httpapienv.OpeningBal-5*25)
	}
}

// TestRespondAsyncBulk: a bulk SMS with Prefer: respond-async queues every
// recipient (202, each receipt queued, Preference-Applied), and a worker
// sends each once.
func TestRespondAsyncBulk(t *testing.T) {
	e, q := newQueuedEnv(t, httpapi.WithRespondAsync())
	r := e.Post(t, "/api/v1/sms/bulk", `{"to":["9876543210","9876543211"],"message":"Store closed today"}`,
		map[string]string{"Prefer": "respond-async"})
	if r.Status != http.StatusAccepted || r.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("bulk respond-async: %d %v %s", r.Status, r.Header, r.Raw)
	}
	legs, _ := r.Body["receipts"].([]any)
	if len(legs) != 2 || r.Body["queued"] != 2.0 {
		t.Fatalf("receipts: %s", r.Raw)
	}
	for i, l := range legs {
		if st := l.(map[string]any)["status"]; st != "queued" {
			t.Errorf("leg %d %v, want queued", i, st)
		}
	}
	if e.SMS.Len() != 0 {
		t.Fatal("sent at once")
	}
	if n := runDue(e, q); n != 2 || e.SMS.Len() != 2 {
		t.Fatalf("ran %d jobs, sent %d; want 2 and 2", n, e.SMS.Len())
	}
}
