package template

import (
	"errors"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
)

// CanonicalLocale returns tag in canonical form, and whether it is a
// locale as templates and requests take one: a BCP 47 tag of a language
// (2 or 3 ASCII letters), an optional script (4 letters) and an optional
// region (2 letters or 3 digits), separated by "-" or "_", in any case.
// The canonical form has the language in lower case, the script with an
// upper-case initial, the region in upper case, joined by "-": "hi",
// "hi-IN", "zh-Hant-TW". Extensions and private-use subtags are not
// taken. "" is not a locale (false): callers treat it as none.
func CanonicalLocale(tag string) (string, bool) { return locale.Canonical(tag) }

// CloudLanguage returns tag as the chat cloud API names a template's
// language: its canonical form with "_" for "-" ("hi-IN" gives "hi_IN",
// "en" gives "en"), or "" when tag is not a locale (CanonicalLocale).
func CloudLanguage(tag string) string {
	c, ok := locale.Canonical(tag)
	if !ok {
		return ""
	}
	return locale.Cloud(c)
}

// requestLocale reads a render's locale: canonical, "" for none, or the
// field error of one that is not a tag.
func requestLocale(loc string) (string, *record.FieldError) {
	if loc == "" {
		return "", nil
	}
	tag, ok := locale.Canonical(loc)
	if !ok {
		return "", &record.FieldError{Field: "locale", Message: locale.Rule}
	}
	return tag, nil
}

// withField returns err with fe added: an InvalidArgument error gains the
// field, first; any other result, nil included, becomes InvalidArgument
// on fe alone, since a request with a bad field is refused whatever else
// happened to it.
func withField(err error, fe record.FieldError) error {
	var e *notify.Error
	if errors.As(err, &e) && e.Code == notify.CodeInvalidArgument {
		c := *e
		c.Fields = append(record.FieldErrors{fe}, e.Fields...)
		return &c
	}
	return &notify.Error{Code: notify.CodeInvalidArgument, Err: errorString("template: bad locale"),
		Fields: record.FieldErrors{fe}}
}
