package httpapi_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// fcmToken is an FCM registration token's shape.
const fcmToken = "dGVzdC1kZXZpY2UtdG9rZW4:APA91bH-0123456789abcdefghijklmnopqrstuvwxyz_ABCDEF"

// subscriptionJSON returns a browser's PushSubscription.toJSON() for
// endpoint, with fresh keys.
func subscriptionJSON(t *testing.T, endpoint string) string {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(auth)}})
	return string(b)
}

func sortedKeys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// TestPushSend: POST /push sends to a subscription or a token, priced,
// charged and answered as every send is.
func TestPushSend(t *testing.T) {
	e := httpapienv.New(t)
	sub := subscriptionJSON(t, "https://Push.Example.COM/s/1")
	r := e.Post(t, "/api/v1/push", `{"subscription":`+sub+`,"title":"Order","body":"Shipped","data":{"order":"1042"},"ttl":600,"urgency":"high"}`, nil)
	if r.Status != 200 || r.Body["channel"] != "push" || r.Body["provider"] != "webpush-mem" || r.Body["cost_minor"] != 2.0 ||
		r.Body["to"] != "https://push.example.com/s/1" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	env := e.WebPush.Sent()[0]
	if m := push.MessageOf(env); m == nil || m.Title != "Order" || m.Data["order"] != "1042" || m.TTL.Seconds() != 600 || m.Urgency != push.UrgencyHigh {
		t.Fatalf("message %+v", m)
	}
	r = e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"Sale","promotional":true}`, nil)
	if r.Status != 200 || r.Body["provider"] != "fcm-mem" || r.Body["cost_minor"] != 5.0 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-7 {
		t.Fatalf("wallet %d", got)
	}
}

// TestPushBadInput: every bad field at once, nothing sent or charged.
func TestPushBadInput(t *testing.T) {
	e := httpapienv.New(t)
	for _, c := range []struct {
		body, fields string
	}{
		{`{"body":"b"}`, "subscription"},
		{`{"token":"` + fcmToken + `","body":"b","ttl":"x","promotional":"yes","data":{"k":1},"urgency":3}`, "data.k,promotional,ttl,urgency"},
		{`{"subscription":{"endpoint":"https://push.example.com/s"},"body":"b"}`, "subscription.keys"},
		{`{"subscription":{"endpoint":"http://x","keys":{"p256dh":"AA","auth":"BB"}},"body":"b"}`,
			"subscription.endpoint,subscription.keys.auth,subscription.keys.p256dh"},
		{`{"subscription":"x","body":"b"}`, "subscription"},
		{`{"token":"` + fcmToken + `","body":"b","ttl":99999999}`, "ttl"},
	} {
		r := e.Post(t, "/api/v1/push", c.body, nil)
		if r.Status != 400 || r.ErrCode() != "invalid_argument" || sortedKeys(r.ErrFields()) != c.fields {
			t.Errorf("%s: %d %s; want 400 naming %s", c.body, r.Status, r.Raw, c.fields)
		}
	}
	r := e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"b","colour":"red"}`, nil)
	if r.Status != 400 || r.ErrFields()["colour"] == nil {
		t.Errorf("an unknown key: %d %s", r.Status, r.Raw)
	}
	if e.Sent() != 0 || e.Minor(t, httpapienv.TestAccount) != httpapienv.OpeningBal {
		t.Fatalf("sent %d, wallet %d", e.Sent(), e.Minor(t, httpapienv.TestAccount))
	}
}

