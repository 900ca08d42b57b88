package cloudchat

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/vendorhttp"
)

// apiError is the vendor's error object.
type apiError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	UserTitle   string `json:"error_user_title"`
	UserMessage string `json:"error_user_msg"`
	FBTraceID   string `json:"fbtrace_id"`
	ErrorData   struct {
		Details string `json:"details"`
	} `json:"error_data"`
}

// pairRateWait is how long the vendor asks between two messages to the
// same recipient (the pair rate limit, code 131056).
const pairRateWait = 6 * time.Second

// classify turns an error answer (not 2xx) into a *notify.Error. otp, when
// set, is removed from the vendor's text in case the vendor quotes the
// message. Only the vendor's error object with a code that says the
// message was not taken is a certain refusal; a 5xx without one (a proxy's
// page, an empty body, an unknown code) is CodeOutcomeUnknown.
func classify(status int, header http.Header, data []byte, otp string) *notify.Error {
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil || body.Error == nil {
		switch {
		case status == http.StatusTooManyRequests:
			e := notify.Errorf(notify.CodeRateLimited, "cloudchat: HTTP 429 without an error object")
			e.RetryAfter = retryAfter(header)
			return e
		case status >= 500:
			return vendorhttp.Unknownf("cloudchat", "HTTP %d without the vendor's error object", status)
		}
		return notify.Errorf(notify.CodeRejected, "cloudchat: HTTP %d without an error object", status)
	}
	a := body.Error
	code, hint := codeOf(status, a.Code)
	desc := describe(a, otp)
	if code == notify.CodeOutcomeUnknown {
		return vendorhttp.Unknownf("cloudchat", "%s%s", desc, hint)
	}
	e := notify.Errorf(code, "cloudchat: %s%s", desc, hint)
	if code == notify.CodeRateLimited {
		e.RetryAfter = retryAfter(header)
		if a.Code == 131056 && e.RetryAfter < pairRateWait {
			e.RetryAfter = pairRateWait
		}
	}
	return e
}

// codeOf maps a vendor error code (and the HTTP status, for codes not
// known here) to a notify code and a hint for the reader.
// CodeOutcomeUnknown means the answer does not prove the message was not
// taken.
func codeOf(status, code int) (notify.Code, string) {
	switch code {
	case 4, 80007, 130429, 131048, 131056:
		return notify.CodeRateLimited, ""
	case 131047:
		return notify.CodeRejected, " (more than 24 hours since the recipient last wrote: only a template message can be sent; use template_name or template_slug)"
	case 132000:
		return notify.CodeRejected, " (the number of template parameters does not match the approved template)"
	case 132001:
		return notify.CodeRejected, " (no approved template with this name and language: check template_name and language)"
	case 132005, 132007, 132012, 132015, 132016:
		return notify.CodeRejected, " (the template was refused: check that it is approved and that the parameters match it)"
	case 190:
		return notify.CodeRejected, " (the access token is invalid or expired: check cloudchat Config.Token)"
	case 10, 200, 131005:
		return notify.CodeRejected, " (the token lacks permission for this phone number: check cloudchat Config.Token and PhoneNumberID)"
	case 131026:
		return notify.CodeRejected, " (undeliverable: the number may not be on the chat network, or cannot receive this message)"
	case 2, 131016, 133004:
		// Documented as the service being down or overloaded for a
		// while: the message was not taken.
		return notify.CodeUnavailable, ""
	case 1, 131000:
		// Documented as an unknown error ("API Unknown", "Something went
		// wrong"): the message may have been sent.
		return notify.CodeOutcomeUnknown, " (the vendor's catch-all error does not say whether the message was sent)"
	}
	switch {
	case status == http.StatusTooManyRequests:
		return notify.CodeRateLimited, ""
	case status >= 500:
		return notify.CodeOutcomeUnknown, ""
	}
	return notify.CodeRejected, ""
}

// describe formats the vendor's error for a message, without secrets.
func describe(a *apiError, otp string) string {
	var b strings.Builder
	msg := a.Message
	if msg == "" {
		msg = a.UserMessage
	}
	b.WriteString(vendorhttp.Clip(msg))
	if d := a.ErrorData.Details; d != "" && !strings.Contains(msg, d) {
		b.WriteString(": ")
		b.WriteString(vendorhttp.Clip(d))
	}
	b.WriteString(" (code ")
	b.WriteString(strconv.Itoa(a.Code))
	if a.Subcode != 0 {
		b.WriteString(", subcode ")
		b.WriteString(strconv.Itoa(a.Subcode))
	}
	if a.FBTraceID != "" {
		b.WriteString(", fbtrace_id ")
		b.WriteString(vendorhttp.Clip(a.FBTraceID))
	}
	b.WriteString(")")
	s := b.String()
	if otp != "" {
		s = strings.ReplaceAll(s, otp, "[otp]")
	}
	return s
}

// retryAfter reads a Retry-After header in seconds.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && n > 0 && n < 86400 {
		return time.Duration(n) * time.Second
	}
	return 0
}
