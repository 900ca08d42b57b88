package nilness

import "testing"

type thing struct{}

func (*thing) Name() string { return "thing" }

type namer interface{ Name() string }

func TestIs(t *testing.T) {
	var typed *thing
	var iface namer = typed
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"untyped nil", nil, true},
		{"typed nil pointer", typed, true},
		{"typed nil in an interface", iface, true},
		{"nil map", map[string]int(nil), true},
		{"nil func", (func())(nil), true},
		{"pointer", &thing{}, false},
		{"value", thing{}, false},
		{"string", "", false},
	} {
		if got := Is(tc.v); got != tc.want {
			t.Errorf("%s: Is = %v, want %v", tc.name, got, tc.want)
		}
	}
}
