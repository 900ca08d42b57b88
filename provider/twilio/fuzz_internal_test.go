package twilio

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// FuzzDecodeAnswer feeds arbitrary answers to the decoder: it must not
// panic, must classify every failure (a certain refusal or
// CodeOutcomeUnknown), must succeed only with a message SID on a 2xx, must
// take Twilio's own error object for a certain refusal whatever the status
// and any other 5xx for an unknown outcome, and must keep error messages
// to one printable line without the OTP.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(201, []byte(`{"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}`))
	f.Add(400, []byte(`{"code": 21211, "message": "The 'To' number 123 is not a valid phone number.", "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}`))
	f.Add(401, []byte(`{"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003", "status": 401}`))
	f.Add(429, []byte(`{"code": 20429, "message": "Too Many Requests", "status": 429}`))
	f.Add(503, []byte(`{"code": 20503, "message": "Service Unavailable\n482913", "status": 503}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Add(500, []byte(``))
	f.Add(500, []byte(`{"code": 500, "message": "x"}`))
	f.Add(200, []byte(`{"sid": "SMnope"}`))
	f.Add(201, []byte(`{"sid": "SM0123456789abcdef0123456789abcdef", "status": 400, "code": 21211, "message": "m"}`))
	f.Add(200, []byte(`null`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		sid, err := decodeAnswer(status, http.Header{"Retry-After": {"3"}}, body, "482913")
		var probe apiAnswer
		own := json.Unmarshal(body, &probe) == nil && probe.vendorError()
		if err == nil {
			if own || status < 200 || status > 299 || !ValidMessageSID(sid) {
				t.Fatalf("HTTP %d %q succeeded with %q", status, body, sid)
			}
			return
		}
		vendorhttptest.CheckError(t, err, own, status >= 500, fmt.Sprintf("HTTP %d %q", status, body), "482913")
	})
}

// FuzzDecodeAccount feeds arbitrary answers to the decoder of the
// account's fetch: it must not panic, must be healthy only on a 2xx whose
// status is active, must take Twilio's own error object for a certain
// refusal and any other 5xx for an unknown outcome (CheckHealth then makes
// it CodeUnavailable), must say that a 401 or 403 refused the credentials,
// and must keep error messages to one printable line without the token.
func FuzzDecodeAccount(f *testing.F) {
	const token = "f0e1d2c3b4a5968778695a4b3c2d1e0f"
	f.Add(200, []byte(`{"sid": "AC0123456789abcdef0123456789abcdef", "status": "active", "auth_token": "`+token+`"}`))
	f.Add(200, []byte(`{"status": "suspended", "auth_token": "`+token+`"}`))
	f.Add(200, []byte(`{"status": "`+token+`"}`))
	f.Add(200, []byte(`{"status": 200}`))
	f.Add(401, []byte(`{"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003", "status": 401}`))
	f.Add(403, []byte(`<html>Forbidden</html>`))
	f.Add(503, []byte(`{"code": 20503, "message": "Service Unavailable", "status": 503}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		err := decodeAccount(status, http.Header{"Retry-After": {"3"}}, body)
		var probe apiAnswer
		own := json.Unmarshal(body, &probe) == nil && probe.vendorError()
		if err == nil {
			if own || status < 200 || status > 299 || string(probe.Status) != `"active"` {
				t.Fatalf("HTTP %d %q is healthy", status, body)
			}
			return
		}
		if (status == 401 || status == 403) && !strings.Contains(err.Error(), "Twilio refused the credentials") {
			t.Fatalf("HTTP %d %q: %v does not say the credentials were refused", status, body, err)
		}
		vendorhttptest.CheckError(t, err, own, status >= 500, fmt.Sprintf("HTTP %d %q", status, body), token)
	})
}

// TestSignatureKnownVectors checks the receiver's signing against the
// examples of Twilio's request-validation documentation (auth token
// 12345), as its Node library's tests and others sign them.
func TestSignatureKnownVectors(t *testing.T) {
	const u = "https://mycompany.com/myapp.php?foo=1&bar=2"
	for caller, want := range map[string]string{
		"+14158675309": "RSOYDt4T1cUTdK1PDd93/VVr8B8=",
		"+14158675310": "GvWf1cFY/Q7PnoempGyD5oXAezc=",
	} {
		params := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {caller}, "Digits": {"1234"},
			"From": {caller}, "To": {"+18005551212"}}
		if got := base64.StdEncoding.EncodeToString(mac("12345", u, signedParams(params))); got != want {
			t.Errorf("caller %s: signature %q, want %q", caller, got, want)
		}
	}
}

func TestTogglePort(t *testing.T) {
	for in, want := range map[string]string{
		"https://h.example/p?q#f":          "https://h.example:443/p?q#f",
		"https://h.example:443/p":          "https://h.example/p",
		"http://h.example":                 "http://h.example:80",
		"http://u:p@h.example:8080/x":      "http://u:p@h.example/x",
		"https://[2001:db8::1]/p":          "https://[2001:db8::1]:443/p",
		"https://[2001:db8::1]:8443/p?a=b": "https://[2001:db8::1]/p?a=b",
		"https://u@h.example?x=1":          "https://u@h.example:443?x=1",
	} {
		if got := togglePort(in); got != want {
			t.Errorf("togglePort(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzValidators(f *testing.F) {
	for _, s := range []string{"+14155550100", "+919876543210", "12345", "ACME IN", "", "+0123", "A-1_b+&", "123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if phone.IsE164(s) && (!ValidSender(s) || s[0] != '+') {
			t.Fatalf("phone.IsE164(%q) but not a sender", s)
		}
		if ValidSender(s) && (len(s) > 16 || strings.ContainsFunc(s, unicode.IsControl)) {
			t.Fatalf("ValidSender(%q)", s)
		}
		if ValidMessageSID(s) && len(s) != 34 {
			t.Fatalf("ValidMessageSID(%q)", s)
		}
	})
}
