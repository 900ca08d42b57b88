package record

import (
	"math"
	"strings"
	"testing"
)

func TestMoneyDecimal(t *testing.T) {
	inr := INR()
	cases := []struct {
		minor int64
		want  string
	}{
		{0, "0.00"}, {5, "0.05"}, {50, "0.50"}, {123450, "1234.50"}, {-25, "-0.25"},
		{-123450, "-1234.50"}, {math.MaxInt64, "92233720368547758.07"},
		{math.MinInt64, "-92233720368547758.08"},
	}
	for _, c := range cases {
		if got := (Money{Minor: c.minor, Currency: inr}).Decimal(); got != c.want {
			t.Errorf("Decimal(%d) = %q, want %q", c.minor, got, c.want)
		}
	}
	if got := (Money{Minor: 42, Currency: Currency{Code: "JPY", Exponent: 0}}).String(); got != "42 JPY" {
		t.Errorf("JPY String = %q", got)
	}
}

func TestParseMoney(t *testing.T) {
	inr := INR()
	good := map[string]int64{
		"1234.50": 123450, "1234.5": 123450, "1234": 123400, "0.01": 1, "-0.25": -25, "+3": 300,
		"92233720368547758.07": math.MaxInt64, "-92233720368547758.08": math.MinInt64,
		"007.1": 710,
	}
	for in, want := range good {
		m, err := ParseMoney(in, inr)
		if err != nil || m.Minor != want || m.Currency != inr {
			t.Errorf("ParseMoney(%q) = %v, %v; want %d", in, m, err, want)
		}
	}
	bad := map[string]string{
		"": "empty", "1.234": "more than 2 decimal places", "1e3": "not a decimal",
		".5": "both sides", "5.": "both sides", "-": "both sides", "1,000": "not a decimal",
		"92233720368547758.08": "too large", "99999999999999999999999": "too large",
		"--1": "not a decimal", " 1": "not a decimal", "NaN": "not a decimal", "0x10": "not a decimal",
	}
	for in, want := range bad {
		_, err := ParseMoney(in, inr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMoney(%q) error = %v; want it to mention %q", in, err, want)
		}
	}
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"1234.50", "-0.01", "0", "1e9", "92233720368547758.07"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s, INR())
		if err != nil {
			return
		}
		back, err := ParseMoney(m.Decimal(), INR())
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %q -> %v, %v", s, m.Decimal(), back, err)
		}
	})
}
