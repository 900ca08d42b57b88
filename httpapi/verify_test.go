package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/verify"
)

var verifySecret = []byte("httpapi-verify-test-secret-0123456789abcdef")

// newVerifyEnv is the test gateway with the verification routes, over
// memstore's verifications and the env's clock; guard, when not nil,
// configures a fraud guard over memstore's counters.
func newVerifyEnv(t *testing.T, guard *verify.GuardConfig) *httpapienv.Env {
	t.Helper()
	return httpapienv.NewHooked(t, httpapienv.OpeningBal, func(*httpapienv.Env) []notify.Option { return nil }, func(e *httpapienv.Env) []httpapi.Option {
		cfg := verify.Config{Notifier: e.Notifier, Accounts: e.Accounts, Store: memstore.NewVerifications(),
			Secret: verifySecret, Now: e.Clock.Now}
		if guard != nil {
			gc := *guard
			gc.Counters = memstore.NewCounters()
			g, err := verify.NewGuard(gc)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Guard = g
		}
		svc, err := verify.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return []httpapi.Option{httpapi.WithVerifications(svc)}
	})
}

// smsCodes and chatCodes return the codes of every SMS and chat message
// the vendors took, in order.
func smsCodes(t *testing.T, e *httpapienv.Env) []string {
	t.Helper()
	var out []string
	for _, env := range e.SMS.Sent() {
		out = append(out, env.Content.(*sms.Message).OTP)
	}
	return out
}

func chatCodes(t *testing.T, e *httpapienv.Env) []string {
	t.Helper()
	var out []string
	for _, env := range append(e.Cloud.Sent(), e.QR.Sent()...) {
		out = append(out, env.Content.(*chat.Message).OTP)
	}
	return out
}

// startVerification starts a verification of body and returns its answer,
// failing the test unless it is a 200.
func startVerification(t *testing.T, e *httpapienv.Env, body string) *httpapienv.Reply {
	t.Helper()
	r := e.Post(t, "/api/v1/verifications", body, nil)
	if r.Status != http.StatusOK || r.Body["success"] != true {
		t.Fatalf("start: %d %s", r.Status, r.Raw)
	}
	return r
}

// check checks code against the verification id.
func check(t *testing.T, e *httpapienv.Env, id, code string) *httpapienv.Reply {
	t.Helper()
	return e.Post(t, "/api/v1/verifications/"+id+"/check", `{"code":"`+code+`"}`, nil)
}

// wantCheck checks a check's 200 answer.
func wantCheck(t *testing.T, r *httpapienv.Reply, status string, attemptsLeft int) {
	t.Helper()
	if r.Status != http.StatusOK || r.Body["success"] != true || r.Body["status"] != status ||
		r.Body["attempts_left"] != float64(attemptsLeft) || r.Body["approved"] != (status == "approved") {
		t.Fatalf("check: got %d %s, want 200 status %s attempts_left %d", r.Status, r.Raw, status, attemptsLeft)
	}
}

// wrongCode returns a code of code's length that is not code.
func wrongCode(code string, i int) string {
	w := fmt.Sprintf("%0*d", len(code), i)
	if w == code {
		w = fmt.Sprintf("%0*d", len(code), i+1)
	}
	return w
}

