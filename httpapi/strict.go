package httpapi

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// The strict checks of a request body: what encoding/json lets pass and
// a client should hear about instead. encoding/json takes the last of two
// equal keys, matches keys to fields ignoring case (Unicode folding, so
// "meſſage" fills message) and turns invalid UTF-8 and lone surrogate
// escapes into U+FFFD; each of these means the gateway would act on
// something other than what the client believes it sent. The rules are
// those of I-JSON (RFC 7493) for names and strings, plus exact key
// matching.

// maxStrictErrors bounds the problems listed in one answer: a 1 MiB body
// of repeated keys must not make a 1 MiB error.
const maxStrictErrors = 16

// maxKeyShown bounds how much of a key an error repeats.
const maxKeyShown = 64

// maxDepth matches encoding/json's nesting limit; the scan runs only on
// bodies json.Unmarshal accepted, so it is a guard, not a rule.
const maxDepth = 10000

// linearKeys is how many keys of one object are compared pairwise before
// the check of duplicates switches to a map: small objects (every real
// request) stay allocation-free, and a body of 100,000 keys stays linear.
const linearKeys = 16

// bodyKeys returns the JSON names of a body struct's fields, in order.
func bodyKeys(t reflect.Type) []string {
	keys := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		if f.Anonymous && f.Tag.Get("json") == "" {
			keys = append(keys, bodyKeys(f.Type)...) // its fields are the body's, as encoding/json reads them
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	return keys
}

// The keys of each endpoint's body, from the structs that decode them, so
// that the two cannot drift apart.
var (
	smsKeys   = bodyKeys(reflect.TypeFor[smsBody]())
	otpKeys   = bodyKeys(reflect.TypeFor[otpBody]())
	emailKeys = bodyKeys(reflect.TypeFor[emailBody]())
	chatKeys  = bodyKeys(reflect.TypeFor[chatBody]())
	// pairKeys are the keys of a name/value pair in a "variables" array,
	// which record.Vars decodes with encoding/json as well.
	pairKeys = []string{"name", "value"}
)

// Where a value sits, for the keys its objects may have.
const (
	ctxNone = iota // keys are not checked against a list
	ctxTop         // the request object: the endpoint's keys
	ctxVars        // the value of "variables": an array's objects are pairs
	ctxPair        // a name/value pair: pairKeys
)

// Problems found in a string literal.
const (
	strOK = iota
	strBadUTF8
	strSurrogate
)

// pathSeg is one step of the path to a value: an object key, or (key
// nil) an array index.
type pathSeg struct {
	key []byte
	idx int
}

// strictScan walks a body once, recording each duplicate key, each key
// that matches a known key only when case is ignored, and each string
// holding invalid UTF-8 or a lone surrogate escape.
type strictScan struct {
	b      []byte
	i      int
	known  []string // keys of the request object
	closed bool     // a key of the request object not in known is refused
	vars   bool     // known holds "variables"
	fe     record.FieldErrors
	keys   [][]byte // keys of the objects being walked, innermost last
	path   []pathSeg
	depth  int
	bad    bool // not JSON after all: json.Unmarshal reports it
}

// checkStrict applies the strict rules to body, which json.Unmarshal has
// accepted, whose request object has the keys known. It returns nil or an
// InvalidArgument *notify.Error naming each problem (at most
// maxStrictErrors) by its path: "to", "variables.NAME",
// "variables[0].name"; "body" stands for the request object itself.
func checkStrict(body []byte, known []string) error { return checkStrictKeys(body, known, false) }

// checkStrictKeys is checkStrict; closed also refuses every key of the
// request object that is not in known (the endpoints beyond the spec,
// which no client of the spec's sends extra keys to).
func checkStrictKeys(body []byte, known []string, closed bool) error {
	s := scanPool.Get().(*strictScan)
	defer s.release()
	s.b, s.i, s.known, s.closed, s.vars, s.fe, s.depth, s.bad = body, 0, known, closed, false, nil, 0, false
	for _, k := range known {
		if k == "variables" {
			s.vars = true
		}
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil // unmarshal refused it already
	}
	s.object(ctxTop)
	if s.bad {
		return notify.Errorf(notify.CodeInvalidArgument, "malformed JSON: the body must be a JSON object")
	}
	return notify.InvalidFields(s.fe)
}

// scanPool keeps scanners with their key and path stacks, so that a
// request's scan allocates nothing.
var scanPool = sync.Pool{New: func() any {
	return &strictScan{keys: make([][]byte, 0, 32), path: make([]pathSeg, 0, 8)}
}}

// release returns s to scanPool without the body it references; stacks
// grown by a huge body are dropped.
func (s *strictScan) release() {
	clear(s.keys[:cap(s.keys)])
	clear(s.path[:cap(s.path)])
	s.b, s.known, s.fe = nil, nil, nil
	if cap(s.keys) > 1024 || cap(s.path) > 1024 {
		return
	}
	s.keys, s.path = s.keys[:0], s.path[:0]
	scanPool.Put(s)
}

// add records a problem of the value at the current path.
func (s *strictScan) add(msg string) {
	switch n := len(s.fe); {
	case n > maxStrictErrors:
		return
	case n == maxStrictErrors:
		s.fe.Add("body", "has more problems than these; fix them and send it again")
		return
	}
	s.fe.Add(pathString(s.path), msg)
}

// pathString renders a path as the error fields name values: a.b[2].c,
// or "body" for the request object. Long keys are cut short.
func pathString(p []pathSeg) string {
	if len(p) == 0 {
		return "body"
	}
	var sb strings.Builder
	for i, seg := range p {
		if seg.key == nil {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(seg.idx))
			sb.WriteByte(']')
			continue
		}
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(shortKey(seg.key))
	}
	return sb.String()
}

