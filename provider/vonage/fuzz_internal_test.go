package vonage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// TestSignKnownVectors checks Sign against the signatures of Vonage's
// PHP library's tests (signed inbound messages and sends, with a value
// holding '&' and '=') and of its Python library's.
func TestSignKnownVectors(t *testing.T) {
	inbound := url.Values{"message-timestamp": {"2013-11-21 15:27:30"}, "messageId": {"020000001B0FE827"},
		"msisdn": {"14843472194"}, "text": {"Test again"}, "timestamp": {"1385047698"}, "to": {"13239877404"}, "type": {"text"}}
	send := url.Values{"api_key": {"fake_api_key"}, "to": {"14155550100"}, "from": {"AcmeInc"}, "text": {"Test From Nexmo"},
		"type": {"text"}, "timestamp": {"1540924779"}}
	ampersands := url.Values{"keyword": {"TEST"}, "message-timestamp": {"2017-04-04 22:57:47"}, "messageId": {"0B00000042AC53BD"},
		"msisdn": {"14843472194"}, "nonce": {"929d6744-bd28-42c8-b6cf-31d5b4f43732"}, "text": {"Test with & and ="},
		"timestamp": {"1491346667"}, "to": {"12192259404"}, "type": {"text"}, "sig": {"e06d9763e3fd0b9c31beb5fc2fcb011c"}}
	outbound := url.Values{"api_key": {"not_a_key"}, "from": {"12192259404"}, "text": {"Test&test=something"},
		"timestamp": {"1490638615"}, "to": {"14843472194"}}
	python := url.Values{"param1": {"value1"}, "param2": {"value2"}, "timestamp": {"1234567890"}}
	const php, hmacs = "my_secret_key_for_testing", "71efab63122f1d179f51c46bac838fb5"
	for _, c := range []struct {
		method SignatureMethod
		secret string
		params url.Values
		want   string
	}{
		{MD5Hash, php, inbound, "d2e7b1dc968737c5998ad624e02f90b7"},
		{MD5HMAC, php, inbound, "DDEBD46008C2D4E93CCE578A332A52D5"},
		{SHA1HMAC, php, inbound, "27D0D05C2876C7CB1720DBCDBA4D492E1E55C09A"},
		{SHA256HMAC, php, inbound, "DDB8397C2B90AAC7F3882D306475C9A5058C92322EEF43C92B298B6E0FC0D330"},
		{SHA512HMAC, php, inbound, "E0D3C650F8C9D1A5C174D10DDDBFB003E561F59B265616208B0487C5D819481CD3C311D59CF6165ECD1139622D5BA3A256C0D763AC4A9AD9144B5A426B94FE82"},
		{MD5Hash, php, ampersands, "e06d9763e3fd0b9c31beb5fc2fcb011c"},
		{MD5Hash, php, outbound, "17f5e3b22f778ec73464c01d180e9d0f"},
		{MD5HMAC, hmacs, send, "51CDAFEBB4BBCE9525B195C1617CB8D2"},
		{SHA1HMAC, hmacs, send, "0162AEC64BC183B2E1256545951FE5639DC98020"},
		{SHA256HMAC, hmacs, send, "9FEC5EF6D0F2B3D2BB7558B6E4042569823CAB9EA0DD30503472B7B304601975"},
		{SHA512HMAC, hmacs, send, "40BD12B9A4B6000AD1138EEFD24FFE9FBD72AEE13C3FA04B32BB69DBC256AD0A04A463B1A9AF6660D10F6E1E769EE14B9CFF6A635502E93AFCD0BFAB29F38F87"},
		{SHA256HMAC, "signature_secret", python, strings.ToUpper("280c4320703dbc98bfa22db676655ed2acfbfe8792b062ff7622e67f1183c287")},
	} {
		if got := Sign(c.method, c.secret, c.params); got != c.want {
			t.Errorf("%s of %v: %s, want %s", c.method, c.params, got, c.want)
		}
		p := url.Values{"sig": {c.want}}
		for k, v := range c.params {
			p[k] = v
		}
		if !verify(c.method, c.secret, p) {
			t.Errorf("%s of %v does not verify", c.method, c.params)
		}
	}
	if Sign("sha3", "k", inbound) != "" {
		t.Fatal("an unknown method signs")
	}
}

