package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// verifySecret is the NOTIFY_VERIFY_SECRET of the tests: at least 32
// characters, the same on every instance and across restarts.
const verifySecret = "verify-secret-0123456789abcdef0123456789"

// sixDigits finds a 6-digit code in a message (a 10-digit number does not
// match).
var sixDigits = regexp.MustCompile(`\b\d{6}\b`)

// smsCode returns the code in the last message the fake SMS vendor took.
func smsCode(t *testing.T, vendor *smsgatewaytest.Server) string {
	t.Helper()
	sent := vendor.Sent()
	if len(sent) == 0 {
		t.Fatal("the SMS vendor took nothing")
	}
	m := sent[len(sent)-1]
	code := sixDigits.FindString(m.Message + " " + m.VariablesValues)
	if code == "" {
		t.Fatalf("no code in the SMS: %+v", m)
	}
	return code
}

// verifyStart starts a verification of 9876543210 with body's channels
// and returns its ID.
func verifyStart(t *testing.T, g *gateway, body string) string {
	t.Helper()
	a := g.post(t, "/verifications", g.key, body)
	if a.status != 200 || a.body["status"] != "pending" {
		t.Fatalf("start: %d %s", a.status, a.raw)
	}
	id, _ := a.body["verification_id"].(string)
	if id == "" {
		t.Fatalf("start: no verification_id: %s", a.raw)
	}
	return id
}

// verifyCheck checks code against the verification id.
func verifyCheck(t *testing.T, g *gateway, id, code string) *answer {
	t.Helper()
	return g.post(t, "/verifications/"+id+"/check", g.key, `{"code":"`+code+`"}`)
}

// wrongCode is a 6-digit code other than code.
func wrongCode(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

// processGateway is the built binary p seen as a gateway, with key, for
// the gateway's request helpers.
func processGateway(p *process, key string) *gateway {
	return &gateway{base: p.base + "/api/v1", key: key, out: p.out, client: &http.Client{Timeout: 20 * time.Second}}
}

// TestVerificationOverTheGateway: a verification sends one code by the
// fake SMS vendor and the fake cloud chat vendor at once; that code
// approves it once, a second check is 409, and a verification checked
// with wrong codes ends at the fifth, saying so at the fifth and sixth.
func TestVerificationOverTheGateway(t *testing.T) {
	sms := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(sms.Close)
	g, chat, _ := reportingGateway(t, map[string]string{"NOTIFY_SMS_URL": sms.URL, "NOTIFY_SMS_KEY": "vendor-key-1"})

	a := g.post(t, "/verifications", g.key, `{"to":"9876543210"}`)
	if a.status != 200 || a.body["status"] != "pending" || a.body["attempts_left"] != 5.0 {
		t.Fatalf("start: %d %s", a.status, a.raw)
	}
	if ch, _ := json.Marshal(a.body["channels"]); string(ch) != `["sms","chat"]` {
		t.Fatalf("channels %s, want sms and chat", ch)
	}
	id := a.body["verification_id"].(string)
	code := smsCode(t, sms)
	acc := chat.Accepted()
	if len(acc) != 1 {
		t.Fatalf("the chat vendor took %d messages, want 1", len(acc))
	}
	raw, _ := json.Marshal(acc[0].Body)
	if got := sixDigits.FindAllString(string(raw), -1); len(got) == 0 || got[0] != code {
		t.Fatalf("the chat vendor got %s, want the SMS's code %s", raw, code)
	}
	if strings.Contains(a.raw, code) || strings.Contains(g.out.text(), code) {
		t.Error("the answer or the log shows the code")
	}

	if c := verifyCheck(t, g, id, code); c.status != 200 || c.body["status"] != "approved" || c.body["approved"] != true {
		t.Fatalf("check with the code: %d %s", c.status, c.raw)
	}
	if c := verifyCheck(t, g, id, code); c.status != 409 || errCode(c) != "conflict" || c.body["approved"] == true ||
		c.body["status"] == "approved" {
		t.Fatalf("second check: %d %s, want a 409 that does not approve", c.status, c.raw)
	}

	id = verifyStart(t, g, `{"to":"9876543210"}`)
	wrong := wrongCode(smsCode(t, sms))
	for i := 1; i <= 6; i++ {
		c := verifyCheck(t, g, id, wrong)
		want, left := "pending", float64(5-i)
		if i >= 5 {
			want, left = "max_attempts_reached", 0
		}
		if c.status != 200 || c.body["status"] != want || c.body["approved"] != false || c.body["attempts_left"] != left {
			t.Fatalf("wrong code %d: %d %s, want %s with %v attempts left", i, c.status, c.raw, want, left)
		}
	}
}

// TestVerificationSurvivesKill9: a verification started on the built
// binary on PostgreSQL is approved by its code on the binary restarted
// after a kill -9, with the same secret and database.
func TestVerificationSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	t.Parallel() // beside the other tests of the built binary
	dbURL := schemaURL(t)
	bin := buildGateway(t)
	sms := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(sms.Close)
	const key = "verify-kill-key-0123456789"
	env := []string{"NOTIFY_API_KEY=" + key, "NOTIFY_DATABASE_URL=" + dbURL, "NOTIFY_SMS_URL=" + sms.URL,
		"NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_VERIFY_SECRET=" + verifySecret}

	first := startProcess(t, bin, env...)
	id := verifyStart(t, processGateway(first, key), `{"to":"9876543210","channels":["sms"]}`)
	code := smsCode(t, sms)
	first.kill(t)

	second := processGateway(startProcess(t, bin, env...), key)
	if c := verifyCheck(t, second, id, code); c.status != 200 || c.body["status"] != "approved" || c.body["approved"] != true {
		t.Fatalf("check after the restart: %d %s", c.status, c.raw)
	}
}

