package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/httpapienv"
)

// bulkReceipts returns the receipts of a bulk answer, failing the test
// unless there are n.
func bulkReceipts(t *testing.T, r *httpapienv.Reply, n int) []map[string]any {
	t.Helper()
	raw, _ := r.Body["receipts"].([]any)
	if len(raw) != n {
		t.Fatalf("%d receipts, want %d: %s", len(raw), n, r.Raw)
	}
	out := make([]map[string]any, n)
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// numbersBody is a bulk body to n distinct numbers.
func numbersBody(n int, extra string) string {
	var b strings.Builder
	b.WriteString(`{"message":"Our store opens at 10 today."` + extra + `,"to":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d"`, 9000000000+i)
	}
	b.WriteString("]}")
	return b.String()
}

func TestBulkSMS(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Post(t, "/api/v1/sms/bulk", `{"to":["9876543210","+91 91234 56789",9988776655],"message":"Our store opens at 10 today."}`, nil)
	if r.Status != 200 || r.Body["success"] != true || r.Body["status"] != "sent" || r.Body["channel"] != "sms" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if r.Body["recipients"] != 3.0 || r.Body["accepted"] != 3.0 || r.Body["failed"] != 0.0 || r.Body["unknown"] != 0.0 {
		t.Fatalf("counts: %s", r.Raw)
	}
	var sum float64
	ids := map[any]bool{r.Body["message_id"]: true}
	for i, rc := range bulkReceipts(t, r, 3) {
		want := []string{"9876543210", "9123456789", "9988776655"}[i]
		if rc["success"] != true || rc["status"] != "sent" || rc["to"] != want || rc["message_id"] == nil || ids[rc["message_id"]] {
			t.Errorf("receipt %d: %v", i, rc)
		}
		ids[rc["message_id"]] = true
		sum += rc["cost_minor"].(float64)
	}
	if e.SMS.Len() != 3 {
		t.Fatalf("%d sent, want 3", e.SMS.Len())
	}
	spent := float64(httpapienv.OpeningBal - e.Minor(t, httpapienv.TestAccount))
	if spent == 0 || spent != sum || r.Body["cost_minor"] != sum || r.Body["balance_minor"] != float64(e.Minor(t, httpapienv.TestAccount)) {
		t.Fatalf("wallet spent %v, receipts %v, answer %v / %v", spent, sum, r.Body["cost_minor"], r.Body["balance_minor"])
	}
	// Each recipient is a message of its own.
	m := e.Do(t, "GET", "/api/v1/messages/"+bulkReceipts(t, r, 3)[1]["message_id"].(string), nil, nil)
	if m.Status != 200 {
		t.Fatalf("GET /messages: %d %s", m.Status, m.Raw)
	}
}

func TestBulkSMSRefused(t *testing.T) {
	e := httpapienv.New(t)
	for _, c := range []struct {
		body   string
		status int
		fields []string
	}{
		{`{"to":["9876543210","12345","9123456789"],"message":"hi"}`, 400, []string{"to.1"}},
		{`{"to":["9876543210","9123456789","+919876543210"],"message":"hi"}`, 400, []string{"to.2"}},
		{`{"to":["9876543210",true],"message":"hi","sender_id":{}}`, 400, []string{"to.1", "sender_id"}},
		{`{"to":["9876543210"],"message":"hi","route":"nope"}`, 400, []string{"route"}},
		{`{"to":"9876543210","message":"hi"}`, 400, []string{"to"}},
		{`{"to":[],"message":"hi"}`, 400, []string{"to"}},
		{`{"to":["9876543210"],"message":"482915","route":"otp"}`, 400, []string{"route"}},
		{`{"to":["9876543210"],"message":"hi","send_at":"tomorrow"}`, 400, []string{"send_at"}},
		{`{"to":["9876543210"],"message":"hi","numbers":"9876543210"}`, 400, []string{"numbers"}},
		{`{"to":["9876543210"]}`, 400, []string{"message"}},
		{numbersBody(notify.MaxBulkRecipients+1, ""), 400, []string{"to"}},
	} {
		r := e.Post(t, "/api/v1/sms/bulk", c.body, nil)
		body := c.body
		if len(body) > 120 {
			body = body[:120] + "..."
		}
		if r.Status != c.status || r.ErrCode() != "invalid_argument" {
			t.Errorf("%s: %d %s", body, r.Status, r.Raw)
			continue
		}
		f := r.ErrFields()
		for _, name := range c.fields {
			if f[name] == nil {
				t.Errorf("%s: no error on %q: %s", body, name, r.Raw)
			}
		}
		if len(f) != len(c.fields) {
			t.Errorf("%s: fields %v, want %v", body, f, c.fields)
		}
	}
	// Over the body limit: 413, before any number is read.
	big := numbersBody(10, `,"domain":"`+strings.Repeat("a", 1<<20)+`"`)
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms/bulk", big, nil), 413, "request_too_large")
	wantNothingMoved(t, e, 0, httpapienv.OpeningBal)
}

