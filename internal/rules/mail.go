package rules

import (
	"fmt"
	"net/mail"
	"strings"
)

const (
	// maxAddressLen is the longest address RFC 5321 lets through a
	// forward path.
	maxAddressLen = 254
	// maxDomainLen is the longest DNS name.
	maxDomainLen = 253
)

// mailbox is the rule for an e-mail address field: a bare address such as
// name@example.com (surrounding ASCII spaces allowed; the channel trims
// them), as net/mail parses it, whose characters keep AddressChars and
// whose domain has at least two labels. Display
// names, angle brackets, address literals and single-label domains such
// as localhost are refused: they do not reach a public mailbox, or they
// let one field name two addresses.
func mailbox(s string) string {
	if strings.ContainsAny(s, "\r\n\x00") {
		return "must not contain CR, LF or NUL"
	}
	// Only ASCII spaces may surround the address (the channel trims
	// them); every other invisible or space character is refused
	// anywhere, by the one character rule of addresses.
	// (ASCII spaces inside are left to the parser, whose messages say
	// more, and refused by it.)
	s = strings.Trim(s, " ")
	if why := firstUnsafe(s, asciiSpace); why != "" {
		return why
	}
	a, err := mail.ParseAddress(s)
	switch {
	case err != nil:
		return "must be an e-mail address such as name@example.com"
	case a.Name != "" || a.Address != s:
		return "must be a bare address such as name@example.com, without a display name or angle brackets"
	case len(s) > maxAddressLen:
		return fmt.Sprintf("must be at most %d characters", maxAddressLen)
	}
	if !validDomain(s[strings.LastIndexByte(s, '@')+1:]) {
		return "must have a domain name such as example.com after the @"
	}
	return ""
}

// validDomain accepts DNS names with at least two labels (internationalised
// ones in Unicode or punycode).
func validDomain(d string) bool {
	if d == "" || len(d) > maxDomainLen || d[0] == '[' {
		return false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	return true
}
