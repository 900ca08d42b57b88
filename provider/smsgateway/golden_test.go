package smsgateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/golden"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/smsgateway"
)

// TestRequestsGolden captures the body of each route's request and
// compares it with testdata/requests/<name>.json; each case names the
// vendor's page that documents its shape.
func TestRequestsGolden(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"return":true,"request_id":"r1","message":["SMS sent successfully."]}`)
	}))
	defer srv.Close()
	p, err := smsgateway.New(smsgateway.Config{BaseURL: srv.URL, APIKey: testKey, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	byMessageID := envelope(2)
	sms.MessageOf(byMessageID).DLTMessageID = tplMessageID
	second := envelope(0)
	second.To = "9876500009"
	tests := []struct {
		name, source string
		envs         []*notify.Envelope
	}{
		{"quick", "docs.fast2sms.com/reference/quick-sms (route q, message, language, flash, numbers)", []*notify.Envelope{envelope(0)}},
		{"otp", "docs.fast2sms.com/reference/otp-message (route otp, variables_values)", []*notify.Envelope{envelope(1)}},
		{"dlt-manual", "docs.fast2sms.com/reference/dlt-manual-single (route dlt_manual, sender_id, message, template_id, entity_id)", []*notify.Envelope{envelope(2)}},
		{"dlt", "docs.fast2sms.com/reference/dlt-sms-single (route dlt, sender_id, message = the DLT manager's Message ID, variables_values joined by '|')", []*notify.Envelope{byMessageID}},
		{"bulk", "docs.fast2sms.com/reference/quick-sms (numbers: several, comma-separated)", []*notify.Envelope{envelope(0), second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.envs) == 1 {
				_, err = p.Send(context.Background(), tt.envs[0])
			} else {
				_, err = p.SendBatch(context.Background(), tt.envs)
			}
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(v, "", "  ")
			got = append(got, '\n')
			path := filepath.Join("testdata", "requests", tt.name+".json")
			if !golden.Check(t, path, got) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}
