package locale

import (
	"slices"
	"testing"
)

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"hi": "hi", "HI": "hi", "hi-in": "hi-IN", "hi_IN": "hi-IN", "zh-hant-tw": "zh-Hant-TW",
		"es-419": "es-419", "fil": "fil", "sr-Latn": "sr-Latn",
		"": "", "h": "", "hindi": "", "hi-": "", "hi-IND": "", "hi-IN-x": "", "hi IN": "", "1i": "",
		"en-US-u-ca": "", "zh-Hant-TW-x": "",
	} {
		got, ok := Canonical(in)
		if got != want || ok != (want != "") {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestChain(t *testing.T) {
	for _, tc := range []struct {
		tag, def string
		want     []string
	}{
		{"hi-IN", "", []string{"hi-IN", "hi"}},
		{"fr-CA", "hi", []string{"fr-CA", "fr", "hi"}},
		{"", "en-IN", []string{"en-IN", "en"}},
		{"hi", "hi-IN", []string{"hi", "hi-IN"}},
		{"", "", nil},
	} {
		if got := Chain(tc.tag, tc.def); !slices.Equal(got, tc.want) {
			t.Errorf("Chain(%q, %q) = %v, want %v", tc.tag, tc.def, got, tc.want)
		}
	}
	if Cloud("en-US") != "en_US" || Cloud("hi") != "hi" {
		t.Error("Cloud")
	}
}
