package store

import (
	"strconv"
	"strings"
)

// Currency describes a currency by its ISO 4217 code, its symbol and its
// exponent: the number of decimal places of its minor unit (2 for paise).
type Currency struct {
	Code     string
	Symbol   string
	Exponent int
}

// Same reports whether c and o are one currency: the same code and
// exponent, which give minor units their meaning. The symbol is only
// presentation, and is not compared.
func (c Currency) Same(o Currency) bool {
	return c.Code == o.Code && c.Exponent == o.Exponent
}

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
