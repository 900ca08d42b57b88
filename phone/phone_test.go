package phone

import (
	"strings"
	"testing"
)

// Canonical drops the separators people write and keeps only an E.164
// number; the form a channel's envelope already has costs no copy.
func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"+919876543210":     "+919876543210",
		" +91 98765-43210 ": "+919876543210",
		"+1 (415) 555-0100": "+14155550100",
		"9876543210":        "",
		"+91 98765 4321x":   "",
		"":                  "",
	} {
		got, ok := Canonical(in)
		if ok != (want != "") || ok && got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Canonical("+919876543210") }); n != 0 {
		t.Errorf("Canonical of an E.164 number allocates %v times; want none", n)
	}
}

func TestParseType(t *testing.T) {
	for typ := Mobile; typ <= Voicemail; typ++ {
		name := strings.ReplaceAll(typ.String(), " ", "-")
		for _, s := range []string{name, strings.ToUpper(name)} {
			if got, ok := ParseType(s); !ok || got != typ {
				t.Errorf("ParseType(%q) = %v, %v; want %v", s, got, ok, typ)
			}
		}
	}
	for _, bad := range []string{"", "unknown", "fixed line", "mobile ", "cell"} {
		if got, ok := ParseType(bad); ok {
			t.Errorf("ParseType(%q) = %v, want false", bad, got)
		}
	}
}
