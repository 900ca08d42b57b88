package vonage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// The statuses of Vonage's answer to a send, one per message part: 0 is
// success, any other a refusal with its error-text (the SMS API
// reference's error table).
const (
	StatusSuccess                  = 0
	StatusThrottled                = 1
	StatusMissingParams            = 2
	StatusInvalidParams            = 3
	StatusInvalidCredentials       = 4
	StatusInternalError            = 5
	StatusInvalidMessage           = 6
	StatusNumberBarred             = 7
	StatusPartnerAccountBarred     = 8
	StatusPartnerQuotaViolation    = 9
	StatusTooManyExistingBinds     = 10
	StatusAccountNotEnabledForHTTP = 11
	StatusMessageTooLong           = 12
	StatusInvalidSignature         = 14
	StatusInvalidSenderAddress     = 15
	StatusInvalidNetworkCode       = 22
	StatusInvalidCallbackURL       = 23
	StatusNonWhitelistedDest       = 29
	StatusSignatureAndSecret       = 32
	StatusNumberDeactivated        = 33
)

// Error is Vonage's refusal of a send: a message of its answer whose
// status is not 0, {"status": "7", "error-text": "Number barred."}. The
// *notify.Error that Send returns wraps it, so an app reaches Vonage's
// status with errors.As, to act on it without parsing text:
//
//	var ve *vonage.Error
//	if errors.As(err, &ve) && ve.Status == vonage.StatusNumberBarred { ... }
//
// Its Text is Vonage's error-text on one line, with the API secret and
// the message's OTP replaced by "[redacted]" should Vonage quote them.
type Error struct {
	// Status is Vonage's status, such as StatusThrottled (1).
	Status int
	// Text is Vonage's error-text.
	Text string
	// HTTPStatus is the HTTP status of the answer (Vonage answers its
	// refusals with 200).
	HTTPStatus int

	hint string // what the status means for the reader, when known here
}

// Error formats the error as "vonage: text (status S, HTTP H)" followed
// by what the status means when the package knows it.
func (e *Error) Error() string {
	text := e.Text
	if text == "" {
		text = "Vonage refused the message"
	}
	return fmt.Sprintf("vonage: %s (status %d, HTTP %d)%s", text, e.Status, e.HTTPStatus, e.hint)
}

// meaning is what a status means here: its notify code, the field of the
// request it names (for CodeInvalidArgument), and a hint for the reader.
type meaning struct {
	code  notify.Code
	field string
	hint  string
}

// statuses is the one table of Vonage's refusal statuses. Every one is a
// certain refusal: Vonage formed the answer and took no such part.
// Status 3 names its field by the words of its error-text (fieldOf); the
// others not here are classified by the HTTP status (vendorhttp.RefusalCode).
var statuses = map[int]meaning{
	StatusThrottled:                {notify.CodeRateLimited, "", " (sending faster than the account's throughput)"},
	StatusMissingParams:            {notify.CodeRejected, "", " (Vonage found a required parameter missing)"},
	StatusInvalidParams:            {notify.CodeRejected, "", " (Vonage found a parameter invalid)"},
	StatusInvalidCredentials:       {notify.CodeRejected, "", " (Vonage refused the credentials: check vonage Config.APIKey and APISecret)"},
	StatusInternalError:            {notify.CodeUnavailable, "", " (Vonage's internal error: the message was not taken; retried)"},
	StatusInvalidMessage:           {notify.CodeInvalidArgument, "to", " (Vonage could not route the number: an unrecognised prefix)"},
	StatusNumberBarred:             {notify.CodeRejected, "", " (the number is barred from receiving messages)"},
	StatusPartnerAccountBarred:     {notify.CodeRejected, "", " (the Vonage account is suspended)"},
	StatusPartnerQuotaViolation:    {notify.CodeUnavailable, "", " (the Vonage account's credit is too low: top it up; retried like an outage)"},
	StatusTooManyExistingBinds:     {notify.CodeRateLimited, "", " (too many connections to Vonage at once)"},
	StatusAccountNotEnabledForHTTP: {notify.CodeRejected, "", " (the Vonage account is not provisioned for the SMS API)"},
	StatusMessageTooLong:           {notify.CodeInvalidArgument, "message", " (the text is over Vonage's limit)"},
	StatusInvalidSignature:         {notify.CodeRejected, "", " (Vonage could not verify a request signature)"},
	StatusInvalidSenderAddress:     {notify.CodeInvalidArgument, "sender_id", " (the sender is not authorised for this destination: check vonage Config.From or the message's sender ID)"},
	StatusInvalidNetworkCode:       {notify.CodeRejected, "", " (an invalid network code)"},
	StatusInvalidCallbackURL:       {notify.CodeRejected, "", " (check vonage Config.Callback)"},
	StatusNonWhitelistedDest:       {notify.CodeRejected, "", " (a Vonage demo account sends only to its test numbers: add the number, or top the account up)"},
	StatusSignatureAndSecret:       {notify.CodeRejected, "", " (a signed request must not carry api_secret)"},
	StatusNumberDeactivated:        {notify.CodeRejected, "", " (the number is de-activated)"},
}

