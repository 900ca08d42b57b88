package smsgateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// FuzzDecodeAnswer feeds arbitrary vendor answers to the decoder: it must
// not panic, must classify every failure (a certain refusal or
// CodeOutcomeUnknown), must succeed only on "return": true, must take the
// vendor's own error body for a certain refusal whatever the status and
// any other 5xx for an unknown outcome, and must keep error messages to
// one printable line.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(200, []byte(`{"return": true, "request_id": "lwdtp7cjyqxvfe9", "message": ["SMS sent successfully."]}`))
	f.Add(401, []byte(`{"return": false, "status_code": 412, "message": "Invalid Authentication, Check Authorization Key"}`))
	f.Add(400, []byte(`{"return": false, "status_code": 995, "message": "Spamming detected"}`))
	f.Add(200, []byte(`{"return": false, "message": ["line\none", 5]}`))
	f.Add(503, []byte(`<html>down</html>`))
	f.Add(502, []byte(``))
	f.Add(500, []byte(`{"return": false, "status_code": 888, "message": "busy"}`))
	f.Add(500, []byte(`{}`))
	f.Add(503, []byte(`{"return": false, "status_code": 503, "message": "busy"}`))
	f.Add(503, []byte(`{"return": false, "status_code": 503, "mess`))
	f.Add(502, []byte(`{"status": "error", "message": "bad gateway"}`))
	f.Add(200, []byte(`{"return": true, "wallet": "12.3456"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var out response
		err := decodeAnswer(status, http.Header{}, body, &out)
		if err == nil {
			if out.Return == nil || !*out.Return {
				t.Fatal("success without return: true")
			}
			_, _ = parseWallet(out.Wallet)
			return
		}
		code := notify.CodeOf(err)
		switch code {
		case notify.CodeRejected, notify.CodeUnavailable, notify.CodeRateLimited, notify.CodeOutcomeUnknown:
		default:
			t.Fatalf("code %q for %q", code, body)
		}
		var probe response
		own := json.Unmarshal(body, &probe) == nil && (probe.Return != nil && !*probe.Return || probe.StatusCode != 0)
		if own && notify.OutcomeOf(err) != record.StateFailed {
			t.Fatalf("HTTP %d with the vendor's error body %q is not a certain refusal: %v", status, body, err)
		}
		if !own && status >= 500 && notify.OutcomeOf(err) != record.StateUnknown {
			t.Fatalf("HTTP %d with %q, not the vendor's error body, is certain: %v", status, body, err)
		}
		if strings.IndexFunc(err.Error(), unicode.IsControl) >= 0 {
			t.Fatalf("error %q has control characters", err)
		}
	})
}
