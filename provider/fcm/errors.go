package fcm

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// FCM's error codes (google.firebase.fcm.v1.FcmError's errorCode), as
// Error.ErrorCode holds them.
const (
	ErrUnspecified         = "UNSPECIFIED_ERROR"
	ErrInvalidArgument     = "INVALID_ARGUMENT"
	ErrUnregistered        = "UNREGISTERED"
	ErrSenderIDMismatch    = "SENDER_ID_MISMATCH"
	ErrQuotaExceeded       = "QUOTA_EXCEEDED"
	ErrUnavailable         = "UNAVAILABLE"
	ErrInternal            = "INTERNAL"
	ErrThirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
)

// Error is FCM's error answer to a send, Google's error format:
//
//	{"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
//	  "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}
//
// The *notify.Error that Send returns wraps it, so an app reaches FCM's
// codes with errors.As, to act on them without parsing text:
//
//	var fe *fcm.Error
//	if errors.As(err, &fe) && fe.ErrorCode == fcm.ErrUnregistered { ... }
//
// Its fields hold FCM's text; the access token is never in them.
type Error struct {
	// HTTPStatus is the answer's HTTP status, such as 404.
	HTTPStatus int
	// Status is Google's canonical status, such as "NOT_FOUND" or
	// "UNAUTHENTICATED".
	Status string
	// ErrorCode is FCM's own code (the FcmError detail), such as
	// ErrUnregistered; empty when FCM gave none, as for a refused access
	// token.
	ErrorCode string
	// Message is FCM's message.
	Message string
	// Field and Description are the first field violation of a
	// google.rpc.BadRequest detail, such as "message.token" and "Invalid
	// registration token"; empty when there is none.
	Field, Description string
	// Reason is a google.rpc.ErrorInfo detail's reason, such as
	// "SERVICE_DISABLED"; empty when there is none.
	Reason string
}

// Error formats the error as "fcm: message (HTTP 404 NOT_FOUND,
// UNREGISTERED; field message.token)" followed by a hint when the code is
// known.
func (e *Error) Error() string {
	ids := "HTTP " + strconv.Itoa(e.HTTPStatus) + " " + e.Status
	if e.ErrorCode != "" {
		ids += ", " + e.ErrorCode
	}
	if e.Reason != "" {
		ids += ", " + e.Reason
	}
	if e.Field != "" {
		ids += "; field " + e.Field
		if e.Description != "" && e.Description != e.Message {
			ids += ": " + e.Description
		}
	}
	_, hint := codeOf(e)
	return "fcm: " + e.Message + " (" + ids + ")" + hint
}

// unregistered is FCM's word that the token can never receive a message:
// UNREGISTERED (the app was uninstalled, or the token expired or was
// deleted), or an INVALID_ARGUMENT naming the token. It implements
// store.Bounce, so that the Notifier puts the token on the account's
// suppression list without knowing FCM.
type unregistered struct{ err *Error }

func (u *unregistered) Error() string { return u.err.Error() }
func (u *unregistered) Unwrap() error { return u.err }

// BounceReason implements store.Bounce: a hard bounce of the envelope's
// token (the empty recipient).
func (u *unregistered) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, ""
}

var _ store.Bounce = (*unregistered)(nil)

