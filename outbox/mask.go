package outbox

import "strings"

// segment is a piece of a message's text: plain, or a one-time code that
// the page masks until clicked.
type segment struct {
	Text string
	Code bool
}

// Bounds of what counts as a one-time code in a message that carries one
// but whose code the channel did not name (an OTP variable of a template):
// a run of this many digits, not part of a longer run.
const (
	minCodeDigits = 4
	maxCodeDigits = 8
)

// codeSpans returns the byte ranges of text that hold m's one-time code:
// every occurrence of m.OTP, and, since a template may have put the code
// anywhere, every run of 4 to 8 digits when m carries a code.
func codeSpans(text string, m *Message) [][2]int {
	if !m.CarriesOTP && m.OTP == "" {
		return nil
	}
	var spans [][2]int
	for i := 0; i < len(text); {
		if m.OTP != "" && strings.HasPrefix(text[i:], m.OTP) {
			spans = append(spans, [2]int{i, i + len(m.OTP)})
			i += len(m.OTP)
			continue
		}
		if isDigit(text[i]) && (i == 0 || !isDigit(text[i-1])) {
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			if n := j - i; m.CarriesOTP && n >= minCodeDigits && n <= maxCodeDigits {
				spans = append(spans, [2]int{i, j})
			}
			i = j
			continue
		}
		i++
	}
	return spans
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// segments splits text into plain pieces and the codes codeSpans finds.
func segments(text string, m *Message) []segment {
	spans := codeSpans(text, m)
	if len(spans) == 0 {
		return []segment{{Text: text}}
	}
	var out []segment
	at := 0
	for _, sp := range spans {
		if sp[0] > at {
			out = append(out, segment{Text: text[at:sp[0]]})
		}
		out = append(out, segment{Text: text[sp[0]:sp[1]], Code: true})
		at = sp[1]
	}
	if at < len(text) {
		out = append(out, segment{Text: text[at:]})
	}
	return out
}

// codeMask stands for a masked code.
const codeMask = "••••••"

// maskHTML replaces m's codes in the text of an HTML document with
// codeMask, leaving tags, attributes, styles and scripts alone (a colour
// such as #123456 is not a code).
func maskHTML(html string, m *Message) string {
	if !m.CarriesOTP && m.OTP == "" {
		return html
	}
	var b strings.Builder
	for len(html) > 0 {
		lt := strings.IndexByte(html, '<')
		if lt < 0 {
			lt = len(html)
		}
		maskText(&b, html[:lt], m)
		html = html[lt:]
		if html == "" {
			break
		}
		gt := strings.IndexByte(html, '>')
		if gt < 0 {
			b.WriteString(html)
			break
		}
		tag := html[:gt+1]
		b.WriteString(tag)
		html = html[gt+1:]
		// The contents of style and script elements are not text.
		for _, raw := range []string{"style", "script"} {
			if len(tag) > len(raw) && strings.EqualFold(tag[1:1+len(raw)], raw) {
				end := strings.Index(strings.ToLower(html), "</"+raw)
				if end < 0 {
					end = len(html)
				}
				b.WriteString(html[:end])
				html = html[end:]
			}
		}
	}
	return b.String()
}

func maskText(b *strings.Builder, text string, m *Message) {
	at := 0
	for _, sp := range codeSpans(text, m) {
		b.WriteString(text[at:sp[0]])
		b.WriteString(codeMask)
		at = sp[1]
	}
	b.WriteString(text[at:])
}