func TestVerificationStartSendsOneCodeByBothAndCheckApprovesOnce(t *testing.T) {
	e := newVerifyEnv(t, nil)
	before := e.Minor(t, httpapienv.TestAccount)
	r := startVerification(t, e, `{"to":"98765 43210","purpose":"login","brand":"Acme"}`)
	id, _ := r.Body["verification_id"].(string)
	if id == "" || r.Body["status"] != "pending" || r.Body["attempts_left"] != 5.0 || r.Body["sends_left"] != 4.0 ||
		r.Body["to"] != "9876543210" || r.Body["purpose"] != "login" {
		t.Fatalf("start: %s", r.Raw)
	}
	if ch, _ := r.Body["channels"].([]any); len(ch) != 2 || ch[0] != "sms" || ch[1] != "chat" {
		t.Errorf("channels %v, want [sms chat]", r.Body["channels"])
	}
	want := e.Clock.Now().Add(verify.DefaultTTL).UTC()
	if exp, err := time.Parse(time.RFC3339Nano, r.Body["expires_at"].(string)); err != nil || !exp.Equal(want) ||
		!strings.HasSuffix(r.Body["expires_at"].(string), "Z") {
		t.Errorf("expires_at %v, want %v in UTC", r.Body["expires_at"], want)
	}
	legs, _ := r.Body["legs"].([]any)
	if len(legs) != 2 {
		t.Fatalf("legs: %s", r.Raw)
	}
	var legCost float64
	for i, want := range []string{"sms", "chat"} {
		l := legs[i].(map[string]any)
		if l["channel"] != want || l["status"] != "sent" || l["success"] != true || l["message_id"] == "" ||
			l["provider"] == "" || l["error"] != nil {
			t.Errorf("leg %d: %v", i, l)
		}
		if _, ok := l["cost"].(string); !ok {
			t.Errorf("leg %d has no decimal cost: %v", i, l)
		}
		legCost += l["cost_minor"].(float64)
	}
	if charged := before - e.Minor(t, httpapienv.TestAccount); charged == 0 || float64(charged) != legCost ||
		r.Body["cost_minor"] != legCost || r.Body["currency"].(map[string]any)["code"] != "INR" {
		t.Errorf("charged %d, legs cost %v, answer %s", charged, legCost, r.Raw)
	}

	smsGot, chatGot := smsCodes(t, e), chatCodes(t, e)
	if len(smsGot) != 1 || len(chatGot) != 1 || len(smsGot[0]) != 6 || smsGot[0] != chatGot[0] {
		t.Fatalf("SMS codes %q, chat codes %q: want one 6-digit code by both", smsGot, chatGot)
	}
	code := smsGot[0]

	g := e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil)
	if g.Status != http.StatusOK || g.Body["status"] != "pending" || g.Body["attempts_left"] != 5.0 || g.Body["legs"] != nil {
		t.Fatalf("GET: %d %s", g.Status, g.Raw)
	}

	balance := e.Minor(t, httpapienv.TestAccount)
	wantCheck(t, check(t, e, id, code), "approved", 0)
	if e.Minor(t, httpapienv.TestAccount) != balance {
		t.Error("a check was charged")
	}
	// A replayed check proves nothing: 409.
	httpapienv.WantError(t, check(t, e, id, code), http.StatusConflict, "conflict")

	g = e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil)
	if g.Body["status"] != "approved" || g.Body["attempts_left"] != 0.0 || g.Body["sends_left"] != 0.0 {
		t.Fatalf("GET after approval: %s", g.Raw)
	}
	// An approved verification takes no resend and no cancel.
	httpapienv.WantError(t, e.Post(t, "/api/v1/verifications/"+id+"/resend", `{}`, nil), http.StatusConflict, "conflict")
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/verifications/"+id, nil, nil), http.StatusConflict, "conflict")
	if len(smsCodes(t, e)) != 1 {
		t.Error("a refused resend sent something")
	}
}

func TestVerificationNumericCode(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":9876543210,"channels":["sms"]}`).Body["verification_id"].(string)
	code := smsCodes(t, e)[0]
	if chatCodes(t, e) != nil {
		t.Error("an SMS-only verification sent a chat message")
	}
	if code[0] == '0' {
		wantCheck(t, check(t, e, id, code), "approved", 0) // a JSON number cannot start with 0
		return
	}
	wantCheck(t, e.Post(t, "/api/v1/verifications/"+id+"/check", `{"code":`+code+`}`, nil), "approved", 0)
}

