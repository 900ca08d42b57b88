package template

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
)

// Limits on the variables of one render. They bound the work a request
// can cause; real templates stay far below them.
const (
	// MaxValueLen is the longest value accepted, in bytes.
	MaxValueLen = 1024
	// MaxVars is the most variables one render accepts.
	MaxVars = 64
)

// check is the rule a variable's value must follow, chosen by its name.
type check uint8

const (
	checkNone  check = iota
	checkOTP         // 4-8 digits
	checkDate        // DD/MM/YYYY, a real date
	checkURL         // absolute http(s) URL without user info
	checkCount       // a whole number
)

// checkFor returns the rule for a variable name: OTP; DATE and names
// ending in _DATE (not UPDATE);
// LINK, names ending in _LINK or _URL; DAYS_LEFT.
func checkFor(name string) check {
	switch {
	case name == "OTP":
		return checkOTP
	case name == "DAYS_LEFT":
		return checkCount
	case name == "DATE" || strings.HasSuffix(name, "_DATE"):
		return checkDate
	case name == "LINK" || name == "URL" || strings.HasSuffix(name, "_LINK") || strings.HasSuffix(name, "_URL"):
		return checkURL
	}
	return checkNone
}

// validate returns why v breaks the rule, or "". Messages never quote the
// value: it may be an OTP or personal data.
func (c check) validate(v string) string {
	switch c {
	case checkOTP:
		if !rules.ValidOTP(v) {
			return "must be 4 to 8 digits"
		}
	case checkCount:
		if len(v) > 5 || !rules.Digits(v) {
			return "must be a whole number of at most 5 digits"
		}
	case checkDate:
		if !isDate(v) {
			return "must be a real date written DD/MM/YYYY, such as 31/12/2026"
		}
	case checkURL:
		if !isHTTPURL(v) {
			return "must be an absolute http:// or https:// URL with a host and no user info or spaces"
		}
	}
	return ""
}

// isDate reports whether s is DD/MM/YYYY and names a day that exists.
func isDate(s string) bool {
	if len(s) != 10 || s[2] != '/' || s[5] != '/' || !rules.Digits(s[:2]) || !rules.Digits(s[3:5]) || !rules.Digits(s[6:]) {
		return false
	}
	_, err := time.Parse("02/01/2006", s) // rejects 31/04 and 29/02 outside leap years
	return err == nil
}

// isHTTPURL reports whether s is an absolute http or https URL with a host
// and no user info (http://bank.example@evil.example reads as the bank).
// Common URLs are checked without allocating; those with escapes or IP
// literals are also parsed by net/url.
func isHTTPURL(s string) bool {
	rest, ok := cutPrefixFold(s, "https://")
	if !ok {
		if rest, ok = cutPrefixFold(s, "http://"); !ok {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return false
		}
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if host == "" {
		return false
	}
	if host[0] != '[' {
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !(isLetter(c) || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':' || c == '%' || c >= 0x80) {
				return false // '@' (user info) included
			}
		}
	} else if strings.ContainsRune(host, '@') {
		return false
	}
	if h, port, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		if h == "" || (port != "" && !rules.Digits(port)) {
			return false
		}
	}
	if strings.ContainsAny(s, "%[") {
		u, err := url.Parse(s)
		return err == nil && u.User == nil && u.Hostname() != ""
	}
	return true
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// defaultValue names where an optional variable's default comes from.
type defaultValue uint8

const (
	noDefault       defaultValue = iota
	defVerification              // ACTION: "verification"
	defAccountName               // BRAND_NAME: the account's name
)

// defaultFor returns the default of a variable name: ACTION and
// BRAND_NAME have one; nothing else does.
func defaultFor(name string) defaultValue {
	switch name {
	case "ACTION":
		return defVerification
	case "BRAND_NAME":
		return defAccountName
	}
	return noDefault
}

func (d defaultValue) value(acct *notify.Account) string {
	switch d {
	case defVerification:
		return "verification"
	case defAccountName:
		if acct != nil {
			return clean(acct.Name)
		}
	}
	return ""
}

// contextual reports whether an unknown variable is silently ignored:
// channels fill OTP, ACTION and BRAND_NAME from request fields (otp,
// action, brand) whatever the template, so a template that does not use
// them must not fail because of them.
func contextual(name string) bool {
	return name == "OTP" || name == "ACTION" || name == "BRAND_NAME"
}

// positional returns n for a key "n" (1-999, no leading zero).
func positional(k string) (int, bool) {
	if len(k) == 0 || len(k) > 3 || k[0] == '0' || !rules.Digits(k) {
		return 0, false
	}
	n, _ := strconv.Atoi(k)
	return n, true
}

