package netguard_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/notifykit/notify/internal/netguard"
)

// dns is a stand-in resolver; production code leaves Config.Resolver nil.
type dns map[string]string

func (d dns) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := d[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, fmt.Errorf("no such host")
}

func ExampleGuard_CheckURL() {
	g := netguard.New(netguard.Config{Resolver: dns{
		"cdn.example.com":   "93.184.216.34",
		"intra.example.com": "10.0.0.7",
	}})
	for _, u := range []string{
		"https://cdn.example.com/invoice.pdf",
		"http://cdn.example.com/invoice.pdf",
		"https://0x7f.1/invoice.pdf",
		"https://intra.example.com/invoice.pdf",
	} {
		fmt.Println(g.CheckURL(context.Background(), u))
	}
	// Output:
	// <nil>
	// URL must use https
	// URL must name a host, not an IP address
	// URL host "intra.example.com" resolves to a private address
}