func TestVerificationWrongCodesEndInMaxAttempts(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	code := smsCodes(t, e)[0]
	for i := 1; i <= 6; i++ {
		r := check(t, e, id, wrongCode(code, i))
		switch {
		case i < 5:
			wantCheck(t, r, "pending", 5-i)
		default:
			wantCheck(t, r, "max_attempts_reached", 0)
		}
	}
	// The right code, too late.
	wantCheck(t, check(t, e, id, code), "max_attempts_reached", 0)
	g := e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil)
	if g.Body["status"] != "max_attempts_reached" {
		t.Errorf("GET: %s", g.Raw)
	}
}

func TestVerificationResendSendsTheSameCode(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	code := smsCodes(t, e)[0]

	// Within the cooldown: 429 with Retry-After, nothing sent.
	r := e.Post(t, "/api/v1/verifications/"+id+"/resend", `{}`, nil)
	httpapienv.WantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("cooldown refusal without Retry-After: %v", r.Header)
	}
	if e.SMS.Len() != 1 {
		t.Fatal("a resend within the cooldown sent")
	}

	// No body at all: the start's channels.
	e.Clock.Advance(verify.DefaultCooldown + time.Second)
	r = e.Do(t, http.MethodPost, "/api/v1/verifications/"+id+"/resend", nil, nil)
	if r.Status != http.StatusOK || r.Body["sends_left"] != 3.0 || r.Body["status"] != "pending" || len(r.Body["legs"].([]any)) != 2 {
		t.Fatalf("resend: %d %s", r.Status, r.Raw)
	}
	// An escalation to chat only.
	e.Clock.Advance(verify.DefaultCooldown + time.Second)
	r = e.Post(t, "/api/v1/verifications/"+id+"/resend", `{"channels":["chat"],"requester":"203.0.113.7"}`, nil)
	if legs, _ := r.Body["legs"].([]any); r.Status != http.StatusOK || len(legs) != 1 || legs[0].(map[string]any)["channel"] != "chat" {
		t.Fatalf("resend by chat: %d %s", r.Status, r.Raw)
	}
	all := append(smsCodes(t, e), chatCodes(t, e)...)
	if len(all) != 5 {
		t.Fatalf("%d messages, want 5 (2 + 2 + 1)", len(all))
	}
	for _, c := range all {
		if c != code {
			t.Fatalf("a resend sent code %q, the start %q", c, code)
		}
	}
	wantCheck(t, check(t, e, id, code), "approved", 0)
}

func TestVerificationCancel(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	code := smsCodes(t, e)[0]
	r := e.Do(t, http.MethodDelete, "/api/v1/verifications/"+id, nil, nil)
	if r.Status != http.StatusOK || r.Body["success"] != true || r.Body["verification_id"] != id || r.Body["status"] != "canceled" {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	wantCheck(t, check(t, e, id, code), "canceled", 0)
	httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/verifications/"+id, nil, nil), http.StatusConflict, "conflict")
	httpapienv.WantError(t, e.Post(t, "/api/v1/verifications/"+id+"/resend", `{}`, nil), http.StatusConflict, "conflict")
}

func TestVerificationEmail(t *testing.T) {
	e := newVerifyEnv(t, nil)
	r := startVerification(t, e, `{"to":"asha@example.com","channels":["email"],"brand":"Acme","length":8}`)
	id := r.Body["verification_id"].(string)
	if r.Body["to"] != "asha@example.com" || len(r.Body["legs"].([]any)) != 1 || e.SMS.Len() != 0 {
		t.Fatalf("start by e-mail: %s", r.Raw)
	}
	sent := e.Mail.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d e-mails", len(sent))
	}
	code := regexp.MustCompile(`\b\d{8}\b`).FindString(sent[0].Content.(*email.Message).Text)
	if code == "" {
		t.Fatalf("no 8-digit code in %q", sent[0].Content.(*email.Message).Text)
	}
	wantCheck(t, check(t, e, id, code), "approved", 0)
}

