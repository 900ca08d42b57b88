package record

// Currency describes a currency by its ISO 4217 code, its symbol and its
// exponent: the number of decimal places of its minor unit (2 for paise
// and cents, 0 for yen, 3 for fils). wallet.CurrencyOf returns any of
// ISO 4217's.
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

// INR returns the Indian rupee: code INR, symbol ₹, exponent 2 (paise).
// It is a function, not a variable, so no caller can change it for
// others. package wallet names the other currencies (wallet.USD,
// wallet.CurrencyOf).
func INR() Currency { return Currency{Code: "INR", Symbol: "₹", Exponent: 2} }
