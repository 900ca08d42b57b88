// Package phone normalises Indian mobile numbers.
package phone

import (
	"errors"
	"fmt"
)

// Normalize returns the 10-digit national form of an Indian mobile number.
// It accepts the prefixes +91, 91 and 0 and removes spaces and dashes;
// the result must be 10 digits starting 6-9. The error says what is wrong
// with the value, without repeating it.
func Normalize(s string) (string, error) {
	if isNational(s) {
		return s, nil // already normalised: no copy
	}
	b, lo, hi, err := parse(s)
	if err != nil {
		return "", err
	}
	return string(b[lo:hi]), nil
}

// parse collects the digits of s and returns the national number as
// b[lo:hi].
func parse(s string) (b [16]byte, lo, hi int, err error) {
	n := 0
	plus := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '-':
			continue
		case c == '+' && n == 0 && !plus:
			plus = true
		case c >= '0' && c <= '9':
			if n == len(b) {
				return b, 0, 0, errors.New("is too long for a mobile number")
			}
			b[n] = c
			n++
		default:
			return b, 0, 0, fmt.Errorf("must contain only digits, spaces, dashes and a leading +, found %q", nonDigit(s[i:]))
		}
	}
	d := b[:n]
	switch {
	case plus && !(n >= 2 && d[0] == '9' && d[1] == '1'):
		return b, 0, 0, errors.New("must be an Indian number (+91)")
	case plus || (n == 12 && d[0] == '9' && d[1] == '1'):
		lo = 2
	case n == 11 && d[0] == '0':
		lo = 1
	}
	switch {
	case n == 0:
		return b, 0, 0, errors.New("is required")
	case n-lo != 10:
		return b, 0, 0, fmt.Errorf("must be 10 digits, found %d", max(n-lo, 0))
	case b[lo] < '6':
		return b, 0, 0, errors.New("must start with 6, 7, 8 or 9")
	}
	return b, lo, n, nil
}

// isNational reports whether s is already 10 digits starting 6-9.
func isNational(s string) bool {
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

// nonDigit returns the first rune of s, for error messages.
func nonDigit(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