func TestVerificationUnknownAndOtherAccounts(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	other := map[string]string{"Authorization": httpapienv.OtherKey}
	for _, tc := range []struct {
		name string
		id   string
		hdr  map[string]string
	}{{"unknown id", "4f8e2a1c-0000-4000-8000-000000000000", nil}, {"not a uuid", "nope", nil}, {"another account's", id, other}} {
		t.Run(tc.name, func(t *testing.T) {
			httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/verifications/"+tc.id, tc.hdr, nil), http.StatusNotFound, "not_found")
			httpapienv.WantError(t, e.Post(t, "/api/v1/verifications/"+tc.id+"/check", `{"code":"123456"}`, tc.hdr), http.StatusNotFound, "not_found")
			httpapienv.WantError(t, e.Post(t, "/api/v1/verifications/"+tc.id+"/resend", `{}`, tc.hdr), http.StatusNotFound, "not_found")
			httpapienv.WantError(t, e.Do(t, http.MethodDelete, "/api/v1/verifications/"+tc.id, tc.hdr, nil), http.StatusNotFound, "not_found")
		})
	}
	// The other account's tries touched nothing.
	g := e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil)
	if g.Body["status"] != "pending" || g.Body["attempts_left"] != 5.0 {
		t.Errorf("after another account's tries: %s", g.Raw)
	}
}

func TestVerificationBadInput(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	sent := e.Sent()
	start, check, resend := "/api/v1/verifications", "/api/v1/verifications/"+id+"/check", "/api/v1/verifications/"+id+"/resend"
	for _, c := range []struct {
		name, path, body string
		hdr              map[string]string
		fields           []string
	}{
		{"no to", start, `{}`, nil, []string{"to"}},
		{"bad number", start, `{"to":"12345"}`, nil, []string{"to"}},
		{"to a boolean", start, `{"to":true}`, nil, []string{"to"}},
		{"channels a string", start, `{"to":"9876543210","channels":"sms"}`, nil, []string{"channels"}},
		{"unknown channel", start, `{"to":"9876543210","channels":["fax"]}`, nil, []string{"channels"}},
		{"no channel", start, `{"to":"9876543210","channels":[]}`, nil, []string{"channels"}},
		{"channel a number", start, `{"to":"9876543210","channels":["sms",1]}`, nil, []string{"channels[1]"}},
		{"channel twice", start, `{"to":"9876543210","channels":["sms","sms"]}`, nil, []string{"channels"}},
		{"email with sms", start, `{"to":"9876543210","channels":["email","sms"]}`, nil, []string{"channels"}},
		{"email to a number", start, `{"to":"9876543210","channels":["email"]}`, nil, []string{"to"}},
		{"length a string", start, `{"to":"9876543210","length":"6"}`, nil, []string{"length"}},
		{"length zero", start, `{"to":"9876543210","length":0}`, nil, []string{"length"}},
		{"length fraction", start, `{"to":"9876543210","length":6.5}`, nil, []string{"length"}},
		{"length 9 by sms", start, `{"to":"9876543210","length":9}`, nil, []string{"length"}},
		{"ttl too short", start, `{"to":"9876543210","ttl_seconds":5}`, nil, []string{"ttl_seconds"}},
		{"ttl negative", start, `{"to":"9876543210","ttl_seconds":-60}`, nil, []string{"ttl_seconds"}},
		{"ttl huge", start, `{"to":"9876543210","ttl_seconds":99999999999999999999}`, nil, []string{"ttl_seconds"}},
		{"bad purpose", start, `{"to":"9876543210","purpose":"log in!"}`, nil, []string{"purpose"}},
		{"brand too long", start, `{"to":"9876543210","brand":"` + strings.Repeat("b", 80) + `"}`, nil, []string{"brand"}},
		{"bad locale", start, `{"to":"9876543210","locale":"english please"}`, nil, []string{"locale"}},
		{"unknown key", start, `{"to":"9876543210","ttl":60}`, nil, []string{"ttl"}},
		{"key in the wrong case", start, `{"To":"9876543210"}`, nil, []string{"To"}},
		{"key twice", start, `{"to":"9876543210","to":"9876543211"}`, nil, []string{"to"}},
		{"many at once", start, `{"to":false,"channels":[null],"length":"x","ttl_seconds":{},"brand":7}`, nil,
			[]string{"to", "channels[0]", "length", "ttl_seconds", "brand"}},
		{"unknown keys at once", start, `{"to":"9876543210","extra":1,"Brand":"A","idempotency_key":"k"}`, nil,
			[]string{"extra", "Brand", "idempotency_key"}},
		{"idempotency key", start, `{"to":"9876543210"}`, map[string]string{"Idempotency-Key": "k1"}, nil},
		{"no code", check, `{}`, nil, []string{"code"}},
		{"empty code", check, `{"code":""}`, nil, []string{"code"}},
		{"code a boolean", check, `{"code":true}`, nil, []string{"code"}},
		{"code a fraction", check, `{"code":1234.5}`, nil, []string{"code"}},
		{"code too long", check, `{"code":"` + strings.Repeat("1", 65) + `"}`, nil, []string{"code"}},
		{"check unknown key", check, `{"code":"123456","otp":"123456"}`, nil, []string{"otp"}},
		{"check idempotency key", check, `{"code":"123456"}`, map[string]string{"Idempotency-Key": "k2"}, nil},
		{"resend unknown channel", resend, `{"channels":["pigeon"]}`, nil, []string{"channels"}},
		{"resend email for a number", resend, `{"channels":["email"]}`, nil, []string{"channels"}},
		{"resend unknown key", resend, `{"to":"9876543211"}`, nil, []string{"to"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Post(t, c.path, c.body, c.hdr)
			httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
			for _, f := range c.fields {
				if _, ok := r.ErrFields()[f]; !ok {
					t.Errorf("field %q not named: %s", f, r.Raw)
				}
			}
		})
	}
	if e.Sent() != sent {
		t.Errorf("bad requests sent %d messages", e.Sent()-sent)
	}
	// No bad check was counted as a guess.
	if g := e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil); g.Body["attempts_left"] != 5.0 {
		t.Errorf("after bad checks: %s", g.Raw)
	}
	// The body rules of every POST hold.
	httpapienv.WantError(t, e.Post(t, start, `{"to":"9876543210"`, nil), http.StatusBadRequest, "invalid_argument")
	httpapienv.WantError(t, e.Post(t, check, `[{"code":"1"}]`, nil), http.StatusBadRequest, "invalid_argument")
	httpapienv.WantError(t, e.Post(t, start, `{"to":"9876543210"}`, map[string]string{"Content-Type": "text/plain"}),
		http.StatusUnsupportedMediaType, "unsupported_media_type")
}