// TestTwoGatewaysShareAVerification: two gateways on one database and
// secret; a verification started on one is approved on the other, and
// the checks of both count against it.
func TestTwoGatewaysShareAVerification(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	sms := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1"})
	t.Cleanup(sms.Close)
	const key = "shared-key-0123456789"
	env := func() map[string]string {
		return map[string]string{"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_API_KEY": key, "NOTIFY_SMS_URL": sms.URL,
			"NOTIFY_SMS_KEY": "vendor-key-1", "NOTIFY_VERIFY_SECRET": verifySecret}
	}
	a, b := start(t, env()), start(t, env())
	a.key, b.key = key, key

	id := verifyStart(t, a, `{"to":"9876543210","channels":["sms"]}`)
	code := smsCode(t, sms)
	if c := verifyCheck(t, a, id, wrongCode(code)); c.status != 200 || c.body["status"] != "pending" || c.body["attempts_left"] != 4.0 {
		t.Fatalf("wrong code on a: %d %s", c.status, c.raw)
	}
	if c := verifyCheck(t, b, id, code); c.status != 200 || c.body["status"] != "approved" || c.body["approved"] != true {
		t.Fatalf("right code on b: %d %s", c.status, c.raw)
	}
	if c := verifyCheck(t, a, id, code); c.status != 409 || errCode(c) != "conflict" {
		t.Fatalf("a sees the approval of b: %d %s", c.status, c.raw)
	}

	// The attempts of both count: 5 wrong checks, alternating, end it.
	id = verifyStart(t, b, `{"to":"9876543210","channels":["sms"]}`)
	code = smsCode(t, sms)
	for i := 1; i <= 5; i++ {
		g := []*gateway{a, b}[i%2]
		c := verifyCheck(t, g, id, wrongCode(code))
		want, left := "pending", float64(5-i)
		if i == 5 {
			want = "max_attempts_reached"
		}
		if c.status != 200 || c.body["status"] != want || c.body["attempts_left"] != left {
			t.Fatalf("wrong code %d: %d %s, want %s with %v attempts left", i, c.status, c.raw, want, left)
		}
	}
	if c := verifyCheck(t, a, id, code); c.body["status"] != "max_attempts_reached" || c.body["approved"] == true {
		t.Fatalf("the right code after the last attempt: %d %s", c.status, c.raw)
	}
}
