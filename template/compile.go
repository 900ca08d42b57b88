package template

import (
	"fmt"
	"strings"
)

// escaper says how a value is written into its slot.
type escaper uint8

const (
	// escNone writes the value as it is (SMS, chat, e-mail subject and text).
	escNone escaper = iota
	// escHTML HTML-escapes the value (element content, quoted attributes).
	escHTML
	// escURLStart starts a URL attribute (href, src, ...): the variable is
	// validated as an absolute http(s) URL, then HTML-escaped.
	escURLStart
	// escURLPath is inside a URL attribute, before any '?' or '#': the
	// value is path-escaped so it cannot add path segments or a query.
	escURLPath
	// escURLQuery is inside a URL attribute after '?' or '#': the value is
	// query-escaped so it cannot add parameters.
	escURLQuery
)

// slot is one placeholder of a compiled body.
type slot struct {
	v   int // index into the template's declared variables
	esc escaper
}

// body is a compiled template body: lits[0], value of slots[0], lits[1],
// ..., lits[len(slots)]. Rendering is a concatenation into a builder grown
// once to litLen plus the values' lengths.
type body struct {
	lits   []string
	slots  []slot
	litLen int
}

// maxBody bounds one template body (custom bodies come from accounts).
const maxBody = 256 << 10

// bodyForm is what a body is: it decides the escaping of placeholders and
// which characters the literal text may hold.
type bodyForm uint8

const (
	formText    bodyForm = iota // chat, SMS, e-mail text: newlines allowed
	formSubject                 // one line
	formHTML                    // HTML: placeholders escaped by context
)

// compileBody parses src. index returns the variable index of a placeholder
// name, or an error when the name may not be used. name is the body's name
// for error messages ("sms", "email.html").
func compileBody(name, src string, form bodyForm, index func(string) (int, error)) (*body, error) {
	if len(src) > maxBody {
		return nil, fmt.Errorf("%s: longer than %d bytes", name, maxBody)
	}
	if err := checkLiteral(name, src, form); err != nil {
		return nil, err
	}
	b := &body{}
	var hs htmlScanner
	rest, off := src, 0
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.lits = append(b.lits, rest)
			b.litLen += len(rest)
			break
		}
		end := strings.Index(rest[i+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%s: %s: \"{{\" without a closing \"}}\"", name, position(src, off+i))
		}
		inner := strings.Trim(rest[i+2:i+2+end], " \t")
		if !validName(inner) {
			return nil, fmt.Errorf("%s: %s: bad placeholder %q: names are upper-case letters, digits and '_', as in {{NAME}}",
				name, position(src, off+i), clip(rest[i:i+4+end], 40))
		}
		v, err := index(inner)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", name, position(src, off+i), err)
		}
		esc := escNone
		if form == formHTML {
			if lit := rest[:i]; strings.HasSuffix(lit, "<") || strings.HasSuffix(lit, "</") {
				return nil, fmt.Errorf("%s: %s: {{%s}}: placeholders cannot form tags or attribute names; put them in text or in quoted attribute values",
					name, position(src, off+i), inner)
			}
			hs.advance(rest[:i])
			if esc, err = hs.placeholder(); err != nil {
				return nil, fmt.Errorf("%s: %s: {{%s}}: %v", name, position(src, off+i), inner, err)
			}
		}
		b.lits = append(b.lits, rest[:i])
		b.litLen += i
		b.slots = append(b.slots, slot{v: v, esc: esc})
		n := i + 4 + end
		rest, off = rest[n:], off+n
	}
	return b, nil
}

// checkLiteral rejects control characters in a template's own text: tabs
// and newlines only in multi-line bodies, carriage returns nowhere (bodies
// use \n; the e-mail channel writes CRLF on the wire).
func checkLiteral(name, src string, form bodyForm) error {
	for i, r := range src {
		switch {
		case r == '\n' || r == '\t':
			if form == formSubject {
				return fmt.Errorf("%s: the subject must be one line", name)
			}
		case r == '\uFFFD' && !strings.HasPrefix(src[i:], "\uFFFD"):
			return fmt.Errorf("%s: %s: not valid UTF-8", name, position(src, i))
		case stripped(r):
			return fmt.Errorf("%s: %s: control character %U", name, position(src, i), r)
		}
	}
	return nil
}

