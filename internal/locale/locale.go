// Package locale states, once, what a locale is where the library takes
// one (a request's locale field, a template's variants, an account's
// default): a BCP 47 tag of a language (2 or 3 letters), an optional
// script (4 letters) and an optional region (2 letters or 3 digits),
// joined by "-" ("_" is read as "-"), compared without regard to case and
// written canonically: "hi", "hi-IN", "zh-Hant-TW". Extensions and
// private-use subtags are not taken: a template variant is chosen by
// language and region, no more.
package locale

import "strings"

// Rule is the rule a locale breaks, in the words an error naming the
// field says it.
const Rule = `must be a BCP 47 language tag such as "hi", "hi-IN" or "en-US"`

// Canonical returns tag in canonical form, and whether it is a locale at
// all: the language in lower case, a script with an upper-case initial,
// a region in upper case.
func Canonical(tag string) (string, bool) {
	if tag == "" || len(tag) > 16 {
		return "", false
	}
	parts := strings.Split(strings.ReplaceAll(tag, "_", "-"), "-")
	if len(parts) > 3 || !letters(parts[0]) || len(parts[0]) < 2 || len(parts[0]) > 3 {
		return "", false
	}
	out := strings.ToLower(parts[0])
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 && letters(rest[0]) {
		out += "-" + strings.ToUpper(rest[0][:1]) + strings.ToLower(rest[0][1:])
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return out, true
	case len(rest) > 1:
		return "", false
	case len(rest[0]) == 2 && letters(rest[0]):
		return out + "-" + strings.ToUpper(rest[0]), true
	case len(rest[0]) == 3 && digits(rest[0]):
		return out + "-" + rest[0], true
	}
	return "", false
}

// Language returns the language subtag of a canonical tag: "hi" for
// "hi-IN".
func Language(tag string) string {
	lang, _, _ := strings.Cut(tag, "-")
	return lang
}

// Chain returns the tags a variant is looked up by for a request's
// locale tag and an account's default def, both canonical or empty, in
// order and each once: the tag, its language, the default, its language.
// The template's base follows them all.
func Chain(tag, def string) []string {
	var out []string
	for _, t := range []string{tag, Language(tag), def, Language(def)} {
		if t != "" && !contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Cloud returns a canonical tag as the chat cloud API names a template's
// language: "hi", "en_US", "pt_BR".
func Cloud(tag string) string { return strings.ReplaceAll(tag, "-", "_") }

func contains(list []string, s string) bool {
	for _, t := range list {
		if t == s {
			return true
		}
	}
	return false
}

func letters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
