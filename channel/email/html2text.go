package email

import (
	"bytes"
	"html"
	"strings"
)

// IsHTML reports whether body looks like HTML rather than plain text: it
// contains a tag such as <p>, </div>, <br/>, a comment or a doctype. A
// "<" that starts no tag ("a < b", "<3") does not count.
func IsHTML(body string) bool {
	for i := strings.IndexByte(body, '<'); i >= 0 && i+1 < len(body); {
		rest := body[i+1:]
		switch c := rest[0]; {
		case isLetter(c):
			j := 1
			for j < len(rest) && (isLetter(rest[j]) || rest[j] >= '0' && rest[j] <= '9') {
				j++
			}
			if j == len(rest) || rest[j] == '>' || rest[j] == '/' || isSpace(rest[j]) {
				if strings.IndexByte(rest[j:], '>') >= 0 {
					return true
				}
			}
		case c == '/':
			if len(rest) > 1 && isLetter(rest[1]) && strings.IndexByte(rest, '>') >= 0 {
				return true
			}
		case c == '!':
			if strings.HasPrefix(rest, "!--") || len(rest) >= 8 && strings.EqualFold(rest[:8], "!doctype") {
				return true
			}
		}
		next := strings.IndexByte(rest, '<')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// HTMLToText renders an HTML body as plain text for the text/plain
// alternative of an e-mail: tags are dropped, entities decoded, white
// space collapsed; paragraphs, headings, lists and tables become blank
// lines or line breaks, list items start with "- ", <br> breaks the line,
// images show their alt text, and a link shows as "text (url)" unless its
// text is the URL. The content of head, title, script, style, template and
// noscript is left out, as are comments. It never fails: broken markup
// gives a best effort, and a "<" that starts no tag stays as text.
func HTMLToText(s string) string {
	c := converter{out: make([]byte, 0, len(s)/2)}
	for len(s) > 0 {
		if c.skip != "" {
			// Skipped elements hold raw text ("if (a<b)" in a script), so
			// only their end tag is looked for.
			i := indexFold(s, "</"+c.skip)
			if i < 0 {
				break
			}
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				break
			}
			s = s[i+end+1:]
			c.skip = ""
			continue
		}
		i := strings.IndexByte(s, '<')
		if i < 0 {
			c.text(s)
			break
		}
		if i > 0 {
			c.text(s[:i])
			s = s[i:]
		}
		n := c.markup(s)
		if n == 0 { // not markup: a literal '<'
			c.text("<")
			n = 1
		}
		s = s[n:]
	}
	return c.finish()
}

type converter struct {
	out   []byte
	space bool // a space is due before the next text
	lines int  // line breaks due before the next text: 0, 1 or 2
	skip  string
	pre   int
	links []link
}

type link struct {
	href  string
	start int // len(out) when the link opened
}

// markup consumes the tag, comment or declaration at the start of s and
// returns its length, or 0 when s does not start markup.
func (c *converter) markup(s string) int {
	switch {
	case strings.HasPrefix(s, "<!--"):
		if end := strings.Index(s[4:], "-->"); end >= 0 {
			return 4 + end + 3
		}
		return len(s) // an unclosed comment hides the rest, as in browsers
	case strings.HasPrefix(s, "<!") || strings.HasPrefix(s, "<?"):
		if end := strings.IndexByte(s, '>'); end >= 0 {
			return end + 1
		}
		return 0
	}
	closing := len(s) > 1 && s[1] == '/'
	p := 1
	if closing {
		p = 2
	}
	if p >= len(s) || !isLetter(s[p]) {
		return 0
	}
	q := p
	for q < len(s) && (isLetter(s[q]) || s[q] >= '0' && s[q] <= '9' || s[q] == '-' || s[q] == ':') {
		q++
	}
	name := strings.ToLower(s[p:q])
	attrs, end := scanAttrs(s, q)
	if end < 0 {
		return 0 // no closing '>': treat the '<' as text
	}
	if closing {
		c.close(name)
	} else {
		c.open(name, attrs, strings.HasSuffix(s[:end], "/>"))
	}
	return end
}

func (c *converter) open(name, attrs string, selfClosing bool) {
	switch name {
	case "head", "title", "script", "style", "template", "noscript":
		if !selfClosing {
			c.skip = name
		}
	case "br":
		c.lineBreak(1, true)
	case "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "ul", "ol", "dl", "hr", "pre", "address", "figure":
		c.lineBreak(2, false)
		if name == "pre" {
			c.pre++
		}
	case "div", "tr", "dt", "dd", "section", "article", "header", "footer", "main", "nav", "aside",
		"form", "center", "figcaption", "caption", "tbody", "thead", "tfoot", "body", "html":
		c.lineBreak(1, false)
	case "li":
		c.lineBreak(1, false)
		c.emit("- ")
	case "td", "th":
		c.space = true
	case "img":
		if alt := strings.TrimSpace(attr(attrs, "alt")); alt != "" {
			c.text(alt)
		}
	case "a":
		c.flushBreaks()
		c.links = append(c.links, link{href: strings.TrimSpace(attr(attrs, "href")), start: len(c.out)})
	}
}

func (c *converter) close(name string) {
	switch name {
	case "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "ul", "ol", "dl", "pre", "address", "figure":
		c.lineBreak(2, false)
		if name == "pre" && c.pre > 0 {
			c.pre--
		}
	case "div", "tr", "li", "dt", "dd", "section", "article", "header", "footer", "main", "nav", "aside",
		"form", "center", "figcaption", "caption":
		c.lineBreak(1, false)
	case "td", "th":
		c.space = true
	case "a":
		if len(c.links) == 0 {
			return
		}
		l := c.links[len(c.links)-1]
		c.links = c.links[:len(c.links)-1]
		if !showURL(l.href) {
			return
		}
		if l.start > len(c.out) {
			l.start = len(c.out)
		}
		text := strings.TrimSpace(string(c.out[l.start:]))
		if text == l.href || "mailto:"+text == l.href || "tel:"+text == l.href {
			return
		}
		c.space = true
		if text == "" {
			c.emit(l.href)
			return
		}
		c.emit("(" + l.href + ")")
	}
}

// showURL reports whether a link's target is worth printing.
func showURL(href string) bool {
	if href == "" || href[0] == '#' {
		return false
	}
	lower := strings.ToLower(href)
	return !strings.HasPrefix(lower, "javascript:") && !strings.HasPrefix(lower, "data:")
}

// text adds character data: entities decoded, white space collapsed
// outside <pre>.
func (c *converter) text(s string) {
	if c.skip != "" || s == "" {
		return
	}
	if strings.IndexByte(s, '&') >= 0 {
		// &nbsp; pads layouts; as text it is an ordinary space.
		s = strings.ReplaceAll(html.UnescapeString(s), "\u00a0", " ")
	}
	if c.pre > 0 {
		c.flushBreaks()
		c.out = append(c.out, strings.ReplaceAll(s, "\r\n", "\n")...)
		return
	}
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i > 0 {
			c.space = true
			s = s[i:]
			continue
		}
		j := 0
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		c.emit(s[:j])
		s = s[j:]
	}
}

