package wallet

import (
	"fmt"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// Format writes m for people: the sign, the currency's symbol (or its code
// and a space when it has no symbol), the whole part with digit grouping,
// and exactly Exponent decimals. INR groups digits the Indian way, the
// last three and then by twos ("₹1,23,45,678.50"); other currencies group
// by threes ("$12,345,678.50"). Negative amounts put the sign first:
// "-₹1,234.50". Parse reads everything Format writes.
func Format(m notify.Money) string {
	dec := m.Decimal()
	neg := strings.HasPrefix(dec, "-")
	if neg {
		dec = dec[1:]
	}
	whole, frac, hasFrac := strings.Cut(dec, ".")

	var b strings.Builder
	b.Grow(len(dec) + len(whole)/2 + 8)
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(prefix(m.Currency))
	writeGrouped(&b, whole, indianGrouping(m.Currency))
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Parse reads an amount of currency c exactly. It accepts what Format
// writes and plain decimals: "₹1,234.50", "-₹1,234.50", "1234.5", "1234",
// "+12". The symbol (or the code and a space, for a currency without a
// symbol) is optional and comes after any sign. Digit grouping is optional
// but, when present, must be the currency's: Indian for INR ("1,23,456"),
// threes otherwise ("123,456").
//
// It rejects, with a CodeInvalidArgument error: more decimals than
// c.Exponent, empty input or parts ("1.", ".5"), exponents, spaces, any
// other character, misplaced commas, and amounts beyond an int64 of minor
// units.
func Parse(s string, c record.Currency) (notify.Money, error) {
	bad := func(format string, args ...any) (notify.Money, error) {
		return notify.Money{}, notify.Errorf(notify.CodeInvalidArgument, "wallet: parse %q: "+format, append([]any{s}, args...)...)
	}
	rest := s
	sign := ""
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		sign, rest = rest[:1], rest[1:]
	}
	if c.Symbol != "" && strings.HasPrefix(rest, c.Symbol) {
		rest = rest[len(c.Symbol):]
	} else if c.Code != "" && strings.HasPrefix(rest, c.Code+" ") {
		rest = rest[len(c.Code)+1:]
	}
	if rest == "" || rest[0] < '0' || rest[0] > '9' {
		return bad("not an amount of %s", codeOr(c))
	}
	whole, frac, hasDot := strings.Cut(rest, ".")
	if strings.Contains(whole, ",") {
		var err error
		if whole, err = ungroup(whole, indianGrouping(c)); err != nil {
			return bad("%v", err)
		}
	}
	plain := sign + whole
	if hasDot {
		plain += "." + frac
	}
	m, err := record.ParseMoney(plain, c)
	if err != nil {
		return notify.Money{}, notify.WithCode(notify.CodeInvalidArgument, fmt.Errorf("wallet: parse %q: %w", s, err))
	}
	return m, nil
}

func prefix(c record.Currency) string {
	if c.Symbol != "" {
		return c.Symbol
	}
	if c.Code != "" {
		return c.Code + " "
	}
	return ""
}

func codeOr(c record.Currency) string {
	if c.Code == "" {
		return "money"
	}
	return c.Code
}

// indianGrouping reports whether c is written with lakh and crore grouping.
func indianGrouping(c record.Currency) bool { return c.Code == "INR" }

// writeGrouped writes the digits with commas: the last three together,
// then groups of two (Indian) or three.
func writeGrouped(b *strings.Builder, digits string, indian bool) {
	if len(digits) <= 3 {
		b.WriteString(digits)
		return
	}
	head, tail := digits[:len(digits)-3], digits[len(digits)-3:]
	size := 3
	if indian {
		size = 2
	}
	first := len(head) % size
	if first == 0 {
		first = size
	}
	b.WriteString(head[:first])
	for i := first; i < len(head); i += size {
		b.WriteByte(',')
		b.WriteString(head[i : i+size])
	}
	b.WriteByte(',')
	b.WriteString(tail)
}

// ungroup removes the commas of a grouped whole part after checking that
// they sit where the currency's grouping puts them.
func ungroup(whole string, indian bool) (string, error) {
	groups := strings.Split(whole, ",")
	size := 3
	if indian {
		size = 2
	}
	last := len(groups) - 1
	for i, g := range groups {
		want := size
		switch {
		case i == last:
			want = 3
		case i == 0:
			if len(g) < 1 || len(g) > size || g[0] == '0' {
				return "", fmt.Errorf("bad digit grouping: a group of %q", g)
			}
			continue
		}
		if len(g) != want {
			return "", fmt.Errorf("bad digit grouping: a group of %q where %d digits belong", g, want)
		}
	}
	return strings.Join(groups, ""), nil
}
