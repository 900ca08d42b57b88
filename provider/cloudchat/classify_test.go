package cloudchat

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

func FuzzClassify(f *testing.F) {
	f.Add(400, []byte(`{"error":{"message":"(#131047) Re-engagement message","type":"OAuthException","code":131047,"error_data":{"messaging_product":"whatsapp","details":"more than 24 hours"},"fbtrace_id":"Az8or2yhqkZfEZ-_4Qn_Bam"}}`))
	f.Add(500, []byte(`{"error":{"message":"(#131000) Something went wrong","code":131000}}`))
	f.Add(401, []byte(`{"error":{"message":"token 482915","code":190,"error_subcode":463}}`))
	f.Add(429, []byte(`<html>slow down</html>`))
	f.Add(400, []byte(`{"error":null}`))
	f.Add(400, []byte(`{"error":{"code":"131056"}}`))
	f.Add(502, []byte(`<html><head><title>502 Bad Gateway</title></head></html>`))
	f.Add(503, []byte(`{"error":{"message":"(#131016) Service unavailable","code":131016}}`))
	f.Add(503, []byte(`{"error":{"message":"busy","code":999999}}`))
	f.Add(503, []byte(`{"error":"busy"}`))
	f.Add(400, []byte(`{"error":{"message":"An unknown error occurred","code":1}}`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		h := http.Header{"Retry-After": {"3"}}
		e := classify(status, h, data, "482915")
		switch e.Code {
		case notify.CodeRateLimited, notify.CodeRejected, notify.CodeUnavailable, notify.CodeOutcomeUnknown:
		default:
			t.Fatalf("code %q", e.Code)
		}
		if strings.Contains(e.Error(), "482915") {
			t.Fatalf("the OTP leaked: %v", e)
		}
		if e.RetryAfter < 0 {
			t.Fatalf("negative RetryAfter")
		}
		// The vendor's error object is a certain refusal whatever the
		// status; a 5xx without it is of unknown outcome.
		var body struct {
			Error *apiError `json:"error"`
		}
		own := json.Unmarshal(data, &body) == nil && body.Error != nil
		if own && notify.OutcomeOf(e) != record.StateFailed {
			t.Fatalf("HTTP %d with the vendor's error object is not a certain refusal: %v", status, e)
		}
		if !own && status >= 500 && notify.OutcomeOf(e) != record.StateUnknown {
			t.Fatalf("HTTP %d without the vendor's error object is certain: %v", status, e)
		}
	})
}
