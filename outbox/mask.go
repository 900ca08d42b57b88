package outbox

import (
	"strings"

	"github.com/notifykit/notify/internal/mask"
)

// segment is a piece of a message's text: plain, or a one-time code that
// the page masks until clicked.
type segment struct {
	Text string
	Code bool
}

// segments splits text into plain pieces and m's codes, found by the
// rule the logs follow (package internal/mask).
func segments(text string, m *Message) []segment {
	spans := mask.CodeSpans(text, m.OTP, m.MaskedDigits)
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
// codeMask. Tags, attributes, styles and scripts lose only the declared
// code (a link such as /verify?code=4829135521 would show it): runs of
// digits there are left alone, since a colour such as #123456 is not a
// code.
func maskHTML(html string, m *Message) string {
	if !m.MaskedDigits && m.OTP == "" {
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
		b.WriteString(maskDeclared(tag, m))
		html = html[gt+1:]
		// The contents of style and script elements are not text.
		for _, raw := range []string{"style", "script"} {
			if len(tag) > len(raw) && strings.EqualFold(tag[1:1+len(raw)], raw) {
				end := strings.Index(strings.ToLower(html), "</"+raw)
				if end < 0 {
					end = len(html)
				}
				b.WriteString(maskDeclared(html[:end], m))
				html = html[end:]
			}
		}
	}
	return b.String()
}

func maskText(b *strings.Builder, text string, m *Message) {
	b.WriteString(mask.Replace(text, m.OTP, m.MaskedDigits, codeMask))
}

// maskDeclared replaces m's declared code alone in markup that is not
// text.
func maskDeclared(markup string, m *Message) string {
	return mask.Replace(markup, m.OTP, false, codeMask)
}
