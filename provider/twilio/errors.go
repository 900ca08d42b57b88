package twilio

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// Error is Twilio's error answer to a send,
//
//	{"code": 21211, "message": "The 'To' number +1555 is not a valid phone number.",
//	 "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}
//
// The *notify.Error that Send returns wraps it, so an app reaches Twilio's
// code with errors.As, to act on it without parsing text:
//
//	var te *twilio.Error
//	if errors.As(err, &te) && te.Code == 21610 { ... } // the recipient replied STOP
//
// Its fields hold Twilio's text with the message's OTP replaced by
// "[otp]"; credentials are never in them.
type Error struct {
	// Code is Twilio's error code, such as 21211
	// (https://www.twilio.com/docs/api/errors).
	Code int
	// Message is Twilio's message, on one line.
	Message string
	// MoreInfo is the link Twilio gives to the code's documentation.
	MoreInfo string
	// Status is the HTTP status of the answer.
	Status int
}

// Error formats the error as "twilio: message (code C, HTTP S; more_info)"
// followed by a hint when the code is known here.
func (e *Error) Error() string {
	more := ""
	if e.MoreInfo != "" {
		more = "; " + e.MoreInfo
	}
	_, hint := codeOf(e.Status, e.Code)
	return fmt.Sprintf("twilio: %s (code %d, HTTP %d%s)%s", e.Message, e.Code, e.Status, more, hint)
}

// apiAnswer is every field of Twilio's answers the provider reads: a
// Message resource on success, an error object otherwise. Status is a
// string ("queued") in the one and a number (400) in the other.
type apiAnswer struct {
	SID      string          `json:"sid"`
	Status   json.RawMessage `json:"status"`
	Code     int             `json:"code"`
	Message  string          `json:"message"`
	MoreInfo string          `json:"more_info"`
}

// vendorError reports whether a is Twilio's error object: a code of
// Twilio's five-digit form and a message. A proxy's JSON without them is
// not Twilio's answer and proves nothing.
func (a *apiAnswer) vendorError() bool {
	return a.Code >= 10000 && a.Code <= 99999 && strings.TrimSpace(a.Message) != ""
}

// ValidMessageSID reports whether s is the SID of a Message resource:
// "SM" (or "MM", for MMS) and 32 hex digits.
func ValidMessageSID(s string) bool { return validSID(s, "SM") || validSID(s, "MM") }

// decodeAnswer returns the message SID of a successful answer, or the
// classified error (readAnswer's, or a success without a message SID).
// otp, when set, is kept out of the error's text.
func decodeAnswer(status int, header http.Header, raw []byte, otp string) (string, error) {
	a, err := readAnswer(status, header, raw, otp)
	if err != nil {
		return "", err
	}
	if !ValidMessageSID(a.SID) {
		return "", vendorhttp.Foreign("twilio", status, header, "has no message sid")
	}
	return a.SID, nil
}

// readAnswer returns a 2xx answer of Twilio's JSON that is not its error
// object, or the classified error. Twilio's own error object is a certain
// refusal whatever the HTTP status; any other answer is classified by its
// HTTP status (a 5xx or a 2xx proves nothing: CodeOutcomeUnknown). otp,
// when set, is kept out of the error's text.
func readAnswer(status int, header http.Header, raw []byte, otp string) (*apiAnswer, error) {
	var a apiAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, vendorhttp.Foreign("twilio", status, header, "is not Twilio's JSON")
	}
	switch {
	case a.vendorError():
		return nil, classify(status, header, &a, otp)
	case status < 200 || status > 299:
		return nil, vendorhttp.Foreign("twilio", status, header, "is not Twilio's error object")
	}
	return &a, nil
}

// decodeAccount reads Twilio's answer to the fetch of the account: nil
// when it is the account with "status" "active", else the classified
// error (refused says what a 401 or 403 means).
func decodeAccount(status int, header http.Header, raw []byte) error {
	a, err := readAnswer(status, header, raw, "")
	if err != nil {
		return refused(status, err)
	}
	var st string
	if json.Unmarshal(a.Status, &st) != nil || st == "" {
		return vendorhttp.Foreign("twilio", status, header, `has no account "status"`)
	}
	switch st {
	case "active":
		return nil
	case "suspended":
		return notify.Errorf(notify.CodeRejected, "twilio: the Twilio account is suspended: it sends nothing until it is reactivated (a balance at zero suspends it: add funds in the Twilio Console)")
	case "closed":
		return notify.Errorf(notify.CodeRejected, "twilio: the Twilio account is closed: it can never send again (check twilio Config.AccountSID)")
	}
	if !statusWord(st) {
		// Not a status: nothing of it is repeated, since it could be anything.
		return notify.Errorf(notify.CodeRejected, "twilio: the Twilio account's status is not active, nor a status known here")
	}
	return notify.Errorf(notify.CodeRejected, "twilio: the Twilio account's status is %q, not active", st)
}

