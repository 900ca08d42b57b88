package netguard

import (
	"net/netip"
)

// blockedRange is a special-purpose prefix and why it is not public.
type blockedRange struct {
	prefix netip.Prefix
	why    string
}

// v4Blocked lists the IPv4 ranges that are not globally reachable (IANA
// IPv4 Special-Purpose Address Registry, plus multicast and reserved
// space). Order matters only for the reason reported.
var v4Blocked = [...]blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (10.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (127.0.0.0/8)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (169.254.0.0/16)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (172.16.0.0/12)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (192.0.2.0/24)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast (192.88.99.0/24)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (192.168.0.0/16)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (203.0.113.0/24)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (224.0.0.0/4)"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast (255.255.255.255)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
}

// v6Blocked lists the IPv6 ranges that are not globally reachable. Only
// 2000::/3 is global unicast at all; within it these are special.
var v6Blocked = [...]blockedRange{
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments (2001::/23)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (2002::/16)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (3fff::/20)"},
}

var (
	v6Global = netip.MustParsePrefix("2000::/3")
	nat64    = netip.MustParsePrefix("64:ff9b::/96")
)

// Reason returns "" when addr is a public unicast address, else why it is
// not (for example "loopback (127.0.0.0/8)"). IPv4-mapped IPv6 addresses
// and the NAT64 prefix 64:ff9b::/96 are judged by their IPv4 part; a zone
// makes an address non-public, since zones exist only on local links.
func Reason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not a valid address"
	}
	if addr.Zone() != "" {
		return "scoped to a local interface (has a zone)"
	}
	if addr.Is4In6() {
		if why := Reason(addr.Unmap()); why != "" {
			return "IPv4-mapped " + why
		}
		return ""
	}
	if addr.Is4() {
		for _, r := range v4Blocked {
			if r.prefix.Contains(addr) {
				return r.why
			}
		}
		return ""
	}
	switch {
	case addr.IsUnspecified():
		return "unspecified (::)"
	case addr.IsLoopback():
		return "loopback (::1)"
	case addr.IsMulticast():
		return "multicast (ff00::/8)"
	case addr.IsLinkLocalUnicast():
		return "link-local (fe80::/10)"
	case addr.IsPrivate():
		return "private (fc00::/7)"
	case nat64.Contains(addr):
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if why := Reason(v4); why != "" {
			return "NAT64 of " + why
		}
		return ""
	case !v6Global.Contains(addr):
		return "reserved IPv6 space (outside 2000::/3)"
	}
	for _, r := range v6Blocked {
		if r.prefix.Contains(addr) {
			return r.why
		}
	}
	return ""
}

// IsPublic reports whether addr is a public unicast address: Reason(addr)
// is "".
func IsPublic(addr netip.Addr) bool { return Reason(addr) == "" }
