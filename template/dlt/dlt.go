package dlt

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholder marks where a variable goes in registered template content.
const Placeholder = "{#var#}"

// MaxValueLen is the most characters (Unicode code points) one variable
// may hold.
const MaxValueLen = 30

// snippetLen is how many characters of template and text a MismatchError
// quotes.
const snippetLen = 24

// MismatchError says why a text does not match a template. Match returns
// it for every mismatch, so callers can show the point of difference or
// the offending value.
type MismatchError struct {
	// Offset is the 0-based character offset in the text of the first
	// difference, or of the start of the value that is too long.
	Offset int
	// Expected quotes the template from the point of difference ("" at the
	// end of the template); Found quotes the text there ("" at the end of
	// the text). Long quotes are cut and end in "…".
	Expected string
	Found    string
	// Var is the 1-based number of the placeholder whose value is longer
	// than MaxValueLen, and Len that value's length in characters; both
	// are zero for other mismatches.
	Var int
	Len int
}

// Error describes the mismatch, with 1-based character positions.
func (e *MismatchError) Error() string {
	if e.Var > 0 {
		return fmt.Sprintf("dlt: value %d (at character %d) is %d characters, over the limit of %d",
			e.Var, e.Offset+1, e.Len, MaxValueLen)
	}
	return fmt.Sprintf("dlt: text differs from the template at character %d: expected %s, found %s",
		e.Offset+1, quoteOrEnd(e.Expected), quoteOrEnd(e.Found))
}

func quoteOrEnd(s string) string {
	if s == "" {
		return "end of text"
	}
	return fmt.Sprintf("%q", s)
}

// Match reports whether text is content with each {#var#} replaced by a
// value of at most MaxValueLen characters, and returns those values in
// order. When several splits fit (a value may contain the literal text that
// follows it), the one with the shortest values first is returned; any
// split Fill turns back into text.
//
// Text or content that is not valid UTF-8 is an error of its own (SMS text
// is Unicode; content such as that cannot be registered, and Fill refuses
// it). On a mismatch the error is a *MismatchError. A value that cannot be made
// short enough names its placeholder (Var). Otherwise the error points at
// the first difference: the text matches the template up to that point
// (values included) and no further, found by taking the split that gets
// furthest into the template, and of those the earliest in the text. When
// the difference is right after a value, Expected starts at that value's
// {#var#}.
func Match(content, text string) ([]string, error) {
	if !utf8.ValidString(text) {
		return nil, errors.New("dlt: text is not valid UTF-8")
	}
	if !utf8.ValidString(content) {
		return nil, errors.New("dlt: the template is not valid UTF-8")
	}
	m := newMatcher(content, text)
	n := len(m.lits) - 1
	if n == 0 {
		if content == text {
			return nil, nil
		}
		m.fail(0, 0, text)
		return nil, m.mismatch()
	}
	if !strings.HasPrefix(text, m.lits[0]) {
		m.fail(0, 0, text)
		return nil, m.mismatch()
	}
	m.ends = make([]int, n)
	m.memo = make([]uint64, (n*(len(text)+1)+63)/64)
	if m.search(0, len(m.lits[0])) {
		values := make([]string, n)
		start := len(m.lits[0])
		for i, end := range m.ends {
			values[i] = text[start:end]
			start = end + len(m.lits[i+1])
		}
		return values, nil
	}
	if err := m.tooLong(); err != nil {
		return nil, err
	}
	return nil, m.mismatch()
}

// Fill replaces the placeholders of content with values, in order. It
// fails when the number of values differs from the number of placeholders
// or a value is longer than MaxValueLen characters or not valid UTF-8;
// values are otherwise taken as they are.
func Fill(content string, values []string) (string, error) {
	if !utf8.ValidString(content) {
		return "", errors.New("dlt: the template is not valid UTF-8")
	}
	if n := strings.Count(content, Placeholder); n != len(values) {
		return "", fmt.Errorf("dlt: the template has %d placeholders, got %d values", n, len(values))
	}
	size := len(content)
	for i, v := range values {
		if !utf8.ValidString(v) {
			return "", fmt.Errorf("dlt: value %d is not valid UTF-8", i+1)
		}
		if l := utf8.RuneCountInString(v); l > MaxValueLen {
			return "", fmt.Errorf("dlt: value %d is %d characters, over the limit of %d", i+1, l, MaxValueLen)
		}
		size += len(v) - len(Placeholder)
	}
	var b strings.Builder
	b.Grow(size)
	rest := content
	for _, v := range values {
		i := strings.Index(rest, Placeholder)
		b.WriteString(rest[:i])
		b.WriteString(v)
		rest = rest[i+len(Placeholder):]
	}
	b.WriteString(rest)
	return b.String(), nil
}

// matcher finds a split of text into the template's literals and values.
type matcher struct {
	content, text string
	// lits are the literal parts of content around the placeholders
	// (n placeholders give n+1 literals, possibly empty); litAt[k] is the
	// byte offset of lits[k] in content.
	lits  []string
	litAt []int
	// ends[i] is the end of value i on the split being tried.
	ends []int
	// memo marks (value i, start p) states known to fail, bit i*(len(text)+1)+p.
	memo []uint64
	// The furthest failure seen: tmplAt in content, textAt in text
	// (byte offsets), with tmplAt as large as possible, then textAt as
	// small as possible.
	tmplAt, textAt int
	failed         bool
}

