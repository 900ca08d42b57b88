package rules

import (
	"fmt"
	"net/mail"
	"strings"

	"golang.org/x/net/idna"
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
// whose domain, in ASCII (ASCIIDomain), has at least two labels; the
// address is at most 254 bytes long as given and with its domain in
// ASCII. Display names, angle brackets, address literals and
// single-label domains such as localhost are refused: they do not reach
// a public mailbox, or they let one field name two addresses.
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
	at := strings.LastIndexByte(s, '@')
	domain, ok := ASCIIDomain(s[at+1:])
	switch {
	case !ok:
		return "must have a valid internationalised domain name after the @, such as bücher.example (IDNA: letters, digits and hyphens, no hyphen at a label's edge)"
	case !validDomain(domain):
		return "must have a domain name such as example.com after the @"
	case at+1+len(domain) > maxAddressLen:
		return fmt.Sprintf("must be at most %d characters once its domain is in ASCII (punycode)", maxAddressLen)
	}
	return ""
}

// ASCIIDomain returns the domain d as SMTP carries it to any relay: in
// ASCII (RFC 5321), each internationalised label as its A-label
// (RFC 5890: "bücher.example" becomes "xn--bcher-kva.example"). It is the
// one conversion of e-mail domains: the e-mail channel's address rule and
// provider/smtp both use it.
//
// A domain with a character outside ASCII or an A-label ("xn--...") is
// converted and checked by idna.Lookup, the UTS #46 profile for names a
// program looks up (a relay looks up the domain's MX record): it maps
// what a user may type to the registered form (case, full-width
// characters, the ideographic full stop "。"), with non-transitional
// processing (IDNA2008: "faß.de" stays ß, as xn--fa-hia.de), and refuses
// labels that IDNA does not allow: characters other than letters, digits
// and hyphens (STD3 rules), a hyphen at a label's edge or in the third
// and fourth places, joiners out of context, mixed bidirectional text,
// an A-label that does not decode. Its labels must then fit DNS (1 to 63
// bytes each, 253 in all). idna.Registration would refuse the mapped forms
// users type; idna.Display and idna.Punycode do not check enough.
//
// A domain already in plain ASCII is returned as it is, unchecked: the
// channel's rule checks its shape (validDomain), and a relay its
// characters, as before IDN support.
//
// It reports false when d is not a valid internationalised domain name.
func ASCIIDomain(d string) (string, bool) {
	if !needsIDNA(d) {
		return d, true
	}
	if len(d) > 4*maxDomainLen {
		return "", false
	}
	a, err := idna.Lookup.ToASCII(d)
	if err != nil || len(a) > maxDomainLen {
		return "", false
	}
	for _, l := range strings.Split(a, ".") {
		if l == "" || len(l) > 63 {
			return "", false
		}
	}
	return a, true
}

// needsIDNA reports whether d has a character outside ASCII or a label
// that starts with the A-label prefix "xn--" (in any case).
func needsIDNA(d string) bool {
	for i := 0; i < len(d); i++ {
		if d[i] >= 0x80 {
			return true
		}
	}
	for _, l := range strings.Split(d, ".") {
		if len(l) >= 4 && strings.EqualFold(l[:4], "xn--") {
			return true
		}
	}
	return false
}

// ASCIIAddress returns the bare address addr with its domain (after the
// last @) converted by ASCIIDomain; the local part is kept as it is. It
// reports false when the domain is not a valid internationalised domain
// name.
func ASCIIAddress(addr string) (string, bool) {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return addr, true
	}
	d, ok := ASCIIDomain(addr[at+1:])
	if !ok {
		return "", false
	}
	if d == addr[at+1:] {
		return addr, true // no copy for the common ASCII domain
	}
	return addr[:at+1] + d, true
}

// validDomain accepts DNS names in ASCII with at least two labels of 1
// to 63 characters, none starting or ending with a hyphen.
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
