package rules

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestAddressChars(t *testing.T) {
	for _, s := range []string{
		"asha@example.com", "user@bücher.example", "user@例え.jp", "δοκιμή@παράδειγμα.δοκιμή",
		"first.last+tag@sub.example.co.in", "अजय@डाटामेल.भारत",
	} {
		if why := AddressChars(s); why != "" {
			t.Errorf("AddressChars(%q) = %q, want it allowed", s, why)
		}
		if why := mailbox(s); why != "" {
			t.Errorf("mailbox(%q) = %q, want it allowed", s, why)
		}
	}
	for _, tc := range []struct{ s, want string }{
		{"victim@exa\u00a0mple.com", "space characters (U+00A0"},
		{"victim@exa mple.com", "space characters (U+0020"},
		{"a\u3000b@example.com", "space characters (U+3000"},
		{"a\u2028@example.com", "line or paragraph separators (U+2028"},
		{"a\u2029@example.com", "line or paragraph separators (U+2029"},
		{"us\u200ber@example.com", "invisible format characters (U+200B"},
		{"us\u200der@example.com", "invisible format characters (U+200D"},
		{"user@exam\u00adple.com", "invisible format characters (U+00AD"},
		{"\ufeffuser@example.com", "invisible format characters (U+FEFF"},
		{"user@\u3164.example.com", "invisible format characters (U+3164"},
		{"user\u202e@example.com", "bidirectional control characters (U+202E"},
		{"user@example\u202a.com", "bidirectional control characters (U+202A"},
		{"user@example.com\u2066", "bidirectional control characters (U+2066"},
		{"user@example.com\u2069", "bidirectional control characters (U+2069"},
		{"u\u200eser@example.com", "bidirectional control characters (U+200E"},
		{"u\u200fser@example.com", "bidirectional control characters (U+200F"},
		{"u\u061cser@example.com", "bidirectional control characters (U+061C"},
		{"u\tser@example.com", "control characters (U+0009"},
		{"u\u0085ser@example.com", "control characters (U+0085"},
		{"u\x7fser@example.com", "control characters (U+007F"},
		{"u\xffser@example.com", "valid UTF-8"},
	} {
		got := AddressChars(tc.s)
		if !strings.Contains(got, tc.want) {
			t.Errorf("AddressChars(%q) = %q, want it to contain %q", tc.s, got, tc.want)
		}
		if strings.Contains(got, tc.s) {
			t.Errorf("AddressChars(%q) echoes the value: %q", tc.s, got)
		}
		// The tag of to and reply_to applies it, edges included.
		if got := mailbox(tc.s); got == "" {
			t.Errorf("mailbox(%q) allowed it", tc.s)
		}
	}
	// Surrounding ASCII spaces are the only white space a field may
	// carry (the channel trims them); other space is refused even at the
	// edges.
	if why := mailbox("  a@example.com "); why != "" {
		t.Errorf("mailbox with ASCII spaces around: %q", why)
	}
	for _, s := range []string{"\u00a0a@example.com", "a@example.com\t", "a@example.com\u200b"} {
		if mailbox(s) == "" {
			t.Errorf("mailbox(%q) allowed it", s)
		}
	}
}

