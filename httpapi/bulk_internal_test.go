package httpapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
)

// The bulk route's body, for the OpenAPI tests (wireBodies in
// openapi_test.go): its handler is bulkSMS.
// fieldsOf returns the fields an InvalidArgument error names, failing
// the test on any other error.
func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		t.Fatalf("got %v, want an InvalidArgument error", err)
	}
	out := map[string]string{}
	for _, f := range e.Fields {
		out[f.Field] = f.Message
	}
	return out
}

func TestDecodeBulkSMS(t *testing.T) {
	r, at, err := decodeBulkSMS([]byte(`{"to":["9876543210",9123456789],"variables_values":"hi","rout":"dlt",
		"dlt_template_id":1107,"brand":"Acme","domain":"shop.example"}`), "acct", Header{IdempotencyKey: "k-1"})
	if err != nil || !at.IsZero() {
		t.Fatal(at, err)
	}
	_, at, err = decodeBulkSMS([]byte(`{"to":["9876543210"],"message":"hi","send_at":"2026-12-01T09:30:00+05:30"}`), "acct", Header{})
	if err != nil || !at.Equal(time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)) {
		t.Fatalf("send_at: %v, %v", at, err)
	}
	m := r.Message
	if got := fmt.Sprint(r.To); got != "[9876543210 9123456789]" || m.Message != "hi" || m.Route != "dlt" ||
		m.DLTTemplateID != "1107" || m.Brand != "Acme" || m.Domain != "shop.example" || m.Account != "acct" ||
		m.IdempotencyKey != "k-1" || m.To != "" {
		t.Fatalf("decoded %+v", r)
	}

	for _, c := range []struct {
		body   string
		fields []string
	}{
		{`{"message":"hi"}`, []string{"to"}},
		{`{"to":null,"message":"hi"}`, []string{"to"}},
		{`{"to":"9876543210","message":"hi"}`, []string{"to"}},
		{`{"to":[],"message":"hi"}`, []string{"to"}},
		{`{"to":["9876543210",null,true,1.5,{}],"message":"hi"}`, []string{"to.1", "to.2", "to.3", "to.4"}},
		{`{"to":["9876543210"],"numbers":"9876543210","message":"hi"}`, []string{"numbers"}},
		{`{"to":["9876543210"],"message":"hi","send_at":"tomorrow"}`, []string{"send_at"}},
		{`{"to":["9876543210"],"message":"a","variables_values":"b","route":true,"sender_id":[],"variables":[null]}`,
			[]string{"message", "variables_values", "route", "sender_id", "variables"}},
		{`{"to":["9876543210"],"message":"hi","Message":"x"}`, []string{"Message"}},
		{`{"to":["9876543210"],"message":"hi","idempotency_key":"other"}`, []string{"idempotency_key"}},
	} {
		_, _, err := decodeBulkSMS([]byte(c.body), "acct", Header{IdempotencyKey: "k-1"})
		got := fieldsOf(t, err)
		for _, f := range c.fields {
			if got[f] == "" {
				t.Errorf("%s: no error on %q: %v", c.body, f, got)
			}
		}
		if len(got) != len(c.fields) {
			t.Errorf("%s: fields %v, want %v", c.body, got, c.fields)
		}
	}

	// The limit, and one past it.
	many := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"message":"hi","to":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%d"`, 9000000000+i)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	if r, _, err := decodeBulkSMS(many(notify.MaxBulkRecipients), "acct", Header{}); err != nil || len(r.To) != notify.MaxBulkRecipients {
		t.Fatalf("at the limit: %v", err)
	}
	got := fieldsOf(t, func() error {
		_, _, err := decodeBulkSMS(many(notify.MaxBulkRecipients+1), "acct", Header{})
		return err
	}())
	if !strings.Contains(got["to"], fmt.Sprint(notify.MaxBulkRecipients)) || len(got) != 1 {
		t.Fatalf("over the limit: %v", got)
	}
}

func FuzzDecodeBulkSMS(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"to":["9876543210",9123456789],"message":"hi"}`,
		`{"to":[null,{},[],1e3,-1],"message":"hi"}`,
		`{"to":["9876543210"],"template_slug":"order-confirmed","variables":{"NAME":"Asha"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, _, err := decodeBulkSMS(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err != nil {
			return
		}
		if r == nil || len(r.To) == 0 || len(r.To) > notify.MaxBulkRecipients || r.Message.To != "" {
			t.Fatalf("bad result %+v", r)
		}
		for _, to := range r.To {
			if to == "" {
				t.Fatalf("an empty recipient passed: %+v", r.To)
			}
		}
	})
}
