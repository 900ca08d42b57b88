package netguard

import (
	"net/netip"
	"strings"
)

// blockedRange is a special-purpose prefix and why it is not public:
// class names the rule in words that say nothing more about an address in
// the range ("private"), why adds the range itself.
type blockedRange struct {
	prefix netip.Prefix
	class  string
	why    string
}

// v4Blocked lists the IPv4 ranges that are not globally reachable (IANA
// IPv4 Special-Purpose Address Registry, plus multicast and reserved
// space). Order matters only for the reason reported.
var v4Blocked = [...]blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network"`, "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private", "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)", "shared address space (CGNAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback", "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local", "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private", "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment", "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation", "documentation (192.0.2.0/24)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast", "6to4 relay anycast (192.88.99.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private", "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking", "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation", "documentation (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation", "documentation (203.0.113.0/24)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast", "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast", "broadcast (255.255.255.255)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved", "reserved (240.0.0.0/4)"},
}

// v6Blocked lists the IPv6 ranges that are not globally reachable. Only
// 2000::/3 is global unicast at all; within it these are special.
var v6Blocked = [...]blockedRange{
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignment", "IETF protocol assignments (2001::/23)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation", "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "6to4", "6to4 (2002::/16)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation", "documentation (3fff::/20)"},
}

var (
	v6Global = netip.MustParsePrefix("2000::/3")
	nat64    = netip.MustParsePrefix("64:ff9b::/96")
)

// Reason returns "" when addr is a public unicast address, else why it is
// not (for example "loopback (127.0.0.0/8)"). IPv4-mapped IPv6 addresses
// and the NAT64 prefix 64:ff9b::/96 are judged by their IPv4 part; a zone
// makes an address non-public, since zones exist only on local links.
//
// The reason names the range, which narrows the address down: it is for
// logs and for callers that chose the address themselves. Refusals of a
// host name say only the class of address it resolved to (see Error).
func Reason(addr netip.Addr) string {
	_, why := judge(addr)
	return why
}

// class returns "" when addr is public, else the rule that makes it not,
// in words that do not narrow the address down: "private", "loopback",
// "IPv4-mapped link-local".
func class(addr netip.Addr) string {
	c, _ := judge(addr)
	return c
}

// judge returns the class and the reason of addr ("" and "" when public);
// see class and Reason.
func judge(addr netip.Addr) (class, why string) {
	if !addr.IsValid() {
		return "invalid", "not a valid address"
	}
	if addr.Zone() != "" {
		return "zone-scoped", "scoped to a local interface (has a zone)"
	}
	if addr.Is4In6() {
		if c, why := judge(addr.Unmap()); why != "" {
			return "IPv4-mapped " + c, "IPv4-mapped " + why
		}
		return "", ""
	}
	if addr.Is4() {
		for _, r := range v4Blocked {
			if r.prefix.Contains(addr) {
				return r.class, r.why
			}
		}
		return "", ""
	}
	switch {
	case addr.IsUnspecified():
		return "unspecified", "unspecified (::)"
	case addr.IsLoopback():
		return "loopback", "loopback (::1)"
	case addr.IsMulticast():
		return "multicast", "multicast (ff00::/8)"
	case addr.IsLinkLocalUnicast():
		return "link-local", "link-local (fe80::/10)"
	case addr.IsPrivate():
		return "private", "private (fc00::/7)"
	case nat64.Contains(addr):
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if c, why := judge(v4); why != "" {
			return "NAT64 " + c, "NAT64 of " + why
		}
		return "", ""
	case !v6Global.Contains(addr):
		return "reserved IPv6", "reserved IPv6 space (outside 2000::/3)"
	}
	for _, r := range v6Blocked {
		if r.prefix.Contains(addr) {
			return r.class, r.why
		}
	}
	return "", ""
}

// withArticle puts "a" or "an" before class, as a refusal's text needs:
// "a private", "an IPv4-mapped loopback", "a \"this network\"".
func withArticle(class string) string {
	first := strings.TrimLeft(class, `"`)
	if first != "" && strings.ContainsRune("aeiouAEIOU", rune(first[0])) {
		return "an " + class
	}
	return "a " + class
}

// IsPublic reports whether addr is a public unicast address: Reason(addr)
// is "".
func IsPublic(addr netip.Addr) bool { return Reason(addr) == "" }
