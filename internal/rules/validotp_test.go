package rules

import "testing"

func TestValidOTP(t *testing.T) {
	for code, want := range map[string]bool{
		"1234": true, "12345678": true, "482913": true,
		"": false, "123": false, "123456789": false, "12a4": false, " 1234": false, "१२३४": false,
	} {
		if got := ValidOTP(code); got != want {
			t.Errorf("ValidOTP(%q) = %v, want %v", code, got, want)
		}
	}
}