func TestVerificationGuardRefusalNamesItsRule(t *testing.T) {
	e := newVerifyEnv(t, &verify.GuardConfig{Recipient: verify.Limit{Max: 1, Window: time.Hour}})
	startVerification(t, e, `{"to":"9876543210"}`)
	before, sent := e.Minor(t, httpapienv.TestAccount), e.Sent()
	r := e.Post(t, "/api/v1/verifications", `{"to":"+91 98765 43210"}`, nil)
	httpapienv.WantError(t, r, http.StatusTooManyRequests, "rate_limited")
	errObj := r.Body["error"].(map[string]any)
	if errObj["rule"] != string(verify.RuleRecipient) {
		t.Errorf("error.rule = %v, want %s: %s", errObj["rule"], verify.RuleRecipient, r.Raw)
	}
	if r.Header.Get("Retry-After") == "" || errObj["retry_after_seconds"] == nil {
		t.Errorf("no Retry-After: %v %s", r.Header, r.Raw)
	}
	if e.Minor(t, httpapienv.TestAccount) != before || e.Sent() != sent {
		t.Error("a refused start was charged or sent")
	}
	// Another recipient passes.
	startVerification(t, e, `{"to":"9123456789"}`)
}

func TestVerificationNeedsAKey(t *testing.T) {
	e := newVerifyEnv(t, nil)
	id := startVerification(t, e, `{"to":"9876543210"}`).Body["verification_id"].(string)
	sent := e.Sent()
	for _, key := range []string{"<none>", "nk_test_wrong", "Bearer"} {
		hdr := map[string]string{"Authorization": key}
		for _, c := range []struct{ method, path, body string }{
			{http.MethodPost, "/api/v1/verifications", `{"to":"9876543210"}`},
			{http.MethodPost, "/api/v1/verifications/" + id + "/check", `{"code":"123456"}`},
			{http.MethodPost, "/api/v1/verifications/" + id + "/resend", `{}`},
			{http.MethodGet, "/api/v1/verifications/" + id, ""},
			{http.MethodDelete, "/api/v1/verifications/" + id, ""},
		} {
			var r *httpapienv.Reply
			if c.body != "" {
				r = e.Post(t, c.path, c.body, hdr)
			} else {
				r = e.Do(t, c.method, c.path, hdr, nil)
			}
			if r.Status != http.StatusUnauthorized || r.ErrCode() != "unauthenticated" {
				t.Errorf("%s %s with %q: %d %s", c.method, c.path, key, r.Status, r.Raw)
			}
		}
	}
	if e.Sent() != sent {
		t.Error("an unauthenticated request sent")
	}
	if g := e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil); g.Body["attempts_left"] != 5.0 || g.Body["status"] != "pending" {
		t.Errorf("after unauthenticated requests: %s", g.Raw)
	}
}

