package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify"
)

// TestStrictBodies: what encoding/json would take silently (the last of
// two keys, a key in another case, invalid text turned into U+FFFD) is an
// InvalidArgument error naming the key's path.
func TestStrictBodies(t *testing.T) {
	type dec = func([]byte, Header) error
	cases := []struct {
		name   string
		decode dec
		body   string
		fields map[string]string // field -> part of its message
	}{
		{"duplicate to", smsErr, `{"to":"9876543210","to":"9123456789","message":"x"}`,
			map[string]string{"to": "is a duplicate key"}},
		{"duplicate with the same value", smsErr, `{"to":"9876543210","message":"x","message":"x"}`,
			map[string]string{"message": "is a duplicate key"}},
		{"duplicate through an escape", smsErr, `{"t\u006f":"9876543210","to":"9876543210","message":"x"}`,
			map[string]string{"to": "is a duplicate key"}},
		{"duplicate unknown key", otpErr, `{"to":"9876543210","otp":"1234","extra":1,"extra":2}`,
			map[string]string{"extra": "is a duplicate key"}},
		{"duplicate in variables", emailErr, `{"to":"a@example.com","template_slug":"x","variables":{"NAME":"A","NAME":"B"}}`,
			map[string]string{"variables.NAME": "is a duplicate key"}},
		{"duplicate in a pair", chatErr, `{"to":"9876543210","template_slug":"x","variables":[{"name":"A","value":1,"name":"B"}]}`,
			map[string]string{"variables[0].name": "is a duplicate key"}},
		{"duplicate deep in an unknown key", smsErr, `{"to":"9876543210","message":"x","meta":{"a":[1,{"z":1,"z":2}]}}`,
			map[string]string{"meta.a[1].z": "is a duplicate key"}},
		{"upper-case key", smsErr, `{"TO":"9876543210","message":"x"}`,
			map[string]string{"TO": `keys are case-sensitive: did you mean "to"?`}},
		{"mixed-case key beside the right one", chatErr, `{"to":"9876543210","Message":"x","message":"y"}`,
			map[string]string{"Message": `did you mean "message"?`}},
		{"key equal under Unicode folding", smsErr, "{\"to\":\"9876543210\",\"me\u017f\u017fage\":\"x\"}",
			map[string]string{"me\u017f\u017fage": `did you mean "message"?`}},
		{"alias in another case", otpErr, `{"to":"9876543210","otp":"1234","Brand":"x"}`,
			map[string]string{"Brand": `did you mean "brand"?`}},
		{"pair key in another case", chatErr, `{"to":"9876543210","template_slug":"x","variables":[{"Name":"A","value":"1"}]}`,
			map[string]string{"variables[0].Name": `did you mean "name"?`}},
		{"invalid UTF-8 in a value", smsErr, "{\"to\":\"9876543210\",\"message\":\"caf\xe9\"}",
			map[string]string{"message": "is not valid UTF-8 (at offset 33 of the body)"}},
		{"invalid UTF-8 in variables", emailErr, "{\"to\":\"a@example.com\",\"template_slug\":\"x\",\"variables\":{\"A\":\"\xc3\"}}",
			map[string]string{"variables.A": "is not valid UTF-8"}},
		{"invalid UTF-8 in an unknown value", otpErr, "{\"to\":\"9876543210\",\"otp\":\"1234\",\"note\":[\"ok\",\"\xff\"]}",
			map[string]string{"note[1]": "is not valid UTF-8"}},
		{"invalid UTF-8 in a key", smsErr, "{\"to\":\"9876543210\",\"message\":\"x\",\"k\xff\":1}",
			map[string]string{"body": "has a key that is not valid UTF-8"}},
		{"UTF-8 encoded surrogate", smsErr, "{\"to\":\"9876543210\",\"message\":\"\xed\xa0\x80\"}",
			map[string]string{"message": "is not valid UTF-8"}},
		{"lone high surrogate", smsErr, `{"to":"9876543210","message":"a\ud83d"}`,
			map[string]string{"message": "lone UTF-16 surrogate"}},
		{"lone low surrogate", chatErr, `{"to":"9876543210","message":"\ude00\ud83d"}`,
			map[string]string{"message": "lone UTF-16 surrogate"}},
		{"several problems at once", smsErr, "{\"to\":\"9876543210\",\"to\":\"1\",\"Message\":\"x\",\"route\":\"\xff\"}",
			map[string]string{"to": "duplicate", "Message": "case-sensitive", "route": "UTF-8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode([]byte(c.body), Header{})
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
				t.Fatalf("%q: got %v, want an invalid_argument error", c.body, err)
			}
			got := map[string]string{}
			for _, f := range e.Fields {
				got[f.Field] = f.Message
			}
			for f, part := range c.fields {
				if !strings.Contains(got[f], part) {
					t.Errorf("field %q: %q, want it to contain %q (all: %v)", f, got[f], part, e.Fields)
				}
			}
			if len(got) != len(c.fields) {
				t.Errorf("fields %v, want exactly %v", e.Fields, c.fields)
			}
			msg := errorMessage(err, shown(err))
			for f := range c.fields {
				if !strings.Contains(msg, f+" ") {
					t.Errorf("message %q does not name %q", msg, f)
				}
			}
		})
	}
}

