package wallet

import (
	"math"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

var (
	usd = record.Currency{Code: "USD", Symbol: "$", Exponent: 2}
	jpy = record.Currency{Code: "JPY", Symbol: "¥", Exponent: 0}
	kwd = record.Currency{Code: "KWD", Exponent: 3} // no symbol: written with its code
)

func TestFormat(t *testing.T) {
	tests := []struct {
		minor int64
		c     record.Currency
		want  string
	}{
		{0, record.INR(), "₹0.00"},
		{5, record.INR(), "₹0.05"},
		{50, record.INR(), "₹0.50"},
		{100, record.INR(), "₹1.00"},
		{99999, record.INR(), "₹999.99"},
		{123450, record.INR(), "₹1,234.50"},
		{1234567, record.INR(), "₹12,345.67"},
		{12345650, record.INR(), "₹1,23,456.50"},
		{1234567850, record.INR(), "₹1,23,45,678.50"},
		{-123450, record.INR(), "-₹1,234.50"},
		{-1, record.INR(), "-₹0.01"},
		{math.MaxInt64, record.INR(), "₹92,23,37,20,36,85,47,758.07"},
		{math.MinInt64, record.INR(), "-₹92,23,37,20,36,85,47,758.08"},
		{123456789, usd, "$1,234,567.89"},
		{12345, usd, "$123.45"},
		{math.MaxInt64, usd, "$92,233,720,368,547,758.07"},
		{-100000, usd, "-$1,000.00"},
		{1234567, jpy, "¥1,234,567"},
		{-7, jpy, "-¥7"},
		{1234567, kwd, "KWD 1,234.567"},
		{5, record.Currency{}, "5"},
	}
	for _, tt := range tests {
		if got := Format(notify.Money{Minor: tt.minor, Currency: tt.c}); got != tt.want {
			t.Errorf("Format(%d %s) = %q, want %q", tt.minor, tt.c.Code, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		c    record.Currency
		want int64
	}{
		{"₹1,234.50", record.INR(), 123450},
		{"1234.5", record.INR(), 123450},
		{"1234", record.INR(), 123400},
		{"1234.50", record.INR(), 123450},
		{"0", record.INR(), 0},
		{"0.05", record.INR(), 5},
		{"₹0.5", record.INR(), 50},
		{"₹1,23,456.50", record.INR(), 12345650},
		{"₹12,34,567", record.INR(), 123456700},
		{"12,345", record.INR(), 1234500},
		{"-₹1,234.50", record.INR(), -123450},
		{"+₹1", record.INR(), 100},
		{"-0.01", record.INR(), -1},
		{"INR 12.00", record.INR(), 1200},
		{"₹92,23,37,20,36,85,47,758.07", record.INR(), math.MaxInt64},
		{"-₹92,23,37,20,36,85,47,758.08", record.INR(), math.MinInt64},
		{"$1,234,567.89", usd, 123456789},
		{"1234567.89", usd, 123456789},
		{"¥1,234,567", jpy, 1234567},
		{"KWD 1,234.567", kwd, 1234567},
		{"1.5", kwd, 1500},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in, tt.c)
		if err != nil {
			t.Errorf("Parse(%q, %s): %v", tt.in, tt.c.Code, err)
			continue
		}
		if want := (notify.Money{Minor: tt.want, Currency: tt.c}); got != want {
			t.Errorf("Parse(%q, %s) = %v, want %v", tt.in, tt.c.Code, got, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		in  string
		c   record.Currency
		why string
	}{
		{"", record.INR(), "not an amount"},
		{"₹", record.INR(), "not an amount"},
		{"-", record.INR(), "not an amount"},
		{"abc", record.INR(), "not an amount"},
		{"1.234", record.INR(), "more than 2 decimal places"},
		{"₹1,234.505", record.INR(), "more than 2 decimal places"},
		{"1.5", jpy, "more than 0 decimal places"},
		{"1.", record.INR(), "both sides"},
		{".5", record.INR(), "not an amount"},
		{"1e3", record.INR(), "not a decimal"},
		{"1 234", record.INR(), "not a decimal"},
		{" 12", record.INR(), "not an amount"},
		{"12 ", record.INR(), "not a decimal"},
		{"--5", record.INR(), "not an amount"},
		{"+-5", record.INR(), "not an amount"},
		{"₹-5", record.INR(), "not an amount"},
		{"₹₹5", record.INR(), "not an amount"},
		{"$5", record.INR(), "not an amount"},
		{"₹5", usd, "not an amount"},
		{"INR5", record.INR(), "not an amount"},
		{"1.2.3", record.INR(), "decimal"},
		{"0x10", record.INR(), "not a decimal"},
		{"١٢٣", record.INR(), "not an amount"},  // Arabic-Indic digits
		{"1,234,567", record.INR(), "grouping"}, // western grouping in INR
		{"123,456", record.INR(), "grouping"},
		{"1,23,456", usd, "grouping"}, // Indian grouping in USD
		{"1,23", record.INR(), "grouping"},
		{"1,2345", record.INR(), "grouping"},
		{"1,,234", record.INR(), "grouping"},
		{"1234,567", usd, "grouping"},
		{"01,234", record.INR(), "grouping"},
		{",234", record.INR(), "not an amount"},
		{"1,234,", usd, "grouping"},
		{"1.2,3", record.INR(), "decimal"},
		{"1.2,", usd, "not a decimal"},
		{"1,2a4", record.INR(), "not a decimal"},
		{"92233720368547758.08", record.INR(), "too large"},
		{"-92233720368547758.09", record.INR(), "too large"},
		{"99999999999999999999999", record.INR(), "too large"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in, tt.c)
		if err == nil {
			t.Errorf("Parse(%q, %s) = %v, want an error", tt.in, tt.c.Code, got)
			continue
		}
		if c := notify.CodeOf(err); c != notify.CodeInvalidArgument {
			t.Errorf("Parse(%q): code %q, want invalid_argument", tt.in, c)
		}
		if !strings.Contains(err.Error(), "wallet: parse ") || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("Parse(%q): error %q, want a wallet error saying %q", tt.in, err, tt.why)
		}
	}
}

func FuzzFormatParse(f *testing.F) {
	f.Add(int64(0), uint8(2), true)
	f.Add(int64(123450), uint8(2), true)
	f.Add(int64(-1), uint8(2), false)
	f.Add(int64(math.MaxInt64), uint8(2), true)
	f.Add(int64(math.MinInt64), uint8(3), false)
	f.Add(int64(1234567), uint8(0), false)
	f.Fuzz(func(t *testing.T, minor int64, exp uint8, inr bool) {
		c := record.Currency{Code: "USD", Symbol: "$", Exponent: int(exp % 5)}
		if inr {
			c = record.Currency{Code: "INR", Symbol: "₹", Exponent: int(exp % 5)}
		}
		m := notify.Money{Minor: minor, Currency: c}
		s := Format(m)
		got, err := Parse(s, c)
		if err != nil {
			t.Fatalf("Parse(Format(%d)) = Parse(%q): %v", minor, s, err)
		}
		if got != m {
			t.Fatalf("Parse(%q) = %v, want %v", s, got, m)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"₹1,234.50", "1234.5", "-₹1,23,456.50", "1,2,3", "1e5", "", "₹", "+0.00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(s, record.INR())
		if err != nil {
			if notify.CodeOf(err) != notify.CodeInvalidArgument {
				t.Fatalf("Parse(%q): code %q", s, notify.CodeOf(err))
			}
			return
		}
		again, err := Parse(Format(m), record.INR())
		if err != nil || again != m {
			t.Fatalf("Parse(%q) = %v, but Format/Parse gives %v, %v", s, m, again, err)
		}
	})
}