// wireError is Google's error format on the wire.
type wireError struct {
	Error *struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// detail is one of the error's details, of any of the types read here.
type detail struct {
	Type            string `json:"@type"`
	ErrorCode       string `json:"errorCode"` // FcmError
	Reason          string `json:"reason"`    // ErrorInfo
	FieldViolations []struct {
		Field       string `json:"field"`
		Description string `json:"description"`
	} `json:"fieldViolations"` // BadRequest
}

// decodeAnswer reads FCM's answer: the message's name of a success, or
// the classified error. refused reports that FCM refused the access token
// itself, which the caller then drops. accessToken is kept out of the
// text.
func decodeAnswer(ans *vendorhttp.Answer, accessToken string) (name string, refused bool, err error) {
	if ans.Status >= 200 && ans.Status < 300 {
		var ok struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(ans.Body, &ok) != nil {
			return "", false, vendorhttp.Foreign("fcm", ans.Status, ans.Header, "is not JSON")
		}
		if ok.Name == "" || len(ok.Name) > 1024 || strings.IndexFunc(ok.Name, unicode.IsControl) >= 0 {
			return "", false, vendorhttp.Unknownf("fcm", "HTTP %d without a message name", ans.Status)
		}
		return ok.Name, false, nil
	}
	e, refused := classify(ans.Status, ans.Header, ans.Body, accessToken)
	return "", refused, e
}

// classify turns an answer other than 2xx into a *notify.Error, which
// wraps an *Error when FCM answered in Google's error format: its own
// answer, a certain refusal whatever the HTTP status. Anything else (a
// proxy's page, an empty body, JSON of another shape) goes to
// vendorhttp.Foreign. refused reports a 401 on the access token.
func classify(status int, header http.Header, data []byte, accessToken string) (*notify.Error, bool) {
	var w wireError
	if json.Unmarshal(data, &w) != nil || w.Error == nil || w.Error.Status == "" || w.Error.Code == 0 {
		return vendorhttp.Foreign("fcm", status, header, "is not Google's error format"), false
	}
	clean := func(s string) string {
		if accessToken != "" {
			s = strings.ReplaceAll(s, accessToken, "[token]")
		}
		return vendorhttp.CleanText(s, 0)
	}
	e := &Error{HTTPStatus: status, Status: clean(w.Error.Status), Message: clean(w.Error.Message)}
	for _, raw := range w.Error.Details {
		var d detail
		if json.Unmarshal(raw, &d) != nil {
			continue
		}
		switch {
		case strings.HasSuffix(d.Type, "/google.firebase.fcm.v1.FcmError") && e.ErrorCode == "":
			e.ErrorCode = clean(d.ErrorCode)
		case strings.HasSuffix(d.Type, "/google.rpc.BadRequest") && len(d.FieldViolations) > 0 && e.Field == "":
			e.Field, e.Description = clean(d.FieldViolations[0].Field), clean(d.FieldViolations[0].Description)
		case strings.HasSuffix(d.Type, "/google.rpc.ErrorInfo") && e.Reason == "":
			e.Reason = clean(d.Reason)
		}
	}
	code, _ := codeOf(e)
	var cause error = e
	if e.ErrorCode == ErrUnregistered || e.ErrorCode == ErrInvalidArgument && e.Field == "message.token" {
		cause = &unregistered{err: e}
	}
	out := &notify.Error{Code: code, Err: cause}
	switch code {
	case notify.CodeRateLimited, notify.CodeUnavailable:
		out.RetryAfter = vendorhttp.RetryAfter(header)
	case notify.CodeInvalidArgument:
		field, rule := requestField(e.Field)
		out.Fields = record.FieldErrors{{Field: field, Message: rule}}
	}
	return out, ownToken(e)
}

// ownToken reports whether FCM refused the access token the request
// carried (UNAUTHENTICATED without FCM's THIRD_PARTY_AUTH_ERROR, which is
// about its own credentials for APNs or Web Push).
func ownToken(e *Error) bool {
	return e.ErrorCode != ErrThirdPartyAuthError && (e.Status == "UNAUTHENTICATED" || e.HTTPStatus == http.StatusUnauthorized && e.ErrorCode == "")
}

// codeOf maps an error answer to a notify code and a hint for the reader.
// FCM's code decides, then Google's status; a code known to neither is
// classified by the HTTP status (vendorhttp.RefusalCode).
func codeOf(e *Error) (notify.Code, string) {
	switch e.ErrorCode {
	case ErrUnregistered:
		return notify.CodeRejected, " (the token is no longer registered: the app was uninstalled, or the token expired; it is suppressed)"
	case ErrInvalidArgument:
		if e.Field == "message.token" {
			return notify.CodeRejected, " (FCM says the registration token is not valid; it is suppressed)"
		}
		if f, _ := requestField(e.Field); f != "" {
			return notify.CodeInvalidArgument, ""
		}
		return notify.CodeRejected, " (FCM refused a field of the message)"
	case ErrSenderIDMismatch:
		return notify.CodeRejected, " (the token belongs to an app of another Firebase project than fcm Config.ProjectID)"
	case ErrQuotaExceeded:
		return notify.CodeRateLimited, " (the project's or the device's sending quota is exceeded)"
	case ErrUnavailable, ErrInternal:
		return notify.CodeUnavailable, ""
	case ErrThirdPartyAuthError:
		return notify.CodeRejected, " (FCM could not authenticate to APNs or the Web Push service: check the APNs key or certificate and the web credentials in the Firebase project)"
	}
	switch {
	case ownToken(e):
		return notify.CodeUnavailable, " (FCM refused the access token: the next send fetches a new one)"
	case e.Status == "PERMISSION_DENIED":
		return notify.CodeRejected, " (check fcm Config.ProjectID, that the Firebase Cloud Messaging API is enabled for it, and that the service account may send messages)"
	case e.Status == "NOT_FOUND":
		return notify.CodeRejected, " (check fcm Config.ProjectID and BaseURL)"
	case e.Status == "RESOURCE_EXHAUSTED":
		return notify.CodeRateLimited, ""
	case e.Status == "UNAVAILABLE", e.Status == "INTERNAL":
		return notify.CodeUnavailable, ""
	}
	return vendorhttp.RefusalCode(e.HTTPStatus), ""
}

// requestField names the push request's field that an FCM field path
// (a BadRequest field violation) is about, with the rule for the sender,
// or "" when it is not one of the request's.
func requestField(path string) (field, rule string) {
	p := strings.TrimPrefix(path, "message.")
	switch {
	case p == "notification.title":
		return "title", "FCM refused the title"
	case p == "notification.body":
		return "body", "FCM refused the body"
	case p == "notification.image":
		return "image", "FCM refused the image URL"
	case p == "data" || strings.HasPrefix(p, "data["), strings.HasPrefix(p, "data."):
		return "data", "FCM refused the data: a key it reserves, or a payload over its 4096 bytes"
	case p == "webpush.fcm_options.link" || p == "webpush.fcmOptions.link":
		return "link", "FCM refused the link: it must be an https URL"
	case p == "android.ttl":
		return "ttl", "FCM refused the TTL: it must be 0 to 2419200 seconds"
	}
	return "", ""
}