// TestStrictAccepts: strictness refuses nothing that was unambiguous.
func TestStrictAccepts(t *testing.T) {
	for _, body := range []string{
		`{"to":"9876543210","message":"x","unknown":{"to":1,"TO":2,"Message":3}}`,
		`{"to":"9876543210","message":"x","Xyz":1,"xyz":2,"list":[{"a":1},{"a":2}]}`,
		`{"to":"9876543210","message":"\u20b9 \ud83d\ude00 \"\\\/\b\f\n\r\t caf` + "\u00e9 ₹ 😀" + `"}`,
		` {"to":"9876543210","message":"x","template_slug":null,"variables":{"NAME":"a","name":"b"}} `,
		`{"to":"9876543210","message":"x","n":-1.5e+3,"b":[true,false,null],"e":{},"a":[]}`,
	} {
		if err := smsErr([]byte(body), Header{}); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	pairs := `{"to":"9876543210","template_slug":"x","variables":[{"name":"A","value":1},{"name":"B","value":"2","note":"n"}]}`
	if _, err := decodeChat([]byte(pairs), "", Header{}); err != nil {
		t.Errorf("%s: %v", pairs, err)
	}
}

// TestStrictLargeObjects: duplicates are found past the linear window,
// the list of problems is bounded, and long keys are cut in the answer.
func TestStrictLargeObjects(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"to":"9876543210","message":"x"`)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&sb, `,"k%d":%d`, i, i)
	}
	sb.WriteString(`,"k500":0}`)
	err := smsErr([]byte(sb.String()), Header{})
	var e *notify.Error
	if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "k500" {
		t.Fatalf("1000 keys and k500 twice: %v", err)
	}

	sb.Reset()
	sb.WriteString(`{"to":"9876543210","message":"x"`)
	for i := 0; i < 100; i++ {
		sb.WriteString(`,"to":"9876543210"`)
	}
	sb.WriteString(`}`)
	err = smsErr([]byte(sb.String()), Header{})
	if !errors.As(err, &e) || len(e.Fields) != maxStrictErrors+1 || e.Fields[maxStrictErrors].Field != "body" {
		t.Fatalf("100 duplicates: %d fields, want %d ending in body: %v", len(e.Fields), maxStrictErrors+1, err)
	}

	long := strings.Repeat("é", 100)
	err = smsErr([]byte(`{"to":"9876543210","message":"x","`+long+`":1,"`+long+`":2}`), Header{})
	if !errors.As(err, &e) || len(e.Fields) != 1 {
		t.Fatalf("long duplicate key: %v", err)
	}
	if f := e.Fields[0].Field; len(f) > maxKeyShown+3 || !strings.HasSuffix(f, "...") || !strings.HasPrefix(long, strings.TrimSuffix(f, "...")) {
		t.Errorf("long key shown as %q", f)
	}
}

// TestBodyKeys: the keys checked are the struct tags of the bodies.
func TestBodyKeys(t *testing.T) {
	if len(smsKeys) != 19 || smsKeys[0] != "to" || smsKeys[12] != "variables" {
		t.Errorf("smsKeys %v", smsKeys)
	}
	for _, keys := range [][]string{smsKeys, otpKeys, emailKeys, chatKeys} {
		for _, k := range keys {
			if k == "" || k != strings.ToLower(k) {
				t.Errorf("key %q in %v", k, keys)
			}
		}
	}
}

// refStrict is a reference for checkStrict, built on json.Decoder's
// tokens: whether body (valid JSON, an object) has a duplicate key, a key
// matching a known key (or, in a "variables" array, a pair key) only when
// case is ignored, or invalid UTF-8. Lone surrogate escapes it cannot see:
// the decoder has already replaced them.
func refStrict(body []byte, known []string) bool {
	if !utf8.Valid(body) {
		return true
	}
	type frame struct {
		obj     bool
		ctx     int
		keys    map[string]bool
		wantKey bool
		child   int // ctx of the value after the last key
	}
	hasVars := false
	for _, k := range known {
		hasVars = hasVars || k == "variables"
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.obj && top.wantKey {
			key := tok.(string)
			if top.keys[key] {
				return true
			}
			top.keys[key] = true
			top.wantKey, top.child = false, ctxNone
			var list []string
			switch top.ctx {
			case ctxTop:
				list = known
			case ctxPair:
				list = pairKeys
			}
			for _, k := range list {
				if key != k && strings.EqualFold(key, k) {
					return true
				}
			}
			if top.ctx == ctxTop && hasVars && key == "variables" {
				top.child = ctxVars
			}
			continue
		}
		ctx := ctxTop
		switch {
		case top != nil && top.obj:
			ctx = top.child
			top.wantKey = true
		case top != nil && top.ctx == ctxVars:
			ctx = ctxPair
		case top != nil:
			ctx = ctxNone
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{obj: d == '{', ctx: ctx, keys: map[string]bool{}, wantKey: d == '{'})
		}
	}
}

// FuzzCheckStrict compares checkStrict with refStrict on every JSON
// object: the same verdict, except that checkStrict also refuses lone
// surrogate escapes, and then says so.
func FuzzCheckStrict(f *testing.F) {
	for _, s := range append(fuzzSeeds,
		`{"to":"1","to":"2"}`, `{"TO":"1","x":{"TO":1,"a":1,"a":2}}`, `{"variables":[{"Name":"A","value":1}]}`,
		`{"variables":{"A":1,"a":2,"A":3}}`, "{\"message\":\"\xff\",\"k\xfe\":1}", `{"message":"\ud800","m":"\udc00\ud800\udc00"}`,
		`{"t\u006f":1,"to":2}`, `{"a":[[],{},[{"b":{"c":1,"c":2}}]]}`, "{\"me\u017f\u017fage\":1}",
	) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
			return
		}
		err := checkStrict(body, smsKeys)
		want := refStrict(body, smsKeys)
		if want && err == nil {
			t.Fatalf("%q: accepted", body)
		}
		if err == nil {
			return
		}
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) == 0 {
			t.Fatalf("%q: %v", body, err)
		}
		if !want {
			for _, fe := range e.Fields {
				if !strings.Contains(fe.Message, "surrogate") {
					t.Fatalf("%q: refused (%v), the reference accepts it", body, err)
				}
			}
		}
	})
}

// BenchmarkDecodeSMS measures the decoding of the benchmark's body, with
// the strict checks.
func BenchmarkDecodeSMS(b *testing.B) {
	body := []byte(`{"to":"9876543210","message":"Your order 4711 has shipped and will arrive tomorrow.","sender_id":"ACMEIN","route":"sms","domain":"shop.example"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeSMS(body, "", Header{}); err != nil {
			b.Fatal(err)
		}
	}
}
