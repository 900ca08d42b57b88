package rules

// Digits reports whether s is one or more ASCII digits (0-9), the form of
// a vendor's numeric ID, a country calling code or a number without its
// plus.
func Digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
