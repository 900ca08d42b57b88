package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Vars are the values of a template's placeholders, name to value. All
// values are strings.
//
// Positional values, as the cloud channel uses them, are keyed by their
// position as a string: "1", "2", ... A template with named variables that
// receives only positional values reads them in the order it declares its
// variables.
//
// Vars decodes from JSON in three shapes:
//
//	{"NAME": "Asha", "OTP": "123456"}        an object, name to value
//	["Asha", "123456"]                       an array of values: positional, "1", "2", ...
//	[{"name": "NAME", "value": "Asha"}]      an array of name/value pairs
//
// Values may be JSON strings or numbers (a number keeps its literal text,
// so 0042 stays as written by the client only when sent as a string).
// Anything else, such as null, booleans, nested objects or a mix of the two
// array shapes, is an error that names the offending entry.
type Vars map[string]string

// UnmarshalJSON implements json.Unmarshaler for the shapes documented on
// Vars. JSON null leaves Vars nil.
func (v *Vars) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	var (
		out Vars
		err error
	)
	switch {
	case len(data) == 0 || string(data) == "null":
	case data[0] == '{':
		out, err = varsObject(data)
	case data[0] == '[':
		out, err = varsArray(data)
	default:
		err = fmt.Errorf("variables: must be an object (name to value) or an array, not %s", jsonKind(data))
	}
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// varsObject reads {"NAME": "Asha", ...}.
func varsObject(data []byte) (Vars, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("variables: %v", err)
	}
	out := make(Vars, len(raw))
	for name, val := range raw {
		s, err := varString(val)
		if err != nil {
			return nil, fmt.Errorf("variables.%s: %v", name, err)
		}
		out[name] = s
	}
	return out, nil
}

// varsArray reads an array of values (positional: "1", "2", ...) or of
// name/value pairs, whichever its first element is; a mix is an error.
func varsArray(data []byte) (Vars, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("variables: %v", err)
	}
	out := make(Vars, len(raw))
	pairs := false
	for i, el := range raw {
		el = bytes.TrimSpace(el)
		isPair := len(el) > 0 && el[0] == '{'
		if i == 0 {
			pairs = isPair
		} else if isPair != pairs {
			return nil, fmt.Errorf("variables[%d]: mixes name/value pairs with plain values", i)
		}
		var err error
		if isPair {
			err = out.addPair(i, el)
		} else {
			var s string
			if s, err = varString(el); err == nil {
				out[strconv.Itoa(i+1)] = s
			} else {
				err = fmt.Errorf("variables[%d]: %v", i, err)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addPair adds the i-th element el, a {"name", "value"} pair, to v.
func (v Vars) addPair(i int, el json.RawMessage) error {
	var p struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(el, &p); err != nil {
		return fmt.Errorf("variables[%d]: %v", i, err)
	}
	if p.Name == "" {
		return fmt.Errorf("variables[%d]: a name/value pair needs a non-empty \"name\"", i)
	}
	s, err := varString(p.Value)
	if err != nil {
		return fmt.Errorf("variables[%d].value: %v", i, err)
	}
	if _, dup := v[p.Name]; dup {
		return fmt.Errorf("variables[%d]: %q given twice", i, p.Name)
	}
	v[p.Name] = s
	return nil
}

func varString(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("missing value")
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", err
		}
		return n.String(), nil
	}
	return "", fmt.Errorf("must be a string, not %s", jsonKind(raw))
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	}
	return "a number"
}
