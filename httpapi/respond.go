package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/errtext"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify"
)

// Codes of errors that only the HTTP layer produces; they appear in error
// bodies beside the notify codes.
const (
	// CodeMethodNotAllowed (405): the path exists but not for this method;
	// the Allow header lists the methods it takes.
	CodeMethodNotAllowed notify.Code = "method_not_allowed"
	// CodeRequestTooLarge (413): the body is over the limit (1 MiB by default).
	CodeRequestTooLarge notify.Code = "request_too_large"
	// CodeUnsupportedMediaType (415): the body is not declared as
	// application/json.
	CodeUnsupportedMediaType notify.Code = "unsupported_media_type"
	// CodeHeadersTooLarge (431): the request line and headers are over
	// the limit (WithMaxHeaderBytes, 64 KiB by default).
	CodeHeadersTooLarge notify.Code = "request_headers_too_large"
)

// StatusOf returns the HTTP status the API answers for an error code (the
// table is in docs/api.md). Codes it does not know are 500.
func StatusOf(code notify.Code) int {
	switch code {
	case notify.CodeInvalidArgument:
		return http.StatusBadRequest
	case notify.CodeUnauthenticated:
		return http.StatusUnauthorized
	case notify.CodeInsufficientFunds:
		return http.StatusPaymentRequired
	case notify.CodePermissionDenied:
		return http.StatusForbidden
	case notify.CodeNotFound:
		return http.StatusNotFound
	case notify.CodeConflict:
		return http.StatusConflict
	case notify.CodeRateLimited:
		return http.StatusTooManyRequests
	case notify.CodeRejected:
		return http.StatusBadGateway
	case notify.CodeSuppressed, notify.CodeDeclined:
		// The request is well formed but the recipient may not get it:
		// 422, as the e-mail APIs answer an inactive recipient.
		return http.StatusUnprocessableEntity
	case notify.CodeUnavailable, notify.CodeCanceled:
		return http.StatusServiceUnavailable
	case notify.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case notify.CodeOutcomeUnknown:
		// Not an error of the request: it was taken and charged, and its
		// fate is with the vendor. 202 says "accepted for processing".
		return http.StatusAccepted
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeHeadersTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	}
	return http.StatusInternalServerError
}

