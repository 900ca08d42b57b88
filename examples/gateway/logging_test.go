package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// jsonLines decodes the gateway's JSON log lines (the banner is text).
func jsonLines(t *testing.T, g *gateway) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(g.out.text(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

// TestGatewayJSONLogsNameRequestAndMessage: with NOTIFY_LOG_FORMAT=json
// each line is a JSON object, and the lines of a send (the logging
// provider's and the access log's) carry its request ID and message ID.
// In dev mode the text is logged as sent, the code masked.
func TestGatewayJSONLogsNameRequestAndMessage(t *testing.T) {
	g := start(t, map[string]string{"NOTIFY_LOG_FORMAT": "json"})
	a := g.curl(t, "POST", "/sms", map[string]string{"Authorization": g.key, "Content-Type": "application/json",
		"X-Request-ID": "trace-1"}, `{"to":"9876543210","message":"hello from the test"}`)
	if a.status != 200 {
		t.Fatalf("sms: %d %s", a.status, a.raw)
	}
	msgID, _ := a.body["message_id"].(string)
	if o := g.post(t, "/send-otp", g.key, `{"to":"9876543210","otp":"482913"}`); o.status != 200 {
		t.Fatalf("otp: %d %s", o.status, o.raw)
	}
	g.out.waitFor(t, `"path":"/api/v1/send-otp"`)

	var sendLines int
	for _, m := range jsonLines(t, g) {
		if m["request_id"] != "trace-1" {
			continue
		}
		sendLines++
		if m["message_id"] != msgID {
			t.Errorf("a line of the request without its message ID %s: %v", msgID, m)
		}
	}
	if sendLines < 2 {
		t.Errorf("%d lines name request trace-1, want the provider's and the access log's:\n%s", sendLines, g.out.text())
	}
	var logs strings.Builder // the log lines, without the banner, which shows the key and an example number
	for _, m := range jsonLines(t, g) {
		b, _ := json.Marshal(m)
		logs.Write(b)
	}
	out := logs.String()
	if !strings.Contains(out, "hello from the test") {
		t.Errorf("dev mode: the text is not logged:\n%s", out)
	}
	if strings.Contains(out, "482913") || strings.Contains(out, "9876543210") || strings.Contains(out, g.key) {
		t.Errorf("a code, a whole recipient or the API key is logged:\n%s", out)
	}
}

// TestGatewayProductionLogsWithholdText: with a real SMS vendor the
// gateway is in production mode, and the chat message the logging
// stand-in takes is logged without its text.
func TestGatewayProductionLogsWithholdText(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(vendor.Close)
	g := start(t, map[string]string{"NOTIFY_LOG_FORMAT": "json", "NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": "vendor-key-1"})
	if a := g.post(t, "/messenger/send", g.key, `{"to":"9876543210","message":"private words"}`); a.status != 200 {
		t.Fatalf("chat: %d %s", a.status, a.raw)
	}
	g.out.waitFor(t, `"path":"/api/v1/messenger/send"`)
	out := g.out.text()
	if strings.Contains(out, "private words") || !strings.Contains(out, `"text":"[withheld]"`) {
		t.Errorf("production mode logs the text:\n%s", out)
	}
}

func TestGatewayLogFormatError(t *testing.T) {
	env := map[string]string{"NOTIFY_LOG_FORMAT": "xml", "NOTIFY_ADDR": "127.0.0.1:0"}
	err := runWith(context.Background(), func(k string) string { return env[k] }, io.Discard, deps{})
	if err == nil || !strings.Contains(err.Error(), "NOTIFY_LOG_FORMAT") || !strings.Contains(err.Error(), "text or json") {
		t.Fatalf("NOTIFY_LOG_FORMAT=xml: %v", err)
	}
	// The text format is the default, and says so by its key=value lines.
	g := start(t, map[string]string{"NOTIFY_LOG_FORMAT": "text"})
	g.post(t, "/sms", g.key, `{"to":"9876543210","message":"hi"}`)
	if line := g.out.waitFor(t, "msg=\"http request\""); !strings.Contains(line, "request_id=") || !strings.Contains(line, "message_id=") {
		t.Errorf("text access log: %s", line)
	}
}
