package webpush

import (
	"net/http"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// TestClassifyBodies: which bodies are the service's own error (a 5xx of
// them a certain refusal) and which are not (a 5xx of them unknown), and
// what each status means.
func TestClassifyBodies(t *testing.T) {
	const to = "https://push.example.test/wpush/v2/abc"
	for _, c := range []struct {
		name   string
		status int
		header http.Header
		body   string
		own    bool        // the service's own error format
		code   notify.Code // "" for an acceptance
	}{
		{"created", 201, http.Header{"Location": {"/m/1"}}, "", false, ""},
		{"ok", 200, nil, "", false, ""},
		{"accepted", 202, nil, "{}", false, ""},
		{"no content", 204, nil, "", false, notify.CodeOutcomeUnknown},
		{"autopush 503", 503, nil, `{"code": 503, "errno": 202, "error": "Service Unavailable", "message": "Immediately retry the message"}`, true, notify.CodeUnavailable},
		{"autopush 500, errno unknown", 500, nil, `{"code": 500, "errno": 4242, "error": "Internal Server Error"}`, true, notify.CodeUnavailable},
		{"google 503", 503, nil, `{"error": {"code": 503, "message": "The service is currently unavailable.", "status": "UNAVAILABLE"}}`, true, notify.CodeUnavailable},
		{"apple 500", 500, nil, `{"reason": "InternalServerError"}`, true, notify.CodeUnavailable},
		{"empty 503", 503, nil, "", false, notify.CodeOutcomeUnknown},
		{"html 502", 502, nil, "<html><body>Bad Gateway</body></html>", false, notify.CodeOutcomeUnknown},
		{"cut json 503", 503, nil, `{"code": 503, "errno": 2`, false, notify.CodeOutcomeUnknown},
		{"code not the status", 503, nil, `{"code": 502, "errno": 201, "error": "x"}`, false, notify.CodeOutcomeUnknown},
		{"no errno", 503, nil, `{"code": 503, "error": "Service Unavailable"}`, false, notify.CodeOutcomeUnknown},
		{"another shape", 500, nil, `{"status": "error", "detail": "oops"}`, false, notify.CodeOutcomeUnknown},
		{"apple reason with others", 500, nil, `{"reason": "X", "detail": "y"}`, false, notify.CodeOutcomeUnknown},
		{"reason prose", 500, nil, `{"reason": "the server, it broke: sorry!"}`, false, notify.CodeOutcomeUnknown},
		{"429 bare", 429, http.Header{"Retry-After": {"7"}}, "", false, notify.CodeRateLimited},
		{"410 bare", 410, nil, "", false, notify.CodeRejected},
		{"404 html", 404, nil, "<html>Not Found</html>", false, notify.CodeRejected},
		{"400 autopush", 400, nil, `{"code": 400, "errno": 111, "error": "Bad Request", "message": "Missing TTL"}`, true, notify.CodeRejected},
		{"401", 401, nil, "", false, notify.CodeRejected},
		{"413", 413, nil, "", false, notify.CodeInvalidArgument},
		{"301", 301, http.Header{"Location": {"https://elsewhere.example/"}}, "", false, notify.CodeRejected},
		{"418", 418, nil, "", false, notify.CodeRejected},
	} {
		id, err := classify("webpush", &vendorhttp.Answer{Status: c.status, Header: c.header, Body: []byte(c.body)}, to)
		if c.code == "" {
			if err != nil || id == "" {
				t.Errorf("%s: %q, %v", c.name, id, err)
			}
			continue
		}
		if got := notify.CodeOf(err); got != c.code {
			t.Errorf("%s: code %s, want %s: %v", c.name, got, c.code, err)
			continue
		}
		if _, own := serviceError(c.status, []byte(c.body)); own != c.own {
			t.Errorf("%s: own %v, want %v", c.name, own, c.own)
		}
		if c.code == notify.CodeInvalidArgument {
			err = notify.WithCode(notify.CodeRejected, err)
		}
		vendorhttptest.CheckError(t, err, c.own, c.status >= 500 && !c.own, c.name)
	}
	if id, _ := classify("webpush", &vendorhttp.Answer{Status: 201, Header: http.Header{"Location": {"/m/1"}}}, to); id != "https://push.example.test/m/1" {
		t.Errorf("a relative Location gives %q", id)
	}
	if id, _ := classify("webpush", &vendorhttp.Answer{Status: 201, Header: http.Header{"Location": {"ftp://x/\x01"}}}, to); !strings.HasPrefix(id, LocalIDPrefix) {
		t.Errorf("an unusable Location gives %q", id)
	}
	if _, err := classify("webpush", &vendorhttp.Answer{Status: 503, Header: http.Header{"Retry-After": {"120"}},
		Body: []byte(`{"code": 503, "errno": 201, "error": "Service Unavailable"}`)}, to); notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("503 of the service's own: %v", err)
	} else if e := err.(*notify.Error); e.RetryAfter.Seconds() != 120 {
		t.Errorf("RetryAfter %v", e.RetryAfter)
	}
}

// FuzzClassify: whatever the service answers, the error keeps the
// provider contract's rules.
func FuzzClassify(f *testing.F) {
	f.Add(503, `{"code": 503, "errno": 202, "error": "Service Unavailable", "message": "retry"}`)
	f.Add(410, `{"code": 410, "errno": 103}`)
	f.Add(502, "<html>")
	f.Add(500, `{"reason": "InternalServerError"}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 100 || status > 599 {
			return
		}
		_, err := classify("webpush", &vendorhttp.Answer{Status: status, Body: []byte(body)}, "https://push.example.test/x")
		if err == nil {
			return
		}
		_, own := serviceError(status, []byte(body))
		if notify.CodeOf(err) == notify.CodeInvalidArgument {
			err = notify.WithCode(notify.CodeRejected, err)
		}
		vendorhttptest.CheckError(t, err, own, status >= 500 && !own, "fuzzed answer")
	})
}
