package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/internal/syncbuf"
	"github.com/notifykit/notify/memstore"
)

func TestBadInput(t *testing.T) {
	e := httpapienv.New(t)
	big := `{"to":"9876543210","message":"` + strings.Repeat("a", 2<<20) + `"}`
	type tc struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		chunk  bool // send without Content-Length
		status int
		code   string
		fields []string // fields that must be named
	}
	const okSMS = `{"to":"9876543210","message":"hello"}`
	cases := []tc{
		{name: "no authorization", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "<none>"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "empty authorization", path: "/api/v1/sms", hdr: map[string]string{"Authorization": ""}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "wrong key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "nk_test_wrong"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "wrong bearer key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer nk_test_wrong"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "bearer without key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "bearer and spaces", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer    "}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "basic scheme", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Basic " + httpapienv.TestKey}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "balance without key", method: "GET", path: "/api/v1/balance", hdr: map[string]string{"Authorization": "<none>"}, status: 401, code: "unauthenticated"},
		{name: "malformed json", path: "/api/v1/sms", body: `{"to":"9876543210",`, status: 400, code: "invalid_argument"},
		{name: "not json at all", path: "/api/v1/sms", body: `to=9876543210`, status: 400, code: "invalid_argument"},
		{name: "trailing garbage", path: "/api/v1/sms", body: okSMS + `x`, status: 400, code: "invalid_argument"},
		{name: "array body", path: "/api/v1/sms", body: `[` + okSMS + `]`, status: 400, code: "invalid_argument"},
		{name: "string body", path: "/api/v1/sms", body: `"hello"`, status: 400, code: "invalid_argument"},
		{name: "null body", path: "/api/v1/sms", body: `null`, status: 400, code: "invalid_argument"},
		{name: "empty body", path: "/api/v1/sms", body: ``, status: 400, code: "invalid_argument"},
		{name: "2 MiB body", path: "/api/v1/sms", body: big, status: 413, code: "request_too_large"},
		{name: "2 MiB chunked body", path: "/api/v1/sms", body: big, chunk: true, status: 413, code: "request_too_large"},
		{name: "text/plain", path: "/api/v1/sms", hdr: map[string]string{"Content-Type": "text/plain"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "form encoded", path: "/api/v1/send-otp", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: `to=9876543210&otp=1234`, status: 415, code: "unsupported_media_type"},
		{name: "no content type", path: "/api/v1/email/send", hdr: map[string]string{"Content-Type": "<none>"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "latin1 charset", path: "/api/v1/sms", hdr: map[string]string{"Content-Type": "application/json; charset=latin1"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "alias conflict to/numbers", path: "/api/v1/sms", body: `{"to":"9876543210","numbers":"9123456789","message":"hi"}`, status: 400, code: "invalid_argument", fields: []string{"to", "numbers"}},
		{name: "alias conflict message", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","variables_values":"b"}`, status: 400, code: "invalid_argument", fields: []string{"message", "variables_values"}},
		{name: "alias conflict route", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","route":"sms","rout":"otp"}`, status: 400, code: "invalid_argument", fields: []string{"route", "rout"}},
		{name: "alias conflict domain", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"a","domain":"a.example","website":"b.example"}`, status: 400, code: "invalid_argument", fields: []string{"domain", "website"}},
		{name: "alias conflict brand", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":"1234","brand":"A","brand_name":"B"}`, status: 400, code: "invalid_argument", fields: []string{"brand_name", "brand"}},
		{name: "idempotency header vs field", path: "/api/v1/sms", hdr: map[string]string{"Idempotency-Key": "k1"}, body: `{"to":"9876543210","message":"a","idempotency_key":"k2"}`, status: 400, code: "invalid_argument", fields: []string{"idempotency_key"}},
		{name: "idempotency key with space", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","idempotency_key":"a b"}`, status: 400, code: "invalid_argument", fields: []string{"idempotency_key"}},
		{name: "float number", path: "/api/v1/sms", body: `{"to":9.87e9,"message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "fraction otp", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":1234.5}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "negative otp", path: "/api/v1/messenger/send", body: `{"to":"9876543210","otp":-1234}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "boolean to", path: "/api/v1/sms", body: `{"to":true,"message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "object message", path: "/api/v1/sms", body: `{"to":"9876543210","message":{"a":1}}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "number subject", path: "/api/v1/email/send", body: `{"to":"a@example.com","subject":5,"message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "bad variables", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_slug":"standard-otp","variables":{"OTP":true}}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "variables string", path: "/api/v1/email/send", body: `{"to":"a@example.com","template_slug":"x","variables":"OTP=1"}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "many bad fields at once", path: "/api/v1/sms", body: `{"to":false,"message":[1],"sender_id":{},"route":7}`, status: 400, code: "invalid_argument", fields: []string{"to", "message", "sender_id", "route"}},
		{name: "bad number (channel)", path: "/api/v1/sms", body: `{"to":"12345","message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "missing message (channel)", path: "/api/v1/sms", body: `{"to":"9876543210"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "bad route (channel)", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","rout":"fast"}`, status: 400, code: "invalid_argument", fields: []string{"route"}},
		{name: "sms otp not digits", path: "/api/v1/sms", body: `{"to":"9876543210","message":"12ab","route":"otp"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "sms dlt without template", path: "/api/v1/sms", body: `{"to":"9876543210","message":"x","route":"dlt","sender_id":"ACMEIN"}`, status: 400, code: "invalid_argument", fields: []string{"dlt_template_id"}},
		{name: "sms dlt header length", path: "/api/v1/sms", body: `{"to":"9876543210","message":"x","route":"dlt","sender_id":"ACME","dlt_template_id":"1","dlt_entity_id":"2"}`, status: 400, code: "invalid_argument", fields: []string{"sender_id"}},
		{name: "sms too long", path: "/api/v1/sms", body: `{"to":"9876543210","message":"` + strings.Repeat("x", 1600) + `"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "sms unknown slug", path: "/api/v1/sms", body: `{"to":"9876543210","template_slug":"nope"}`, status: 400, code: "invalid_argument", fields: []string{"template_slug"}},
		{name: "sms bad number and route at once", path: "/api/v1/sms", body: `{"to":"5876543210","message":"x","route":"fast"}`, status: 400, code: "invalid_argument", fields: []string{"to", "route"}},
		{name: "otp bad code", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":"12"}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "otp bad number", path: "/api/v1/send-otp", body: `{"to":"98765","otp":"1234"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "chat media http", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"http://cdn.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media ip literal", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"https://127.0.0.1/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media private host", path: "/api/v1/send-messenger", body: `{"to":"9876543210","media_url":"https://internal.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media userinfo", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"https://u:p@cdn.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat header_url loopback", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"x","header_url":"https://loop.example.com/h.jpg"}`, status: 400, code: "invalid_argument", fields: []string{"header_url"}},
		{name: "chat unknown gateway", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"x","gateway":"sms"}`, status: 400, code: "invalid_argument", fields: []string{"gateway"}},
		{name: "chat unknown type", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"x","type":"marketing"}`, status: 400, code: "invalid_argument", fields: []string{"type"}},
		{name: "chat unknown action", path: "/api/v1/messenger/send-otp", body: `{"to":"9876543210","otp":"1234","action":"unlock"}`, status: 400, code: "invalid_argument", fields: []string{"action"}},
		{name: "chat short otp", path: "/api/v1/messenger/send-otp", body: `{"to":"9876543210","otp":123}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "chat nothing to send", path: "/api/v1/messenger/send", body: `{"to":"9876543210"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "chat slug missing variable", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_slug":"order-confirmed","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables.ORDER_ID"}},
		{name: "chat template_name on qr", path: "/api/v1/messenger/send", body: `{"to":"9876543210","gateway":"qr","template_name":"order_confirmed"}`, status: 400, code: "invalid_argument", fields: []string{"template_name"}},
		{name: "chat named variables for cloud template", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"order_confirmed","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "chat bad language", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"x","language":"english"}`, status: 400, code: "invalid_argument", fields: []string{"language"}},
		{name: "chat many bad fields", path: "/api/v1/messenger/send", body: `{"to":"1","message":"x","gateway":"y","type":"z","action":"w","media_url":"ftp://a/b"}`, status: 400, code: "invalid_argument", fields: []string{"to", "gateway", "type", "action", "media_url"}},
		{name: "email bad address", path: "/api/v1/email/send", body: `{"to":"asha-at-example.com","subject":"s","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "email display-name address", path: "/api/v1/email/send", body: `{"to":"Asha <asha@example.com>","subject":"s","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "email subject injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"hi\r\nBcc: x@evil.example","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "email from_name injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","from_name":"A\nB"}`, status: 400, code: "invalid_argument", fields: []string{"from_name"}},
		{name: "email reply_to injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","reply_to":"a@example.com\r\nX: y"}`, status: 400, code: "invalid_argument", fields: []string{"reply_to"}},
		{name: "email unknown purpose", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","purpose":"spam"}`, status: 400, code: "invalid_argument", fields: []string{"purpose"}},
		{name: "email no body", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "email NUL in message", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"a\u0000b"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "email template missing variable", path: "/api/v1/email/send", body: `{"to":"asha@example.com","template_slug":"payment-receipt","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables.AMOUNT"}},
		{name: "email many bad fields", path: "/api/v1/email/send", body: `{"to":"x","purpose":"y","from_name":"a\r\nb"}`, status: 400, code: "invalid_argument", fields: []string{"to", "purpose", "from_name", "message"}},
		{name: "email missing subject (channel)", path: "/api/v1/email/send", body: `{"to":"a@example.com","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "unknown path", path: "/api/v1/nope", body: okSMS, status: 404, code: "not_found"},
		{name: "root path", method: "GET", path: "/", status: 404, code: "not_found"},
		{name: "old version", path: "/api/v2/sms", body: okSMS, status: 404, code: "not_found"},
		{name: "get on sms", method: "GET", path: "/api/v1/sms", status: 405, code: "method_not_allowed"},
		{name: "delete on messenger", method: "DELETE", path: "/api/v1/send-messenger", status: 405, code: "method_not_allowed"},
		{name: "post on balance", path: "/api/v1/balance", body: `{}`, status: 405, code: "method_not_allowed"},
		{name: "insufficient funds", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer " + httpapienv.OtherKey}, body: okSMS, status: 402, code: "insufficient_funds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before1, before2 := e.Minor(t, httpapienv.TestAccount), e.Minor(t, "acct-2")
			sent := e.Sent()
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			var body io.Reader
			if c.body != "" || method == http.MethodPost {
				body = strings.NewReader(c.body)
				if c.chunk {
					body = io.MultiReader(body) // hides the length: chunked
				}
			}
			r := e.Do(t, method, c.path, c.hdr, body)
			httpapienv.WantError(t, r, c.status, c.code)
			for _, f := range c.fields {
				if _, ok := r.ErrFields()[f]; !ok {
					t.Errorf("field %q not named: %s", f, r.Raw)
				}
			}
			if c.status == 405 && r.Header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if a, b := e.Minor(t, httpapienv.TestAccount), e.Minor(t, "acct-2"); a != before1 || b != before2 {
				t.Errorf("wallet moved: %d -> %d, %d -> %d", before1, a, before2, b)
			}
			if now := e.Sent(); now != sent {
				t.Errorf("%d messages sent", now-sent)
			}
			if strings.Contains(r.Raw, httpapienv.TestKey) || strings.Contains(r.Raw, "nk_test_wrong") {
				t.Errorf("reply echoes a key: %s", r.Raw)
			}
		})
	}
}

func TestAuthForms(t *testing.T) {
	e := httpapienv.New(t)
	for _, auth := range []string{httpapienv.TestKey, "Bearer " + httpapienv.TestKey, "bearer " + httpapienv.TestKey, "BEARER  " + httpapienv.TestKey, " " + httpapienv.TestKey + " "} {
		r := e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": auth}, nil)
		if r.Status != 200 {
			t.Errorf("Authorization %q: %d %s", strings.ReplaceAll(auth, httpapienv.TestKey, "<key>"), r.Status, r.Raw)
		}
	}
}

func TestSMSSuccess(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Post(t, "/api/v1/sms", `{"numbers":9876543210,"variables_values":"Hello there","rout":"sms","website":"shop.example","sender_id":"ACMEIN","unknown":{"x":[1,2]}}`, nil)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	want := map[string]any{
		"success": true, "channel": "sms", "to": "9876543210", "status": "sent",
		"provider": "sms-mem", "cost": "0.25", "cost_minor": 25.0,
		"balance": "99.75", "balance_minor": 9975.0, "units": 1.0,
		"currency": map[string]any{"code": "INR", "symbol": "₹", "exponent": 2.0},
	}
	for k, v := range want {
		got, _ := json.Marshal(r.Body[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", k, got, exp)
		}
	}
	if id, _ := r.Body["message_id"].(string); len(id) != 36 {
		t.Errorf("message_id %q is not a UUID", id)
	}
	if pid, _ := r.Body["provider_message_id"].(string); pid == "" {
		t.Errorf("no provider_message_id")
	}
	sent := e.SMS.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d sent", len(sent))
	}
	if env := sent[0]; env.To != "+919876543210" || sms.MessageOf(env).Text != "Hello there" || env.Domain != "shop.example" || sms.MessageOf(env).SenderID != "ACMEIN" {
		t.Errorf("envelope %+v %+v", env, sms.MessageOf(env))
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-25 {
		t.Errorf("wallet %d", got)
	}
}

func TestXDomainAndAliasesAgree(t *testing.T) {
	e := httpapienv.New(t)
	// Equal values under a field and its alias are fine, and numbers that
	// differ only in spelling are the same number.
	r := e.Post(t, "/api/v1/sms/send", `{"to":"+91 98765-43210","numbers":9876543210,"message":"x","variables_values":"x"}`,
		map[string]string{"X-Domain": "app.example"})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if d := e.SMS.Sent()[0].Domain; d != "app.example" {
		t.Errorf("domain %q, want the X-Domain header", d)
	}
	// The body's domain wins over the header.
	r = e.Post(t, "/api/v1/messenger/send", `{"to":"9876543210","message":"x","domain":"body.example"}`,
		map[string]string{"X-Domain": "app.example"})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if d := e.Cloud.Sent()[0].Domain; d != "body.example" {
		t.Errorf("domain %q, want the body's", d)
	}
}

func TestChatPathsAndShapes(t *testing.T) {
	e := httpapienv.NewWith(t, 1000000)
	order := `"variables":{"NAME":"Asha","ORDER_ID":"4711","AMOUNT":"₹499","DELIVERY_DATE":"12/08/2025","LINK":"https://shop.example/o/4711"}`
	shapes := []struct {
		body  string
		check func(env *notify.Envelope) bool
		cost  int64
	}{
		// (a) OTP: a numeric otp keeps its digits.
		{`{"to":"9876543210","otp":482915,"action":"login","brand":"Acme"}`,
			func(env *notify.Envelope) bool { return chat.MessageOf(env).OTP == "482915" }, 35},
		// (b) Template by slug, as an object and as name/value pairs.
		{`{"to":"9876543210","template_slug":"order-confirmed",` + order + `}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil || chat.MessageOf(env).Text != ""
			}, 35},
		{`{"to":"9876543210","template_slug":"order-confirmed","variables":[{"name":"NAME","value":"Asha"},{"name":"ORDER_ID","value":4711},{"name":"AMOUNT","value":"₹499"},{"name":"DELIVERY_DATE","value":"12/08/2025"},{"name":"LINK","value":"https://shop.example/o/4711"}]}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil || chat.MessageOf(env).Text != ""
			}, 35},
		// (c) Media with a caption, on the QR gateway at the promotional rate.
		{`{"to":"9876543210","message":"Your invoice","media_url":"https://cdn.example.com/i.pdf","file_name":"Invoice.pdf","type":"promotional","gateway":"qr"}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Media != nil && chat.MessageOf(env).Media.URL == "https://cdn.example.com/i.pdf" && chat.MessageOf(env).Text == "Your invoice"
			}, 20},
		// (d) Cloud template with positional variables.
		{`{"gateway":"cloud","to":"9876543210","template_name":"order_update","language":"en","variables":["Asha","4711"]}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil && chat.MessageOf(env).Template.Name == "order_update" && len(chat.MessageOf(env).Template.Params) == 2
			}, 35},
		// Plain text, through the website alias.
		{`{"to":"9876543210","message":"hello","website":"w.example"}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Text == "hello" && env.Domain == "w.example"
			}, 35},
	}
	paths := []string{"/api/v1/messenger/send", "/api/v1/messenger/send-otp", "/api/v1/send-messenger"}
	for _, p := range paths {
		for _, sh := range shapes {
			before, n := e.Minor(t, httpapienv.TestAccount), e.Sent()
			r := e.Post(t, p, sh.body, map[string]string{"Authorization": "Bearer " + httpapienv.TestKey})
			if r.Status != 200 || r.Body["channel"] != "chat" {
				t.Fatalf("%s %s: %d %s", p, sh.body, r.Status, r.Raw)
			}
			if e.Sent() != n+1 {
				t.Fatalf("%s %s: nothing captured", p, sh.body)
			}
			all := append(e.Cloud.Sent(), e.QR.Sent()...)
			var env *notify.Envelope
			for _, x := range all {
				if x.ID == r.Body["message_id"] {
					env = x
				}
			}
			if env == nil || !sh.check(env) {
				t.Errorf("%s %s: envelope %+v", p, sh.body, env)
			}
			if got := before - e.Minor(t, httpapienv.TestAccount); got != sh.cost || r.Body["cost_minor"] != float64(sh.cost) {
				t.Errorf("%s %s: charged %d (cost_minor %v), want %d", p, sh.body, got, r.Body["cost_minor"], sh.cost)
			}
		}
	}
}

func TestEmail(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Post(t, "/api/v1/email/send", `{"to":"asha@example.com","subject":"Hi","message":"<p>Hello</p>","from_name":"Acme","reply_to":"help@example.com","purpose":"invoice"}`, nil)
	if r.Status != 200 || r.Body["channel"] != "email" || r.Body["cost"] != "0.10" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if m := email.MessageOf(e.Mail.Sent()[0]); m.Subject != "Hi" || m.Purpose != email.PurposeInvoice {
		t.Errorf("%+v", m)
	}
}

func TestDualOTP(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482915","brand_name":"Acme","domain":"a.example"}`, nil)
	if r.Status != 200 || r.Body["channel"] != "otp" || r.Body["cost"] != "0.55" || r.Body["balance"] != "99.45" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	legs, _ := r.Body["legs"].([]any)
	if len(legs) != 2 {
		t.Fatalf("legs: %s", r.Raw)
	}
	for i, ch := range []string{"sms", "chat"} {
		l := legs[i].(map[string]any)
		if l["channel"] != ch || l["success"] != true || l["message_id"] == "" || l["status"] != "sent" {
			t.Errorf("leg %d: %v", i, l)
		}
	}

	// One leg refused: still 200, the failed leg says why and is not charged.
	e.Cloud.FailNext(1, notify.CodeRejected)
	before := e.Minor(t, httpapienv.TestAccount)
	r = e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":482916}`, nil)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	legs = r.Body["legs"].([]any)
	chat := legs[1].(map[string]any)
	if chat["success"] != false || chat["error"].(map[string]any)["code"] != "rejected" {
		t.Errorf("chat leg %v", chat)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before-20 {
		t.Errorf("charged %d, want the SMS leg's 20", before-got)
	}
	if strings.Contains(r.Raw, "482916") {
		t.Errorf("reply echoes the OTP: %s", r.Raw)
	}

	// Both legs refused: the first leg's status, nothing charged.
	e.SMS.FailNext(1, notify.CodeRejected)
	e.Cloud.FailNext(1, notify.CodeRejected) // permanent: no failover to qr
	before = e.Minor(t, httpapienv.TestAccount)
	r = e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482917"}`, nil)
	httpapienv.WantError(t, r, 502, "rejected")
	if legs, _ := r.Body["legs"].([]any); len(legs) != 2 {
		t.Errorf("failed dual OTP without legs: %s", r.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Errorf("wallet moved by %d", before-got)
	}
}

func TestProviderFailures(t *testing.T) {
	e := httpapienv.New(t)
	for _, c := range []struct {
		code   notify.Code
		status int
	}{
		{notify.CodeRejected, 502},
		{notify.CodeUnavailable, 503},
		{notify.CodeRateLimited, 429},
	} {
		before := e.Minor(t, httpapienv.TestAccount)
		e.SMS.FailNext(1, c.code)
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"x"}`, nil)
		httpapienv.WantError(t, r, c.status, string(c.code))
		if r.Body["message_id"] == nil {
			t.Errorf("failed send without its message_id: %s", r.Raw)
		}
		if got := e.Minor(t, httpapienv.TestAccount); got != before {
			t.Errorf("%s: wallet moved by %d", c.code, before-got)
		}
	}
}

func TestBalance(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Do(t, http.MethodGet, "/api/v1/balance", nil, nil)
	want := `{"success":true,"data":{"account":"acct-1","name":"Acme Ltd","balance":"100.00","balance_minor":10000,"currency":{"code":"INR","symbol":"₹","exponent":2}}}`
	if r.Status != 200 || strings.TrimSpace(r.Raw) != want {
		t.Fatalf("%d %s\nwant %s", r.Status, r.Raw, want)
	}
}

func TestIdempotency(t *testing.T) {
	e := httpapienv.New(t)
	hdr := map[string]string{"Idempotency-Key": "order-42"}
	first := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"one"}`, hdr)
	if first.Status != 200 {
		t.Fatalf("%d %s", first.Status, first.Raw)
	}
	after := e.Minor(t, httpapienv.TestAccount)
	again := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"one"}`, hdr)
	if again.Status != 200 || again.Body["message_id"] != first.Body["message_id"] {
		t.Fatalf("repeat: %d %s", again.Status, again.Raw)
	}
	other := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"two"}`, hdr)
	httpapienv.WantError(t, other, 409, "conflict")
	// The body field is the same key as the header.
	viaField := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"two","idempotency_key":"order-42"}`, nil)
	httpapienv.WantError(t, viaField, 409, "conflict")
	if got := e.Minor(t, httpapienv.TestAccount); got != after || e.SMS.Len() != 1 {
		t.Errorf("wallet %d (want %d), %d sent", got, after, e.SMS.Len())
	}
}

// limited returns Notifier options with the gateway's limits: a token
// bucket per account and a sliding window per OTP recipient.
func limited(t testing.TB, perSecond float64, burst, otpMax int, otpWindow time.Duration) []notify.Option {
	t.Helper()
	var opts []notify.Option
	if perSecond > 0 {
		rate, err := memstore.NewRateLimit(perSecond, burst)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, notify.WithRateLimit(rate))
	}
	if otpMax > 0 {
		otp, err := memstore.NewWindowLimit(otpMax, otpWindow)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, notify.WithOTPThrottle(otp))
	}
	return opts
}

func TestRateLimit(t *testing.T) {
	e := httpapienv.NewFull(t, httpapienv.OpeningBal, limited(t, 2, 3, 0, 0))
	body := `{"to":"9876543210","message":"x"}`
	for i := 0; i < 3; i++ {
		if r := e.Post(t, "/api/v1/sms", body, nil); r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Raw)
		}
	}
	before := e.Minor(t, httpapienv.TestAccount)
	r := e.Post(t, "/api/v1/sms", body, nil)
	httpapienv.WantError(t, r, 429, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before || e.SMS.Len() != 3 {
		t.Errorf("limited request was charged or sent: %d, %d sent", before-got, e.SMS.Len())
	}
	// Another account has its own bucket (its empty wallet answers).
	other := e.Post(t, "/api/v1/sms", body, map[string]string{"Content-Type": "application/json", "Authorization": httpapienv.OtherKey})
	httpapienv.WantError(t, other, 402, "insufficient_funds")
	// A bad request over the limit is still a bad request.
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", `{"to":"12","message":"x"}`, nil), 400, "invalid_argument")
	// Half a second earns one token (2 per second).
	e.Clock.Advance(500 * time.Millisecond)
	if r := e.Post(t, "/api/v1/sms", body, nil); r.Status != 200 {
		t.Fatalf("after refill: %d %s", r.Status, r.Raw)
	}
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", body, nil), 429, "rate_limited")
	e.Clock.Advance(2 * time.Second)
	for i := 0; i < 3; i++ {
		if r := e.Post(t, "/api/v1/sms", body, nil); r.Status != 200 {
			t.Fatalf("after full refill, request %d: %d %s", i, r.Status, r.Raw)
		}
	}
}

func TestOTPThrottle(t *testing.T) {
	e := httpapienv.NewFull(t, httpapienv.OpeningBal, limited(t, 0, 0, 5, 15*time.Minute))
	sends := []struct{ path, body string }{
		{"/api/v1/send-otp", `{"to":"9876543210","otp":"1111"}`},
		{"/api/v1/sms", `{"to":"+919876543210","message":"2222","route":"otp"}`},
		{"/api/v1/messenger/send", `{"to":9876543210,"otp":3333}`},
		{"/api/v1/send-otp", `{"to":"09876543210","otp":"4444"}`},
		{"/api/v1/messenger/send-otp", `{"to":"9876543210","otp":"5555"}`},
	}
	for _, s := range sends {
		if r := e.Post(t, s.path, s.body, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", s.path, r.Status, r.Raw)
		}
	}
	before := e.Minor(t, httpapienv.TestAccount)
	r := e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"6666"}`, nil)
	httpapienv.WantError(t, r, 429, "rate_limited")
	if r.Header.Get("Retry-After") != "900" {
		t.Errorf("Retry-After %q, want 900", r.Header.Get("Retry-After"))
	}
	if e.Minor(t, httpapienv.TestAccount) != before {
		t.Errorf("throttled OTP was charged")
	}
	// Once the budget is spent, an invalid request is still a 400.
	httpapienv.WantError(t, e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"12"}`, nil), 400, "invalid_argument")
	// Plain SMS and chat without an OTP are not throttled; other numbers
	// and other accounts have their own count.
	for _, s := range []struct{ path, body, key string }{
		{"/api/v1/sms", `{"to":"9876543210","message":"hello"}`, httpapienv.TestKey},
		{"/api/v1/messenger/send", `{"to":"9876543210","message":"hello"}`, httpapienv.TestKey},
		{"/api/v1/send-otp", `{"to":"9123456789","otp":"1234"}`, httpapienv.TestKey},
	} {
		if r := e.Post(t, s.path, s.body, map[string]string{"Authorization": s.key}); r.Status != 200 {
			t.Errorf("%s %s: %d %s", s.path, s.body, r.Status, r.Raw)
		}
	}
	// The window slides: one minute after the first OTP expires, one more.
	e.Clock.Advance(15*time.Minute + time.Second)
	if r := e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"7777"}`, nil); r.Status != 200 {
		t.Fatalf("after the window: %d %s", r.Status, r.Raw)
	}
}

func TestOTPThrottleIgnoresFailedSends(t *testing.T) {
	e := httpapienv.NewFull(t, httpapienv.OpeningBal, limited(t, 0, 0, 2, time.Minute))
	e.SMS.FailNext(3, notify.CodeRejected)
	for i := 0; i < 3; i++ {
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil)
		httpapienv.WantError(t, r, 502, "rejected")
	}
	for i := 0; i < 2; i++ {
		if r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil); r.Status != 200 {
			t.Fatalf("send %d: %d %s", i, r.Status, r.Raw)
		}
	}
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil), 429, "rate_limited")
}

func TestRequestID(t *testing.T) {
	e := httpapienv.New(t)
	r := e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"X-Request-ID": "abc-123.x:y_z"}, nil)
	if got := r.Header.Get("X-Request-ID"); got != "abc-123.x:y_z" {
		t.Errorf("sane ID not echoed: %q", got)
	}
	r = e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"X-Request-ID": "<script>"}, nil)
	if got := r.Header.Get("X-Request-ID"); got == "<script>" || got == "" {
		t.Errorf("insane ID echoed: %q", got)
	}
	a := e.Do(t, http.MethodGet, "/nope", nil, nil).Header.Get("X-Request-ID")
	b := e.Do(t, http.MethodGet, "/nope", nil, nil).Header.Get("X-Request-ID")
	if a == b {
		t.Errorf("generated IDs repeat: %q", a)
	}
}