// statusWord reports whether s has the form of a status of Twilio's: 1 to
// 20 lower-case letters, '-' or '_'.
func statusWord(s string) bool {
	return len(s) <= 20 && strings.IndexFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && r != '-' && r != '_' }) < 0
}

// refused adds to err, the error of an answer of HTTP 401 or 403, that
// Twilio refused the credentials, unless its hint (20003's) says so
// already, and makes it CodeRejected. Other errors are returned as they
// are.
func refused(status int, err error) error {
	var te *Error
	if err == nil || (status != http.StatusUnauthorized && status != http.StatusForbidden) ||
		(errors.As(err, &te) && te.Code == codeAuthenticate) {
		return err
	}
	return &notify.Error{Code: notify.CodeRejected, Err: fmt.Errorf("%w%s", err, hintCredentials)}
}

// classify turns Twilio's error object into a *notify.Error wrapping an
// *Error. Every one is a certain refusal: Twilio formed the answer and
// created no message.
func classify(status int, header http.Header, a *apiAnswer, otp string) *notify.Error {
	code, _ := codeOf(status, a.Code)
	e := &notify.Error{Code: code, Err: &Error{Code: a.Code, Message: clean(a.Message, otp),
		MoreInfo: clean(a.MoreInfo, otp), Status: status}}
	if code == notify.CodeRateLimited {
		e.RetryAfter = vendorhttp.RetryAfter(header)
	}
	return e
}

// codeAuthenticate is Twilio's error code of refused credentials
// ("Authenticate", HTTP 401).
const codeAuthenticate = 20003

// hintCredentials is what refused credentials mean for the reader.
const hintCredentials = " (Twilio refused the credentials: check twilio Config.AccountSID and AuthToken, or APIKeySID and APIKeySecret)"

// codeOf maps Twilio's error code (and the HTTP status, for codes not
// known here) to a notify code and a hint for the reader.
func codeOf(status, code int) (notify.Code, string) {
	switch code {
	case 20429:
		// Too many concurrent requests; never processed, safe to retry.
		return notify.CodeRateLimited, ""
	case 21611:
		return notify.CodeRateLimited, " (the From number's queue is full: send more slowly, or through a Messaging Service)"
	case 20500, 20503:
		// Twilio's own internal error or outage answer: not created.
		return notify.CodeUnavailable, ""
	case codeAuthenticate:
		return notify.CodeRejected, hintCredentials
	case 10001, 20005:
		return notify.CodeRejected, " (the Twilio account is not active)"
	case 20008:
		return notify.CodeRejected, " (test credentials cannot send messages: use the live AccountSID and AuthToken)"
	case 20404:
		return notify.CodeRejected, " (not found: check twilio Config.AccountSID, MessagingServiceSID and BaseURL)"
	case 21211:
		return notify.CodeRejected, " (the To number is not a valid phone number)"
	case 21614:
		return notify.CodeRejected, " (the To number is not a mobile number)"
	case 21612:
		return notify.CodeRejected, " (the To number cannot be reached by SMS from this sender)"
	case 21408:
		return notify.CodeRejected, " (SMS to the To number's country is not enabled: see the account's Messaging Geographic Permissions)"
	case 21610:
		return notify.CodeRejected, " (the recipient replied STOP: nothing can be sent to them from this sender until they reply START)"
	case 21608:
		return notify.CodeRejected, " (a trial account sends only to verified numbers)"
	case 21606, 21212, 21660:
		return notify.CodeRejected, " (the From is not a message-capable sender of this account for this destination: check twilio Config.From)"
	case 21603:
		return notify.CodeRejected, " (From or MessagingServiceSid is required)"
	case 21604:
		return notify.CodeRejected, " (To is required)"
	case 21602:
		return notify.CodeRejected, " (the message body is empty)"
	case 21617:
		return notify.CodeRejected, " (the body is over 1,600 characters)"
	}
	// Codes not known here, by the status Twilio gave them.
	return vendorhttp.RefusalCode(status), ""
}

// clean makes Twilio's text safe to put in an error: the OTP replaced,
// one line without control characters, clipped.
func clean(s, otp string) string {
	if otp != "" {
		s = strings.ReplaceAll(s, otp, "[otp]")
	}
	return vendorhttp.CleanText(s, 0)
}