func newMatcher(content, text string) *matcher {
	n := strings.Count(content, Placeholder)
	m := &matcher{content: content, text: text, lits: make([]string, 0, n+1), litAt: make([]int, 0, n+1)}
	at := 0
	for {
		i := strings.Index(content[at:], Placeholder)
		if i < 0 {
			m.lits = append(m.lits, content[at:])
			m.litAt = append(m.litAt, at)
			return m
		}
		m.lits = append(m.lits, content[at:at+i])
		m.litAt = append(m.litAt, at)
		at += i + len(Placeholder)
	}
}

// search reports whether value i, starting at text offset p, and everything
// after it can be matched; on success ends holds the split.
func (m *matcher) search(i, p int) bool {
	bit := i*(len(m.text)+1) + p
	if m.memo[bit/64]&(1<<(bit%64)) != 0 {
		return false
	}
	k := i + 1 // the literal after value i
	lit := m.lits[k]
	last := k == len(m.lits)-1
	q := p
	for r := 0; r <= MaxValueLen; r++ {
		if last {
			if m.text[q:] == lit {
				m.ends[i] = q
				return true
			}
			m.failAfterValue(k, p, q)
		} else if strings.HasPrefix(m.text[q:], lit) {
			m.ends[i] = q
			if m.search(i+1, q+len(lit)) {
				return true
			}
		} else {
			m.failAfterValue(k, p, q)
		}
		if q == len(m.text) {
			break
		}
		_, size := utf8.DecodeRuneInString(m.text[q:])
		q += size
	}
	m.memo[bit/64] |= 1 << (bit % 64)
	return false
}

// failAfterValue records that literal k did not match at q, after a value
// that started at p.
func (m *matcher) failAfterValue(k, p, q int) {
	c := commonPrefix(m.lits[k], m.text[q:])
	if c == 0 {
		// Nothing of the literal matched: the difference is best shown
		// from the value's placeholder on.
		m.record(m.litAt[k]-len(Placeholder), p)
		return
	}
	m.record(m.litAt[k]+c, q+c)
}

// fail records that literal k did not match at text offset q (k = 0, or
// the template without placeholders).
func (m *matcher) fail(k, q int, text string) {
	c := commonPrefix(m.lits[k], text[q:])
	m.record(m.litAt[k]+c, q+c)
}

func (m *matcher) record(tmplAt, textAt int) {
	if !m.failed || tmplAt > m.tmplAt || (tmplAt == m.tmplAt && textAt < m.textAt) {
		m.tmplAt, m.textAt, m.failed = tmplAt, textAt, true
	}
}

// commonPrefix returns the length in bytes of the longest common prefix of
// a and b that ends on a character boundary and not before a combining
// mark, so that a difference in a vowel sign of Devanagari is shown with
// its consonant.
func commonPrefix(a, b string) int {
	c := 0
	for c < len(a) && c < len(b) && a[c] == b[c] {
		c++
	}
	for c > 0 && (c < len(a) && !utf8.RuneStart(a[c]) || c < len(b) && !utf8.RuneStart(b[c])) {
		c--
	}
	for c > 0 && (startsWithMark(a[c:]) || startsWithMark(b[c:])) {
		_, size := utf8.DecodeLastRuneInString(a[:c])
		c -= size
	}
	return c
}

func startsWithMark(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.Is(unicode.M, r)
}

func (m *matcher) mismatch() *MismatchError {
	return &MismatchError{
		Offset:   utf8.RuneCountInString(m.text[:m.textAt]),
		Expected: snippet(m.content[m.tmplAt:]),
		Found:    snippet(m.text[m.textAt:]),
	}
}

// tooLong explains a failed match whose only fault is the length of a
// value: with values of any length the literals fit. Taking each literal at
// its first occurrence finds such a split whenever one exists, with the
// shortest values first; the first value over the limit is named.
func (m *matcher) tooLong() *MismatchError {
	n := len(m.lits) - 1
	last := m.lits[n]
	end := len(m.text) - len(last)
	pos := len(m.lits[0])
	if end < pos || !strings.HasSuffix(m.text, last) {
		return nil
	}
	starts := make([]int, n)
	ends := make([]int, n)
	for i := range n {
		starts[i] = pos
		if i+1 == n {
			ends[i] = end
			break
		}
		j := strings.Index(m.text[pos:end], m.lits[i+1])
		if j < 0 {
			return nil
		}
		ends[i] = pos + j
		pos += j + len(m.lits[i+1])
	}
	for i := range n {
		if l := utf8.RuneCountInString(m.text[starts[i]:ends[i]]); l > MaxValueLen {
			return &MismatchError{
				Offset:   utf8.RuneCountInString(m.text[:starts[i]]),
				Expected: snippet(m.content[m.litAt[i+1]-len(Placeholder):]),
				Found:    snippet(m.text[starts[i]:]),
				Var:      i + 1,
				Len:      l,
			}
		}
	}
	return nil
}

// snippet returns the first snippetLen characters of s, marked with "…"
// when cut.
func snippet(s string) string {
	n := 0
	for i := range s {
		if n == snippetLen {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