// resolve returns the values of t's variables in declaration order:
// given by name or position, cleaned, defaulted (in the variant v's
// language when it has its own default; nil: the base) and validated.
// Every problem is reported, each on its "variables.NAME" field.
func (t *tmpl) resolve(acct *notify.Account, vars record.Vars, v *variant) ([]string, error) {
	if len(vars) > MaxVars {
		return nil, t.fail(record.FieldErrors{{Field: "variables",
			Message: "at most " + strconv.Itoa(MaxVars) + " variables are accepted"}})
	}
	vals := make([]string, len(t.vars))
	matched := 0
	for i := range t.vars {
		if val, ok := vars[t.vars[i].name]; ok {
			vals[i] = val
			matched++
		}
	}
	// Problems with given names are listed after those of declared
	// variables, which read first in declaration order.
	var fe, unknown record.FieldErrors
	if matched < len(vars) {
		t.extra(vars, vals, &unknown)
	}
	for i := range t.vars {
		d := &t.vars[i]
		if len(vals[i]) > MaxValueLen {
			fe.Add("variables."+d.name, "longer than "+strconv.Itoa(MaxValueLen)+" bytes")
			continue
		}
		val := clean(vals[i])
		if val == "" && d.def == defVerification && v != nil && v.action != "" {
			val = v.action
		}
		if val == "" {
			val = d.def.value(acct)
		}
		if val == "" {
			msg := "required by template " + strconv.Quote(t.slug) + ", not given"
			if d.def == defAccountName {
				msg += " (it defaults to the account's name, which is empty)"
			}
			fe.Add("variables."+d.name, msg)
			continue
		}
		if msg := d.check.validate(val); msg != "" {
			fe.Add("variables."+d.name, msg)
			continue
		}
		vals[i] = val
	}
	if fe = append(fe, unknown...); len(fe) > 0 {
		return nil, t.fail(fe)
	}
	return vals, nil
}

// extra handles the keys of vars that are not declared names: positional
// keys fill declared variables in order; OTP, ACTION and BRAND_NAME are
// ignored; anything else is an error.
func (t *tmpl) extra(vars record.Vars, vals []string, fe *record.FieldErrors) {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		if _, ok := t.index[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if n, ok := positional(k); ok {
			switch {
			case n > len(t.vars):
				fe.Add("variables."+k, "template "+strconv.Quote(t.slug)+" takes "+
					strconv.Itoa(len(t.vars))+" variables: "+t.names)
			case vals[n-1] != "" && vals[n-1] != vars[k]:
				fe.Add("variables."+k, "is "+t.vars[n-1].name+", which is also given by name with another value")
			default:
				vals[n-1] = vars[k]
			}
			continue
		}
		if contextual(k) {
			continue
		}
		field := clip(clean(k), 64)
		msg := "not a variable of template " + strconv.Quote(t.slug) + "; it takes " + t.names
		if up := strings.ToUpper(k); up != k {
			if _, ok := t.index[up]; ok {
				msg += "; names are upper case: " + up
			}
		}
		fe.Add("variables."+field, msg)
	}
}

func (t *tmpl) fail(fe record.FieldErrors) error {
	return &notify.Error{Code: notify.CodeInvalidArgument, Fields: fe,
		Err: errorString("template: rendering " + strconv.Quote(t.slug))}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// clean strips control characters from a value: tabs and line breaks
// become spaces (so no value can break a subject or header line), other
// control characters, bidirectional overrides, byte-order marks and
// invalid UTF-8 are removed, and surrounding space is trimmed. A clean
// value is returned as is, without allocating.
func clean(s string) string {
	if plain(s) {
		return s
	}
	dirty := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || breaks(r) || stripped(r) {
			dirty = true
			break
		}
		i += n
	}
	if !dirty {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
		case breaks(r):
			b.WriteByte(' ')
		case stripped(r):
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

// plain reports whether s is printable ASCII without surrounding spaces.
func plain(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// breaks reports whether r separates lines or columns; clean turns it into
// a space.
func breaks(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// stripped reports whether r is removed from values: C0 and C1 controls,
// DEL, bidirectional embeddings, overrides and isolates (they make text
// display in another order than it reads), and the byte-order mark.
func stripped(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f ||
		r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' || r == '\ufeff'
}

// htmlLen returns the length of s once HTML-escaped.
func htmlLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&', '\'', '"':
			n += 4 // &amp; &#39; &#34;
		case '<', '>':
			n += 3 // &lt; &gt;
		}
	}
	return n
}

// writeHTML writes s escaped as html.EscapeString does, without an
// intermediate string.
func writeHTML(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '\'':
			rep = "&#39;"
		case '"':
			rep = "&#34;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}
