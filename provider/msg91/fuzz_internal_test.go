package msg91

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// FuzzDecodeAnswer feeds arbitrary answers to the decoder: it must not
// panic, must classify every failure (a certain refusal or
// CodeOutcomeUnknown), must succeed only on "type": "success" with a
// request ID, must take MSG91's own error body for a certain refusal
// whatever the status and any other 2xx or 5xx for an unknown outcome,
// must keep error messages to one printable line, and must never let the
// secrets through.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(200, []byte(`{"message":"5762846b4f8d285d378b4567","type":"success"}`))
	f.Add(401, []byte(`{"type":"error","code":"401","message":"AuthenticationFailure"}`))
	f.Add(200, []byte(`{"type":"error","code":418,"message":"AuthenticationFailure"}`))
	f.Add(200, []byte(`{"type":"error","message":"Insufficient balance","code":"301"}`))
	f.Add(429, []byte(`{"type":"error","message":"Too many requests"}`))
	f.Add(500, []byte(`{"type":"error","code":"601","message":"Internal error"}`))
	f.Add(503, []byte(`{"type":"error","message":"line\none 482913"}`))
	f.Add(200, []byte(`{"type":"success"}`))
	f.Add(200, []byte(`{"type":"success","message":5}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Add(503, []byte(``))
	f.Add(200, []byte(`null`))
	f.Add(400, []byte(`{"type":"error","message":{"x":[1]}}`))
	secrets := []string{"test-key-0123456789", "482913"}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		id, err := decodeAnswer(status, http.Header{}, body, secrets)
		var probe struct {
			Type string `json:"type"`
		}
		parsed := json.Unmarshal(body, &probe) == nil
		if err == nil {
			if !parsed || !strings.EqualFold(probe.Type, "success") || id == "" || strings.TrimSpace(id) != id {
				t.Fatalf("success %q from %q", id, body)
			}
			return
		}
		own := parsed && strings.EqualFold(probe.Type, "error")
		vendorhttptest.CheckError(t, err, own, status >= 500 || status >= 200 && status < 300,
			fmt.Sprintf("HTTP %d %q", status, body), secrets...)
	})
}

// FuzzDecodeBalance feeds arbitrary answers to the balance call's
// decoder: it must not panic, must read a balance only from a 2xx, in
// rupees to the paisa, and must make every failure, once Balance has
// made it read-only, a certain one on one printable line without the key.
func FuzzDecodeBalance(f *testing.F) {
	const key = "test-key-0123456789"
	f.Add(200, []byte("1234.5678"))
	f.Add(200, []byte(`"99.5"`))
	f.Add(200, []byte("-3"))
	f.Add(200, []byte("Invalid authkey "+key))
	f.Add(200, []byte(`{"msgType":"error","msg":"Authentication failure `+key+`","code":"201"}`))
	f.Add(401, []byte(`{"type":"error","code":"401","message":"AuthenticationFailure"}`))
	f.Add(200, []byte("1e3"))
	f.Add(200, []byte(""))
	f.Add(502, []byte("<html>bad gateway</html>"))
	f.Add(500, []byte("12.5"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		m, err := decodeBalance(status, http.Header{}, body, key)
		if err == nil {
			if status < 200 || status > 299 || m.Currency.Code != "INR" {
				t.Fatalf("HTTP %d %q: balance %v", status, body, m)
			}
			return
		}
		err = vendorhttp.ReadOnly(err)
		if notify.OutcomeOf(err) == record.StateUnknown {
			t.Fatalf("HTTP %d %q: %v is of unknown outcome", status, body, err)
		}
		vendorhttptest.CheckError(t, err, false, false, fmt.Sprintf("HTTP %d %q", status, body), key)
	})
}

// FuzzParseReports feeds arbitrary report bodies to the webhook's reader:
// it must not panic, and every report it reads has a request ID.
func FuzzParseReports(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", []byte(`data=%5B%7B%22requestId%22%3A%22a%22%2C%22report%22%3A%5B%7B%22number%22%3A%22919876543210%22%2C%22status%22%3A%221%22%7D%5D%7D%5D`))
	f.Add("application/json", []byte(`{"requestId":"a","number":"919876543210","status":"1","desc":"DELIVERED","date":"2026-11-25 14:00:05"}`))
	f.Add("application/json", []byte(`{"data":"[{\"requestId\":\"a\",\"report\":[{\"status\":\"2\"}]}]"}`))
	f.Add("application/json", []byte(`[{"data":[{"meta":"0","description":"DELIVERED","ts":1726729500}],"event":"delivered"}]`))
	f.Add("", []byte(`requestId=a&status=17&number=919876543210`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		list, err := parseReports(contentType, body)
		if err != nil {
			return
		}
		for _, e := range list {
			if e.Get(idFields...) == "" {
				t.Fatalf("a report without a request ID from %q", body)
			}
			if r := report(DefaultName, e); r != nil && (r.ProviderMessageID == "" || strings.IndexFunc(r.Error, unicode.IsControl) >= 0) {
				t.Fatalf("report %+v from %q", r, body)
			}
		}
	})
}
