package smtp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
)

// The message is built here rather than by go-simple-mail's Email type:
// for a 1 KB HTML body, Email.GetMessage costs tens of microseconds and
// nearly two hundred allocations, over half of it a regular-expression
// scan of the HTML for inline images this provider never attaches. The
// result is handed to go-simple-mail's SendMessage, which does the SMTP
// transport. Headers and bodies follow RFC 5322, 2045-2047 and 8058.

// maxLine is the longest line RFC 5322 allows, without its CRLF.
const maxLine = 998

// foldAt is the line length RFC 5322 recommends; headers are folded at
// the last space before it where they can be.
const foldAt = 78

// message is one built message.
type message struct {
	data string
	// id is the Message-ID without its angle brackets.
	id string
}

// wire holds an envelope's addresses as they go to the relay: each
// domain in ASCII (rules.ASCIIDomain), each local part as it is.
type wire struct {
	to, replyTo string
	// cc and bcc are the further recipients; bcc goes in RCPT TO only.
	cc, bcc []string
	// utf8 lists the fields ("to", "reply_to", "cc[0]") whose address keeps a
	// non-ASCII local part, which only a relay with SMTPUTF8 carries
	// (RFC 6531), in the envelope or in a header (RFC 6532).
	utf8 []string
}

// checkEnvelope reports the first problem of env that would make a bad
// or unsafe message, as an InvalidArgument error, and returns its
// addresses as they go to the relay.
func checkEnvelope(env *notify.Envelope) (wire, error) {
	if env == nil || email.MessageOf(env) == nil {
		return wire{}, notify.InvalidField("message", "the envelope has no e-mail content")
	}
	var fe record.FieldErrors
	var w wire
	w.to = checkAddress(&fe, &w, "to", env.To)
	m := email.MessageOf(env)
	if m.ReplyTo != "" {
		w.replyTo = checkAddress(&fe, &w, "reply_to", m.ReplyTo)
	}
	if n := 1 + len(m.Cc) + len(m.Bcc); n > email.MaxRecipients {
		fe.Addf("cc", "to, cc and bcc together must be at most %d addresses, not %d", email.MaxRecipients, n)
	} else {
		for i, a := range m.Cc {
			w.cc = append(w.cc, checkAddress(&fe, &w, fmt.Sprintf("cc[%d]", i), a))
		}
		for i, a := range m.Bcc {
			w.bcc = append(w.bcc, checkAddress(&fe, &w, fmt.Sprintf("bcc[%d]", i), a))
		}
	}
	if hasCRLF(m.Subject) {
		fe.Add("subject", "must not contain CR, LF or NUL")
	}
	if hasCRLF(m.FromName) {
		fe.Add("from_name", "must not contain CR, LF or NUL")
	} else if why := rules.DisplayName(m.FromName); why != "" {
		fe.Add("from_name", why)
	}
	if m.HTML == "" && m.Text == "" {
		fe.Add("message", "the e-mail has no body")
	}
	return w, notify.InvalidFields(fe)
}

// rcpt returns every recipient, for RCPT TO: to, cc, bcc.
func (w *wire) rcpt() []string {
	out := make([]string, 0, 1+len(w.cc)+len(w.bcc))
	out = append(out, w.to)
	out = append(out, w.cc...)
	return append(out, w.bcc...)
}

// checkAddress adds to fe why s is not a bare address whose characters
// keep rules.AddressChars and whose domain is a valid domain name, the
// rules the e-mail channel applies too, and returns s as it goes to the
// relay (rules.ASCIIAddress), noting field in w.utf8 when its local part
// is not ASCII.
func checkAddress(fe *record.FieldErrors, w *wire, field, s string) string {
	bad := rules.AddressChars(s)
	switch {
	case hasCRLF(s):
		fe.Add(field, "must not contain CR, LF or NUL")
	case bad != "":
		fe.Add(field, bad)
	case len(s) > maxTokenAddress:
		fe.Addf(field, "must be at most %d bytes, the longest address SMTP carries", maxTokenAddress)
	case !isBareAddress(s):
		fe.Add(field, "must be a bare e-mail address such as name@example.com")
	default:
		a, ok := rules.ASCIIAddress(s)
		switch {
		case !ok:
			fe.Add(field, "must have a valid internationalised domain name after the @, such as bücher.example")
		case len(a) > maxTokenAddress:
			fe.Addf(field, "must be at most %d bytes once its domain is in ASCII, the longest address SMTP carries", maxTokenAddress)
		default:
			if !isASCII(a) {
				w.utf8 = append(w.utf8, field)
			}
			return a
		}
	}
	return ""
}