// FuzzDecodeAnswer feeds arbitrary answers to the decoder: it must not
// panic, must classify every failure (a certain refusal or
// CodeOutcomeUnknown), must succeed only with a part Vonage took, must
// take Vonage's refusal for a certain refusal whatever the status and any
// other 2xx or 5xx for an unknown outcome, and must keep error messages
// to one printable line without the secret or the OTP.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(200, []byte(`{"message-count":"1","messages":[{"to":"447700900000","message-id":"0A0000000123ABCD1","status":"0","remaining-balance":"3.14159265","message-price":"0.03330000","network":"12345"}]}`))
	f.Add(200, []byte(`{"message-count":"1","messages":[{"status":"4","error-text":"Bad Credentials Vg5ecret0123ABCD"}]}`))
	f.Add(200, []byte(`{"message-count":"1","messages":[{"status":"1","error-text":"Throttled"}]}`))
	f.Add(200, []byte(`{"message-count":"1","messages":[{"status":"3","error-text":"Invalid to param 482913"}]}`))
	f.Add(200, []byte(`{"message-count":"2","messages":[{"message-id":"0A01","status":"0"},{"status":"9","error-text":"Quota\nExceeded"}]}`))
	f.Add(503, []byte(`{"message-count":"1","messages":[{"status":"99","error-text":"busy"}]}`))
	f.Add(200, []byte(`{"message-count":"1","messages":[{"status":"0"}]}`))
	f.Add(200, []byte(`{"message-count":"2","messages":[{"status":"0"},{"status":"1","error-text":"Throttled"}]}`))
	f.Add(502, []byte(`<html>bad gateway</html>`))
	f.Add(200, []byte(``))
	f.Add(200, []byte(`null`))
	f.Add(429, []byte(`{}`))
	secrets := []string{"Vg5ecret0123ABCD", "482913"}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		sub, err := decodeAnswer(status, http.Header{"Retry-After": {"3"}}, body, secrets)
		var probe answer
		parsed := json.Unmarshal(body, &probe) == nil
		took, refused, mayHave := false, false, false
		for i := range probe.Messages {
			m := &probe.Messages[i]
			took = took || m.accepted()
			refused = refused || m.refusal()
			// A part with status 0, or none, that Vonage did not answer as
			// taken (status 0 with a message-id) may have been taken,
			// whatever its message-id: no other part's refusal proves
			// otherwise.
			if n, ok := m.status(); (!ok || n == StatusSuccess) && !m.accepted() {
				mayHave = true
			}
		}
		if err == nil {
			if !parsed || !took || len(sub.ids) == 0 || !ValidMessageID(sub.ids[0]) {
				t.Fatalf("HTTP %d %q succeeded with %+v", status, body, sub)
			}
			if note := sub.note(secrets); strings.ContainsFunc(note, unicode.IsControl) || strings.Contains(note, "482913") {
				t.Fatalf("note %q", note)
			}
			return
		}
		if parsed && !took && mayHave {
			if notify.OutcomeOf(err) != record.StateUnknown {
				t.Fatalf("HTTP %d %q: %v, want an unknown outcome (a part may have been taken)", status, body, err)
			}
			return
		}
		own := parsed && refused
		vendorhttptest.CheckError(t, fieldless(t, err, own), own, status >= 500 || status >= 200 && status < 300,
			fmt.Sprintf("HTTP %d %q", status, body), secrets...)
	})
}

// fieldless returns err for vendorhttptest.CheckError, which knows the
// four codes of a vendor's answer: a refusal of Vonage's that names a
// field (CodeInvalidArgument) must be Vonage's own, name exactly one
// field and be certain, and is checked further as the CodeRejected it
// would otherwise be.
func fieldless(t *testing.T, err error, own bool) error {
	t.Helper()
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		return err
	}
	if !own || len(e.Fields) != 1 || notify.OutcomeOf(err) != record.StateFailed {
		t.Fatalf("invalid_argument %v (fields %v) of an answer that is not Vonage's refusal naming a field", err, e.Fields)
	}
	return notify.WithCode(notify.CodeRejected, err)
}

// FuzzParseReceipt feeds arbitrary receipts to the webhook's reader and
// checks: it must not panic; a receipt it reads authenticates only with
// its own signature (never a forged one), whatever its shape; and its
// report, if any, names the message and keeps its error to one line.
func FuzzParseReceipt(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "", []byte("msisdn=447700900000&to=AcmeInc&messageId=0A0000001234567B&status=delivered&err-code=0&api-key=a1b2c3d4"))
	f.Add("application/json", "", []byte(`{"messageId":"0A01","status":"failed","err-code":"6","client-ref":"a=acme&m=m1","timestamp":"1764059405","sig":"00"}`))
	f.Add("", "messageId=0A01&status=expired&err-code=2&timestamp=1764059405", []byte(nil))
	f.Add("application/json", "", []byte(`{"messageId":1,"status":true,"x":[1]}`))
	f.Add("text/plain", "", []byte("%zz"))
	now := time.Unix(1764059405, 0)
	h := &Webhook{cfg: WebhookConfig{SignatureSecret: "secret", SignatureMethod: SHA256HMAC, MaxAge: DefaultMaxAge,
		Now: func() time.Time { return now }}}
	f.Fuzz(func(t *testing.T, contentType, query string, body []byte) {
		q, _ := url.ParseQuery(query)
		params, err := parseReceipt(contentType, q, body)
		if err != nil {
			return
		}
		if !strings.EqualFold(params.Get("sig"), Sign(SHA256HMAC, "secret", params)) && h.authentic(params) {
			t.Fatalf("a receipt with a forged sig authenticates: %v", params)
		}
		params.Set("timestamp", "1764059405")
		params.Set("sig", Sign(SHA256HMAC, "secret", params))
		if !h.authentic(params) {
			t.Fatalf("a signed receipt does not authenticate: %v", params)
		}
		if rep := receiptReport(DefaultName, params); rep != nil &&
			(rep.ProviderMessageID != vendorhttp.Clip(params.Get("messageId")) || strings.ContainsFunc(rep.Error, unicode.IsControl)) {
			t.Fatalf("report %+v of %v", rep, params)
		}
	})
}

// FuzzValidators: every E.164 number is a sender, and no sender or
// message-id Vonage takes is longer than its bounds or holds a control
// character.
func FuzzValidators(f *testing.F) {
	for _, s := range []string{"+447700900000", "447700900000", "AcmeInc", "Acme Inc", "", " Acme", "12", "A-1", "0A0000001234567B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if phone.IsE164(s) && !ValidSender(s) {
			t.Fatalf("phone.IsE164(%q) but not a sender", s)
		}
		if ValidSender(s) && (len(s) > 16 || strings.ContainsFunc(s, unicode.IsControl) || strings.TrimSpace(s) != s) {
			t.Fatalf("ValidSender(%q)", s)
		}
		if ValidMessageID(s) && (len(s) > 64 || strings.ContainsAny(s, " &=")) {
			t.Fatalf("ValidMessageID(%q)", s)
		}
	})
}
