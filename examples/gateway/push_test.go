package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
)

// webPushEnv are Web Push's settings of the tests: the fake push
// service's key pair, whose private key no error may repeat.
var webPushEnv = map[string]string{
	"NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY":  webpushtest.VAPIDPublicKey,
	"NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY": webpushtest.VAPIDPrivateKey,
	"NOTIFY_WEBPUSH_SUBSCRIBER":        webpushtest.Subscriber,
}

// fcmEnv returns FCM's settings for the fake f, its service account's key
// written to a file of the test's.
func fcmEnv(t *testing.T, f *fcmtest.Server) map[string]string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fcm-service-account.json")
	if err := os.WriteFile(file, f.CredentialsJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"NOTIFY_FCM_PROJECT_ID": f.ProjectID(), "NOTIFY_FCM_CREDENTIALS_FILE": file, "NOTIFY_FCM_URL": f.URL}
}

// writeFile writes content to a file of the test's and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPushSettings: Web Push needs its key pair, one pair, and a
// subscriber; FCM its project and the service account's key file, read
// at start, and optionally a base URL. Either makes push real (no
// stand-ins, the outbox off by default); errors name the variable and
// never show the private key or what the key file holds.
func TestPushSettings(t *testing.T) {
	f := fcmtest.NewServer(fcmtest.Config{})
	t.Cleanup(f.Close)
	fcmSet := fcmEnv(t, f)
	with := func(base map[string]string, kv ...string) map[string]string {
		env := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(env, kv[i])
			} else {
				env[kv[i]] = kv[i+1]
			}
		}
		return env
	}

	c, err := loadConfig(envOf(webPushEnv, fcmSet))
	if err != nil {
		t.Fatal(err)
	}
	if w := c.webPush; w == nil || w.publicKey != webpushtest.VAPIDPublicKey || w.privateKey != webpushtest.VAPIDPrivateKey || w.subscriber != webpushtest.Subscriber {
		t.Errorf("web push: %+v", c.webPush)
	}
	if f := c.fcm; f == nil || f.projectID != fcmtest.DefaultProjectID || f.baseURL != fcmSet["NOTIFY_FCM_URL"] || string(f.credentials) != string(fcmSetKey(t, fcmSet)) {
		t.Errorf("fcm: %+v", c.fcm)
	}
	if !c.realVendors() || c.outbox || len(c.warnings) != 0 {
		t.Errorf("with push vendors: real %v, outbox %v, warnings %q", c.realVendors(), c.outbox, c.warnings)
	}
	if s := pushSummary(c); s != "webpush (VAPID public key "+webpushtest.VAPIDPublicKey+", subscriber mailto:ops@example.com); fcm (project notify-fcm-test)" {
		t.Errorf("banner: %q", s)
	}
	// Each alone; FCM's URL is optional (Google's by default); an https:
	// subscriber; neither: stand-ins, and the outbox on.
	for name, env := range map[string]map[string]string{
		"web push alone":        webPushEnv,
		"https subscriber":      with(webPushEnv, "NOTIFY_WEBPUSH_SUBSCRIBER", "https://ops.example.com/contact"),
		"fcm alone":             fcmSet,
		"fcm with Google's URL": with(fcmSet, "NOTIFY_FCM_URL", ""),
	} {
		c, err := loadConfig(envOf(env))
		if err != nil || (c.webPush == nil) == (env["NOTIFY_WEBPUSH_SUBSCRIBER"] != "") || (c.fcm == nil) == (env["NOTIFY_FCM_PROJECT_ID"] != "") || !c.realVendors() {
			t.Errorf("%s: %v %+v", name, err, c)
		}
	}
	if c, err := loadConfig(envOf()); err != nil || c.webPush != nil || c.fcm != nil || c.realVendors() || !c.outbox ||
		pushSummary(c) != "logged, not sent (set NOTIFY_WEBPUSH_* or NOTIFY_FCM_*)" {
		t.Errorf("without push vendors: %v %+v", err, c)
	}

	// Prices: the stock INR list prices push; NOTIFY_PRICES prices it by
	// class.
	if c, err := loadConfig(envOf()); err != nil || c.prices.lists["INR"].Push.Transactional != 2 || c.prices.lists["INR"].Push.Promotional != 5 {
		t.Errorf("stock push prices: %v %+v", err, c.prices.lists["INR"].Push)
	}
	if c, err := loadConfig(envOf(map[string]string{"NOTIFY_CURRENCY": "USD", "NOTIFY_PRICES": "USD: sms=0.01, push=0.01, push.promotional=0.03"})); err != nil ||
		c.prices.lists["USD"].Push.Transactional != 1 || c.prices.lists["USD"].Push.Promotional != 3 {
		t.Errorf("NOTIFY_PRICES push prices: %v", err)
	}

	other := otherPrivateKey(t)
	secretPEM := "-----BEGIN PRIVATE KEY-----\nfcm-secret-key-material\n-----END PRIVATE KEY-----\n"
	for name, tt := range map[string]struct {
		env map[string]string
		say string
	}{
		"public key alone":   {with(webPushEnv, "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY", ""), "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY and NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY go together"},
		"private key alone":  {with(webPushEnv, "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY", ""), "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY and NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY go together"},
		"subscriber alone":   {map[string]string{"NOTIFY_WEBPUSH_SUBSCRIBER": webpushtest.Subscriber}, "NOTIFY_WEBPUSH_SUBSCRIBER is Web Push's contact"},
		"no subscriber":      {with(webPushEnv, "NOTIFY_WEBPUSH_SUBSCRIBER", ""), "NOTIFY_WEBPUSH_SUBSCRIBER is required"},
		"bare address":       {with(webPushEnv, "NOTIFY_WEBPUSH_SUBSCRIBER", "ops@example.com"), "NOTIFY_WEBPUSH_SUBSCRIBER must be a mailto: URL"},
		"http subscriber":    {with(webPushEnv, "NOTIFY_WEBPUSH_SUBSCRIBER", "http://ops.example.com"), "NOTIFY_WEBPUSH_SUBSCRIBER must be"},
		"bad public key":     {with(webPushEnv, "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY", "BGngmNilqiOaWHSw4TGJ"), "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY must be"},
		"bad private key":    {with(webPushEnv, "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY", "private-key-secret-not-base64!"), "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY must be"},
		"keys of two pairs":  {with(webPushEnv, "NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY", other), "NOTIFY_WEBPUSH_VAPID_PUBLIC_KEY is not the public key of NOTIFY_WEBPUSH_VAPID_PRIVATE_KEY"},
		"project alone":      {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", ""), "NOTIFY_FCM_PROJECT_ID and NOTIFY_FCM_CREDENTIALS_FILE go together"},
		"key file alone":     {with(fcmSet, "NOTIFY_FCM_PROJECT_ID", ""), "NOTIFY_FCM_PROJECT_ID and NOTIFY_FCM_CREDENTIALS_FILE go together"},
		"URL alone":          {map[string]string{"NOTIFY_FCM_URL": f.URL}, "NOTIFY_FCM_URL is FCM's base URL: set NOTIFY_FCM_PROJECT_ID"},
		"bad project":        {with(fcmSet, "NOTIFY_FCM_PROJECT_ID", "Acme App"), "NOTIFY_FCM_PROJECT_ID must be a Firebase project ID"},
		"URL with a key":     {with(fcmSet, "NOTIFY_FCM_URL", "https://fcm.googleapis.com/?key=fcm-secret-1"), "NOTIFY_FCM_URL: want an http(s) URL"},
		"URL not http":       {with(fcmSet, "NOTIFY_FCM_URL", "fcm.googleapis.com"), "NOTIFY_FCM_URL"},
		"no key file":        {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", "/nonexistent/fcm.json"), "NOTIFY_FCM_CREDENTIALS_FILE: stat /nonexistent/fcm.json"},
		"key file a dir":     {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", t.TempDir()), "is not a file"},
		"empty key file":     {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", writeFile(t, "empty.json", " \n")), "is empty"},
		"key file not JSON":  {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", writeFile(t, "key.pem", secretPEM)), "NOTIFY_FCM_CREDENTIALS_FILE is not JSON"},
		"not a service acct": {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", writeFile(t, "user.json", `{"type":"authorized_user","client_secret":"fcm-secret-2"}`)), `NOTIFY_FCM_CREDENTIALS_FILE must be a service account's JSON key`},
		"key not RSA": {with(fcmSet, "NOTIFY_FCM_CREDENTIALS_FILE", writeFile(t, "bad.json",
			`{"type":"service_account","client_email":"a@b.iam.gserviceaccount.com","private_key":`+strconvQuote(secretPEM)+`}`)),
			"NOTIFY_FCM_CREDENTIALS_FILE's private_key is not an RSA private key"},
		"dev attachments": {with(webPushEnv, "NOTIFY_DEV_ATTACHMENTS", "loopback"), "NOTIFY_DEV_ATTACHMENTS: development only"},
		"outbox, no key":  {with(fcmSet, "NOTIFY_OUTBOX", "on"), "NOTIFY_ADMIN_KEY"},
	} {
		_, err := loadConfig(envOf(tt.env))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_") || !strings.Contains(err.Error(), tt.say) {
			t.Errorf("%s: %v, want an error with %q", name, err, tt.say)
			continue
		}
		for _, secret := range []string{webpushtest.VAPIDPrivateKey, other, "private-key-secret", "fcm-secret", "BEGIN PRIVATE KEY",
			strings.Split(f.PrivateKeyPEM(), "\n")[1]} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: %q repeats a secret", name, err)
			}
		}
	}
}

// fcmSetKey reads back the key file of env.
func fcmSetKey(t *testing.T, env map[string]string) []byte {
	t.Helper()
	b, err := os.ReadFile(env["NOTIFY_FCM_CREDENTIALS_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otherPrivateKey is a VAPID private key of another pair than the fake's.
func otherPrivateKey(t *testing.T) string {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(k.Bytes())
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestGatewayPush: the gateway with Web Push and FCM, each a strict fake.
// A browser's subscription registered for user-42 takes a bulk push to
// user-42, encrypted for it (the fake decrypts it: the title, the body
// and the message ID the answer gave), charged at the stock transactional
// price; once the push service says the subscription is gone (410), the
// next push is refunded and puts it on the suppression list, the registry
// forgets it, and a push to it is refused (422 suppressed) before any
// charge. A push to an FCM token is sent through the fake, charged and
// recorded; the VAPID public key is served to browsers without an API
// key; /readyz asks FCM for a token.
func TestGatewayPush(t *testing.T) { testGatewayPush(t, nil) }

// TestGatewayPushOnPostgres is TestGatewayPush on PostgreSQL: the device
// registry, the suppression list and the wallet in the database. It is
// skipped without a PostgreSQL server (see pgstoretest).
func TestGatewayPushOnPostgres(t *testing.T) {
	t.Parallel()
	testGatewayPush(t, map[string]string{"NOTIFY_DATABASE_URL": schemaURL(t)})
}

// testGatewayPush runs TestGatewayPush with the extra settings.
func testGatewayPush(t *testing.T, extra map[string]string) {
	wp := webpushtest.NewServer(webpushtest.Config{ApplicationServerKey: webpushtest.VAPIDPublicKey})
	t.Cleanup(wp.Close)
	fc := fcmtest.NewServer(fcmtest.Config{})
	t.Cleanup(fc.Close)
	env := fcmEnv(t, fc)
	maps.Copy(env, webPushEnv)
	env["NOTIFY_BALANCE"] = "1"
	maps.Copy(env, extra)
	g := startWith(t, env, deps{resolver: staticDNS{}, webPushClient: wp.Client()})
	if out := g.out.text(); !strings.Contains(out, "push: webpush (VAPID public key "+webpushtest.VAPIDPublicKey) ||
		strings.Contains(out, webpushtest.VAPIDPrivateKey) {
		t.Errorf("banner:\n%s", out)
	}

	// The key browsers subscribe with, without an API key.
	a := g.curl(t, http.MethodGet, "/push/vapid-public-key", nil, "")
	if a.status != 200 || a.body["public_key"] != webpushtest.VAPIDPublicKey {
		t.Fatalf("vapid-public-key: %d %s", a.status, a.raw)
	}

	sub := wp.NewSubscription()
	subJSON, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	a = g.post(t, "/push/subscriptions", g.key, `{"recipient":"user-42","subscription":`+string(subJSON)+`}`)
	if a.status != 200 || a.body["success"] != true || a.body["type"] != "webpush" || a.body["to"] != sub.Endpoint {
		t.Fatalf("register: %d %s", a.status, a.raw)
	}

	bulk := `{"recipients":["user-42"],"title":"Order shipped","body":"Order 4711 is on its way","data":{"order":"4711"}}`
	a = g.post(t, "/push/bulk", g.key, bulk)
	if a.status != 200 || a.body["success"] != true || a.body["accepted"] != 1.0 || a.body["cost_minor"] != 2.0 {
		t.Fatalf("bulk push: %d %s", a.status, a.raw)
	}
	receipts, _ := a.body["receipts"].([]any)
	if len(receipts) != 1 {
		t.Fatalf("bulk push receipts: %s", a.raw)
	}
	id, _ := receipts[0].(map[string]any)["message_id"].(string)
	msgs := wp.MessagesTo(sub.Endpoint)
	if len(msgs) != 1 {
		t.Fatalf("the push service took %d messages", len(msgs))
	}
	var payload struct {
		MessageID string            `json:"message_id"`
		Title     string            `json:"title"`
		Body      string            `json:"body"`
		Data      map[string]string `json:"data"`
	}
	if err := json.Unmarshal(msgs[0].Payload, &payload); err != nil {
		t.Fatalf("payload %q: %v", msgs[0].Payload, err)
	}
	if payload.MessageID == "" || payload.MessageID != id || payload.Title != "Order shipped" || payload.Body != "Order 4711 is on its way" ||
		payload.Data["order"] != "4711" || msgs[0].VAPID.Subject != webpushtest.Subscriber {
		t.Errorf("payload %+v (message %q), VAPID %+v", payload, id, msgs[0].VAPID)
	}
	if got := g.balanceMinor(t); got != 100-2 {
		t.Fatalf("balance %d after a push, want 98", got)
	}

	// The subscription is gone: the push fails for certain, is refunded,
	// and the endpoint goes on the suppression list.
	wp.Expire(sub.Endpoint)
	a = g.post(t, "/push/bulk", g.key, bulk)
	if a.status != http.StatusBadGateway || errCode(a) != "rejected" || a.body["accepted"] != 0.0 || a.body["failed"] != 1.0 || a.body["cost_minor"] != 0.0 {
		t.Fatalf("bulk push to a gone subscription: %d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != 98 {
		t.Fatalf("balance %d after a refused push, want 98 (refunded)", got)
	}
	// The registry forgets it, so that user-42 has no device left; a push
	// to the subscription itself is suppressed; neither is charged.
	a = g.post(t, "/push/bulk", g.key, bulk)
	if a.status != 400 || errCode(a) != "invalid_argument" || !strings.Contains(a.raw, "recipients.0") {
		t.Errorf("bulk push to user-42 without a device: %d %s", a.status, a.raw)
	}
	a = g.post(t, "/push", g.key, `{"subscription":`+string(subJSON)+`,"body":"Are you there?"}`)
	if a.status != 422 || errCode(a) != "suppressed" {
		t.Errorf("push to a suppressed subscription: %d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != 98 {
		t.Fatalf("balance %d after refusals, want 98", got)
	}
	if n := len(wp.MessagesTo(sub.Endpoint)); n != 1 {
		t.Errorf("the push service took %d messages, want the first alone", n)
	}

	// FCM: a token, charged at the promotional price and recorded.
	token := fc.NewToken()
	a = g.post(t, "/push", g.key, `{"token":"`+token+`","title":"Sale","body":"20% off today","promotional":true,"urgency":"high","ttl":3600}`)
	if a.status != 200 || a.body["success"] != true || a.body["provider"] != "fcm" || a.body["cost_minor"] != 5.0 {
		t.Fatalf("fcm push: %d %s", a.status, a.raw)
	}
	fcmID, _ := a.body["message_id"].(string)
	if got := fc.Messages(); len(got) != 1 || got[0].Token != token {
		t.Fatalf("fcm took %+v", got)
	}
	if got := g.balanceMinor(t); got != 98-5 {
		t.Fatalf("balance %d after the FCM push, want 93", got)
	}
	a = g.curl(t, http.MethodGet, "/messages/"+fcmID, map[string]string{"Authorization": g.key}, "")
	if data, _ := a.body["data"].(map[string]any); a.status != 200 || data["status"] != "sent" || data["provider"] != "fcm" || data["cost_minor"] != 5.0 {
		t.Errorf("the FCM push's record: %d %s", a.status, a.raw)
	}

	// /readyz asks FCM for a token (the cached one), through the fake.
	a = g.json(t, g.send(t, http.MethodGet, g.root()+readyzPath, nil, ""))
	if checks, _ := a.body["checks"].(map[string]any); a.status != 200 || checks["provider fcm"] != "ok" {
		t.Errorf("readyz: %d %s", a.status, a.raw)
	}
	if fc.TokenRequests() == 0 {
		t.Error("FCM's token endpoint was never asked")
	}
}

// TestGatewayPushStandIns: without a push vendor, pushes go to the logging
// stand-ins webpush-log and fcm-log, charged as any push, and show in the
// development outbox; the registry works, and no VAPID key is served (the
// stand-in has none).
func TestGatewayPushStandIns(t *testing.T) {
	wp := webpushtest.NewServer(webpushtest.Config{}) // for a browser's subscription keys; nothing reaches it
	t.Cleanup(wp.Close)
	g := start(t, map[string]string{})
	if out := g.out.text(); !strings.Contains(out, "push: logged, not sent (set NOTIFY_WEBPUSH_* or NOTIFY_FCM_*)") {
		t.Errorf("banner:\n%s", out)
	}
	if a := g.curl(t, http.MethodGet, "/push/vapid-public-key", nil, ""); a.status != 404 {
		t.Errorf("vapid-public-key without Web Push: %d %s", a.status, a.raw)
	}
	sub := wp.NewSubscription()
	subJSON, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	if a := g.post(t, "/push/subscriptions", g.key, `{"recipient":"user-7","subscription":`+string(subJSON)+`}`); a.status != 200 {
		t.Fatalf("register: %d %s", a.status, a.raw)
	}
	const token = "dGVzdC1pbnN0YW5jZQ:APA91bStandInTokenForTheOutbox0123456789"
	a := g.post(t, "/push/bulk", g.key, `{"recipients":["user-7"],"tokens":["`+token+`"],"title":"Hello","body":"From the stand-ins","link":"https://shop.example/o/1"}`)
	if a.status != 200 || a.body["accepted"] != 2.0 || a.body["cost_minor"] != 4.0 {
		t.Fatalf("bulk push: %d %s", a.status, a.raw)
	}
	if got := g.balanceMinor(t); got != 10000-4 {
		t.Errorf("balance %d, want 9996", got)
	}
	page := g.send(t, http.MethodGet, g.outboxURL()+"/list?kind=push", nil, "")
	if page.status != 200 || strings.Count(page.raw, `class="message kind-push status-sent"`) != 2 ||
		!strings.Contains(page.raw, `title="`+sub.Endpoint+`"`) || !strings.Contains(page.raw, `title="`+token+`"`) ||
		!strings.Contains(page.raw, "Hello: From the stand-ins") {
		t.Errorf("the outbox's pushes: %d\n%s", page.status, page.raw)
	}
	if out := g.out.text(); !strings.Contains(out, "provider=webpush-log") || !strings.Contains(out, "provider=fcm-log") {
		t.Errorf("the stand-ins logged nothing:\n%s", out)
	}
	if n := wp.Accepted(); n != 0 {
		t.Errorf("the fake push service took %d messages from the stand-in", n)
	}
}