func TestVerificationRoutesNeedTheOption(t *testing.T) {
	e := httpapienv.New(t)
	httpapienv.WantError(t, e.Post(t, "/api/v1/verifications", `{"to":"9876543210"}`, nil), http.StatusNotFound, "not_found")
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/verifications/x", nil, nil), http.StatusNotFound, "not_found")

	v := newVerifyEnv(t, nil)
	r := v.Do(t, http.MethodPut, "/api/v1/verifications/x", nil, strings.NewReader(`{}`))
	httpapienv.WantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if r.Header.Get("Allow") != "GET, HEAD, DELETE" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
	httpapienv.WantError(t, v.Do(t, http.MethodGet, "/api/v1/verifications", nil, nil), http.StatusMethodNotAllowed, "method_not_allowed")
	httpapienv.WantError(t, v.Do(t, http.MethodGet, "/api/v1/verifications/x/check", nil, nil), http.StatusMethodNotAllowed, "method_not_allowed")

	if _, err := httpapi.New(v.Notifier, v.Accounts, httpapi.WithVerifications(nil)); err == nil {
		t.Error("WithVerifications(nil) was accepted")
	}
	nop := func([]byte, string, httpapi.Header) (notify.Request, error) { return nil, nil }
	for _, p := range []string{"/verifications", "/verifications/x/check"} {
		if _, err := httpapi.New(v.Notifier, v.Accounts, httpapi.WithRoute(p, nop)); err == nil {
			t.Errorf("WithRoute took %s", p)
		}
	}
}

