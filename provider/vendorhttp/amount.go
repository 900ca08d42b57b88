package vendorhttp

import (
	"fmt"
	"strings"

	"github.com/notifykit/notify/record"
)

// Amount reads a money figure a vendor wrote (a balance: "1234.5678",
// "10.28") in currency c, exactly, without a float: the digits past c's
// minor unit, which vendors keep for their own rates, are dropped toward
// zero, so that a balance is never read as more than it is. The error,
// for a figure that is no plain decimal (a sign other than a leading '-',
// an exponent, text), quotes it cleaned and clipped.
func Amount(figure string, c record.Currency) (record.Money, error) {
	s := strings.TrimSpace(figure)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > c.Exponent {
		s = s[:dot+1+c.Exponent]
		if c.Exponent == 0 {
			s = s[:dot]
		}
	}
	m, err := record.ParseMoney(s, c)
	if err != nil {
		return record.Money{}, fmt.Errorf("the figure %q is not a decimal amount", CleanText(figure, 40))
	}
	return m, nil
}
