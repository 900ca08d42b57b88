// Package rules checks the request rules declared as `validate` struct
// tags on the root package's request types, with one shared
// github.com/go-playground/validator/v10 instance, and turns each failure
// into a record.FieldError under the request's JSON name, with a message
// as clear as a hand-written one.
//
// The tags hold the rules that are about one field's shape or about which
// fields go together (required, one-of sets, lengths, e-mail addresses,
// required unless another field is given). Rules that need the account,
// a renderer, the network or the message's final text (segments, DLT
// matching, the SSRF guard, templates) stay code in the channels, which
// check a field only when the tags found nothing wrong with it
// (record.FieldErrors.Has).
//
// Each custom tag is a function returning why a value breaks the rule, so
// the check and its message cannot disagree.
package rules

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store/storeutil"
)

// A rule returns why s breaks it, or "" when s keeps it.
type rule func(s string) string

// custom maps each custom tag to its rule.
var custom = map[string]rule{
	"otp":          otp,
	"text":         Text,
	"mailbox":      mailbox,
	"header":       Header,
	"displayname":  DisplayName,
	"filename":     fileName,
	"templatename": templateName,
	"notblank":     notBlank,
	"category":     category,
	"locale":       localeTag,
}

// aliases name rule sets used on several fields, so that each is written
// once: "domain" is the calling application's domain on every request.
var aliases = map[string]string{
	"domain": "max=253,text",
}

// validate is the one validator instance: it caches each request type's
// parsed tags, so building it per call would cost every send.
var validate = build()

func build() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(jsonName)
	for tag, r := range custom {
		if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
			return r(fl.Field().String()) == ""
		}); err != nil {
			panic("rules: " + err.Error()) // a programming error, caught by every test
		}
	}
	for alias, tags := range aliases {
		v.RegisterAlias(alias, tags)
	}
	return v
}

// jsonName names a field as the HTTP API does: its json tag.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// Check validates the tags of req, a pointer to a request struct, and
// adds each failure to fe. It is safe for concurrent use.
func Check(fe *record.FieldErrors, req any) {
	err := validate.Struct(req)
	if err == nil {
		return
	}
	var failures validator.ValidationErrors
	if !errors.As(err, &failures) {
		// Only a nil or non-struct argument gets here: a caller's bug.
		panic(fmt.Sprintf("rules: Check(%T): %v", req, err))
	}
	t := reflect.TypeOf(req)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, f := range failures {
		fe.Add(f.Field(), message(t, f))
	}
}

// message says why the field broke its rule, without echoing values that
// may be secrets (codes are checked by custom rules, which never echo).
func message(t reflect.Type, f validator.FieldError) string {
	tag, param := f.ActualTag(), f.Param()
	if r, ok := custom[tag]; ok {
		return r(stringOf(f))
	}
	switch tag {
	case "required":
		return "is required"
	case "required_without":
		return "is required unless " + fieldName(t, param) + " is given"
	case "oneof":
		return "must be " + list(strings.Fields(param)) + ", not " + Clip(stringOf(f))
	case "max":
		return "must be at most " + param + " characters"
	case "hostname_rfc1123":
		return "must be a host name such as example.com, without a scheme, port or path"
	}
	return "breaks the rule " + tag // every tag in use has a message; see the tests
}

// stringOf returns the failed field's value when it is a string or of a
// string type (sms.Route, ...), else "".
func stringOf(f validator.FieldError) string {
	if v := reflect.ValueOf(f.Value()); v.Kind() == reflect.String {
		return v.String()
	}
	return ""
}

// fieldName returns the JSON name of t's Go field name.
func fieldName(t reflect.Type, name string) string {
	if f, ok := t.FieldByName(name); ok {
		return jsonName(f)
	}
	return name
}

// list joins ["a","b","c"] as "a, b or c".
func list(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Clip quotes a caller's value for an error message, shortened to 40
// bytes on a rune boundary.
func Clip(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

func notBlank(s string) string {
	if strings.TrimSpace(s) == "" {
		return "must not be blank"
	}
	return ""
}

func otp(s string) string {
	if ValidOTP(s) {
		return ""
	}
	return "must be 4 to 8 digits" // never echo a code
}

// localeTag is a request's locale's rule: a BCP 47 tag (internal/locale).
func localeTag(s string) string {
	if _, ok := locale.Canonical(s); ok {
		return ""
	}
	return locale.Rule
}

// category is a request's category's rule: a name a category can have
// (storeutil.CategoryName); whether the account defines it the Notifier
// asks the store.
func category(s string) string {
	if storeutil.CategoryName(s) {
		return ""
	}
	return storeutil.CategoryRule
}

// Text is the rule for short text fields (domain, brand): valid UTF-8
// without control characters, line breaks or bidirectional overrides,
// which could forge what a log line or a message shows.
func Text(s string) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	if hasControl(s) {
		return "must not contain control characters, line breaks or bidirectional overrides"
	}
	return ""
}

// hasControl reports whether s has a C0 or C1 control character (tab and
// line breaks included), DEL, or a bidirectional override or isolate.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return true
		}
	}
	return false
}

// Header is the rule for text that goes into a mail header (from_name,
// subject): no CR, LF or NUL (header injection), no other control
// characters, valid UTF-8.
func Header(s string) string {
	switch {
	case strings.ContainsAny(s, "\r\n\x00"):
		return "must not contain CR, LF or NUL"
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	}
	for _, r := range s {
		if r < ' ' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return "must not contain control characters"
		}
	}
	return ""
}

// fileName is the rule for an attachment's display name.
func fileName(name string) string {
	switch {
	case len(name) > maxFileName:
		return fmt.Sprintf("must be at most %d bytes", maxFileName)
	case !utf8.ValidString(name) || hasControl(name):
		return "must be UTF-8 without control characters"
	case strings.ContainsAny(name, `/\`), name == ".", name == "..", strings.TrimSpace(name) == "":
		return "must be a plain file name, without a path"
	}
	return ""
}

// maxFileName bounds file_name, in bytes.
const maxFileName = 240

// templateName is the rule for cloud template names.
func templateName(s string) string {
	const msg = "must be 1-512 lower-case letters, digits and '_', as the cloud channel names templates"
	if s == "" || len(s) > 512 {
		return msg
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return msg
		}
	}
	return ""
}

// ValidOTP reports whether code is an OTP as notify sends them: 4 to 8
// ASCII digits. Channels, templates and providers all hold codes to it (the
// otp rule, here, too).
func ValidOTP(code string) bool {
	if len(code) < 4 || len(code) > 8 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}