func TestBulkSMSIdempotent(t *testing.T) {
	e := httpapienv.New(t)
	hdr := map[string]string{"Idempotency-Key": "promo-7"}
	body := numbersBody(5, "")
	first := e.Post(t, "/api/v1/sms/bulk", body, hdr)
	if first.Status != 200 || e.SMS.Len() != 5 {
		t.Fatalf("%d, %d sent: %s", first.Status, e.SMS.Len(), first.Raw)
	}
	after := e.Minor(t, httpapienv.TestAccount)
	again := e.Post(t, "/api/v1/sms/bulk", body, hdr)
	if again.Status != 200 || again.Body["message_id"] != first.Body["message_id"] {
		t.Fatalf("repeat: %d %s", again.Status, again.Raw)
	}
	for i, rc := range bulkReceipts(t, again, 5) {
		if rc["message_id"] != bulkReceipts(t, first, 5)[i]["message_id"] {
			t.Errorf("receipt %d: %v, first %v", i, rc, bulkReceipts(t, first, 5)[i])
		}
	}
	// The same key with other recipients is a conflict.
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms/bulk", numbersBody(4, ""), hdr), 409, "conflict")
	if e.SMS.Len() != 5 || e.Minor(t, httpapienv.TestAccount) != after {
		t.Fatalf("%d sent, balance %d (want 5, %d)", e.SMS.Len(), e.Minor(t, httpapienv.TestAccount), after)
	}
}

func TestBulkSMSPartial(t *testing.T) {
	for _, c := range []struct {
		name               string
		fail               int
		code               notify.Code
		status             int
		success            bool
		accepted, fld, unk float64
	}{
		{"one rejected", 1, notify.CodeRejected, 200, true, 2, 1, 0},
		{"one unknown", 1, notify.CodeOutcomeUnknown, 202, true, 2, 0, 1},
		{"all rejected", 3, notify.CodeRejected, 502, false, 0, 3, 0},
		{"all unknown", 3, notify.CodeOutcomeUnknown, 202, false, 0, 0, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := httpapienv.New(t)
			e.SMS.FailNext(c.fail, c.code)
			r := e.Post(t, "/api/v1/sms/bulk", numbersBody(3, ""), nil)
			if r.Status != c.status || r.Body["success"] != c.success ||
				r.Body["accepted"] != c.accepted || r.Body["failed"] != c.fld || r.Body["unknown"] != c.unk {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			if !c.success && r.ErrCode() != string(c.code) {
				t.Fatalf("error code %q, want %q: %s", r.ErrCode(), c.code, r.Raw)
			}
			var kept float64
			for i, rc := range bulkReceipts(t, r, 3) {
				bad := i < c.fail
				if rc["success"] == bad || (bad && rc["error"].(map[string]any)["code"] != string(c.code)) {
					t.Errorf("receipt %d: %v", i, rc)
				}
				kept += rc["cost_minor"].(float64)
			}
			// Refused recipients are refunded, unknown ones stay charged.
			if spent := float64(httpapienv.OpeningBal - e.Minor(t, httpapienv.TestAccount)); spent != kept || r.Body["cost_minor"] != kept {
				t.Fatalf("spent %v, receipts keep %v, answer %v", spent, kept, r.Body["cost_minor"])
			}
		})
	}
}
