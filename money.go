package notify

import (
	"fmt"
	"math"
	"strings"

	"github.com/notifykit/notify/store"
)

// Currency describes a currency by its ISO 4217 code, its symbol and its
// exponent (store.Currency).
type Currency = store.Currency

// INR returns the Indian rupee: code INR, symbol ₹, exponent 2 (paise).
// It is a function, not a variable, so no caller can change it for others.
func INR() Currency { return Currency{Code: "INR", Symbol: "₹", Exponent: 2} }

// Money is an exact amount: an int64 count of the currency's minor units
// (paise for INR), never a float (store.Money).
type Money = store.Money

// Balance is an account's balance (store.Balance).
type Balance = store.Balance

// ParseMoney parses a plain decimal such as "1234.50", "1234.5", "1234" or
// "-0.25" in currency c, exactly. It rejects more fractional digits than
// c.Exponent, exponents ("1e3"), signs other than one leading '-' or '+',
// empty parts ("." or "1."), and values that overflow int64 minor units.
// Symbols and digit grouping belong to wallet.Parse.
func ParseMoney(s string, c Currency) (Money, error) {
	bad := func(why string) (Money, error) {
		return Money{}, fmt.Errorf("notify: parse money %q: %s", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") {
		return bad("needs digits on both sides of the decimal point")
	}
	if len(frac) > c.Exponent {
		return bad(fmt.Sprintf("more than %d decimal places", c.Exponent))
	}
	var mag uint64
	add := func(part string) bool {
		for i := 0; i < len(part); i++ {
			d := part[i]
			if d < '0' || d > '9' {
				return false
			}
			if mag > (math.MaxUint64-9)/10 {
				return false
			}
			mag = mag*10 + uint64(d-'0')
		}
		return true
	}
	if !add(whole) || !add(frac) {
		return bad("not a decimal number, or too large")
	}
	for i := len(frac); i < c.Exponent; i++ {
		if mag > math.MaxUint64/10 {
			return bad("too large")
		}
		mag *= 10
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	if mag > limit {
		return bad("too large")
	}
	v := int64(mag)
	if neg {
		v = -v
	}
	return Money{Minor: v, Currency: c}, nil
}