func isBareAddress(s string) bool {
	if s == "" || hasCRLF(s) || rules.AddressChars(s) != "" {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// messageID returns the Message-ID for env: the notify message ID when it
// is a plain token (so a retried message keeps its Message-ID and
// receivers can spot duplicates), else a random one.
func messageID(env *notify.Envelope, domain string) string {
	id := env.ID
	if !isToken(id) {
		var b [16]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		id = hex.EncodeToString(b[:])
	}
	return id + "@" + domain
}

func isToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// build is buildFiles for a message whose attachments, if any, are
// all Data.
func build(buf []byte, st *settings, env *notify.Envelope, w wire, now time.Time) (message, []byte, error) {
	return buildFiles(buf, st, env, w, now, nil)
}

// buildFiles writes the whole message into buf and returns it as a
// string. env must have passed checkEnvelope, which returned w, and
// checkAttachments. The address headers carry the addresses as they go
// to the relay: domains in ASCII. Bcc appears in no header. Attachment
// URLs are fetched with f (nil: none may be a URL); its errors are
// returned as they are, certain refusals.
func buildFiles(buf []byte, st *settings, env *notify.Envelope, w wire, now time.Time, f *fetcher) (message, []byte, error) {
	m := email.MessageOf(env)
	id := messageID(env, st.fromDomain)
	b := buf[:0]

	b = append(b, "Date: "...)
	b = now.AppendFormat(b, time.RFC1123Z)
	b = append(b, "\r\nMessage-ID: <"...)
	b = append(b, id...)
	b = append(b, ">\r\n"...)

	name := st.FromName
	if m.FromName != "" {
		name = m.FromName
	}
	b = appendHeader(b, "From", fromHeader(name, st.fromAddr))
	b = appendHeader(b, "To", (&mail.Address{Address: w.to}).String())
	if len(w.cc) > 0 {
		list := make([]string, len(w.cc))
		for i, a := range w.cc {
			list[i] = (&mail.Address{Address: a}).String()
		}
		b = appendHeader(b, "Cc", strings.Join(list, ", "))
	}
	if w.replyTo != "" {
		b = appendHeader(b, "Reply-To", (&mail.Address{Address: w.replyTo}).String())
	}
	b = appendHeader(b, "Subject", encodeText(m.Subject))
	b = append(b, "MIME-Version: 1.0\r\n"...)

	if m.Purpose == email.PurposeCampaign {
		if st.unsubURL == "" && st.unsubMail == "" {
			// A gap in the configuration, found before any I/O: a certain
			// refusal, not retried, refunded.
			return message{}, b, notify.Errorf(notify.CodeRejected,
				"smtp: campaign mail needs ListUnsubscribeURL or ListUnsubscribeMailto in the configuration of purpose %q", string(m.Purpose))
		}
		var targets []string
		if st.unsubURL != "" {
			targets = append(targets, "<"+unsubscribeURL(st, env)+">")
		}
		if st.unsubMail != "" {
			targets = append(targets, "<"+st.unsubMail+">")
		}
		b = appendHeader(b, "List-Unsubscribe", strings.Join(targets, ", "))
		if st.unsubURL != "" {
			// RFC 8058: one-click needs the HTTPS URL to identify the
			// recipient by itself; a mailto alone does not qualify.
			b = append(b, "List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"...)
		}
	}

	if len(m.Attachments) > 0 {
		// multipart/mixed: the body (one text part, or the alternative
		// of text and HTML) first, then each file.
		mixed := newBoundary(m.Text, m.HTML)
		b = append(b, "Content-Type: multipart/mixed; boundary=\""...)
		b = append(b, mixed...)
		b = append(b, "\"\r\n\r\n--"...)
		b = append(b, mixed...)
		b = append(b, "\r\n"...)
		b = appendBody(b, m)
		var err error
		for i := range m.Attachments {
			b = append(b, "\r\n--"...)
			b = append(b, mixed...)
			b = append(b, "\r\n"...)
			if b, err = appendAttachment(b, i, &m.Attachments[i], f); err != nil {
				return message{}, b, err
			}
		}
		b = append(b, "\r\n--"...)
		b = append(b, mixed...)
		b = append(b, "--\r\n"...)
		return message{data: string(b), id: id}, b, nil
	}
	return finish(b, id, func(b []byte) []byte { return appendBody(b, m) })
}

// appendBody appends the Content-Type of m's body and the body: one text
// part, or a multipart/alternative of text and HTML, without a line break
// at its end.
func appendBody(b []byte, m *email.Message) []byte {
	if m.HTML == "" {
		return appendPart(b, "text/plain", m.Text)
	}
	if m.Text == "" {
		return appendPart(b, "text/html", m.HTML)
	}
	boundary := newBoundary(m.Text, m.HTML)
	b = append(b, "Content-Type: multipart/alternative; boundary=\""...)
	b = append(b, boundary...)
	b = append(b, "\"\r\n\r\n"...)
	for _, p := range [2]struct{ typ, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		b = append(b, "--"...)
		b = append(b, boundary...)
		b = append(b, "\r\n"...)
		b = appendPart(b, p.typ, p.body)
		b = append(b, "\r\n"...)
	}
	b = append(b, "--"...)
	b = append(b, boundary...)
	return append(b, "--\r\n"...)
}

func finish(b []byte, id string, part func([]byte) []byte) (message, []byte, error) {
	b = part(b)
	if b[len(b)-1] != '\n' {
		b = append(b, "\r\n"...) // the final dot needs a line of its own
	}
	return message{data: string(b), id: id}, b, nil
}

// appendPart appends a text part's Content-Type and
// Content-Transfer-Encoding headers, a blank line and its body, with no
// line break added at its end (in a multipart body, the CRLF before the
// boundary belongs to the boundary). Plain
// ASCII with short lines travels as 7bit; anything else as
// quoted-printable, which keeps lines short and 8-bit bytes safe on any
// server.
func appendPart(b []byte, typ, body string) []byte {
	b = append(b, "Content-Type: "...)
	b = append(b, typ...)
	b = append(b, "; charset=utf-8\r\n"...)
	if is7bit(body) {
		b = append(b, "Content-Transfer-Encoding: 7bit\r\n\r\n"...)
		b = appendCRLF(b, body)
	} else {
		b = append(b, "Content-Transfer-Encoding: quoted-printable\r\n\r\n"...)
		w := bytesWriter{b}
		qp := quotedprintable.NewWriter(&w)
		// Line endings are made CRLF first, as for 7bit parts: the
		// encoder mishandles a lone CR followed by an encoded byte.
		_, _ = qp.Write(appendCRLF(nil, body)) // writes to memory cannot fail
		_ = qp.Close()
		b = w.b
	}
	return b
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// is7bit reports whether body is ASCII without NUL whose lines (split at
// CR, LF or CRLF) are at most maxLine bytes.
func is7bit(body string) bool {
	line := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\r' || c == '\n':
			line = 0
			continue
		case c == 0 || c >= 0x80:
			return false
		}
		line++
		if line > maxLine {
			return false
		}
	}
	return true
}

// appendCRLF appends body with every line ending (CR, LF or CRLF) made
// CRLF, as SMTP requires.
func appendCRLF(b []byte, body string) []byte {
	for len(body) > 0 {
		i := strings.IndexAny(body, "\r\n")
		if i < 0 {
			return append(b, body...)
		}
		b = append(b, body[:i]...)
		b = append(b, "\r\n"...)
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
	return b
}

// newBoundary returns a random MIME boundary that occurs in no part. The
// "=_" in it cannot occur in quoted-printable output; 7bit parts are
// checked.
func newBoundary(parts ...string) string {
	for {
		var r [12]byte
		_, _ = rand.Read(r[:])
		bd := "=_" + hex.EncodeToString(r[:])
		clash := false
		for _, p := range parts {
			if strings.Contains(p, bd) {
				clash = true
			}
		}
		if !clash {
			return bd
		}
	}
}

// encodeText returns s as a header's unstructured text: as is when it is
// printable ASCII whose words are separated by single spaces and fit on a
// line, else as RFC 2047 encoded words, which carry any text exactly
// (readers collapse and trim white space at folds) and fold.
func encodeText(s string) string {
	if !needsWords(s) {
		return s
	}
	return qWords(s)
}

func needsWords(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' || strings.Contains(s, "=?") {
		return true // edge spaces would be trimmed; "=?" would be decoded
	}
	word := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if s[i-1] == ' ' {
				return true
			}
			word = 0
			continue
		}
		if c < '!' || c > '~' {
			return true
		}
		if word++; word > maxLine-len("Subject: ") {
			return true
		}
	}
	return false
}

