package vendorhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"strings"
	"time"
)

// An Entry is one delivery report as a vendor sent it, flattened: its
// string and number fields under their lower-case names, values as
// strings (numbers as written). Vendors that post reports as loose JSON or
// forms name the same field several ways; Get takes the names in order of
// preference.
type Entry map[string]string

// Set records a field under its lower-case name; a name already in lower
// case wins over another spelling of it.
func (e Entry) Set(name, value string) {
	lower := strings.ToLower(name)
	if _, taken := e[lower]; taken && lower != name {
		return
	}
	e[lower] = value
}

// Get returns the value of the first of names (lower case) the entry has
// a non-empty value for, or "".
func (e Entry) Get(names ...string) string {
	for _, n := range names {
		if v := e[n]; v != "" {
			return v
		}
	}
	return ""
}

// Time returns the first of names whose value is a time ReportTime reads
// in zone; zero (the Notifier's now) when none is.
func (e Entry) Time(zone *time.Location, names ...string) time.Time {
	for _, n := range names {
		if t := ReportTime(e[n], zone); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// EntryShape says how a vendor wraps the reports of one callback, for
// ReadEntries: a report object, a list of them, or an object whose wrapper
// field holds them (as JSON itself or as JSON in a string).
type EntryShape struct {
	// IDFields are the names of a report's message ID, in order of
	// preference. A wrapped report without one takes its wrapper's, under
	// IDFields[0]. Required.
	IDFields []string
	// Wrappers are the fields that may hold reports, in order: {"data":
	// [...]}. In a form, the first of them whose value is JSON holds the
	// reports.
	Wrappers []string
	// StatusFields, when set, tell a report from a wrapper: an object with
	// a status of its own is a report even when a wrapper field holds an
	// object. A list under a wrapper field is always reports.
	StatusFields []string
	// MaxDepth bounds how many wrappers deep reports may be; deeper is an
	// error. Default 4.
	MaxDepth int
	// XMLHint ends the error for an XML body, which is not read: what the
	// vendor's panel should be set to instead.
	XMLHint string
}

// ReadEntries reads the reports of a non-empty callback body: JSON when it
// looks like JSON, whatever its Content-Type (vendors send JSON as forms
// too), an error for another body declared JSON or for XML, else a form
// (Form). It fails on malformed JSON, reports that are not objects, and
// reports wrapped deeper than s.MaxDepth; the errors are fit for a 400
// answer and never quote the body.
func (s *EntryShape) ReadEntries(contentType string, body []byte) ([]Entry, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, errors.New("an empty body")
	}
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case body[0] == '{' || body[0] == '[':
		return s.JSON(body)
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return nil, errors.New("the body is not a JSON object or array")
	case body[0] == '<' || strings.HasSuffix(ct, "/xml") || strings.HasSuffix(ct, "+xml"):
		return nil, errors.New("XML reports are not read: " + s.XMLHint)
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return s.Form(q)
}

// Form reads a form or a query: the reports a wrapper field holds as JSON
// (data=[...]), else one report of the fields' first values; none for an
// empty form.
func (s *EntryShape) Form(q url.Values) ([]Entry, error) {
	e := Entry{}
	for k, v := range q {
		if len(v) > 0 {
			e.Set(k, strings.TrimSpace(v[0]))
		}
	}
	for _, k := range s.Wrappers {
		if v := e[k]; strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
			return s.JSON([]byte(v))
		}
	}
	if len(e) == 0 {
		return nil, nil
	}
	return []Entry{e}, nil
}

// JSON reads one JSON value of reports.
func (s *EntryShape) JSON(body []byte) ([]Entry, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	var out []Entry
	if err := s.walk(v, "", 0, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeJSON decodes exactly one JSON value, numbers kept as written.
func decodeJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value in the body")
	}
	return v, nil
}

// walk appends the reports in v, depth wrappers deep; id is the message ID
// of the object that wraps v, which a report without its own takes.
func (s *EntryShape) walk(v any, id string, depth int, out *[]Entry) error {
	maxDepth := s.MaxDepth
	if maxDepth <= 0 {
		maxDepth = 4
	}
	if depth > maxDepth {
		return errors.New("reports wrapped too deeply")
	}
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			if _, ok := item.(map[string]any); !ok {
				return errors.New("a report must be a JSON object")
			}
			if err := s.walk(item, id, depth, out); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		e := s.object(v, id)
		inner, err := s.wrapped(v, e)
		if err != nil {
			return err
		}
		if inner != nil {
			return s.walk(inner, e.Get(s.IDFields...), depth+1, out)
		}
		*out = append(*out, e)
		return nil
	}
	return errors.New("a report must be a JSON object or array")
}

// object returns the string and number fields of the JSON object v as an
// entry; one without a message ID of its own takes id, if any.
func (s *EntryShape) object(v map[string]any, id string) Entry {
	e := Entry{}
	for k, val := range v {
		switch val := val.(type) {
		case string:
			e.Set(k, strings.TrimSpace(val))
		case json.Number:
			e.Set(k, val.String())
		}
	}
	if id != "" && e.Get(s.IDFields...) == "" {
		e[s.IDFields[0]] = id
	}
	return e
}

// wrapped returns the reports the object v (read as e) wraps in the first
// of s.Wrappers that holds some, or nil when v is a report itself. A
// wrapper may hold them as JSON in a string, {"data": "[...]"}, which must
// then decode.
func (s *EntryShape) wrapped(v map[string]any, e Entry) (any, error) {
	for _, k := range s.Wrappers {
		inner, ok := field(v, k)
		if !ok {
			continue
		}
		if str, isString := inner.(string); isString {
			str = strings.TrimSpace(str)
			if !strings.HasPrefix(str, "[") && !strings.HasPrefix(str, "{") {
				continue
			}
			decoded, err := decodeJSON([]byte(str))
			if err != nil {
				return nil, errors.New("a wrapped report list that is not JSON")
			}
			inner = decoded
		}
		switch inner.(type) {
		case []any:
			return inner, nil
		case map[string]any:
			if len(s.StatusFields) == 0 || e.Get(s.StatusFields...) == "" {
				return inner, nil
			}
		}
	}
	return nil, nil
}

// field returns v's field named k in any letter case, the exact name
// first.
func field(v map[string]any, k string) (any, bool) {
	if x, ok := v[k]; ok {
		return x, true
	}
	for name, x := range v {
		if strings.EqualFold(name, k) {
			return x, true
		}
	}
	return nil, false
}