// throttleWait is the least RetryAfter of a throttled send: Vonage
// counts its throughput per second.
const throttleWait = time.Second

// answer is Vonage's answer to a send: one entry a part.
type answer struct {
	Count    json.Number `json:"message-count"`
	Messages []part      `json:"messages"`
}

// part is one message of the answer.
type part struct {
	ID        string      `json:"message-id"`
	Status    json.Number `json:"status"`
	ErrorText string      `json:"error-text"`
}

// status returns the part's status, and whether it is one: a number of
// at most three digits.
func (m *part) status() (int, bool) {
	n, err := strconv.Atoi(m.Status.String())
	return n, err == nil && n >= 0 && n <= 999
}

// refusal reports whether m is Vonage's refusal: a status other than 0
// with an error-text. A proxy's JSON without them is not Vonage's answer
// and proves nothing.
func (m *part) refusal() bool {
	n, ok := m.status()
	return ok && n != StatusSuccess && strings.TrimSpace(m.ErrorText) != ""
}

// accepted reports whether m is a part Vonage took: status 0 with a
// message-id.
func (m *part) accepted() bool {
	n, ok := m.status()
	return ok && n == StatusSuccess && ValidMessageID(m.ID)
}

// submission is what Vonage took of a send: the message-ids of its parts
// (at least one), the number of parts it reported, and the first of its
// parts it refused, if any.
type submission struct {
	ids     []string
	parts   int
	refused *part
}

// note is the Result's Note for s: "" for one part taken and none
// refused; else how many parts Vonage took, their IDs past the first,
// and how many it refused.
func (s *submission) note(secrets []string) string {
	if len(s.ids) <= 1 && s.refused == nil {
		return ""
	}
	text := fmt.Sprintf("vonage: sent as %d SMS part(s), each charged and reported on by Vonage", len(s.ids))
	if len(s.ids) > 1 {
		text += "; the parts after the first are " + strings.Join(s.ids[1:], ", ")
	}
	if s.refused != nil {
		st, _ := s.refused.status()
		text += fmt.Sprintf("; Vonage refused %d of %d parts: %s (status %d)", s.parts-len(s.ids), s.parts,
			vendorhttp.CleanText(vendorhttp.Redact(s.refused.ErrorText, secrets), 200), st)
	}
	return text
}

// ValidMessageID reports whether s has the shape of a Vonage message-id:
// 1 to 64 ASCII letters and digits (Vonage's are 16 or so hex digits,
// "0A0000001234567B").
func ValidMessageID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		default:
			return false
		}
	}
	return true
}

