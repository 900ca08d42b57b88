package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/cloudchat/cloudchattest"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

const (
	cloudToken  = "cloud-token-4b2e"
	cloudSecret = "cloud-app-secret-91d0"
)

// reportingGateway is the gateway sending chat through the fake cloud
// vendor, whose status webhooks reach the gateway's /webhooks/cloudchat.
func reportingGateway(t *testing.T, extra map[string]string) (*gateway, *cloudchattest.Server, string) {
	t.Helper()
	vendor := cloudchattest.NewServer(cloudchattest.Config{Token: cloudToken, AppSecret: cloudSecret})
	t.Cleanup(vendor.Close)
	env := map[string]string{
		"NOTIFY_CLOUD_URL": vendor.URL, "NOTIFY_CLOUD_TOKEN": cloudToken,
		"NOTIFY_CLOUD_PHONE_ID":   cloudchattest.DefaultPhoneNumberID,
		"NOTIFY_CLOUD_APP_SECRET": cloudSecret, "NOTIFY_CLOUD_VERIFY_TOKEN": "verify-7e1f",
		"NOTIFY_CLOUD_OTP_TEMPLATE": "otp_code",
	}
	for k, v := range extra {
		env[k] = v
	}
	g := start(t, env)
	g.out.waitFor(t, "delivery reports: GET, POST /webhooks/cloudchat")
	hook := strings.TrimSuffix(g.base, "/api/v1") + "/webhooks/cloudchat"
	vendor.SetWebhookURL(hook)
	return g, vendor, hook
}

func (g *gateway) record(t *testing.T, id string) map[string]any {
	t.Helper()
	a := g.curl(t, http.MethodGet, "/messages/"+id, map[string]string{"Authorization": g.key}, "")
	if a.status != 200 {
		t.Fatalf("GET /messages/%s: %d %s", id, a.status, a.raw)
	}
	return a.body["data"].(map[string]any)
}

func historyStates(rec map[string]any) string {
	var s []string
	for _, h := range rec["history"].([]any) {
		s = append(s, h.(map[string]any)["status"].(string))
	}
	return strings.Join(s, ",")
}

