package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestVarsUnmarshal(t *testing.T) {
	good := map[string]Vars{
		`{"NAME":"Asha","OTP":"123456"}`: {"NAME": "Asha", "OTP": "123456"},
		`["Asha","123456"]`:              {"1": "Asha", "2": "123456"},
		`[{"name":"NAME","value":"Asha"},{"name":"AMOUNT","value":42}]`: {"NAME": "Asha", "AMOUNT": "42"},
		`{"AMOUNT": 1234.50}`: {"AMOUNT": "1234.50"},
		`[]`:                  {},
		`null`:                nil,
	}
	for in, want := range good {
		var v Vars
		if err := json.Unmarshal([]byte(in), &v); err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: got %v, %v; want %v", in, v, err, want)
		}
	}
	bad := map[string]string{
		`"text"`:                         "must be an object",
		`42`:                             "must be an object",
		`{"A":true}`:                     "variables.A: must be a string, not a boolean",
		`{"A":null}`:                     "variables.A: must be a string, not null",
		`{"A":{"B":"c"}}`:                "variables.A: must be a string, not an object",
		`["a",{"name":"B","value":"b"}]`: "variables[1]: mixes",
		`[{"value":"b"}]`:                `needs a non-empty "name"`,
		`[{"name":"A","value":"1"},{"name":"A","value":"2"}]`: `"A" given twice`,
		`[["x"]]`:        "variables[0]: must be a string, not an array",
		`[{"name":"A"}]`: "variables[0].value: missing value",
	}
	for in, want := range bad {
		var v Vars
		err := json.Unmarshal([]byte(in), &v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v; want it to mention %q", in, err, want)
		}
	}
}

func FuzzVarsUnmarshal(f *testing.F) {
	for _, s := range []string{`{"A":"b"}`, `["x","y"]`, `[{"name":"A","value":"b"}]`, `null`, `[1,2]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v Vars
		_ = json.Unmarshal([]byte(s), &v) // must not panic
	})
}
