package vendorhttp_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/record"
)

// A vendor's figure is read exactly and cut, never rounded up, to the
// currency's minor unit.
func TestAmount(t *testing.T) {
	inr, jpy := record.INR(), record.Currency{Code: "JPY", Exponent: 0}
	for _, c := range []struct {
		figure string
		c      record.Currency
		want   int64
	}{
		{"1234.5678", inr, 123456}, {" 10.28 ", inr, 1028}, {"7", inr, 700}, {"0.999", inr, 99},
		{"-0.019", inr, -1}, {"12.9", jpy, 12}, {"12", jpy, 12},
	} {
		m, err := vendorhttp.Amount(c.figure, c.c)
		if err != nil || m.Minor != c.want || !m.Currency.Same(c.c) {
			t.Errorf("Amount(%q) = %v, %v; want %d", c.figure, m, err, c.want)
		}
	}
	for _, bad := range []string{"", "1e3", "abc", "1.2.3", ".5", "NaN", strings.Repeat("9", 30)} {
		if m, err := vendorhttp.Amount(bad, inr); err == nil {
			t.Errorf("Amount(%q) = %v, want an error", bad, m)
		}
	}
}