// TestVerificationCodeNeverShown runs a whole verification and checks
// that its code is in no answer and no line of the access log.
func TestVerificationCodeNeverShown(t *testing.T) {
	e := newVerifyEnv(t, nil)
	var answers []string
	keep := func(r *httpapienv.Reply) *httpapienv.Reply { answers = append(answers, r.Raw); return r }

	start := keep(startVerification(t, e, `{"to":"9876543210","length":8,"purpose":"login","webotp_host":"acme.example"}`))
	id := start.Body["verification_id"].(string)
	code := smsCodes(t, e)[0]
	if len(code) != 8 || chatCodes(t, e)[0] != code {
		t.Fatalf("codes %q and %q", code, chatCodes(t, e))
	}
	if text := e.SMS.Sent()[0].Content.(*sms.Message).Text; !strings.Contains(text, "@acme.example #"+code) {
		t.Errorf("SMS without the WebOTP line: %q", text)
	}
	keep(check(t, e, id, wrongCode(code, 1)))
	keep(e.Post(t, "/api/v1/verifications/"+id+"/check", `{"code":"`+code+`x"}`, nil))
	e.Clock.Advance(verify.DefaultCooldown + time.Second)
	keep(e.Post(t, "/api/v1/verifications/"+id+"/resend", `{"webotp_host":"acme.example"}`, nil))
	keep(e.Do(t, http.MethodGet, "/api/v1/verifications/"+id, nil, nil))
	wantCheck(t, keep(check(t, e, id, code)), "approved", 0)
	keep(check(t, e, id, code)) // the 409
	keep(e.Do(t, http.MethodDelete, "/api/v1/verifications/"+id, nil, nil))

	logs := e.Logs.String()
	if n := strings.Count(logs, "\n"); n != len(answers) {
		t.Fatalf("%d access log lines for %d requests:\n%s", n, len(answers), logs)
	}
	if !strings.Contains(logs, `"verification_id":"`+id+`"`) {
		t.Errorf("the access log does not name the verification:\n%s", logs)
	}
	for _, l := range start.Body["legs"].([]any) {
		if mid := l.(map[string]any)["message_id"].(string); !strings.Contains(logs, mid) {
			t.Errorf("the access log does not name message %s:\n%s", mid, logs)
		}
	}
	shown := regexp.MustCompile(`(^|\D)` + code + `(\D|$)`)
	for i, a := range answers {
		if shown.MatchString(a) {
			t.Errorf("answer %d shows the code %s: %s", i, code, a)
		}
	}
	if shown.MatchString(logs) {
		t.Errorf("the access log shows the code %s:\n%s", code, logs)
	}
}

func TestVerificationSendFailures(t *testing.T) {
	e := newVerifyEnv(t, nil)

	// One leg fails: the verification is pending, and the leg says why.
	e.SMS.FailNext(1, notify.CodeUnavailable)
	r := startVerification(t, e, `{"to":"9876543210"}`)
	legs := r.Body["legs"].([]any)
	sl, cl := legs[0].(map[string]any), legs[1].(map[string]any)
	if r.Body["status"] != "pending" || sl["success"] != false || sl["status"] != "failed" || cl["success"] != true {
		t.Fatalf("one leg failed: %s", r.Raw)
	}
	if le, _ := sl["error"].(map[string]any); le["code"] != "unavailable" || !strings.Contains(le["message"].(string), "(request ") ||
		strings.Contains(le["message"].(string), "memprovider") {
		t.Errorf("failed leg's error: %v", sl["error"])
	}
	wantCheck(t, check(t, e, r.Body["verification_id"].(string), chatCodes(t, e)[0]), "approved", 0)

	// Both fail: the provider's error, with the verification, canceled,
	// and its legs; nothing stays charged.
	before := e.Minor(t, httpapienv.TestAccount)
	e.SMS.FailNext(1, notify.CodeRejected)
	e.Cloud.FailNext(1, notify.CodeRejected)
	e.QR.FailNext(1, notify.CodeRejected)
	r = e.Post(t, "/api/v1/verifications", `{"to":"9876543210"}`, nil)
	httpapienv.WantError(t, r, http.StatusBadGateway, "rejected")
	id, _ := r.Body["verification_id"].(string)
	if id == "" || r.Body["status"] != "canceled" || len(r.Body["legs"].([]any)) != 2 {
		t.Fatalf("both legs failed: %s", r.Raw)
	}
	if e.Minor(t, httpapienv.TestAccount) != before {
		t.Error("a failed start stayed charged")
	}
	if strings.Contains(r.Raw, "memprovider") || !strings.Contains(e.Logs.String(), "memprovider") {
		t.Errorf("the vendor's words belong in the log, not the answer: %s", r.Raw)
	}
	wantCheck(t, check(t, e, id, "123456"), "canceled", 0)
}
