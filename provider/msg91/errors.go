package msg91

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// Error is MSG91's own error answer to a send, {"type": "error",
// "message": ..., "code": ...}. The *notify.Error that Send returns wraps
// it, so an app reaches MSG91's code with errors.As, to act on it without
// parsing text:
//
//	var me *msg91.Error
//	if errors.As(err, &me) && me.Code == "418" { ... }
//
// Its Message is MSG91's text as one printable line, with the auth key
// and the message's OTP replaced by "[redacted]" should MSG91 quote them.
type Error struct {
	// HTTPStatus is the status of MSG91's answer: it answers errors with
	// 200 as well as 4xx and 5xx.
	HTTPStatus int
	// Code is MSG91's error code as it sent it, a JSON string or number
	// ("418", "301"); "" when it sent none.
	Code string
	// Message is MSG91's message.
	Message string

	hint string // what the error means for the reader, when it is known here
}

// Error formats the error as "msg91: message (code C, HTTP S)", followed
// by a hint when the code or message is one the package knows.
func (e *Error) Error() string {
	msg, code := e.Message, ""
	if msg == "" {
		msg = "MSG91 refused the message"
	}
	if e.Code != "" {
		code = "code " + e.Code + ", "
	}
	return fmt.Sprintf("msg91: %s (%sHTTP %d)%s", msg, code, e.HTTPStatus, e.hint)
}

// answer is MSG91's answer on the wire: message is the request ID of a
// success and the text of an error; code is a string or a number.
type answer struct {
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
	Code    json.RawMessage `json:"code"`
}

// maxRequestID bounds the request ID kept from a success; MSG91's are 24
// characters.
const maxRequestID = 128

// decodeAnswer reads MSG91's answer to a send and returns the request ID
// of a success, or the classified error. MSG91's own error body ("type":
// "error") is a certain refusal whatever the HTTP status; only an answer
// that is not MSG91's leaves the outcome unknown. secrets are removed from
// MSG91's text.
func decodeAnswer(status int, header http.Header, raw []byte, secrets []string) (string, error) {
	var out answer
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", vendorhttp.Foreign("msg91", status, header, "is not MSG91's JSON")
	}
	switch {
	case strings.EqualFold(out.Type, "success"):
		var id string
		if json.Unmarshal(out.Message, &id) != nil || strings.TrimSpace(id) == "" {
			return "", vendorhttp.Unknownf("msg91", "HTTP %d: MSG91 reported success without a request ID", status)
		}
		id = strings.TrimSpace(id)
		if len(id) > maxRequestID || strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return "", vendorhttp.Unknownf("msg91", "HTTP %d: MSG91 reported success with a request ID that is not one (%d bytes)", status, len(id))
		}
		return id, nil
	case strings.EqualFold(out.Type, "error"):
		return "", vendorError(status, header, codeOf(out.Code), textOf(out.Message), secrets)
	}
	return "", vendorhttp.Foreign("msg91", status, header, `has no "type" of success or error`)
}

// decodeBalance reads MSG91's answer to the balance call: on a 2xx, a
// plain decimal number (or one in a JSON string), the wallet's balance in
// rupees, whose digits past the paisa are cut. Anything else is the
// classified error: MSG91's JSON error body ({"type": "error"}, or its
// older {"msgType": "error", "msg"}), or on a 2xx a line of text, which is
// how its older APIs answer an error ("Invalid authkey"), is MSG91's
// refusal; any other answer is classified by its HTTP status. key is
// removed from MSG91's text.
func decodeBalance(status int, header http.Header, raw []byte, key string) (notify.Money, error) {
	text := strings.TrimSpace(string(raw))
	ok := status >= 200 && status <= 299
	if ok {
		if s, err := strconv.Unquote(text); err == nil {
			text = strings.TrimSpace(s)
		}
		if m, err := vendorhttp.Amount(text, record.INR()); err == nil {
			return m, nil
		}
	}
	var out struct {
		answer
		MsgType string          `json:"msgType"`
		Msg     json.RawMessage `json:"msg"`
	}
	if json.Unmarshal(raw, &out) == nil {
		if out.Type == "" {
			out.Type, out.Message = out.MsgType, out.Msg
		}
		if strings.EqualFold(out.Type, "error") {
			return notify.Money{}, vendorError(status, header, codeOf(out.Code), textOf(out.Message), []string{key})
		}
	} else if ok && text != "" && len(text) <= 200 && !strings.ContainsAny(text, "<>\n") {
		return notify.Money{}, vendorError(status, header, "", text, []string{key})
	}
	return notify.Money{}, vendorhttp.Foreign("msg91", status, header, "is not a balance")
}

// codeOf reads MSG91's code, a JSON string or number; "" for anything else.
func codeOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return vendorhttp.CleanText(s, 16)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return vendorhttp.CleanText(n.String(), 16)
	}
	return ""
}

// textOf reads MSG91's message, a string (or, should it send one, any
// other JSON value, as its text).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// duplicateWait is how long MSG91 discards a repeated request (code 311:
// "the same request was generated twice within 10 seconds").
const duplicateWait = 10 * time.Second

