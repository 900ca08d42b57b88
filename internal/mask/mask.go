// Package mask holds the rule that finds one-time codes in a message's
// content, so that every place that shows content (the logging provider,
// the development outbox, the gateway's SMTP log) hides codes alike: the
// code a message declares (Declared: an SMS's, a chat message's or an
// e-mail's OTP) wherever it appears, whatever its length, and runs of 4
// to 8 digits where a code may hide undeclared. The logs hide such runs
// whenever Digits says so; the outbox, a development page, only in
// messages that carry a code (Envelope.CarriesOTP).
package mask

import (
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
)

// Bounds of a run of digits taken for a one-time code: the codes of SMS
// and chat are 4 to 8 digits. Longer runs, such as phone numbers, are not
// taken for codes; a longer code (e-mail takes up to 10 digits) is hidden
// because its message declares it (Declared).
const (
	MinCodeDigits = 4
	MaxCodeDigits = 8
)

// Declared returns the one-time code env's message declares: the OTP of
// an sms.Message, a chat.Message or an email.Message, or "" when it
// declares none (or env has no content of these channels).
func Declared(env *notify.Envelope) string {
	if env == nil {
		return ""
	}
	switch m := env.Content.(type) {
	case *sms.Message:
		if m != nil {
			return m.OTP
		}
	case *chat.Message:
		if m != nil {
			return m.OTP
		}
	case *email.Message:
		if m != nil {
			return m.OTP
		}
	}
	return ""
}

// Digits reports whether every run of 4 to 8 digits in env's content is
// to be hidden as a possible one-time code, in every field of the message
// alike: when the message carries a code (Envelope.CarriesOTP), which a
// template may have put anywhere; on the SMS dlt route, whose template
// values may hold a code the request did not declare; for a chat
// template, whose variables may; and for e-mail of purpose otp. Other
// messages show their digits, order numbers included, wherever they are.
func Digits(env *notify.Envelope) bool {
	switch {
	case env.CarriesOTP:
		return true
	case sms.MessageOf(env) != nil:
		return sms.MessageOf(env).Route == sms.RouteDLT
	case chat.MessageOf(env) != nil:
		return chat.MessageOf(env).Template != nil
	case email.MessageOf(env) != nil:
		return email.MessageOf(env).Purpose == email.PurposeOTP
	}
	return false
}

// CodeSpans returns the byte ranges of text that hold a one-time code, in
// order: every occurrence of otp (when not empty) and, when digits is
// set, every run of 4 to 8 ASCII digits between them. A run is bounded by
// non-digits and by the occurrences of otp, as if these were already
// hidden.
func CodeSpans(text, otp string, digits bool) [][2]int {
	var spans [][2]int
	runs := func(from, to int) {
		for i := from; digits && i < to; {
			if !isDigit(text[i]) {
				i++
				continue
			}
			j := i
			for j < to && isDigit(text[j]) {
				j++
			}
			if n := j - i; n >= MinCodeDigits && n <= MaxCodeDigits {
				spans = append(spans, [2]int{i, j})
			}
			i = j
		}
	}
	at := 0
	for otp != "" {
		k := strings.Index(text[at:], otp)
		if k < 0 {
			break
		}
		runs(at, at+k)
		spans = append(spans, [2]int{at + k, at + k + len(otp)})
		at += k + len(otp)
	}
	runs(at, len(text))
	return spans
}

// Replace returns text with each of CodeSpans(text, otp, digits) replaced
// by with.
func Replace(text, otp string, digits bool, with string) string {
	spans := CodeSpans(text, otp, digits)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(text[at:sp[0]])
		b.WriteString(with)
		at = sp[1]
	}
	b.WriteString(text[at:])
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
