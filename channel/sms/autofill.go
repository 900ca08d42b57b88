package sms

import (
	"strings"

	"github.com/notifykit/notify/record"
)

// appHashLen is the length of an Android SMS Retriever app hash: 11
// characters of base64.
const appHashLen = 11

// autofill returns text with the lines that let a phone fill the code in
// by itself, when r asks for them: the app hash of Android's SMS
// Retriever API, then the WebOTP line "@host #code" of the web's
// origin-bound one-time codes, which must be the last line. The code is
// the message's (the otp route's, or a template's OTP variable); asking
// for either line without one, or with a malformed hash, is added to fe.
// The lines are part of the text: they count towards its segments and,
// on the dlt route, must match the registered template like the rest.
func autofill(fe *record.FieldErrors, r *Request, code, text string) string {
	if r.WebOTPHost == "" && r.AppHash == "" {
		return text
	}
	if code == "" {
		field := "webotp_host"
		if r.WebOTPHost == "" {
			field = "app_hash"
		}
		fe.Add(field, "needs a one-time code: the otp route's message, or a template's OTP variable")
		return text
	}
	if r.AppHash != "" && !validAppHash(r.AppHash) {
		fe.Add("app_hash", "must be the 11-character app hash of Android's SMS Retriever API (letters, digits, + and /)")
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(r.AppHash) + len(r.WebOTPHost) + len(code) + 6)
	b.WriteString(strings.TrimRight(text, " \n"))
	b.WriteString("\n")
	if r.AppHash != "" {
		b.WriteString("\n" + r.AppHash)
	}
	if r.WebOTPHost != "" {
		b.WriteString("\n@" + strings.ToLower(r.WebOTPHost) + " #" + code)
	}
	return b.String()
}

// validAppHash reports whether s has the form of an SMS Retriever app
// hash: 11 characters of the base64 alphabet.
func validAppHash(s string) bool {
	if len(s) != appHashLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}
