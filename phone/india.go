package phone

import (
	"errors"
	"fmt"
)

// indiaCode is India's calling code.
const indiaCode = 91

// maxDigits is the most digits a number may have: E.164 allows 15; one
// more lets a national number's trunk 0 or an 11-digit typo reach the
// check that says what is wrong.
const maxDigits = 16

// digits are the digits of a number as written, and whether a + led.
type digits struct {
	b    [maxDigits]byte
	n    int
	plus bool
}

// collect reads raw's digits, skipping the separators people write
// (spaces, dashes, dots, brackets) and noting a leading +; anything else
// is an error.
func collect(raw string) (digits, error) {
	var d digits
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
			continue
		case c == '+' && d.n == 0 && !d.plus:
			d.plus = true
		case c >= '0' && c <= '9':
			if d.n == maxDigits {
				return d, errors.New("is too long for a phone number")
			}
			d.b[d.n] = c
			d.n++
		default:
			return d, fmt.Errorf("must contain only digits, a leading + and spaces, dashes, dots or brackets, found %q", firstRune(raw[i:]))
		}
	}
	if d.n == 0 {
		return d, errors.New("is required")
	}
	return d, nil
}

// indian reports whether d is an Indian number: +91 before it, or no
// country code when dialled from India.
func (d *digits) indian(region string) bool {
	if d.plus {
		return d.n >= 2 && d.b[0] == '9' && d.b[1] == '1'
	}
	return region == DefaultRegion
}

// indianNumber reads d as an Indian mobile number: 10 digits starting 6-9,
// after +91, 91 (12 digits in all) or a trunk 0 (11). raw is what d was
// read from, returned as it is when it is the E.164 form already.
func (d *digits) indianNumber(raw string) (Number, error) {
	lo := 0
	switch {
	case d.plus || (d.n == 12 && d.b[0] == '9' && d.b[1] == '1'):
		lo = 2
	case d.n == 11 && d.b[0] == '0':
		lo = 1
	}
	switch {
	case d.n-lo != 10:
		return Number{}, fmt.Errorf("must be 10 digits, found %d", max(d.n-lo, 0))
	case d.b[lo] < '6':
		return Number{}, errors.New("must start with 6, 7, 8 or 9")
	}
	return indianMobile("+91" + string(d.b[lo:d.n])), nil
}

// fastIndian reads the two forms most numbers come in without scanning
// twice: 10 digits starting 6-9 dialled from India, and +91 followed by
// them.
func fastIndian(raw, region string) (Number, bool) {
	switch {
	case len(raw) == 10 && region == DefaultRegion && nationalMobile(raw):
		return indianMobile("+91" + raw), true
	case len(raw) == 13 && raw[0] == '+' && raw[1] == '9' && raw[2] == '1' && nationalMobile(raw[3:]):
		return indianMobile(raw), true // E.164 already: no copy
	}
	return Number{}, false
}

// indianMobile is the Number of e164, an Indian mobile number.
func indianMobile(e164 string) Number {
	return Number{E164: e164, CallingCode: indiaCode, Region: DefaultRegion, Type: Mobile}
}

// nationalMobile reports whether s is 10 digits starting 6-9.
func nationalMobile(s string) bool {
	if len(s) != 10 || s[0] < '6' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// firstRune returns the first rune of s, for error messages.
func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
