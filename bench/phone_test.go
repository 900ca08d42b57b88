package bench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/phone/world"
)

// indianForms are the forms Indian numbers arrive in, one of each: the
// fixed mix BenchmarkPhoneIndian parses, whole, in each op of its mix
// sub-benchmarks, and one at a time in the others. The names are the
// sub-benchmarks' (bench/run's rows name them).
var indianForms = []struct{ name, raw string }{
	{"10-digit", "9876543210"},
	{"e164", "+919876543210"},
	{"spaced", "+91 98765 43210"},
	{"trunk-0", "09876543210"},
	{"91-prefix", "919876543210"},
}

// foreignNumbers are the numbers BenchmarkPhoneWorld reads with
// world.Plan, by the sub-benchmark names bench/run's rows use.
var foreignNumbers = []struct{ name, raw, e164 string }{
	{"US", "+1 415 555 0100", "+14155550100"},
	{"GB", "+44 7400 123456", "+447400123456"},
	{"DE", "+49 1512 3456789", "+4915123456789"},
}

// BenchmarkPhoneIndian is phone.Parse's fast path for Indian numbers
// (region IN, no plan) beside legacyNormalize, the parser it replaced,
// over the same inputs: the whole of indianForms in each op ("mix"),
// and each form alone.
func BenchmarkPhoneIndian(b *testing.B) {
	mix := make([]string, len(indianForms))
	for i, f := range indianForms {
		mix[i] = f.raw
	}
	benchmarkIndian(b, "mix", mix)
	for _, f := range indianForms {
		benchmarkIndian(b, f.name, []string{f.raw})
	}
}

// benchmarkIndian runs name/legacy and name/parse, each parsing all of
// raws in one op.
func benchmarkIndian(b *testing.B, name string, raws []string) {
	b.Run(name+"/legacy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range raws {
				if _, err := legacyNormalize(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run(name+"/parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range raws {
				if _, err := phone.Parse(raw, "IN", nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkPhoneWorld is phone.Parse of a foreign number, which goes to
// world.Plan (libphonenumber's metadata), as an Indian account allowed
// to send abroad would read it.
func BenchmarkPhoneWorld(b *testing.B) {
	for _, f := range foreignNumbers {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := phone.Parse(f.raw, "IN", world.Plan{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLegacyNormalizeIsTheBaseline keeps the comparison honest: the old
// parser and the new read every form of the mix to the same number, so
// that both sides of BenchmarkPhoneIndian do the same work.
func TestLegacyNormalizeIsTheBaseline(t *testing.T) {
	for _, f := range indianForms {
		old, err := legacyNormalize(f.raw)
		if err != nil {
			t.Fatalf("legacyNormalize(%q): %v", f.raw, err)
		}
		n, err := phone.Parse(f.raw, "IN", nil)
		if err != nil || n.E164 != "+91"+old || n.National() != old {
			t.Errorf("%s: Parse(%q) = %+v, %v; legacyNormalize = %q", f.name, f.raw, n, err, old)
		}
	}
	// And they refuse alike what is not an Indian mobile number (the fast
	// path alone: this module links phone/world, whose plan reads the rest).
	for _, raw := range []string{"987654321", "5876543210", "+1 415 555 0100", "98765abc10"} {
		if _, err := legacyNormalize(raw); err == nil {
			t.Errorf("legacyNormalize(%q) accepted it", raw)
		}
		if _, err := phone.Parse(raw, "IN", phone.IndiaOnly{}); err == nil {
			t.Errorf("Parse(%q) accepted it", raw)
		}
	}
}

// TestWorldNumbers checks that BenchmarkPhoneWorld's numbers are read,
// by world.Plan, to the numbers they are.
func TestWorldNumbers(t *testing.T) {
	for _, f := range foreignNumbers {
		n, err := phone.Parse(f.raw, "IN", world.Plan{})
		if err != nil || n.E164 != f.e164 || n.Region != f.name || !n.Type.TakesSMS() {
			t.Errorf("Parse(%q) = %+v, %v; want %s of %s, a mobile number", f.raw, n, err, f.e164, f.name)
		}
	}
}

// legacyNormalize is the pre-E.164 parser, internal/phone's Normalize
// before the move to package phone (git show 03dc6c9:internal/phone/phone.go),
// kept as the baseline of BenchmarkPhoneIndian. It and its helpers are
// copied verbatim but for their names (legacy-prefixed, so as not to
// clash in this package).
//
// legacyNormalize returns the 10-digit national form of an Indian mobile number.
// It accepts the prefixes +91, 91 and 0 and removes spaces and dashes;
// the result must be 10 digits starting 6-9. The error says what is wrong
// with the value, without repeating it.
func legacyNormalize(s string) (string, error) {
	if legacyIsNational(s) {
		return s, nil // already normalised: no copy
	}
	b, lo, hi, err := legacyParse(s)
	if err != nil {
		return "", err
	}
	return string(b[lo:hi]), nil
}

// legacyParse collects the digits of s and returns the national number as
// b[lo:hi].
func legacyParse(s string) (b [16]byte, lo, hi int, err error) {
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
			return b, 0, 0, fmt.Errorf("must contain only digits, spaces, dashes and a leading +, found %q", legacyNonDigit(s[i:]))
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

// legacyIsNational reports whether s is already 10 digits starting 6-9.
func legacyIsNational(s string) bool {
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

// legacyNonDigit returns the first rune of s, for error messages.
func legacyNonDigit(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
