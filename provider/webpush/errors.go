package webpush

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Error is a push service's refusal of a message: the HTTP status it
// answered and, when the body was the service's own error (package doc),
// what it said, such as Mozilla autopush's
//
//	{"code": 410, "errno": 103, "error": "Gone", "message": "Request did not validate: expired"}
//
// The *notify.Error that Send returns wraps it, so an app reaches the
// status with errors.As:
//
//	var pe *webpush.Error
//	if errors.As(err, &pe) && pe.Gone() { ... } // the subscription is gone
//
// Its fields hold the service's text on one line, clipped; keys,
// secrets and the payload are never in them.
type Error struct {
	// Status is the HTTP status of the answer, such as 410.
	Status int
	// Errno is autopush's "errno" (such as 102, 103, 104, 109), 0 when
	// the answer has none.
	Errno int
	// Reason is the service's short word for the error: autopush's
	// "error", Google's "status", Apple's "reason"; "" when the answer
	// has none.
	Reason string
	// Message is the service's text, "" when it gave none.
	Message string
	// hint says what the status means for the reader.
	hint string
}

// Error formats the error as "webpush: the push service answered HTTP S
// (reason, errno N): message", followed by what the status means.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "webpush: the push service answered HTTP %d", e.Status)
	var in []string
	if e.Reason != "" {
		in = append(in, e.Reason)
	}
	if e.Errno != 0 {
		in = append(in, "errno "+strconv.Itoa(e.Errno))
	}
	if len(in) > 0 {
		b.WriteString(" (" + strings.Join(in, ", ") + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.hint != "" {
		b.WriteString(" (" + e.hint + ")")
	}
	return b.String()
}

// Gone reports whether the answer says the subscription no longer exists
// (404 or 410, RFC 8030 section 7.3): nothing sent to it arrives again.
func (e *Error) Gone() bool { return e.Status == http.StatusNotFound || e.Status == http.StatusGone }

// goneError is the refusal of a subscription that no longer exists. It
// implements store.Bounce, so that the Notifier puts the endpoint on the
// account's suppression list, and a later push to it is refused before
// it is charged.
type goneError struct{ err *Error }

// Error returns the *Error's text.
func (e goneError) Error() string { return e.err.Error() }

// Unwrap returns the *Error.
func (e goneError) Unwrap() error { return e.err }

// BounceReason implements store.Bounce: a hard bounce of the envelope's
// To, the subscription's endpoint.
func (goneError) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, ""
}

var _ store.Bounce = goneError{}

// The hints of the statuses that have one.
const (
	hintGone  = "the subscription no longer exists: it is put on the suppression list"
	hintVAPID = "the push service refused the VAPID authorization: check webpush Config.VAPIDPublicKey, VAPIDPrivateKey and Subscriber, and that the browser subscribed with PublicKey as its applicationServerKey"
	hint3xx   = "a redirect, which is not followed: a push service answers at the endpoint"
)

// classify reads a push service's answer to a message for endpoint to:
// the ProviderMessageID of an acceptance, or the classified error, as
// the package documentation's table says.
func classify(name string, a *vendorhttp.Answer, to string) (string, error) {
	st := a.Status
	switch st {
	case http.StatusOK, http.StatusCreated, http.StatusAccepted:
		return messageID(a.Header, to), nil
	}
	e, own := serviceError(st, a.Body)
	switch {
	case st == http.StatusNotFound || st == http.StatusGone:
		e.hint = hintGone
		return "", &notify.Error{Code: notify.CodeRejected, Err: goneError{err: e}}
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		e.hint = hintVAPID
		return "", &notify.Error{Code: notify.CodeRejected, Err: e}
	case st == http.StatusRequestEntityTooLarge:
		return "", &notify.Error{Code: notify.CodeInvalidArgument, Err: e, Fields: record.FieldErrors{{Field: "body",
			Message: "makes a push message over the push service's size limit: shorten the title, body, link, image or data"}}}
	case st == http.StatusTooManyRequests:
		return "", &notify.Error{Code: notify.CodeRateLimited, Err: e, RetryAfter: vendorhttp.RetryAfter(a.Header)}
	case st >= 500 && own:
		// The service formed the answer and took nothing.
		return "", &notify.Error{Code: notify.CodeUnavailable, Err: e, RetryAfter: vendorhttp.RetryAfter(a.Header)}
	case st >= 500:
		return "", vendorhttp.Foreign(name, st, a.Header,
			"is not the push service's own error (an empty or cut body, a proxy's page, JSON of another shape): the service may have taken the message")
	case st >= 200 && st < 300:
		return "", vendorhttp.Foreign(name, st, a.Header, "is not the push service's acceptance (200, 201 or 202)")
	case st >= 300 && st < 400:
		e.hint = hint3xx
	}
	return "", &notify.Error{Code: notify.CodeRejected, Err: e}
}

// reasonWord is the form of an error's short word: a word of letters,
// digits, '_', '-' or spaces (autopush's "Not Found", Google's
// "UNAVAILABLE", Apple's "BadJwtToken"), not prose.
var reasonWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ -]{0,63}$`)

// serviceError returns the *Error of an answer of HTTP status, and
// whether its body is the push service's own error, one of
//
//	{"code": status, "errno": N, "error": "...", "message": "..."}     Mozilla autopush: errno > 0
//	{"error": {"code": status, "message": "...", "status": "WORD"}}    Google's API error
//	{"reason": "Word"}                                                  Apple's push service
//
// and nothing else: the code equal to the status where there is one. A
// body that is not (empty, a proxy's page, JSON of another shape) gives
// an *Error with the status alone.
func serviceError(status int, body []byte) (*Error, bool) {
	e := &Error{Status: status}
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(body), &top) != nil {
		return e, false
	}
	var auto struct {
		Code    int    `json:"code"`
		Errno   int    `json:"errno"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	var google struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	var apple struct {
		Reason string `json:"reason"`
	}
	switch {
	case top["errno"] != nil && json.Unmarshal(body, &auto) == nil && auto.Code == status && auto.Errno > 0:
		e.Errno, e.Reason, e.Message = auto.Errno, word(auto.Error), text(auto.Message)
	case top["error"] != nil && json.Unmarshal(body, &google) == nil && google.Error.Code == status &&
		reasonWord.MatchString(google.Error.Status):
		e.Reason, e.Message = google.Error.Status, text(google.Error.Message)
	case len(top) == 1 && top["reason"] != nil && json.Unmarshal(body, &apple) == nil && reasonWord.MatchString(apple.Reason):
		e.Reason = apple.Reason
	default:
		return e, false
	}
	return e, true
}

// word returns s when it has the form of a reason, else "".
func word(s string) string {
	if reasonWord.MatchString(s) {
		return s
	}
	return ""
}

// text makes the service's text fit for an error message.
func text(s string) string { return vendorhttp.CleanText(s, 0) }

// messageID returns the ProviderMessageID of an accepted message: the
// push message resource the answer's Location names (RFC 8030 section
// 5.1), made absolute against the endpoint to; or, when there is no
// usable Location, LocalIDPrefix and 32 random hex digits, unique per
// message.
func messageID(h http.Header, to string) string {
	loc := strings.TrimSpace(h.Get("Location"))
	if loc == "" || len(loc) > maxLocation || strings.IndexFunc(loc, unicode.IsControl) >= 0 {
		return localID()
	}
	u, err := url.Parse(loc)
	if base, berr := url.Parse(to); err == nil && berr == nil {
		u = base.ResolveReference(u)
	}
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return localID()
	}
	return u.String()
}