// qWords encodes s as RFC 2047 "Q" encoded words of at most 75
// characters, separated by spaces, never splitting a UTF-8 sequence. Only
// letters, digits and "!*+-/" stay literal, the set that RFC 2047 5(3)
// allows even in display names.
func qWords(s string) string {
	const (
		prefix = "=?utf-8?q?"
		room   = 75 - len(prefix) - len("?=")
		hexd   = "0123456789ABCDEF"
	)
	var b strings.Builder
	b.Grow(len(s) * 2)
	n := 0 // bytes in the current word
	for i := 0; i < len(s); {
		// One rune at a time, so a word never ends inside one.
		size := 1
		if c := s[i]; c >= 0x80 {
			_, size = utf8.DecodeRuneInString(s[i:])
		}
		enc := 0
		for j := i; j < i+size; j++ {
			if qLiteral(s[j]) || s[j] == ' ' {
				enc++
			} else {
				enc += 3
			}
		}
		if n == 0 || n+enc > room {
			if n > 0 {
				b.WriteString("?= ")
			}
			b.WriteString(prefix)
			n = 0
		}
		for j := i; j < i+size; j++ {
			switch c := s[j]; {
			case c == ' ':
				b.WriteByte('_')
			case qLiteral(c):
				b.WriteByte(c)
			default:
				b.WriteByte('=')
				b.WriteByte(hexd[c>>4])
				b.WriteByte(hexd[c&15])
			}
		}
		n += enc
		i += size
	}
	if n > 0 {
		b.WriteString("?=")
	}
	return b.String()
}