// TestGatewayReportRefundsOutsideTheWindow: free text to a number
// outside the 24-hour window is accepted by the cloud vendor with 200,
// charged, and reported failed (131047) in a signed webhook; the message
// then shows failed with the vendor's code, and the charge is refunded,
// once, however often the vendor sends the webhook.
func TestGatewayReportRefundsOutsideTheWindow(t *testing.T) {
	g, vendor, hook := reportingGateway(t, nil)
	before := g.balanceMinor(t)
	a := g.post(t, "/messenger/send", g.key, `{"gateway":"cloud","to":"9000000001","message":"Your order shipped"}`)
	if a.status != 200 || a.body["status"] != "sent" {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	id := a.body["message_id"].(string)
	cost := int64(a.body["cost_minor"].(float64))
	if cost <= 0 || g.balanceMinor(t) != before-cost {
		t.Fatalf("the send was not charged: cost %d, balance %d", cost, g.balanceMinor(t))
	}
	if err := vendor.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := g.record(t, id)
	if rec["status"] != "failed" || rec["vendor_code"] != "131047" || rec["refunded"] != true ||
		rec["cost_minor"] != 0.0 || historyStates(rec) != "pending,attempting,sent,failed" {
		t.Fatalf("record after the report: %v", rec)
	}
	if got := g.balanceMinor(t); got != before {
		t.Fatalf("balance = %d, want %d: refunded", got, before)
	}

	// The vendor sends the webhook again: nothing changes.
	st, _ := vendor.StatusOf(vendor.Accepted()[0].ID, "failed", cloudchattest.ReEngagement)
	if err := vendor.Post(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got := g.balanceMinor(t); got != before {
		t.Fatalf("balance after a replay = %d, want %d", got, before)
	}

	// A forgery is refused and changes nothing.
	body := cloudchattest.Payload(cloudchattest.DefaultPhoneNumberID, st)
	req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", cloudchattest.Sign("guessed", body))
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged webhook: %d, want 401", resp.StatusCode)
	}

	// The subscription handshake.
	resp, err = g.client.Get(hook + "?hub.mode=subscribe&hub.verify_token=verify-7e1f&hub.challenge=8841")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != "8841" {
		t.Fatalf("handshake: %d %q", resp.StatusCode, got)
	}
}

// TestGatewayReportDelivered: inside the window the vendor reports the
// message sent and delivered; the record follows and keeps its charge.
func TestGatewayReportDelivered(t *testing.T) {
	g, vendor, _ := reportingGateway(t, nil)
	a := g.post(t, "/messenger/send", g.key, `{"gateway":"cloud","to":"9876543210","message":"Your order shipped"}`)
	if a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if err := vendor.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := g.record(t, a.body["message_id"].(string))
	if rec["status"] != "delivered" || rec["refunded"] != false || rec["cost_minor"] != a.body["cost_minor"] ||
		historyStates(rec) != "pending,attempting,sent,delivered" {
		t.Fatalf("record: %v", rec)
	}
}

// TestGatewayWebhooksNeedTheirSecrets: without a secret no receiver is
// mounted, and the path is the API's 404.
func TestGatewayWebhooksNeedTheirSecrets(t *testing.T) {
	g := start(t, map[string]string{})
	resp, err := g.client.Post(strings.TrimSuffix(g.base, "/api/v1")+"/webhooks/cloudchat", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unmounted webhook: %d, want 404", resp.StatusCode)
	}
	if strings.Contains(g.out.text(), "delivery reports:") {
		t.Fatalf("the banner names webhooks that are not mounted:\n%s", g.out.text())
	}
}

// qrStub is the smallest QR-session gateway the qrchat provider works
// with: a WORKING session and sendText, which it records.
type qrStub struct {
	*httptest.Server
	mu   sync.Mutex
	sent []map[string]any
}

func newQRStub(t *testing.T) *qrStub {
	q := &qrStub{}
	q.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "qr-key-1" {
			http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/sessions/default":
			_, _ = io.WriteString(w, `{"name":"default","status":"WORKING"}`)
		case r.Method == http.MethodPost && r.URL.Path == "/api/sendText":
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["session"] != "default" || body["chatId"] == nil {
				http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
				return
			}
			q.mu.Lock()
			q.sent = append(q.sent, body)
			n := len(q.sent)
			q.mu.Unlock()
			_, _ = io.WriteString(w, `{"id":{"fromMe":true,"remote":"`+body["chatId"].(string)+`","id":"3EB0`+strings.Repeat("A", n)+`","_serialized":"true_`+body["chatId"].(string)+`_3EB0`+strings.Repeat("A", n)+`"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(q.Close)
	return q
}

func (q *qrStub) messages() []map[string]any {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]map[string]any(nil), q.sent...)
}

// TestGatewayReportFailsOverToQR: with the auto gateway, a message the
// cloud vendor reports failed outside the window is refunded and sent
// once more through the QR gateway, charged at its price, however often
// the vendor repeats the report.
func TestGatewayReportFailsOverToQR(t *testing.T) {
	qr := newQRStub(t)
	g, vendor, _ := reportingGateway(t, map[string]string{
		"NOTIFY_QR_URL": qr.URL, "NOTIFY_QR_KEY": "qr-key-1", "NOTIFY_QR_SESSION": "default"})
	before := g.balanceMinor(t)
	a := g.post(t, "/messenger/send", g.key, `{"to":"9000000001","message":"Your order shipped"}`)
	if a.status != 200 || a.body["gateway"] != "cloud" {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
	if err := vendor.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := g.record(t, a.body["message_id"].(string))
	if rec["status"] != "failed" || rec["vendor_code"] != "131047" || rec["refunded"] != true {
		t.Fatalf("the cloud message: %v", rec)
	}
	sent := qr.messages()
	if len(sent) != 1 || sent[0]["chatId"] != "919000000001@c.us" || sent[0]["text"] != "Your order shipped" {
		t.Fatalf("the QR gateway got %v, want the message once", sent)
	}
	// Another message through the QR gateway alone tells its price.
	q := g.post(t, "/messenger/send", g.key, `{"gateway":"qr","to":"9876543210","message":"Your order shipped"}`)
	if q.status != 200 {
		t.Fatalf("qr send: %d %s", q.status, q.raw)
	}
	qrPrice := int64(q.body["cost_minor"].(float64))
	if got := g.balanceMinor(t); got != before-2*qrPrice {
		t.Fatalf("balance = %d, want %d: the cloud message refunded, the failover charged at the QR price", got, before-2*qrPrice)
	}
	// The vendor repeats its report: nothing is sent or charged again.
	st, _ := vendor.StatusOf(vendor.Accepted()[0].ID, "failed", cloudchattest.ReEngagement)
	if err := vendor.Post(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got := len(qr.messages()); got != 2 {
		t.Fatalf("the QR gateway got %d messages, want 2", got)
	}
	if got := g.balanceMinor(t); got != before-2*qrPrice {
		t.Fatalf("balance after a repeated report = %d", got)
	}
}

// postQRAck posts the QR gateway's message.ack event for id to the
// gateway, signed with secret, and returns the status.
func postQRAck(t *testing.T, g *gateway, secret, id string, ack int) int {
	t.Helper()
	body := []byte(`{"id":"evt_01jk","timestamp":` + strconv.FormatInt(time.Now().UnixMilli(), 10) +
		`,"event":"message.ack","session":"default","engine":"WEBJS","payload":{"id":"` + id +
		`","fromMe":true,"ack":` + strconv.Itoa(ack) + `}}`)
	mac := hmac.New(sha512.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(g.base, "/api/v1")+"/webhooks/qrchat", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Webhook-Hmac", hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-Webhook-Hmac-Algorithm", "sha512")
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGatewayQRReports: the QR gateway's signed acks reach the gateway's
// /webhooks/qrchat; read moves the record, an error ack fails and refunds
// it, and an event signed with another key is refused.
func TestGatewayQRReports(t *testing.T) {
	qr := newQRStub(t)
	g := start(t, map[string]string{"NOTIFY_QR_URL": qr.URL, "NOTIFY_QR_KEY": "qr-key-1",
		"NOTIFY_QR_SESSION": "default", "NOTIFY_QR_WEBHOOK_SECRET": "qr-hook-secret-3f"})
	g.out.waitFor(t, "delivery reports: POST /webhooks/qrchat")
	before := g.balanceMinor(t)
	send := func() (string, string) {
		a := g.post(t, "/messenger/send", g.key, `{"gateway":"qr","to":"9876543210","message":"Your order shipped"}`)
		if a.status != 200 {
			t.Fatalf("send: %d %s", a.status, a.raw)
		}
		return a.body["message_id"].(string), a.body["provider_message_id"].(string)
	}
	read, readPM := send()
	failed, failedPM := send()
	if code := postQRAck(t, g, "guessed-key", readPM, 3); code != http.StatusUnauthorized {
		t.Fatalf("forged ack: %d", code)
	}
	for _, ack := range []struct {
		pm  string
		ack int
	}{{readPM, 3}, {readPM, 2}, {failedPM, -1}, {failedPM, -1}} {
		if code := postQRAck(t, g, "qr-hook-secret-3f", ack.pm, ack.ack); code != 200 {
			t.Fatalf("ack %d of %s: %d", ack.ack, ack.pm, code)
		}
	}
	if rec := g.record(t, read); rec["status"] != "read" || historyStates(rec) != "pending,attempting,sent,delivered,read" {
		t.Fatalf("read message: %v", rec)
	}
	rec := g.record(t, failed)
	if rec["status"] != "failed" || rec["refunded"] != true || rec["vendor_code"] != "ack:-1" {
		t.Fatalf("failed message: %v", rec)
	}
	if got, want := g.balanceMinor(t), before-int64(g.record(t, read)["cost_minor"].(float64)); got != want {
		t.Fatalf("balance = %d, want %d: the failed one refunded once", got, want)
	}
}

// TestGatewaySMSReports: the SMS vendor's delivery reports reach the
// gateway's /webhooks/smsgateway/{token}: delivered moves the record, an
// undelivered one fails it and keeps the charge (the vendor billed it),
// and a wrong token is refused.
func TestGatewaySMSReports(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(vendor.Close)
	const token = "sms-dlr-token-8d2f6a"
	g := start(t, map[string]string{"NOTIFY_SMS_URL": vendor.URL, "NOTIFY_SMS_KEY": "vendor-key-1",
		"NOTIFY_SMS_WEBHOOK_TOKEN": token})
	line := g.out.waitFor(t, "delivery reports: GET, POST, PUT /webhooks/smsgateway/")
	if strings.Contains(line, token) || strings.Contains(g.out.text(), token) {
		t.Fatalf("the banner prints the token: %s", line)
	}
	root := strings.TrimSuffix(g.base, "/api/v1") + "/webhooks/smsgateway/"
	send := func() (string, string) {
		a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order shipped"}`)
		if a.status != 200 {
			t.Fatalf("send: %d %s", a.status, a.raw)
		}
		return a.body["message_id"].(string), a.body["provider_message_id"].(string)
	}
	delivered, deliveredPM := send()
	undelivered, undeliveredPM := send()
	before := g.balanceMinor(t)
	ctx := context.Background()
	if err := vendor.Report(ctx, root+"not-the-token-123456", deliveredPM, "DELIVERED", "", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a wrong token: %v, want 401", err)
	}
	if err := vendor.Report(ctx, root+token, deliveredPM, "DELIVERED", "", ""); err != nil {
		t.Fatal(err)
	}
	if err := vendor.Report(ctx, root+token, undeliveredPM, "UNDELIVERED", "DND", "do-not-disturb"); err != nil {
		t.Fatal(err)
	}
	if rec := g.record(t, delivered); rec["status"] != "delivered" {
		t.Fatalf("delivered: %v", rec)
	}
	if rec := g.record(t, undelivered); rec["status"] != "failed" || rec["refunded"] != false || rec["vendor_code"] != "UNDELIVERED:DND" {
		t.Fatalf("undelivered: %v", rec)
	}
	if got := g.balanceMinor(t); got != before {
		t.Fatalf("balance = %d, want %d: an undelivered SMS keeps its charge", got, before)
	}
}
