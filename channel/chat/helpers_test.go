package chat_test

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// fakeDNS maps names to addresses; unknown names do not resolve.
type fakeDNS map[string]string

func (f fakeDNS) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func testDNS() fakeDNS {
	return fakeDNS{
		"cdn.example.com":      "93.184.216.34",
		"media.example.com":    "93.184.216.35",
		"loop.example.com":     "127.0.0.1",
		"ten.example.com":      "10.0.0.8",
		"metadata.example.com": "169.254.169.254",
		"cgnat.example.com":    "100.64.1.1",
	}
}

type rig struct {
	ch        *chat.Channel
	cloud, qr *memprovider.Provider
}

// newRig returns a channel over two capture providers, the stock
// templates, the fake DNS and the authentication template otp_code. edit may change the config (nil the
// providers, for instance).
func newRig(t testing.TB, edit func(*chat.Config)) *rig {
	t.Helper()
	r := &rig{cloud: memprovider.New("cloud-mem"), qr: memprovider.New("qr-mem")}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := chat.Config{Cloud: r.cloud, QR: r.qr, Renderer: renderer, Resolver: testDNS(), CloudOTPTemplate: "otp_code"}
	if edit != nil {
		edit(&cfg)
	}
	r.ch, err = chat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func account(primary chat.Gateway) *notify.Account {
	a := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	_ = sms.SetSettings(a, sms.Settings{SenderID: "ACMEIN"})
	_ = chat.SetSettings(a, chat.Settings{PrimaryGateway: primary})
	return a
}