// IDN domains are converted to their A-labels by the one conversion the
// channel's rule and provider/smtp share; a domain IDNA refuses is
// refused by the rule, naming the rule, not echoing the value.
func TestIDNDomains(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"user@bücher.example", "user@xn--bcher-kva.example"},
		{"user@BÜCHER.Example", "user@xn--bcher-kva.example"},        // mapped as typed
		{"रमेश@उदाहरण.भारत", "रमेश@xn--p1b6ci4b4b3a.xn--h2brj9c"},    // the local part is kept
		{"user@例え。jp", "user@xn--r8jz45g.jp"},                        // ideographic full stop
		{"user@faß.de", "user@xn--fa-hia.de"},                        // non-transitional (IDNA2008)
		{"user@xn--bcher-kva.example", "user@xn--bcher-kva.example"}, // already an A-label
		{"Asha.Rao@Example.COM", "Asha.Rao@Example.COM"},             // plain ASCII: as written
		{"a@localhost", "a@localhost"},                               // shape is the rule's job, not the conversion's
	} {
		got, ok := ASCIIAddress(tc.in)
		if !ok || got != tc.want {
			t.Errorf("ASCIIAddress(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if tc.in == "a@localhost" {
			continue
		}
		if why := mailbox(tc.in); why != "" {
			t.Errorf("mailbox(%q) = %q, want it allowed", tc.in, why)
		}
	}
	for _, s := range []string{
		"user@bücher-.example",                         // hyphen at a label's edge
		"user@xn--zz.example",                          // an A-label that does not decode
		"user@xn--a.example",                           // decodes to a control character
		"user@bü_cher.example",                         // not a letter, digit or hyphen (STD3)
		"user@" + strings.Repeat("ü", 60) + ".example", // an A-label over 63 bytes
	} {
		if got, ok := ASCIIAddress(s); ok {
			t.Errorf("ASCIIAddress(%q) = %q, want it refused", s, got)
		}
		why := mailbox(s)
		if !strings.Contains(why, "valid internationalised domain name") {
			t.Errorf("mailbox(%q) = %q, want the IDN rule", s, why)
		}
		if at := strings.LastIndexByte(s, '@'); strings.Contains(why, s[at+1:]) {
			t.Errorf("mailbox(%q) echoes the domain: %q", s, why)
		}
	}
	// Refused by the conversion, and by the rule before it gets there.
	for _, s := range []string{"user@bücher..example", "user@a\u200db\u00fc.example"} {
		if got, ok := ASCIIAddress(s); ok {
			t.Errorf("ASCIIAddress(%q) = %q, want it refused", s, got)
		}
		if mailbox(s) == "" {
			t.Errorf("mailbox(%q) allowed it", s)
		}
	}
	// The length limit applies to the address as sent: 254 bytes with its
	// domain in ASCII.
	local := strings.Repeat("a", 254-len("@xn--bcher-kva.example"))
	if why := mailbox(local + "@bücher.example"); why != "" {
		t.Errorf("254 bytes once converted: %q", why)
	}
	if why := mailbox("a" + local + "@bücher.example"); !strings.Contains(why, "at most 254 characters once its domain is in ASCII") {
		t.Errorf("255 bytes once converted: %q", why)
	}
}

func TestDisplayName(t *testing.T) {
	for _, s := range []string{
		"Acme", "Café Ünïcode, \"Billing\"", "山田\u3000太郎", "Shop\u00a0Support",
		"क्\u200dष Store", "می\u200cخواهم", "👨\u200d👩\u200d👧 Family", "Price = 10?", "a=?b",
	} {
		if why := DisplayName(s); why != "" {
			t.Errorf("DisplayName(%q) = %q, want it allowed", s, why)
		}
	}
	for _, tc := range []struct{ s, want string }{
		{"=?utf-8?q?x=0D=0ABcc:evil@example.com?=", "encoded word"},
		{"Acme =?UTF-8?B?QmNjOiBldmlsQGV4YW1wbGUuY29t?=", "encoded word"},
		{"=?iso-8859-1?Q?caf=E9?=", "encoded word"},
		{"Acme\r\nBcc: x@evil.example", "control characters (U+000D"},
		{"Acme\tInc", "control characters (U+0009"},
		{"Acme\u202eCNI", "bidirectional control characters (U+202E"},
		{"Acme\u2067", "bidirectional control characters (U+2067"},
		{"Ac\u200bme", "invisible format characters (U+200B"},
		{"Acme\u2028Bank", "line or paragraph separators (U+2028"},
		{"\u3164", "invisible format characters (U+3164"},
		{"Acme\xff", "valid UTF-8"},
	} {
		if got := DisplayName(tc.s); !strings.Contains(got, tc.want) {
			t.Errorf("DisplayName(%q) = %q, want it to contain %q", tc.s, got, tc.want)
		}
	}
}

func FuzzAddressChars(f *testing.F) {
	f.Add("victim@exa\u00a0mple.com")
	f.Add("user@bücher.example")
	f.Add("a\u202e\u200b\x00@x.y")
	f.Add("user@\u3164.example")
	f.Fuzz(func(t *testing.T, s string) {
		why := AddressChars(s)
		ok := utf8.ValidString(s)
		for _, r := range s {
			if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Z, r) || isFiller(r) {
				ok = false
			}
		}
		if ok != (why == "") {
			t.Errorf("AddressChars(%q) = %q; valid, visible and without space: %v", s, why, ok)
		}
		if dn := DisplayName(s); why == "" && dn != "" && !strings.Contains(dn, "encoded word") {
			t.Errorf("DisplayName(%q) = %q refuses what AddressChars allows", s, dn)
		}
	})
}