// emit writes a word after the line breaks or space that are due.
func (c *converter) emit(word string) {
	c.flushBreaks()
	if c.space && len(c.out) > 0 {
		if last := c.out[len(c.out)-1]; last != ' ' && last != '\n' {
			c.out = append(c.out, ' ')
		}
	}
	c.space = false
	c.out = append(c.out, word...)
}

// lineBreak asks for n line breaks (2: a blank line) before the next text;
// force writes a <br> break even where one is already due.
func (c *converter) lineBreak(n int, force bool) {
	if force {
		c.flushBreaks()
		c.trimSpaces()
		if !bytes.HasSuffix(c.out, []byte("\n\n")) { // at most one blank line
			c.out = append(c.out, '\n')
		}
		c.space = false
		return
	}
	c.lines = max(c.lines, n)
	c.space = false
}

func (c *converter) flushBreaks() {
	if c.lines == 0 {
		return
	}
	if len(c.out) > 0 {
		c.trimSpaces()
		have := 0
		for i := len(c.out) - 1; i >= 0 && c.out[i] == '\n' && have < 2; i-- {
			have++
		}
		for ; have < c.lines; have++ {
			c.out = append(c.out, '\n')
		}
	}
	c.lines = 0
	c.space = false
}

func (c *converter) trimSpaces() {
	for len(c.out) > 0 && c.out[len(c.out)-1] == ' ' {
		c.out = c.out[:len(c.out)-1]
	}
}

func (c *converter) finish() string {
	return strings.TrimSpace(string(c.out))
}

// scanAttrs finds the end of a tag whose name ends at i: the index just
// past its '>', skipping quoted attribute values, or -1. It returns the
// attribute text too.
func scanAttrs(s string, i int) (string, int) {
	start := i
	var quote byte
	for ; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '>':
			return s[start:i], i + 1
		}
	}
	return "", -1
}

// attr returns the decoded value of the attribute name in attrs, the text
// between a tag's name and its '>'.
func attr(attrs, name string) string {
	for i := 0; i < len(attrs); {
		key, j := attrKey(attrs, i)
		if key == "" { // a stray '='
			i = j + 1
			continue
		}
		var val string
		val, i = attrValue(attrs, j)
		if strings.EqualFold(key, name) {
			return html.UnescapeString(val)
		}
	}
	return ""
}

// attrKey skips the white space and '/' at attrs[i:] and returns the
// attribute name that follows, "" if there is none (at a stray '=' or
// the end), and the index just past it.
func attrKey(attrs string, i int) (string, int) {
	for i < len(attrs) && (isSpace(attrs[i]) || attrs[i] == '/') {
		i++
	}
	j := i
	for j < len(attrs) && !isSpace(attrs[j]) && attrs[j] != '=' && attrs[j] != '/' {
		j++
	}
	return attrs[i:j], j
}

// attrValue reads what follows an attribute's name at attrs[i:]: white
// space, then, after an '=', the value, quoted or not (an unterminated
// quote runs to the end). It returns the value still encoded, "" without
// an '=', and the index past what it read, which may be past the end.
func attrValue(attrs string, i int) (string, int) {
	for i < len(attrs) && isSpace(attrs[i]) {
		i++
	}
	if i >= len(attrs) || attrs[i] != '=' {
		return "", i
	}
	i++
	for i < len(attrs) && isSpace(attrs[i]) {
		i++
	}
	if i < len(attrs) && (attrs[i] == '"' || attrs[i] == '\'') {
		q := attrs[i]
		end := strings.IndexByte(attrs[i+1:], q)
		if end < 0 {
			end = len(attrs) - i - 1
		}
		return attrs[i+1 : i+1+end], i + end + 2
	}
	k := i
	for k < len(attrs) && !isSpace(attrs[k]) {
		k++
	}
	return attrs[i:k], k
}

// indexFold is strings.Index ignoring ASCII case; needle is lower case.
func indexFold(s, needle string) int {
	for i := 0; i+len(needle) <= len(s); i++ {
		j := 0
		for j < len(needle) && lower(s[i+j]) == needle[j] {
			j++
		}
		if j == len(needle) {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