func qLiteral(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '!' || c == '*' || c == '+' || c == '-' || c == '/'
}

// fromHeader formats the From header's value: a quoted display name
// when it is short printable ASCII, else encoded words (net/mail would
// make one unfoldable quoted string of a long name, and its encoder leaves
// characters such as '\\' that its own parser refuses in encoded words).
func fromHeader(name, addr string) string {
	if len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r > '~' }) {
		return qWords(name) + " " + (&mail.Address{Address: addr}).String()
	}
	return (&mail.Address{Name: name, Address: addr}).String()
}

// appendHeader appends "name: value" CRLF, folded before spaces so that
// lines stay within foldAt characters where the words allow it.
func appendHeader(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	line := len(name) + 2
	for value != "" {
		// Take the next word with its leading spaces.
		i := 0
		for i < len(value) && value[i] == ' ' {
			i++
		}
		j := strings.IndexByte(value[i:], ' ')
		if j < 0 {
			j = len(value)
		} else {
			j += i
		}
		if line+j > foldAt && i == 1 && line > len(name)+2 {
			// Fold: the space that starts the word becomes the
			// continuation line's leading white space. Only single
			// spaces are folded, since readers collapse white space at a
			// fold.
			b = append(b, "\r\n"...)
			line = 0
		}
		b = append(b, value[:j]...)
		line += j
		value = value[j:]
	}
	return append(b, "\r\n"...)
}

// unsubscribeURL fills the placeholders of st's ListUnsubscribeURL for
// the recipient of env. The token names env's account too (version 2,
// AccountUnsubscribeToken), so that UnsubscribeHandler records the
// unsubscribe on that account's list; an envelope without an account, or
// with an ID a token cannot carry, gets the address-only token.
func unsubscribeURL(st *settings, env *notify.Envelope) string {
	u, to := st.unsubURL, env.To
	if st.unsubKeys != nil {
		// The token is base64url: nothing in it needs escaping.
		tok := st.unsubKeys.token(to)
		if env.Account != nil {
			if t, err := st.unsubKeys.accountToken(env.Account.ID, to); err == nil {
				tok = t
			}
		}
		return strings.ReplaceAll(u, "{token}", tok)
	}
	return strings.ReplaceAll(u, "{email}", url.QueryEscape(to))
}
