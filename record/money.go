package record

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Money is an exact amount: an int64 count of the currency's minor units
// (paise for INR). No float is involved anywhere in this package.
type Money struct {
	Minor    int64
	Currency Currency
}

// Decimal formats m as a plain decimal with exactly Exponent fractional
// digits and no symbol or grouping: 123450 paise is "1234.50".
func (m Money) Decimal() string {
	exp := m.Currency.Exponent
	if exp <= 0 {
		return strconv.FormatInt(m.Minor, 10)
	}
	neg := m.Minor < 0
	// Work on the magnitude as uint64 so math.MinInt64 formats correctly.
	mag := uint64(m.Minor)
	if neg {
		mag = -mag
	}
	digits := strconv.FormatUint(mag, 10)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	cut := len(digits) - exp
	s := digits[:cut] + "." + digits[cut:]
	if neg {
		s = "-" + s
	}
	return s
}

// String formats m as its decimal and currency code, "1234.50 INR".
func (m Money) String() string {
	if m.Currency.Code == "" {
		return m.Decimal()
	}
	return m.Decimal() + " " + m.Currency.Code
}

// IsZero reports whether m is zero minor units.
func (m Money) IsZero() bool { return m.Minor == 0 }

// Balance is an account's balance: the money its wallet holds.
type Balance struct {
	Account string
	// Name is the account's name; the Notifier fills it in.
	Name      string
	Available Money
}

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

// LedgerEntry is one movement of a wallet's money.
type LedgerEntry struct {
	// Seq orders the account's entries as the money moved; it increases,
	// possibly with gaps. It is the cursor of a statement
	// (notify.WalletStore.Statement).
	Seq int64
	// Ref is the ref the debit or credit was made under.
	Ref string
	// Amount is what moved: negative for a debit, positive for a credit.
	Amount Money
	// Balance is the balance right after the movement.
	Balance Money
	// At is when the movement was made; zero when the store does not
	// keep it (memstore).
	At time.Time
}
