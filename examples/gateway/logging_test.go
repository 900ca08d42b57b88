package main

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
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

// TestGatewayLogsEveryRoute: the routes beside the API (webhooks, admin,
// outbox, unsubscribe, health) leave one access line per request, with
// its route, status and request ID, and a count in
// notify_http_requests_total; a forged delivery report refused unread is
// logged and counted like any other, its token kept out of the line.
func TestGatewayLogsEveryRoute(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(vendor.Close)
	const token, forged = "sms-dlr-token-8d2f6a", "forged-token-4c1e9b7a"
	adminKey := strings.Repeat("a", 40)
	g := start(t, map[string]string{"NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": "vendor-key-1",
		"NOTIFY_SMS_WEBHOOK_TOKEN": token, "NOTIFY_LOG_FORMAT": "json", "NOTIFY_ADMIN_KEY": adminKey, "NOTIFY_OUTBOX": "on"})
	root := strings.TrimSuffix(g.base, "/api/v1")
	sent := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order shipped"}`)
	if sent.status != 200 {
		t.Fatalf("send: %d %s", sent.status, sent.raw)
	}
	pm := sent.body["provider_message_id"].(string)
	for range 3 {
		if err := vendor.Report(context.Background(), root+"/webhooks/smsgateway/"+forged, pm, "DELIVERED", "", ""); err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("a forged report: %v, want 401", err)
		}
	}
	admin := g.send(t, "GET", root+"/admin/v1/accounts", nil, "")
	if admin.status != 401 || admin.header.Get("X-Request-ID") == "" {
		t.Fatalf("admin without its key: %d, X-Request-ID %q", admin.status, admin.header.Get("X-Request-ID"))
	}
	if a := g.send(t, "GET", root+"/outbox", nil, ""); a.status != 401 || a.header.Get("X-Request-ID") == "" {
		t.Fatalf("outbox without the key: %d, X-Request-ID %q", a.status, a.header.Get("X-Request-ID"))
	}
	if a := g.send(t, "GET", root+"/healthz", nil, ""); a.status != 200 {
		t.Fatalf("healthz: %d", a.status)
	}

	routes := map[string]int{}
	for _, l := range jsonLines(t, g) {
		if l["msg"] != "http request" || l["route"] == nil {
			continue
		}
		routes[l["route"].(string)+" "+jsonNumber(l["status"])]++
		if l["request_id"] == "" || l["duration"] == nil {
			t.Errorf("an access line without its request ID or duration: %v", l)
		}
		if l["route"] == "admin" && l["request_id"] != admin.header.Get("X-Request-ID") {
			t.Errorf("the admin line names request %v, want the answer's %s", l["request_id"], admin.header.Get("X-Request-ID"))
		}
	}
	for want, n := range map[string]int{"webhooks 401": 3, "admin 401": 1, "outbox 401": 1, "healthz 200": 1} {
		if routes[want] != n {
			t.Errorf("%d access lines of %s, want %d (lines by route and status: %v)", routes[want], want, n, routes)
		}
	}
	if strings.Contains(g.out.text(), forged) || strings.Contains(g.out.text(), token) {
		t.Error("a webhook token is in the log")
	}
	fams := g.scrape(t, nil)
	wantSample(t, fams, 3, "notify_http_requests_total", map[string]string{"route": "webhooks", "code": "401"})
	wantSample(t, fams, 1, "notify_http_requests_total", map[string]string{"route": "admin", "code": "401"})
	wantSample(t, fams, 3, "notify_webhook_requests_total", map[string]string{"webhook": "smsgateway", "result": "refused"})
	wantSample(t, fams, 0, "notify_webhook_requests_total", map[string]string{"webhook": "smsgateway", "result": "held"})
}

func jsonNumber(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return ""
}
