package rules

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the one character rule for e-mail addresses and
// display names. The channel's tags (mailbox) and provider/smtp's own
// envelope check both call it, so the two cannot drift apart.
//
// The characters it refuses look like nothing, or like something else:
// an address such as "victim@exa\u00a0mple.com" shows as
// victim@exa mple.com in a receipt, and a server may deliver it to a
// mailbox the receipt does not name; a right-to-left override turns
// "moc.elpmaxe@evil" into what reads as another address; an invisible
// character splits a name in two for one reader and not for another.

// allow lists the exceptions a field makes to the character rule.
type allow uint8

const (
	// joiners allows U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH
	// JOINER, which Indic and Persian names and emoji sequences need in
	// display text.
	joiners allow = 1 << iota
	// spaces allows white space of category Zs (U+0020, U+00A0, U+3000,
	// ...).
	spaces
	// asciiSpace allows U+0020 only, for a check that leaves spaces to a
	// parser whose messages say more ("a bare address, without a display
	// name").
	asciiSpace
)

// unsafeRune says what kind of character r is when it must not appear in
// an address or a display name, or returns "".
func unsafeRune(r rune, ok allow) string {
	switch {
	case r == ' ' && ok&(spaces|asciiSpace) != 0:
		return ""
	case r == utf8.RuneError:
		return "invalid UTF-8"
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return "control characters"
	case isBidi(r):
		return "bidirectional control characters"
	case ok&joiners != 0 && (r == 0x200c || r == 0x200d):
		return ""
	case unicode.Is(unicode.Cf, r) || isFiller(r):
		return "invisible format characters"
	case r == 0x2028 || r == 0x2029:
		return "line or paragraph separators"
	case ok&spaces == 0 && unicode.Is(unicode.Zs, r):
		return "space characters"
	}
	return ""
}

// isBidi reports the explicit bidirectional formatting characters:
// embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069),
// the marks U+200E, U+200F and U+061C.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// isFiller reports letters that render as blank (Hangul fillers, the
// Braille blank), used to fake empty or spaced names.
func isFiller(r rune) bool {
	return r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800
}

// firstUnsafe returns a message naming the first unsafe character of s,
// or "".
func firstUnsafe(s string, ok allow) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return "must be valid UTF-8"
			}
		}
		if what := unsafeRune(r, ok); what != "" {
			return fmt.Sprintf("must not contain %s (%U at byte %d)", what, r, i)
		}
	}
	return ""
}

// AddressChars is the character rule of every e-mail address (to,
// reply_to, a sender's From): valid UTF-8 without control characters,
// format characters (category Cf: zero-width spaces, soft hyphens, the
// byte order mark, ...), bidirectional controls (U+202A-U+202E,
// U+2066-U+2069, U+200E, U+200F, U+061C), blank fillers, line or
// paragraph separators, or white space of any kind (U+0020, U+00A0 and
// the rest of category Zs) anywhere. Letters of any script stay allowed,
// so internationalised addresses such as user@bücher.example pass.
//
// It returns why s breaks the rule, naming the first bad character by
// its code point (never echoing s), or "" when s keeps it. It checks
// characters only: whether s is an address at all is for the caller.
func AddressChars(s string) string {
	return firstUnsafe(s, 0)
}

// DisplayName is the rule for a sender's display name (from_name, and a
// configured FromName): valid UTF-8; no control characters (CR, LF, NUL
// and tab included), bidirectional controls, format characters other
// than the joiners U+200C and U+200D (which Indic and Persian names
// need), blank fillers, or line and paragraph separators; and nothing
// shaped like an RFC 2047 encoded word ("=?" followed later by "?=",
// in any case), which some mail readers would decode into other text,
// even a forged address or header. Spaces are allowed.
//
// It returns why s breaks the rule (never echoing s), or "".
func DisplayName(s string) string {
	if why := firstUnsafe(s, joiners|spaces); why != "" {
		return why
	}
	if i := strings.Index(s, "=?"); i >= 0 && strings.Contains(s[i+2:], "?=") {
		return `must not contain an encoded word such as "=?utf-8?q?...?="`
	}
	return ""
}
