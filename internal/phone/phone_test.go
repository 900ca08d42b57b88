package phone

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	good := map[string]string{
		"9876543210":          "9876543210",
		"+91 98765 43210":     "9876543210",
		"+91-98765-43210":     "9876543210",
		"919876543210":        "9876543210",
		"09876543210":         "9876543210",
		"6000000000":          "6000000000",
		" 98765-432-10 ":      "9876543210",
		"+919876543210":       "9876543210",
		"7 8 9 0 1 2 3 4 5 6": "7890123456",
	}
	for in, want := range good {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                   "required",
		"987654321":          "10 digits, found 9",
		"98765432101":        "10 digits, found 11",
		"98765abc10":         `found "a"`,
		"5876543210":         "start with 6, 7, 8 or 9",
		"0000000000":         "start with 6",
		"+1 9876543210":      "Indian number",
		"++919876543210":     `found "+"`,
		"98765+43210":        `found "+"`,
		"919876543210123456": "too long",
		"१२३४५६७८९०":         "only digits",
	}
	for in, want := range bad {
		_, err := Normalize(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Normalize(%q) error = %v; want it to mention %q", in, err, want)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"9876543210", "+91 98765 43210", "0", "+", "91", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Normalize(s)
		if err != nil {
			return
		}
		if len(got) != 10 || got[0] < '6' || got[0] > '9' {
			t.Fatalf("Normalize(%q) = %q: not a 10-digit mobile number", s, got)
		}
		if again, err := Normalize(got); err != nil || again != got {
			t.Fatalf("Normalize not idempotent on %q: %q, %v", got, again, err)
		}
	})
}
