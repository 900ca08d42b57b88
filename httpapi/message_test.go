package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/record"
)

func TestMessageRecord(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Post(t, "/api/v1/sms", `{"numbers":"9876543210","message":"Hello there","route":"sms"}`, nil)
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Raw)
	}
	id, _ := r.Body["message_id"].(string)

	got := e.Do(t, http.MethodGet, "/api/v1/messages/"+id, nil, nil)
	if got.Status != 200 || got.Body["success"] != true {
		t.Fatalf("GET message: %d %s", got.Status, got.Raw)
	}
	d, _ := got.Body["data"].(map[string]any)
	for k, v := range map[string]any{"message_id": id, "channel": "sms", "request": "sms", "to": "9876543210",
		"status": "sent", "provider": "sms-mem", "cost": "0.25", "cost_minor": 25.0, "charged_minor": 25.0,
		"attempts": 1.0, "provider_message_id": r.Body["provider_message_id"]} {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	hist, _ := d["history"].([]any)
	var states []string
	for _, h := range hist {
		step, _ := h.(map[string]any)
		if at, _ := step["at"].(string); at == "" {
			t.Errorf("history step %v has no time", step)
		}
		s, _ := step["status"].(string)
		states = append(states, s)
	}
	if len(states) != 3 || states[0] != "pending" || states[1] != "attempting" || states[2] != "sent" {
		t.Errorf("history = %v", states)
	}

	// Another account's message is as missing as a missing one.
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/messages/"+id, map[string]string{"Authorization": httpapienv.OtherKey}, nil), 404, "not_found")
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/messages/no-such-id", nil, nil), 404, "not_found")
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/messages/"+id, map[string]string{"Authorization": "<none>"}, nil), 401, "unauthenticated")
	// DELETE cancels a queued or scheduled message only (queued_test.go).
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/messages/"+id, nil, nil), 409, "conflict")
	httpapienv.WantError(t, e.Do(t, http.MethodPut, "/api/v1/messages/"+id, nil, nil), 405, "method_not_allowed")
}

func TestMessageRecordOfARefusal(t *testing.T) {
	e := httpapienv.New(t)
	e.SMS.FailNext(1, notify.CodeRejected)
	r := e.Post(t, "/api/v1/sms", `{"numbers":"9876543210","message":"Hello there","route":"sms"}`, nil)
	if r.Status == 200 {
		t.Fatalf("refused send answered 200: %s", r.Raw)
	}
	id, _ := r.Body["message_id"].(string)
	if id == "" {
		t.Fatalf("a refusal names no message: %s", r.Raw)
	}
	got := e.Do(t, http.MethodGet, "/api/v1/messages/"+id, nil, nil)
	d, _ := got.Body["data"].(map[string]any)
	if got.Status != 200 || d["status"] != "failed" || d["cost_minor"] != 0.0 || d["charged_minor"] != 25.0 || d["error_code"] != "rejected" {
		t.Fatalf("record of a refused message: %d %s", got.Status, got.Raw)
	}
}

// TestEncodeMessageTried: a record with several providers' calls shows
// each, in order, and its country; one with a single provider has no
// "tried".
func TestEncodeMessageTried(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	m := &record.Message{ID: "m1", Kind: "sms", To: "+14155550100", Country: "US", State: record.StateSent, Provider: "twilio",
		Tried: []record.Attempt{
			{Provider: "smsgateway", Outcome: record.StateFailed, ErrorCode: "unavailable", At: at},
			{Provider: "twilio", Outcome: record.StateSent, At: at},
		}}
	var got struct {
		To, Country string
		Tried       []map[string]string
	}
	if err := json.Unmarshal(httpapi.EncodeMessage(m), &got); err != nil {
		t.Fatal(err)
	}
	want := `[map[at:2026-11-26T10:00:00Z error_code:unavailable outcome:failed provider:smsgateway] map[at:2026-11-26T10:00:00Z outcome:sent provider:twilio]]`
	if got.To != "+14155550100" || got.Country != "US" || fmt.Sprint(got.Tried) != want {
		t.Fatalf("got %+v", got)
	}
	m.Tried = nil
	if b := httpapi.EncodeMessage(m); strings.Contains(string(b), "tried") {
		t.Fatalf("a record with one provider shows tried: %s", b)
	}
}
