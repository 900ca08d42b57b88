package cloudchat

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// Error is the vendor's error object, as it answered a send or a health
// check. The *notify.Error a Provider returns wraps it, so an app reaches
// the vendor's code with errors.As, to act on it without parsing text:
//
//	var ce *cloudchat.Error
//	if errors.As(err, &ce) && ce.Code == 131047 { ... }
//
// Its fields hold the vendor's text with the message's OTP replaced by
// "[otp]"; the access token is never in them.
type Error struct {
	// HTTPStatus is the status of the vendor's answer.
	HTTPStatus int
	// Code and Subcode are the vendor's error code and subcode (0 when it
	// gave none), such as 131047 or 132000.
	Code    int
	Subcode int
	// Type is the vendor's error type, such as OAuthException.
	Type string
	// Message is the vendor's message (its user message when it gave no
	// other); Details is error_data.details.
	Message string
	Details string
	// TraceID is fbtrace_id, which the vendor's support asks for.
	TraceID string
}

// Error formats the error as "cloudchat: message: details (code C,
// subcode S, fbtrace_id T)" followed by a hint when the code is known.
func (e *Error) Error() string {
	text := vendorhttp.Clip(e.Message)
	if e.Details != "" && !strings.Contains(e.Message, e.Details) {
		text += ": " + vendorhttp.Clip(e.Details)
	}
	ids := "code " + strconv.Itoa(e.Code)
	if e.Subcode != 0 {
		ids += ", subcode " + strconv.Itoa(e.Subcode)
	}
	if e.TraceID != "" {
		ids += ", fbtrace_id " + vendorhttp.Clip(e.TraceID)
	}
	_, hint := codeOf(e.HTTPStatus, e.Code)
	return "cloudchat: " + text + " (" + ids + ")" + hint
}

// apiError is the vendor's error object on the wire.
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

// classify turns an error answer (not 2xx) into a *notify.Error, which
// wraps an *Error when the vendor sent its error object. otp, when set, is
// removed from the vendor's text in case the vendor quotes the message.
// The vendor's error object is its own answer: a certain refusal whatever
// the HTTP status and code. Only a 5xx without it (a proxy's page, an
// empty body, JSON of another shape) is CodeOutcomeUnknown.
func classify(status int, header http.Header, data []byte, otp string) *notify.Error {
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(data, &body) != nil || body.Error == nil {
		return vendorhttp.Foreign("cloudchat", status, header, "has no error object")
	}
	a := body.Error
	code, _ := codeOf(status, a.Code)
	e := &notify.Error{Code: code, Err: newError(status, a, otp)}
	if code == notify.CodeRateLimited {
		e.RetryAfter = vendorhttp.RetryAfter(header)
		if a.Code == 131056 && e.RetryAfter < pairRateWait {
			e.RetryAfter = pairRateWait
		}
	}
	return e
}

// newError makes the *Error of an error object, with otp removed from
// the vendor's text.
func newError(status int, a *apiError, otp string) *Error {
	msg := a.Message
	if msg == "" {
		msg = a.UserMessage
	}
	redact := func(s string) string {
		if otp == "" {
			return s
		}
		return strings.ReplaceAll(s, otp, "[otp]")
	}
	return &Error{HTTPStatus: status, Code: a.Code, Subcode: a.Subcode, Type: a.Type,
		Message: redact(msg), Details: redact(a.ErrorData.Details), TraceID: a.FBTraceID}
}

// codeOf maps a vendor error code (and the HTTP status, for codes not
// known here) to a notify code and a hint for the reader. Every one is a
// certain refusal: the vendor answered with its error object.
func codeOf(status, code int) (notify.Code, string) {
	switch code {
	case 4, 80007, 130429, 131048, 131056:
		return notify.CodeRateLimited, ""
	case 131047:
		return notify.CodeRejected, " (more than 24 hours since the recipient last wrote: only a template message can be sent; use template_name or template_slug)"
	case 131008:
		return notify.CodeRejected, " (a required parameter is missing: an authentication template needs the code in its OTP button too)"
	case 132000:
		return notify.CodeRejected, " (the number of template parameters does not match the approved template)"
	case 132001:
		return notify.CodeRejected, " (no approved template with this name and language: check template_name and language)"
	case 132005, 132007, 132012, 132015, 132016, 132018:
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
	case 131000:
		// "Something went wrong", documented as "Message failed to send
		// due to an unknown error", to be tried again.
		return notify.CodeUnavailable, " (the vendor's catch-all error: the message was not sent; retried)"
	}
	// Codes not known here, and 1 ("API Unknown": a bad request or a
	// server error), by the status the vendor gave them.
	return vendorhttp.RefusalCode(status), ""
}