// TestPushScheduledAndFallback: a push takes send_at, and a fallback
// chain whose SMS step names its number, sent when the push was not
// confirmed in time.
func TestPushScheduledAndFallback(t *testing.T) {
	e, q := newQueuedEnv(t)
	r := e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"Later","send_at":"2025-01-03T10:00:00Z"}`, nil)
	if r.Status != 202 || r.Body["status"] != string(record.StateScheduled) {
		t.Fatalf("send_at: %d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"b","fallback":[{"channel":"sms","after_seconds":60,"message":"m"}]}`, nil)
	if r.Status != 400 || r.ErrFields()["fallback.0.request.to"] == nil {
		t.Fatalf("an SMS step without its number: %d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"Shipped","fallback":[{"channel":"sms","to":"9876543210","after_seconds":300,"message":"Shipped"}]}`, nil)
	if r.Status != 200 || e.FCM.Len() != 1 || e.SMS.Len() != 0 {
		t.Fatalf("fallback: %d %s", r.Status, r.Raw)
	}
	e.Clock.Advance(5 * time.Minute)
	runDue(e, q)
	if e.SMS.Len() != 1 || e.SMS.Sent()[0].To != "+919876543210" {
		t.Fatalf("after 5 minutes without a confirmation: %d SMS", e.SMS.Len())
	}
}

// TestPushBulk: subscriptions and tokens, each charged and recorded;
// recipients need a registry.
func TestPushBulk(t *testing.T) {
	e := httpapienv.New(t)
	body := `{"subscriptions":[` + subscriptionJSON(t, "https://push.example.com/s/a") + `,` + subscriptionJSON(t, "https://push.example.com/s/b") +
		`],"tokens":["` + fcmToken + `"],"body":"Sale"}`
	r := e.Post(t, "/api/v1/push/bulk", body, nil)
	if r.Status != 200 || r.Body["recipients"] != 3.0 || r.Body["accepted"] != 3.0 || e.WebPush.Len() != 2 || e.FCM.Len() != 1 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push/bulk", `{"tokens":["`+fcmToken+`","bad"],"body":"Sale"}`, nil)
	if r.Status != 400 || sortedKeys(r.ErrFields()) != "tokens.1" {
		t.Fatalf("a bad token: %d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push/bulk", `{"recipients":["user-42"],"body":"Sale"}`, nil)
	if r.Status != 400 || sortedKeys(r.ErrFields()) != "recipients" {
		t.Fatalf("recipients without a registry: %d %s", r.Status, r.Raw)
	}
}

// TestVAPIDPublicKey: served without an API key, only when configured.
func TestVAPIDPublicKey(t *testing.T) {
	e := httpapienv.New(t)
	if r := e.Do(t, http.MethodGet, "/api/v1/push/vapid-public-key", map[string]string{}, nil); r.Status != 404 {
		t.Fatalf("without WithPush: %d %s", r.Status, r.Raw)
	}
	const key = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U"
	e = httpapienv.New(t, httpapi.WithPush(httpapi.PushConfig{VAPIDPublicKey: key}))
	r := e.Do(t, http.MethodGet, "/api/v1/push/vapid-public-key", map[string]string{}, nil)
	if r.Status != 200 || r.Body["public_key"] != key {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if r := e.Post(t, "/api/v1/push/subscriptions", `{}`, nil); r.Status != 404 {
		t.Fatalf("registration without a registry: %d %s", r.Status, r.Raw)
	}
	if _, err := httpapi.New(e.Notifier, e.Accounts, httpapi.WithPush(httpapi.PushConfig{})); err == nil {
		t.Fatal("WithPush with nothing accepted")
	}
}

// TestPushRegistry: devices registered for a recipient over the API, a
// bulk push to the recipient reaching each, a gone device skipped and
// forgotten, a repeat of the key answered as first sent, and devices
// forgotten on request.
func TestPushRegistry(t *testing.T) {
	e := httpapienv.NewHooked(t, httpapienv.OpeningBal, func(*httpapienv.Env) []notify.Option { return nil },
		func(e *httpapienv.Env) []httpapi.Option {
			reg, err := push.NewRegistry(memstore.NewPushDevices(), e.Ledger)
			if err != nil {
				t.Fatal(err)
			}
			return []httpapi.Option{httpapi.WithPush(httpapi.PushConfig{Registry: reg})}
		})
	r := e.Post(t, "/api/v1/push/subscriptions", `{"recipient":"user-42","subscription":`+subscriptionJSON(t, "https://Push.Example.COM/s/1")+`}`, nil)
	if r.Status != 200 || r.Body["to"] != "https://push.example.com/s/1" || r.Body["type"] != "webpush" || r.Body["recipient"] != "user-42" {
		t.Fatalf("register a subscription: %d %s", r.Status, r.Raw)
	}
	e.Clock.Advance(time.Second)
	if r := e.Post(t, "/api/v1/push/subscriptions", `{"recipient":"user-42","token":"`+fcmToken+`"}`, nil); r.Status != 200 || r.Body["type"] != "fcm" {
		t.Fatalf("register a token: %d %s", r.Status, r.Raw)
	}
	if r := e.Post(t, "/api/v1/push/subscriptions", `{"recipient":"","token":"short"}`, nil); r.Status != 400 || sortedKeys(r.ErrFields()) != "recipient,token" {
		t.Fatalf("a bad registration: %d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push/subscriptions/lookup", `{"recipient":"user-42"}`, nil)
	if devices, _ := r.Body["devices"].([]any); r.Status != 200 || len(devices) != 2 {
		t.Fatalf("lookup: %d %s", r.Status, r.Raw)
	}

	bulk := `{"recipients":["user-42"],"body":"Sale","idempotency_key":"sale-1"}`
	first := e.Post(t, "/api/v1/push/bulk", bulk, nil)
	if first.Status != 200 || first.Body["recipients"] != 2.0 || e.WebPush.Len() != 1 || e.FCM.Len() != 1 {
		t.Fatalf("bulk to user-42: %d %s", first.Status, first.Raw)
	}
	// The push service declares the subscription gone.
	if _, err := e.Ledger.AddSuppression(context.Background(), store.Suppression{Account: httpapienv.TestAccount, Kind: push.Kind,
		To: "https://push.example.com/s/1", Reason: store.SuppressHardBounce, At: e.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	again := e.Post(t, "/api/v1/push/bulk", bulk, nil)
	if again.Status != 200 || again.Body["message_id"] != first.Body["message_id"] || e.Sent() != 2 {
		t.Fatalf("a repeat of the key: %d %s", again.Status, again.Raw)
	}
	r = e.Post(t, "/api/v1/push/bulk", `{"recipients":["user-42"],"body":"Sale 2"}`, nil)
	if r.Status != 200 || r.Body["recipients"] != 1.0 || e.FCM.Len() != 2 || e.WebPush.Len() != 1 {
		t.Fatalf("bulk after the subscription went: %d %s", r.Status, r.Raw)
	}
	r = e.Post(t, "/api/v1/push/subscriptions/lookup", `{"recipient":"user-42"}`, nil)
	if devices, _ := r.Body["devices"].([]any); len(devices) != 1 {
		t.Fatalf("the gone subscription is still registered: %s", r.Raw)
	}

	if r := e.Post(t, "/api/v1/push/subscriptions/delete", `{"to":"`+fcmToken+`"}`, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := e.Post(t, "/api/v1/push/subscriptions/delete", `{"to":"`+fcmToken+`"}`, nil); r.Status != 404 {
		t.Fatalf("a second delete: %d %s", r.Status, r.Raw)
	}
	before := e.Minor(t, httpapienv.TestAccount)
	r = e.Post(t, "/api/v1/push/bulk", `{"recipients":["user-42",42],"body":"Sale 3"}`, nil)
	if r.Status != 400 || sortedKeys(r.ErrFields()) != "recipients.0,recipients.1" || e.Minor(t, httpapienv.TestAccount) != before {
		t.Fatalf("recipients without devices: %d %s", r.Status, r.Raw)
	}
}

// TestPushConfirm: the app's confirmation moves a push to delivered, so
// that its fallback is not sent and is refunded; only pushes can be
// confirmed.
func TestPushConfirm(t *testing.T) {
	e, q := newQueuedEnv(t)
	before := e.Minor(t, httpapienv.TestAccount)
	r := e.Post(t, "/api/v1/push", `{"token":"`+fcmToken+`","body":"Shipped","fallback":[{"channel":"sms","to":"9876543210","after_seconds":300,"message":"Shipped"}]}`, nil)
	if r.Status != 200 {
		t.Fatalf("push: %d %s", r.Status, r.Raw)
	}
	id, _ := r.Body["message_id"].(string)
	c := e.Post(t, "/api/v1/push/confirm", `{"message_id":"`+id+`"}`, nil)
	data, _ := c.Body["data"].(map[string]any)
	if c.Status != 200 || data["status"] != string(record.StateDelivered) {
		t.Fatalf("confirm: %d %s", c.Status, c.Raw)
	}
	if c := e.Post(t, "/api/v1/push/confirm", `{"message_id":"`+id+`","state":"read"}`, nil); c.Status != 200 {
		t.Fatalf("read: %d %s", c.Status, c.Raw)
	}
	e.Clock.Advance(5 * time.Minute)
	runDue(e, q)
	if e.SMS.Len() != 0 || e.Minor(t, httpapienv.TestAccount) != before-2 {
		t.Fatalf("after the confirmation: %d SMS sent, wallet %d (want %d)", e.SMS.Len(), e.Minor(t, httpapienv.TestAccount), before-2)
	}

	sms := e.Post(t, "/api/v1/sms", `{"numbers":"9876543210","message":"Hello"}`, nil)
	smsID, _ := sms.Body["message_id"].(string)
	if c := e.Post(t, "/api/v1/push/confirm", `{"message_id":"`+smsID+`"}`, nil); c.Status != 404 {
		t.Fatalf("confirming an SMS: %d %s", c.Status, c.Raw)
	}
	if c := e.Post(t, "/api/v1/push/confirm", `{"message_id":"`+id+`","state":"sent"}`, nil); c.Status != 400 || sortedKeys(c.ErrFields()) != "state" {
		t.Fatalf("a bad state: %d %s", c.Status, c.Raw)
	}
	if c := e.Post(t, "/api/v1/push/confirm", `{}`, nil); c.Status != 400 || sortedKeys(c.ErrFields()) != "message_id" {
		t.Fatalf("no message: %d %s", c.Status, c.Raw)
	}
	if c := e.Do(t, http.MethodPost, "/api/v1/push/confirm", map[string]string{"Authorization": "Bearer " + httpapienv.OtherKey, "Content-Type": "application/json"},
		strings.NewReader(`{"message_id":"`+id+`"}`)); c.Status != 404 {
		t.Fatalf("another account's push: %d %s", c.Status, c.Raw)
	}
}
