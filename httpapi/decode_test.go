package httpapi

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

func TestDecodeSMSFields(t *testing.T) {
	cases := []struct {
		body string
		m    Header
		want sms.Request
	}{
		{`{"to":"9876543210","message":"hi"}`, Header{}, sms.Request{To: "9876543210", Message: "hi"}},
		{`{"numbers":9876543210,"variables_values":482915,"rout":"otp","website":"w.example"}`, Header{},
			sms.Request{To: "9876543210", Message: "482915", Route: "otp", Domain: "w.example"}},
		{`{"to":"9876543210","message":"x","dlt_template_id":1107161234567890123,"dlt_entity_id":"1201","sender_id":"ACMEIN","route":"dlt"}`, Header{},
			sms.Request{To: "9876543210", Message: "x", DLTTemplateID: "1107161234567890123", DLTEntityID: "1201", SenderID: "ACMEIN", Route: "dlt"}},
		{`{"to":"9876543210","message":"caf\u00e9 \"q\"","domain":null}`, Header{Domain: "h.example", IdempotencyKey: "k"},
			sms.Request{To: "9876543210", Message: `café "q"`, Domain: "h.example", IdempotencyKey: "k"}},
		{`{"to":"9876543210","numbers":"","message":"","variables_values":"v"}`, Header{},
			sms.Request{To: "9876543210", Message: "v"}},
		{`{"to":"9876543210","template_slug":"order-confirmed","variables":{"NAME":"A","N":7},"brand":"B","idempotency_key":"k"}`, Header{IdempotencyKey: "k"},
			sms.Request{To: "9876543210", TemplateSlug: "order-confirmed", Variables: record.Vars{"NAME": "A", "N": "7"}, Brand: "B", IdempotencyKey: "k"}},
		// Keys that match no field in any case are ignored; escapes and
		// surrogate pairs decode.
		{`{"to":"9876543210","message":"caf\u00e9 \ud83d\ude00","unknown":{"TO":1,"to":2},"Unknown":[{"x":1},{"x":2}]}`, Header{},
			sms.Request{To: "9876543210", Message: "café 😀"}},
	}
	for _, c := range cases {
		got, err := decodeSMS([]byte(c.body), "", c.m)
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.body, *got, c.want)
		}
	}
}

func TestDecodeErrorsNameFields(t *testing.T) {
	cases := []struct {
		decode func([]byte, Header) error
		body   string
		fields []string
	}{
		{smsErr, `{"to":9.87e9,"numbers":true,"message":1e3}`, []string{"to", "numbers", "message"}},
		{smsErr, `{"to":"9876543210","numbers":"9123456789"}`, []string{"to", "numbers"}},
		{otpErr, `{"to":"9876543210","otp":"1","brand":"a","brand_name":"b","domain":"x","website":"y"}`, []string{"brand", "brand_name", "domain", "website"}},
		{emailErr, `{"to":7,"reply_to":[],"variables":[{"name":"A","value":"1"},"x"]}`, []string{"to", "reply_to", "variables"}},
		{chatErr, `{"to":{},"gateway":1,"type":false,"file_name":null,"media_url":0}`, []string{"to", "gateway", "type", "media_url"}},
	}
	for _, c := range cases {
		err := c.decode([]byte(c.body), Header{})
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		named := map[string]bool{}
		for _, f := range e.Fields {
			named[f.Field] = true
		}
		for _, f := range c.fields {
			if !named[f] {
				t.Errorf("%s: %q not named in %v", c.body, f, e.Fields)
			}
		}
		if len(named) != len(c.fields) {
			t.Errorf("%s: named %v, want exactly %v", c.body, e.Fields, c.fields)
		}
	}
}

func smsErr(b []byte, m Header) error   { _, err := decodeSMS(b, "", m); return err }
func otpErr(b []byte, m Header) error   { _, err := decodeOTP(b, "", m); return err }
func emailErr(b []byte, m Header) error { _, err := decodeEmail(b, "", m); return err }
func chatErr(b []byte, m Header) error  { _, err := decodeChat(b, "", m); return err }

// checkDecodeErr holds for every decoder: no panic (the fuzzer sees one),
// errors are InvalidArgument, and no error repeats a long value of the
// body (values may be OTP codes or message text).
func checkDecodeErr(t *testing.T, body []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		t.Fatalf("error %v is not an InvalidArgument *notify.Error", err)
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return
	}
	text := errorMessage(err, shown(err))
	for _, f := range e.Fields {
		text += " " + f.Message
	}
	// Keys are named (the strict checks name a duplicate key by its path,
	// and suggest the field a key in the wrong case stands for): a value
	// that is part of a named key or field is not echoed by being named.
	named := func(s string) bool {
		for _, f := range e.Fields {
			if strings.Contains(f.Field, s) {
				return true
			}
		}
		for _, keys := range [][]string{smsKeys, otpKeys, emailKeys, chatKeys} {
			for _, k := range keys {
				if strings.Contains(k, s) {
					return true
				}
			}
		}
		return false
	}
	for k, v := range obj {
		if s, ok := v.(string); ok && len(s) >= 12 && strings.Contains(text, s) && !named(s) {
			t.Fatalf("error %q repeats the value of %q", text, k)
		}
	}
}

