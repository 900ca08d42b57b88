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

// collect reads raw's digits into d, skipping the separators people
// write (spaces, dashes, dots, brackets) and noting a leading +; anything
// else is an error. d is filled in place: a digits returned by value
// would be copied on every parse.
func (d *digits) collect(raw string) error {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= '0' && c <= '9': // the common case first
			if d.n == maxDigits {
				return errors.New("is too long for a phone number")
			}
			d.b[d.n] = c
			d.n++
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
			continue
		case c == '+' && d.n == 0 && !d.plus:
			d.plus = true
		default:
			return fmt.Errorf("must contain only digits, a leading + and spaces, dashes, dots or brackets, found %q", firstRune(raw[i:]))
		}
	}
	if d.n == 0 {
		return errors.New("is required")
	}
	return nil
}

// indian reports whether d is an Indian number: +91 before it, or no
// country code when dialled from India.
func (d *digits) indian(region string) bool {
	if d.plus {
		return d.n >= 2 && d.b[0] == '9' && d.b[1] == '1'
	}
	return region == DefaultRegion
}

// indianE164 reads raw, dialled from region, as an Indian mobile number
// when it is an Indian number (+91 before it, or no country code from
// India): its E.164 form, or the error that says what is wrong with it.
// For a number of another country it returns "". The two forms most
// numbers come in are read without collecting digits at all.
func indianE164(raw, region string) (string, error) {
	switch {
	case len(raw) == 10 && region == DefaultRegion && nationalMobile(raw):
		return e164India(raw), nil
	case len(raw) == 13 && raw[0] == '+' && raw[1] == '9' && raw[2] == '1' && nationalMobile(raw[3:]):
		return raw, nil // E.164 already: no copy
	}
	var d digits
	if err := d.collect(raw); err != nil {
		return "", err
	}
	if !d.indian(region) {
		return "", nil
	}
	lo := 0
	switch {
	case d.plus || (d.n == 12 && d.b[0] == '9' && d.b[1] == '1'):
		lo = 2
	case d.n == 11 && d.b[0] == '0':
		lo = 1
	}
	var why string
	switch {
	case d.n-lo != 10:
		why = fmt.Sprintf("must be 10 digits, found %d", max(d.n-lo, 0))
	case d.b[lo] < '6':
		why = "must start with 6, 7, 8 or 9"
	default:
		return e164India(d.b[lo:d.n]), nil
	}
	if d.plus || d.n < 10 {
		return "", errors.New(why) // a typo, not another country's number
	}
	// Read as Indian for want of a country code: it may be another
	// country's, written without one.
	return "", errors.New(why + " as a number of the account's region, IN; " +
		"write another country's number with its country code, such as +1 415 555 0100")
}

// e164India is the E.164 form of national, 10 digits: built in one
// buffer and copied into one string, where "+91" + string(national)
// would allocate twice and concatenate.
func e164India[S []byte | string](national S) string {
	var b [13]byte
	b[0], b[1], b[2] = '+', '9', '1'
	copy(b[3:], national)
	return string(b[:])
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