// shortKey returns k, cut to maxKeyShown bytes on a rune boundary.
func shortKey(k []byte) string {
	if len(k) <= maxKeyShown {
		return string(k)
	}
	n := maxKeyShown
	for n > 0 && !utf8.RuneStart(k[n]) {
		n--
	}
	return string(k[:n]) + "..."
}

func (s *strictScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value walks the value at s.i.
func (s *strictScan) value(ctx int) {
	if s.i >= len(s.b) {
		s.bad = true
		return
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.object(ctx)
	case c == '[':
		elem := ctxNone
		if ctx == ctxVars {
			elem = ctxPair
		}
		s.array(elem)
	case c == '"':
		_, _, prob, probAt := s.str()
		s.strProblem(false, prob, probAt)
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		s.i++
		for s.i < len(s.b) {
			c := s.b[s.i]
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				break
			}
			s.i++
		}
	default:
		s.bad = true
	}
}

func (s *strictScan) literal(lit string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.bad = true
		return
	}
	s.i += len(lit)
}

// strProblem records a problem str found; key says the string is a key,
// whose problem is its object's (the path does not hold the key yet).
func (s *strictScan) strProblem(key bool, prob, probAt int) {
	switch prob {
	case strBadUTF8:
		if key {
			s.add("has a key that is not valid UTF-8 (at offset " + strconv.Itoa(probAt) + " of the body); send text as UTF-8")
		} else {
			s.add("is not valid UTF-8 (at offset " + strconv.Itoa(probAt) + " of the body); send text as UTF-8")
		}
	case strSurrogate:
		const what = `a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its other half, at offset `
		if key {
			s.add("has a key holding " + what + strconv.Itoa(probAt) + " of the body)")
		} else {
			s.add("holds " + what + strconv.Itoa(probAt) + " of the body)")
		}
	}
}

// object walks the object at s.i; ctx says which keys it may have. Once
// s.bad is set the walk is abandoned, so only a normal return restores
// depth and keys.
func (s *strictScan) object(ctx int) {
	if s.depth++; s.depth > maxDepth {
		s.bad = true
		return
	}
	known := s.knownKeys(ctx)
	s.i++ // {
	start := len(s.keys)
	var seen map[string]struct{} // when the object outgrows linearKeys
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return
	}
	for !s.bad {
		key := s.key()
		if s.bad {
			return
		}
		s.path = append(s.path, pathSeg{key: key})
		seen = s.checkDup(key, start, seen)
		child := s.checkKnown(ctx, known, key)
		if !s.colon() {
			return
		}
		s.value(child)
		s.path = s.path[:len(s.path)-1]
		if s.next('}') {
			s.keys = s.keys[:start]
			s.depth--
			return
		}
	}
}

// knownKeys returns the keys an object in ctx may have, or nil where keys
// are not checked.
func (s *strictScan) knownKeys(ctx int) []string {
	switch ctx {
	case ctxTop:
		return s.known
	case ctxPair:
		return pairKeys
	}
	return nil
}

// key walks the key at s.i (after any white space) and returns it
// unescaped, having recorded any problem of its string. It sets s.bad
// if there is no string there.
func (s *strictScan) key() []byte {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bad = true
		return nil
	}
	raw, esc, prob, probAt := s.str()
	if s.bad {
		return nil
	}
	key := raw
	if esc {
		key = unescape(raw)
	}
	s.strProblem(true, prob, probAt)
	return key
}

