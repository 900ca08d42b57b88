package wallet

import (
	"testing"

	"github.com/notifykit/notify/record"
)

func TestCurrencyOf(t *testing.T) {
	for _, c := range []struct {
		code   string
		exp    int
		symbol string
	}{{"USD", 2, "$"}, {"JPY", 0, "¥"}, {"KWD", 3, ""}, {"INR", 2, "₹"}, {"CLF", 4, ""}, {"ZWG", 2, ""}, {"XOF", 0, ""}, {"AED", 2, ""}, {"UYW", 4, ""}, {"BIF", 0, ""}} {
		got, err := CurrencyOf(c.code)
		if err != nil || got.Code != c.code || got.Exponent != c.exp || got.Symbol != c.symbol {
			t.Errorf("CurrencyOf(%q) = %+v, %v; want exponent %d, symbol %q", c.code, got, err, c.exp, c.symbol)
		}
	}
	for _, bad := range []string{"", "usd", "US", "USDX", "XAU", "ABC", "U$D", "a very long currency name", "D A", "F B"} {
		if got, err := CurrencyOf(bad); err == nil {
			t.Errorf("CurrencyOf(%q) = %+v, want an error", bad, got)
		} else if len(err.Error()) > 140 {
			t.Errorf("CurrencyOf(%q): error too long: %v", bad, err)
		}
	}
	for _, c := range []record.Currency{record.INR(), USD(), EUR(), GBP(), JPY()} {
		if got, _ := CurrencyOf(c.Code); got != c {
			t.Errorf("CurrencyOf(%q) = %+v, want %+v", c.Code, got, c)
		}
	}
}
