package rules

import "testing"

func TestDigits(t *testing.T) {
	for s, want := range map[string]bool{"": false, "0": true, "0123456789": true, "12a": false, "+91": false, " 1": false, "١٢": false} {
		if got := Digits(s); got != want {
			t.Errorf("Digits(%q) = %v, want %v", s, got, want)
		}
	}
}