// validName reports whether s is a placeholder name: [A-Z0-9_]+, at most 64.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// position formats byte offset off of src as "line L, column C".
func position(src string, off int) string {
	line := 1 + strings.Count(src[:off], "\n")
	col := off - strings.LastIndexByte(src[:off], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// htmlScanner follows just enough of HTML's tokenizer to tell where a
// placeholder sits: in text, in a quoted attribute value (and which
// attribute), or somewhere a value could change the markup itself.
// Placeholders are opaque value characters to it.
type htmlScanner struct {
	st      htmlState
	tag     string // lower-case name of the tag being read
	attr    string // lower-case name of the attribute being read
	quote   byte
	value   int  // bytes of the current attribute value so far
	query   bool // the current value has a '?' or '#'
	rawEnd  string
	nameBuf strings.Builder
}

type htmlState uint8

const (
	stText htmlState = iota
	stTagName
	stEndTag // </...> or <!...>, up to '>'
	stTag    // between attributes
	stAttrName
	stAfterAttrName
	stBeforeValue
	stQuoted
	stUnquoted
	stComment
	stRaw // inside <script> or <style>
)

// advance feeds literal text.
func (h *htmlScanner) advance(s string) {
	for i := 0; i < len(s); i++ {
		switch h.st {
		case stText:
			i = h.text(s, i)
		case stComment:
			if strings.HasPrefix(s[i:], "-->") {
				h.st = stText
				i += 2
			}
		case stRaw:
			if len(s)-i >= len(h.rawEnd) && strings.EqualFold(s[i:i+len(h.rawEnd)], h.rawEnd) {
				h.st = stEndTag
				i += len(h.rawEnd) - 1
			}
		case stBeforeValue, stQuoted, stUnquoted:
			h.valueByte(s[i])
		default:
			h.tagByte(s[i])
		}
	}
}

// text reads s[i] in text, where only a '<' that starts a comment, an
// end tag (or <!...>, <?...>) or a start tag matters. It looks ahead in s
// to tell which, so it returns the index of the last byte it used.
func (h *htmlScanner) text(s string, i int) int {
	if s[i] != '<' || i+1 >= len(s) {
		return i
	}
	switch n := s[i+1]; {
	case strings.HasPrefix(s[i:], "<!--"):
		h.st = stComment
		i += 3
	case n == '/' || n == '!' || n == '?':
		h.st = stEndTag
	case isLetter(n):
		h.st = stTagName
		h.nameBuf.Reset()
	}
	return i
}

// tagByte reads c inside a tag but outside attribute values: the tag's
// name, the names of its attributes and what lies between them.
func (h *htmlScanner) tagByte(c byte) {
	switch h.st {
	case stTagName:
		switch {
		case isLetter(c) || c >= '0' && c <= '9' || c == '-':
			h.nameBuf.WriteByte(c | 0x20)
		case c == '>':
			h.tag = h.nameBuf.String()
			h.endTag()
		default:
			h.tag = h.nameBuf.String()
			h.st = stTag
		}
	case stEndTag:
		if c == '>' {
			h.st = stText
		}
	case stTag, stAfterAttrName:
		h.betweenAttrs(c)
	case stAttrName:
		switch {
		case c == '=':
			h.attr = h.nameBuf.String()
			h.st = stBeforeValue
		case c == '>':
			h.endTag()
		case isSpace(c) || c == '/':
			h.attr = h.nameBuf.String()
			h.st = stAfterAttrName
		default:
			h.nameBuf.WriteByte(lower(c))
		}
	}
}

// betweenAttrs reads c before an attribute's name (stTag) or after it
// (stAfterAttrName), where only the latter may be followed by '='.
func (h *htmlScanner) betweenAttrs(c byte) {
	switch {
	case c == '=' && h.st == stAfterAttrName:
		h.st = stBeforeValue
	case c == '>':
		h.endTag()
	case isSpace(c) || c == '/':
	default:
		h.st = stAttrName
		h.nameBuf.Reset()
		h.nameBuf.WriteByte(lower(c))
	}
}

// valueByte reads c in or just before an attribute's value, counting the
// bytes of a quoted value and noting a '?' or '#' in it, which placeholder
// needs to escape a URL.
func (h *htmlScanner) valueByte(c byte) {
	switch h.st {
	case stBeforeValue:
		switch {
		case c == '"' || c == '\'':
			h.st, h.quote, h.value, h.query = stQuoted, c, 0, false
		case c == '>':
			h.endTag()
		case isSpace(c):
		default:
			h.st = stUnquoted
		}
	case stQuoted:
		switch c {
		case h.quote:
			h.st = stTag
		case '?', '#':
			h.query = true
			h.value++
		default:
			h.value++
		}
	case stUnquoted:
		switch {
		case c == '>':
			h.endTag()
		case isSpace(c):
			h.st = stTag
		}
	}
}

func (h *htmlScanner) endTag() {
	h.st = stText
	if h.tag == "script" || h.tag == "style" {
		h.st, h.rawEnd = stRaw, "</"+h.tag
	}
}

// placeholder returns the escaping for a placeholder at the current
// position, or why a placeholder may not go there.
func (h *htmlScanner) placeholder() (escaper, error) {
	switch h.st {
	case stText, stComment:
		return escHTML, nil
	case stRaw:
		return 0, fmt.Errorf("placeholders are not allowed inside <%s>", h.tag)
	case stBeforeValue, stUnquoted:
		return 0, fmt.Errorf("quote the value of attribute %q: placeholders go only in quoted attribute values", h.attr)
	case stQuoted:
	default:
		return 0, fmt.Errorf("placeholders cannot form tags or attribute names; put them in text or in quoted attribute values")
	}
	start := h.value == 0
	h.value++ // the placeholder is part of the value now
	switch {
	case strings.HasPrefix(h.attr, "on") || h.attr == "style" || h.attr == "srcset":
		return 0, fmt.Errorf("placeholders are not allowed in the %q attribute", h.attr)
	case urlAttr(h.attr):
		switch {
		case start:
			return escURLStart, nil
		case h.query:
			return escURLQuery, nil
		}
		return escURLPath, nil
	}
	return escHTML, nil
}

// urlAttr reports whether an attribute's value is a URL.
func urlAttr(a string) bool {
	switch a {
	case "href", "src", "action", "formaction", "cite", "background", "poster", "longdesc", "usemap", "xlink:href", "data":
		return true
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c | 0x20
	}
	return c
}
