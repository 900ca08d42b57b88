package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The cloud vendor's bounds on a template's values: the one place they
// are written, for the provider that sends them (cloudchat) and the HTTP
// adapter that checks them before anything is charged.
const (
	// MaxTemplateButtons is how many buttons a template has at most;
	// their indexes are 0 to MaxTemplateButtons-1.
	MaxTemplateButtons = 10
	// MaxParamText is the longest body parameter, in characters.
	MaxParamText = 1024
	// MaxHeaderText is the longest text header parameter, in characters.
	MaxHeaderText = 60
	// maxParamName is the longest named parameter's name, in bytes.
	maxParamName = 64
)

// ValidParamName reports whether s can name a template parameter: 1 to
// 64 lower-case ASCII letters, digits and '_'.
func ValidParamName(s string) bool {
	if s == "" || len(s) > maxParamName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ParamTextRule returns the rule v breaks as a template parameter of at
// most max characters, or "" when it breaks none. The vendor refuses
// text that is empty, holds a line break or a tab, or more than four
// spaces in a row.
func ParamTextRule(v string, max int) string {
	switch {
	case strings.TrimSpace(v) == "":
		return "must not be empty"
	case strings.ContainsAny(v, "\n\r\t"):
		return "must not hold line breaks or tabs"
	case strings.Contains(v, "     "):
		return "must not hold more than four spaces in a row"
	case utf8.RuneCountInString(v) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	}
	return ""
}

// ButtonValueRule returns the rule b's Value breaks for its Kind, or ""
// when it breaks none: a URL button's suffix is 1 to 2000 characters
// without spaces, a quick reply's payload 1 to 128, a copy-code button's
// code 1 to 15. A Kind that is none of the three is a rule broken too.
func ButtonValueRule(b Button) string {
	n := utf8.RuneCountInString(b.Value)
	switch b.Kind {
	case ButtonURL:
		if b.Value == "" || n > 2000 || strings.ContainsAny(b.Value, " \t\r\n") {
			return "must be 1 to 2000 characters without spaces: the end of the button's URL"
		}
	case ButtonQuickReply:
		if b.Value == "" || n > 128 {
			return "must be 1 to 128 characters: the quick reply's payload"
		}
	case ButtonCopyCode:
		if b.Value == "" || n > 15 {
			return "must be 1 to 15 characters: the code to copy"
		}
	default:
		return fmt.Sprintf("has the button kind %q, which is none of url, quick_reply and copy_code", b.Kind)
	}
	return ""
}