var fuzzSeeds = []string{
	`{"to":"9876543210","message":"hi"}`,
	`{"numbers":9876543210,"variables_values":482915,"rout":"otp"}`,
	`{"to":"9876543210","otp":"482915","brand_name":"Acme","brand":"Acme"}`,
	`{"to":"a@example.com","subject":"s","message":"<b>x</b>","variables":{"A":"1"},"purpose":"invoice"}`,
	`{"to":"9876543210","template_slug":"x","variables":[{"name":"A","value":1}],"gateway":"cloud"}`,
	`{"to":9.87e9,"otp":-1,"message":{"a":[1,{"b":null}]}}`,
	`[{"to":"9876543210"}]`,
	`{"to":"\ud83d\ude00","message":"\u0000"}`,
	`{"idempotency_key":"abc","domain":"d","website":"w"}`,
	`{"to":`,
	``,
}

func FuzzDecodeSMS(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, body []byte, key string) {
		r, err := decodeSMS(body, "", Header{IdempotencyKey: key})
		checkDecodeErr(t, body, err)
		if err == nil {
			if r == nil || !utf8.ValidString(r.To) || !utf8.ValidString(r.Message) {
				t.Fatalf("bad result %+v", r)
			}
			if r.IdempotencyKey != "" && r.IdempotencyKey != key && key != "" {
				t.Fatalf("idempotency key %q, header %q", r.IdempotencyKey, key)
			}
		}
	})
}

func FuzzDecodeOTP(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeOTP(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err == nil && r == nil {
			t.Fatal("nil request without error")
		}
	})
}

func FuzzDecodeEmail(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeEmail(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err == nil && r == nil {
			t.Fatal("nil request without error")
		}
	})
}

func FuzzDecodeChat(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeChat(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err == nil && r == nil {
			t.Fatal("nil request without error")
		}
	})
}

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json: the output is valid JSON that decodes to the input (with
// invalid UTF-8 replaced, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\`, "<&>", "\x00\x1f\n\t", "café ₹", "\xff\xfe", "\u2028\u2029", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, out, err)
		}
		want, _ := json.Marshal(s)
		var wantS string
		_ = json.Unmarshal(want, &wantS)
		if got != wantS {
			t.Fatalf("%q: got %q, want %q", s, got, wantS)
		}
	})
}

func TestAPIKey(t *testing.T) {
	for in, want := range map[string]string{
		"k1":           "k1",
		"Bearer k1":    "k1",
		"bEaReR   k1 ": "k1",
		"":             "",
		"Bearer":       "",
		"bearer ":      "",
		"Basic k1":     "",
		"Bearer k1 k2": "",
		"Token k1":     "",
	} {
		got, ok := apiKey(in)
		if got != want || ok != (want != "") {
			t.Errorf("apiKey(%q) = %q, %v", in, got, ok)
		}
	}
}

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                   true,
		"application/json; charset=utf-8":    true,
		"Application/JSON; charset=UTF-8":    true,
		"application/json;charset=\"utf-8\"": true,
		"application/json; charset=latin1":   false,
		"application/json; foo=bar":          false,
		"text/plain":                         false,
		"":                                   false,
		"application/jsonx":                  false,
	} {
		if got := isJSON(ct); got != want {
			t.Errorf("isJSON(%q) = %v", ct, got)
		}
	}
}

func TestStatusOf(t *testing.T) {
	for code, status := range map[notify.Code]int{
		notify.CodeInvalidArgument: 400, notify.CodeUnauthenticated: 401, notify.CodeInsufficientFunds: 402,
		notify.CodePermissionDenied: 403, notify.CodeNotFound: 404, CodeMethodNotAllowed: 405,
		notify.CodeConflict: 409, CodeRequestTooLarge: 413, CodeUnsupportedMediaType: 415, CodeHeadersTooLarge: 431,
		notify.CodeRateLimited: 429, notify.CodeInternal: 500, notify.CodeRejected: 502,
		notify.CodeUnavailable: 503, notify.CodeDeadlineExceeded: 504, "something_new": 500,
	} {
		if got := StatusOf(code); got != status {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, status)
		}
	}
}