// decodeAnswer returns what Vonage took of a send, or the classified
// error. A part Vonage took makes the send a success, whatever it did
// with the others (the parts it took are sent and charged). Without one,
// a part that may have been taken (status 0, or none, without a
// message-id) makes the outcome unknown; else Vonage's refusal of a part
// is a certain refusal whatever the HTTP status; any other answer is not Vonage's and is classified by its HTTP
// status (a 5xx or a 2xx proves nothing: CodeOutcomeUnknown). secrets
// are kept out of the error's text.
func decodeAnswer(status int, header http.Header, raw []byte, secrets []string) (*submission, error) {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, vendorhttp.Foreign("vonage", status, header, "is not Vonage's JSON")
	}
	s := &submission{parts: len(a.Messages)}
	if n, err := strconv.Atoi(a.Count.String()); err == nil && n > s.parts && n <= 255 {
		s.parts = n
	}
	unclear := false // a part Vonage may have taken: status 0, or none, without a message-id
	for i := range a.Messages {
		switch m := &a.Messages[i]; {
		case m.accepted():
			s.ids = append(s.ids, m.ID)
		case m.refusal():
			if s.refused == nil {
				s.refused = m
			}
		default:
			if n, ok := m.status(); !ok || n == StatusSuccess {
				unclear = true
			}
		}
	}
	switch {
	case len(s.ids) > 0:
		return s, nil
	case unclear:
		// Another part's refusal proves nothing of this one: the message
		// may be out, so it is never refunded or sent again.
		return nil, &notify.Error{Code: notify.CodeOutcomeUnknown,
			Err: errors.New("vonage: a part of the answer has no refusal and no message-id: Vonage may have taken it")}
	case s.refused != nil:
		return nil, classify(status, header, s.refused, secrets)
	}
	return nil, vendorhttp.Foreign("vonage", status, header, "has no accepted message-id and no refusal of Vonage's")
}

// classify turns Vonage's refusal into a *notify.Error wrapping an
// *Error: a certain refusal, by the statuses table.
func classify(status int, header http.Header, m *part, secrets []string) *notify.Error {
	st, _ := m.status()
	mean, known := statuses[st]
	if !known {
		mean = meaning{code: vendorhttp.RefusalCode(status)}
	}
	text := vendorhttp.CleanText(vendorhttp.Redact(m.ErrorText, secrets), 200)
	if st == StatusInvalidParams {
		if f := fieldOf(text); f != "" {
			mean.code, mean.field = notify.CodeInvalidArgument, f
		}
	}
	e := &notify.Error{Code: mean.code, Err: &Error{Status: st, Text: text, HTTPStatus: status, hint: mean.hint}}
	if mean.field != "" {
		e.Fields = record.FieldErrors{{Field: mean.field, Message: "Vonage: " + text}}
	}
	if mean.code == notify.CodeRateLimited {
		e.RetryAfter = max(vendorhttp.RetryAfter(header), throttleWait)
	}
	return e
}

// fieldWords name the request's field that an error-text of status 3
// (invalid parameters) is about, by its words in lower case.
var fieldWords = map[string]string{
	"to": "to", "msisdn": "to", "destination": "to", "recipient": "to",
	"from": "sender_id", "sender": "sender_id", "senderid": "sender_id",
	"text": "message", "message": "message", "body": "message", "type": "message", "unicode": "message",
	"entity": "dlt_entity_id", "content": "dlt_template_id",
}

// fieldOf returns the field an error-text names, or "": a parameter's
// word right after "invalid", "missing" or "bad", or right before
// "param" or "parameter" ("Invalid to param", "Invalid entity-id"). A
// word anywhere else is prose ("Unable to parse ...") and names nothing.
func fieldOf(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	for i, w := range words {
		var named string
		switch w {
		case "invalid", "missing", "bad":
			if i+1 < len(words) {
				named = words[i+1]
			}
		case "param", "parameter", "parameters":
			if i > 0 {
				named = words[i-1]
			}
		}
		if f := fieldWords[named]; f != "" {
			return f
		}
	}
	return ""
}