// The hints for the reader of an error.
const (
	hintKey      = " (MSG91 refused the auth key: check msg91 Config.AuthKey)"
	hintIP       = " (MSG91 refused this server's IP address: whitelist it for the auth key in the MSG91 panel, or turn its IP security off)"
	hintBalance  = " (the MSG91 account's balance is too low: top it up; retried like an outage)"
	hintAccount  = " (the MSG91 account cannot send: contact MSG91)"
	hintTemplate = " (check that the MSG91 template ID is right and that the template is approved in the MSG91 panel, with its DLT template ID)"
	hintDLT      = " (the DLT registration of the template, sender or entity: check the template in the MSG91 panel against DLT)"
	hintNumber   = " (MSG91 refused the number)"
	hintSender   = " (MSG91 refused the sender ID of the template)"
	hintRequest  = " (MSG91 found the request incomplete)"
	hintInternal = " (MSG91's own error: the message was not taken; retried)"
)

// classified is what a known code or message means.
type classified struct {
	code notify.Code
	hint string
}

// byCode is MSG91's documented error codes (its error-code table of the
// SMS APIs, https://api.msg91.com/apidoc/textsms/send-sms-v1.php and the
// codes list of its help pages) and what they mean here.
var byCode = map[string]classified{
	"106": {notify.CodeRejected, hintKey}, // Missing Authentication Key
	"207": {notify.CodeRejected, hintKey}, // Invalid authentication key
	"401": {notify.CodeRejected, hintKey}, // AuthenticationFailure
	"208": {notify.CodeRejected, hintIP},  // IP is blacklisted
	"418": {notify.CodeRejected, hintIP},  // IP is not whitelisted
	"301": {notify.CodeUnavailable, hintBalance},
	"302": {notify.CodeRejected, hintAccount}, // expired user account
	"303": {notify.CodeRejected, hintAccount}, // banned user account
	"505": {notify.CodeRejected, hintAccount}, // demo account
	"306": {notify.CodeUnavailable, " (MSG91 says the route is closed at this hour)"},
	"311": {notify.CodeRateLimited, " (MSG91 discards a request repeated within 10 seconds)"},
	"506": {notify.CodeRateLimited, " (MSG91's limit of small campaigns a day)"},
	"429": {notify.CodeRateLimited, ""},
	"202": {notify.CodeRejected, hintNumber},
	"203": {notify.CodeRejected, hintSender},
	"101": {notify.CodeRejected, hintRequest}, // missing mobile
	"102": {notify.CodeRejected, hintRequest}, // missing message
	"103": {notify.CodeRejected, hintRequest}, // missing sender ID
	"107": {notify.CodeRejected, hintRequest}, // missing route
	"209": {notify.CodeRejected, hintRequest}, // no default route
	"210": {notify.CodeRejected, hintRequest}, // route not determined
	"310": {notify.CodeRejected, " (the SMS is too long for MSG91)"},
	"001": {notify.CodeUnavailable, hintInternal}, // unable to connect database
	"002": {notify.CodeUnavailable, hintInternal}, // unable to select database
	"601": {notify.CodeUnavailable, hintInternal}, // internal error
}

// byWords classifies an error whose code is none of byCode's by words of
// its message (in lower case), the first match winning: the flow API
// answers many errors with a message and no code.
var byWords = []struct {
	words []string
	classified
}{
	{[]string{"whitelist", "white list"}, classified{notify.CodeRejected, hintIP}},
	{[]string{"authkey", "auth key", "authentication"}, classified{notify.CodeRejected, hintKey}},
	{[]string{"balance"}, classified{notify.CodeUnavailable, hintBalance}},
	{[]string{"too many", "rate limit", "throttl"}, classified{notify.CodeRateLimited, ""}},
	{[]string{"dlt"}, classified{notify.CodeRejected, hintDLT}},
	{[]string{"template", "flow"}, classified{notify.CodeRejected, hintTemplate}},
	{[]string{"ndnc", "dnd", "blocked", "blacklist"}, classified{notify.CodeRejected, hintNumber}},
	{[]string{"mobile", "number"}, classified{notify.CodeRejected, hintNumber}},
}

// vendorError classifies MSG91's own error answer. MSG91 formed it and
// took nothing, so it is a certain refusal whatever the HTTP status: a
// code or message known here says which; any other is temporary on an
// HTTP 5xx (CodeUnavailable), a rate limit on a 429 and CodeRejected
// otherwise.
func vendorError(status int, header http.Header, code, msg string, secrets []string) error {
	c, ok := byCode[code]
	if !ok {
		lower := strings.ToLower(msg)
	words:
		for _, w := range byWords {
			for _, word := range w.words {
				if strings.Contains(lower, word) {
					c, ok = w.classified, true
					break words
				}
			}
		}
	}
	if !ok {
		c = classified{vendorhttp.RefusalCode(status), ""}
	}
	e := &notify.Error{Code: c.code, Err: &Error{HTTPStatus: status, Code: code, Message: vendorhttp.CleanText(vendorhttp.Redact(msg, secrets), 200), hint: c.hint}}
	if c.code == notify.CodeRateLimited {
		e.RetryAfter = vendorhttp.RetryAfter(header)
		if code == "311" && e.RetryAfter < duplicateWait {
			e.RetryAfter = duplicateWait
		}
	}
	return e
}