// checkDup records key, at the top of s.path, as a duplicate if the object
// whose keys start at s.keys[start] has had it already, and adds it to
// them. Up to linearKeys keys it compares them pairwise, which allocates
// nothing; then it moves them to seen, which it returns (nil until then),
// so that a huge object stays linear.
func (s *strictScan) checkDup(key []byte, start int, seen map[string]struct{}) map[string]struct{} {
	dup := false
	if seen != nil {
		if _, dup = seen[string(key)]; !dup {
			seen[string(key)] = struct{}{}
		}
	} else {
		for _, k := range s.keys[start:] {
			if bytes.Equal(k, key) {
				dup = true
				break
			}
		}
		s.keys = append(s.keys, key)
		if n := len(s.keys) - start; n > linearKeys {
			seen = make(map[string]struct{}, 2*n)
			for _, k := range s.keys[start:] {
				seen[string(k)] = struct{}{}
			}
		}
	}
	if dup {
		s.add("is a duplicate key: send each key once")
	}
	return seen
}

// checkKnown records key, at the top of s.path, if an object in ctx may
// not have it: it matches one of known only when case is ignored, or the
// request object is closed and it is not in known. It returns the
// context of key's value.
func (s *strictScan) checkKnown(ctx int, known []string, key []byte) int {
	if known == nil {
		return ctxNone
	}
	if i := indexKey(known, key); i >= 0 {
		if ctx == ctxTop && s.vars && known[i] == "variables" {
			return ctxVars
		}
	} else if want := foldKey(known, key); want != "" {
		s.add(`is an unknown key; keys are case-sensitive: did you mean "` + want + `"?`)
	} else if ctx == ctxTop && s.closed {
		s.add("is an unknown key; this endpoint takes " + strings.Join(known, ", "))
	}
	return ctxNone
}

// colon walks the ':' after a key and the white space around it,
// reporting whether it was there; if not, it sets s.bad.
func (s *strictScan) colon() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		s.bad = true
		return false
	}
	s.i++
	s.ws()
	return true
}

// next walks what follows an object's member: a ',' before the next one
// or the closing end. It reports whether end closed the object; anything
// else sets s.bad.
func (s *strictScan) next(end byte) bool {
	s.ws()
	if s.i >= len(s.b) {
		s.bad = true
		return false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
	case end:
		s.i++
		return true
	default:
		s.bad = true
	}
	return false
}

// array walks the array at s.i; elem is the context of its elements.
func (s *strictScan) array(elem int) {
	if s.depth++; s.depth > maxDepth {
		s.bad = true
		return
	}
	s.i++ // [
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return
	}
	for idx := 0; !s.bad; idx++ {
		s.ws()
		s.path = append(s.path, pathSeg{idx: idx})
		s.value(elem)
		s.path = s.path[:len(s.path)-1]
		s.ws()
		if s.i >= len(s.b) {
			s.bad = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return
		default:
			s.bad = true
		}
	}
}

// indexKey returns the index of key in known, or -1.
func indexKey(known []string, key []byte) int {
	for i, k := range known {
		if string(key) == k {
			return i
		}
	}
	return -1
}

// foldKey returns the known key that key matches under Unicode case
// folding, as encoding/json matches them, or "".
func foldKey(known []string, key []byte) string {
	ks := string(key)
	for _, k := range known {
		if strings.EqualFold(ks, k) {
			return k
		}
	}
	return ""
}

// str walks the string literal at s.i (an opening quote), leaving s.i
// after its closing quote. It returns the bytes between the quotes,
// whether they hold escapes, and the first problem with its byte offset.
func (s *strictScan) str() (raw []byte, esc bool, prob, probAt int) {
	b := s.b
	start := s.i + 1
	i := start
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, prob, probAt
		case c == '\\':
			esc = true
			next, lone, ok := escape(b, i)
			if !ok {
				s.bad = true
				return nil, false, strOK, 0
			}
			if lone && prob == strOK {
				prob, probAt = strSurrogate, i
			}
			i = next
		case c < 0x20:
			s.bad = true
			return nil, false, strOK, 0
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 && prob == strOK {
				prob, probAt = strBadUTF8, i
			}
			i += size
		}
	}
	s.bad = true
	return nil, false, strOK, 0
}

// escape reads the escape at b[i] (a backslash) in a string literal and
// returns the index after it; a surrogate pair escaped as two \u escapes
// is read whole. lone reports an escaped surrogate without its other half,
// and ok is false if the escape is not one JSON has. Escapes are rare, so
// str keeps its loop over plain bytes tight and leaves them to this.
func escape(b []byte, i int) (next int, lone, ok bool) {
	if i+1 >= len(b) {
		return 0, false, false
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, false, true
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return 0, false, false
		}
		i += 6
		if r < 0xD800 || r > 0xDFFF {
			return i, false, true
		}
		if r < 0xDC00 && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
			if r2, ok := hex4(b, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
				return i + 6, false, true
			}
		}
		return i, true, true
	}
	return 0, false, false
}

// hex4 decodes the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape decodes the escapes of a string literal's contents that str
// accepted, as encoding/json does (a lone surrogate becomes U+FFFD: str
// has reported it). Keys with escapes are rare; this allocates.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(raw, i+2)
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if r2, ok := hex4(raw, i+2); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
					i += 6
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // " \ /
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}