// statusClientClosed is logged (never seen by anyone) when the client went
// away before its send finished, as nginx does.
const statusClientClosed = 499

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does; <, > and & are escaped so that bodies are safe to
// embed in HTML.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendKey appends ,"key": (the comma only when b does not end an opening brace).
func appendKey(b []byte, key string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendField(b []byte, key, val string) []byte {
	return appendString(appendKey(b, key), val)
}

func appendOptField(b []byte, key, val string) []byte {
	if val == "" {
		return b
	}
	return appendField(b, key, val)
}

func appendCurrency(b []byte, c record.Currency) []byte {
	b = appendKey(b, "currency")
	b = append(b, '{')
	b = appendField(b, "code", c.Code)
	b = appendField(b, "symbol", c.Symbol)
	b = appendKey(b, "exponent")
	b = appendInt(b, int64(c.Exponent))
	return append(b, '}')
}

// specNumber is how answers show a number: an Indian one in the
// spec's 10-digit form, as callers have always read it, any other in
// E.164 form.
func specNumber(to string) string {
	if len(to) == 13 && strings.HasPrefix(to, "+91") {
		return to[3:]
	}
	return to
}

// appendReceiptFields appends the fields of a receipt: identity, provider,
// units, cost, and (when metered) the balance after. id is the request's
// ID, for the messages of failed legs.
func appendReceiptFields(b []byte, r *notify.Receipt, leg bool, id string) []byte {
	b = appendOptField(b, "message_id", r.MessageID)
	b = appendField(b, "channel", string(r.Kind))
	if !leg {
		b = appendOptField(b, "to", specNumber(r.To))
		b = appendOptField(b, "country", r.Country)
	}
	b = appendField(b, "status", string(r.Status))
	if !r.SendAt.IsZero() {
		b = appendField(b, "send_at", r.SendAt.UTC().Format(time.RFC3339Nano))
	}
	b = appendOptField(b, "provider", r.Provider)
	b = appendOptField(b, "provider_message_id", r.ProviderMessageID)
	b = appendOptField(b, "gateway", string(r.Gateway))
	if r.Units > 0 {
		b = appendKey(b, "units")
		b = appendInt(b, int64(r.Units))
	}
	if r.Metered {
		b = appendField(b, "cost", r.Cost.Decimal())
		b = appendKey(b, "cost_minor")
		b = appendInt(b, r.Cost.Minor)
		if !leg {
			b = appendField(b, "balance", r.Balance.Decimal())
			b = appendKey(b, "balance_minor")
			b = appendInt(b, r.Balance.Minor)
			cur := r.Balance.Currency
			if cur.Code == "" {
				cur = r.Cost.Currency
			}
			b = appendCurrency(b, cur)
		}
	}
	b = appendOptField(b, "note", errtext.PublicNote(r.Note))
	b = appendLegs(b, r, id)
	return b
}

// appendLegs appends the legs of a dual-channel OTP receipt, if any.
func appendLegs(b []byte, r *notify.Receipt, id string) []byte {
	if len(r.Legs) == 0 {
		return b
	}
	b = appendKey(b, "legs")
	b = append(b, '[')
	for i, l := range r.Legs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendKey(b, "success")
		b = strconv.AppendBool(b, l.Status == record.StateSent)
		leg := *l
		leg.Metered = r.Metered
		leg.Legs = nil
		b = appendReceiptFields(b, &leg, true, id)
		if leg.Status != record.StateSent && leg.ErrorCode != "" {
			b = appendKey(b, "error")
			b = append(b, '{')
			b = appendField(b, "code", string(leg.ErrorCode))
			b = appendField(b, "message", legMessage(leg.ErrorCode, leg.Error, id))
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// legMessage is the message of a failed leg, whose error is known by its
// code and text only: its cause, when errtext.ShownText allows it, else
// the plain sentence of its code and the request ID (the text is logged,
// see errorDetail).
func legMessage(code notify.Code, s, id string) string {
	if cause, ok := errtext.ShownText(code, s); ok {
		return cause
	}
	provider, cause := errtext.SplitText(code, s)
	store := ""
	if name, _, ok := strings.Cut(cause, " store: "); ok && !strings.Contains(name, " ") {
		store = name
	}
	return plainSentence(code, provider, store, false) + requestRef(id)
}

// recordError is the error text a message record is answered with (GET
// /messages/{id}, and the admin API's message lists): its own words when
// they are the caller's to act on, else the plain sentence of its code,
// as in error answers (errtext.ShownText).
func recordError(code notify.Code, s string) string {
	if s == "" {
		return ""
	}
	if _, ok := errtext.ShownText(code, s); !ok && code == notify.CodeOutcomeUnknown {
		return "the vendor may have the message (its answer was lost or unclear)" // not "this answer"'s advice
	}
	return legMessage(code, s, "")
}

// appendSuccess appends the body of a successful send; id is the
// request's ID.
func appendSuccess(b []byte, r *notify.Receipt, id string) []byte {
	b = append(b, `{"success":true`...)
	b = appendReceiptFields(b, r, false, id)
	return append(b, '}', '\n')
}

// ownCodes are the codes only this adapter makes, in its own words.
var ownCodes = [...]notify.Code{CodeMethodNotAllowed, CodeRequestTooLarge, CodeUnsupportedMediaType, CodeHeadersTooLarge}

// shown reports whether an error answer may give err's own words: when
// they tell the client what it did wrong (errtext.Shown, the rule the
// admin API follows too). Every other error (internal, unavailable,
// rejected, outcome_unknown, deadline_exceeded, canceled, and any error
// of a store or a provider, whose words name hosts, ports, database users
// and vendor accounts) is answered with a plain sentence and the request
// ID, and logged in full (errorDetail).
func shown(err error) bool { return errtext.Shown(err, ownCodes[:]...) }

// errorMessage is the message of an error body: for an error the client
// is to act on (show, from shown), the cause without the operation
// prefix, field rules listed; for any other, a plain sentence, which
// appendError follows with the request ID (the details are in the log
// under that ID).
func errorMessage(err error, show bool) string {
	var e *notify.Error
	if !show || !errors.As(err, &e) {
		return plainMessage(err)
	}
	var sb strings.Builder
	if e.Err != nil {
		sb.WriteString(e.Err.Error())
	} else if len(e.Fields) == 0 {
		sb.WriteString(defaultMessage(e.Code))
	}
	for i, f := range e.Fields {
		switch {
		case i == 0 && e.Err == nil:
			sb.WriteString("invalid request: ")
		case i == 0:
			sb.WriteString(": ")
		default:
			sb.WriteString("; ")
		}
		sb.WriteString(f.Field)
		sb.WriteString(" ")
		sb.WriteString(f.Message)
	}
	return sb.String()
}

// requestRef is what follows a plain sentence: the request ID, under
// which the log has the details.
func requestRef(id string) string {
	if id == "" {
		return ""
	}
	return " (request " + id + ")"
}

// plainMessage is the sentence of an error whose own words are not shown.
func plainMessage(err error) string {
	store := ""
	if se := storeCause(err); se != nil {
		store = se.Store
	}
	var e *notify.Error
	bug := errors.As(err, &e) && internalCause(e)
	return plainSentence(notify.CodeOf(err), providerOf(err), store, bug)
}

// plainSentence says what failed in the service's terms (which store,
// which provider: names the answers show anyway) and what the client may
// do, never how. bug is an outcome_unknown caused by an Internal error.
func plainSentence(code notify.Code, provider, store string, bug bool) string {
	if store != "" && code != notify.CodeOutcomeUnknown && code != notify.CodeCanceled {
		return "the gateway's " + store + " store is failing; nothing was sent, try again later"
	}
	who := "the provider"
	if provider != "" {
		who = "provider " + provider
	}
	switch code {
	case notify.CodeUnavailable:
		if provider == "" {
			return "the gateway cannot send this message now (its channel or provider is unavailable or not configured); nothing was sent, try again later"
		}
		return who + " is unavailable; nothing was sent, try again later"
	case notify.CodeRejected:
		return who + " refused the message; it was not sent and any charge was refunded"
	case notify.CodeOutcomeUnknown:
		msg := unknownMessage
		if bug {
			msg += "; " + who + " failed in an unexpected way after it may have sent the message"
		}
		return msg
	case notify.CodeDeadlineExceeded:
		return "the deadline passed before the message was sent; any charge was refunded"
	case notify.CodeCanceled:
		return "the request was canceled"
	}
	if errtext.CallersFault(code) {
		if provider != "" {
			return who + ": " + defaultMessage(code)
		}
		return defaultMessage(code)
	}
	return "internal error"
}

// providerOf returns the provider an error names, or "".
func providerOf(err error) string {
	for c := err; c != nil; c = errors.Unwrap(c) {
		if e, ok := c.(*notify.Error); ok && e.Provider != "" {
			return e.Provider
		}
	}
	return ""
}

// storeCause returns the StoreError behind err, or nil.
func storeCause(err error) *notify.StoreError {
	var se *notify.StoreError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// internalCause reports whether e wraps an Internal *notify.Error, such as
// the panicking provider behind an outcome_unknown.
func internalCause(e *notify.Error) bool {
	var inner *notify.Error
	return errors.As(e.Err, &inner) && inner.Code == notify.CodeInternal
}

// errorDetail is what the log gets of what an answer does not show: err,
// when its words are not shown; a note's store and vendor errors; the
// errors of legs that are not shown. "" when the answer shows everything.
func errorDetail(err error, r *notify.Receipt) string {
	var parts []string
	if err != nil && !shown(err) {
		parts = append(parts, err.Error())
	}
	if r != nil {
		if r.Note != errtext.PublicNote(r.Note) {
			parts = append(parts, "note: "+r.Note)
		}
		for _, l := range r.Legs {
			if l.Status != record.StateSent && l.Error != "" {
				if _, ok := errtext.ShownText(l.ErrorCode, l.Error); !ok {
					parts = append(parts, "leg "+string(l.Kind)+": "+l.Error)
				}
			}
			if l.Note != errtext.PublicNote(l.Note) {
				parts = append(parts, "leg "+string(l.Kind)+" note: "+l.Note)
			}
		}
	}
	return strings.Join(parts, "; ")
}

func defaultMessage(c notify.Code) string {
	switch c {
	case notify.CodeUnauthenticated:
		return "missing or invalid API key"
	case notify.CodePermissionDenied:
		return "the account may not do this"
	case notify.CodeNotFound:
		return "not found"
	case notify.CodeInsufficientFunds:
		return "the wallet balance is too low for this message"
	case notify.CodeRateLimited:
		return "too many requests"
	case notify.CodeConflict:
		return "the idempotency key was used with another request"
	case notify.CodeInvalidArgument:
		return "the request is not valid"
	}
	return string(c)
}

// appendError appends an error body. r, when not nil, is the failed
// receipt: its message ID and legs are included. id is the request's ID,
// which the message of an error not shown in its own words ends with.
func appendError(b []byte, err error, r *notify.Receipt, id string) []byte {
	b = append(b, `{"success":false`...)
	unknown := r != nil && r.Status == record.StateUnknown
	switch {
	case unknown:
		// The whole receipt: the message exists, and its cost stays charged.
		b = appendReceiptFields(b, r, false, id)
	case r != nil:
		b = appendOptField(b, "message_id", r.MessageID)
		if r.Kind != "" {
			b = appendField(b, "channel", string(r.Kind))
		}
		if r.Status != "" {
			b = appendField(b, "status", string(r.Status))
		}
	}
	b = appendErrorObject(b, err, id)
	if r != nil && !unknown {
		b = appendLegs(b, r, id)
	}
	return append(b, '}', '\n')
}

// appendErrorObject appends the "error" member of an error body: code,
// message, the bad fields, the wait of a rate limit and the fraud guard's
// rule of a refusal (verify.Refusal).
func appendErrorObject(b []byte, err error, id string) []byte {
	code := notify.CodeOf(err)
	b = appendKey(b, "error")
	b = append(b, '{')
	b = appendField(b, "code", string(code))
	show := shown(err)
	msg := errorMessage(err, show)
	if !show {
		msg += requestRef(id)
	}
	b = appendField(b, "message", msg)
	var e *notify.Error
	if show && errors.As(err, &e) && len(e.Fields) > 0 {
		b = appendKey(b, "fields")
		b = append(b, '{')
		// A field named twice gets its rules joined: JSON objects should
		// not repeat a key.
		for i, f := range e.Fields {
			dup := false
			for _, g := range e.Fields[:i] {
				if g.Field == f.Field {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			msg := f.Message
			for _, g := range e.Fields[i+1:] {
				if g.Field == f.Field {
					msg += "; " + g.Message
				}
			}
			b = appendField(b, f.Field, msg)
		}
		b = append(b, '}')
	}
	if e != nil && e.RetryAfter > 0 {
		b = appendKey(b, "retry_after_seconds")
		b = appendInt(b, retrySeconds(e.RetryAfter))
	}
	var refusal *verify.Refusal
	if errors.As(err, &refusal) && refusal.Rule != "" {
		b = appendField(b, "rule", string(refusal.Rule))
	}
	return append(b, '}')
}

// unknownMessage is the message of an outcome_unknown answer.
const unknownMessage = "the vendor may have the message (its answer was lost or unclear): " +
	"it stays charged and is not retried, and a repeat with the same Idempotency-Key is safe " +
	"and returns this answer"

// retrySeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After needs.
func retrySeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// appendBalance appends the body of GET /balance.
func appendBalance(b []byte, bal record.Balance) []byte {
	b = append(b, `{"success":true,"data":{`...)
	b = appendField(b, "account", bal.Account)
	b = appendField(b, "name", bal.Name)
	b = appendField(b, "balance", bal.Available.Decimal())
	b = appendKey(b, "balance_minor")
	b = appendInt(b, bal.Available.Minor)
	b = appendCurrency(b, bal.Available.Currency)
	return append(b, '}', '}', '\n')
}