func TestAccessLogRedacts(t *testing.T) {
	e := httpapienv.New(t)
	e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"739104"}`, map[string]string{"X-Request-ID": "rid-1"})
	e.Post(t, "/api/v1/sms", `{}`, map[string]string{"Authorization": "Bearer nk_test_secret_wrong"})
	logs := e.Logs.String()
	for _, secret := range []string{httpapienv.TestKey, "nk_test_secret_wrong", "739104"} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains a secret %q:\n%s", secret, logs)
		}
	}
	var rec map[string]any
	line, _, _ := strings.Cut(logs, "\n")
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"method": "POST", "path": "/api/v1/send-otp", "status": 200.0, "account": httpapienv.TestAccount, "request_id": "rid-1"} {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v", k, rec[k], v)
		}
	}
	if _, ok := rec["duration"]; !ok {
		t.Errorf("no duration: %v", rec)
	}
	if !strings.Contains(logs, `"code":"unauthenticated"`) {
		t.Errorf("401 not logged with its code:\n%s", logs)
	}
}

// panicAccounts panics on one key, to exercise the recovery.
type panicAccounts struct{ *memstore.Accounts }

func (p panicAccounts) AccountByKey(ctx context.Context, key string) (*notify.Account, error) {
	if key == "boom" {
		panic("account store bug")
	}
	return p.Accounts.AccountByKey(ctx, key)
}

func TestPanicRecovered(t *testing.T) {
	accts := memstore.NewAccounts()
	n, err := notify.New(accts, memstore.NewLedger(nil))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	h, err := httpapi.New(n, panicAccounts{accts}, httpapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	url, client := httpapienv.Serve(t, h)
	e := &httpapienv.Env{URL: url, Client: client}
	r := e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "boom"}, nil)
	httpapienv.WantError(t, r, 500, "internal")
	if strings.Contains(r.Raw, "account store bug") {
		t.Errorf("panic detail in the reply: %s", r.Raw)
	}
	if !strings.Contains(logs.String(), "account store bug") {
		t.Errorf("panic not logged: %s", logs.String())
	}
	// The server still serves.
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "x"}, nil), 401, "unauthenticated")
}

func TestNewRejectsBadConfig(t *testing.T) {
	accts := memstore.NewAccounts()
	n, _ := notify.New(accts, memstore.NewLedger(nil))
	for name, opts := range map[string][]httpapi.Option{
		"nil logger":   {httpapi.WithLogger(nil)},
		"zero body":    {httpapi.WithMaxBodyBytes(0)},
		"zero timeout": {httpapi.WithSendTimeout(0)},
		"zero header":  {httpapi.WithMaxHeaderBytes(0)},
		"nil decoder":  {httpapi.WithRoute("/push/send", nil)},
		"spec path":    {httpapi.WithRoute("/sms", decodeNothing)},
		"balance path": {httpapi.WithRoute("/balance", decodeNothing)},
		"twice":        {httpapi.WithRoute("/push", decodeNothing), httpapi.WithRoute("/push", decodeNothing)},
		"relative":     {httpapi.WithRoute("push", decodeNothing)},
		"pattern":      {httpapi.WithRoute("/push/{id}", decodeNothing)},
		"unclean":      {httpapi.WithRoute("/push/../sms", decodeNothing)},
	} {
		if _, err := httpapi.New(n, accts, opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := httpapi.New(nil, accts); err == nil {
		t.Error("nil notifier: no error")
	}
}

func decodeNothing([]byte, string, httpapi.Header) (notify.Request, error) {
	return nil, notify.Errorf(notify.CodeInvalidArgument, "nothing")
}

// failingAccounts fails every lookup, repeating the key it was given, as
// a careless store might.
type failingAccounts struct{ *memstore.Accounts }

func (failingAccounts) AccountByKey(_ context.Context, key string) (*notify.Account, error) {
	return nil, notify.Errorf(notify.CodeUnavailable, "store down while looking up %s", key)
}

func TestAccountsStoreFailure(t *testing.T) {
	accts := memstore.NewAccounts()
	n, _ := notify.New(accts, memstore.NewLedger(nil))
	logs := &syncbuf.Buffer{}
	h, err := httpapi.New(n, failingAccounts{accts}, httpapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	url, client := httpapienv.Serve(t, h)
	e := &httpapienv.Env{URL: url, Client: client}
	r := e.Do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "Bearer nk_secret_key_123"}, nil)
	httpapienv.WantError(t, r, 503, "unavailable")
	if strings.Contains(r.Raw, "nk_secret_key_123") || strings.Contains(logs.String(), "nk_secret_key_123") {
		t.Errorf("key leaked:\n%s\n%s", r.Raw, logs.String())
	}
	if !strings.Contains(logs.String(), "store down") {
		t.Errorf("the store's failure is not logged: %s", logs.String())
	}
}
