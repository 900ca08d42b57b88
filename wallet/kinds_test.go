package wallet

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
)

// TestPriceKinds: any other kind is priced by Kinds, per unit, by route
// where a route has a price of its own, and the stock kinds as before.
func TestPriceKinds(t *testing.T) {
	p := DefaultINR()
	p.Kinds = map[notify.Kind]KindPrices{
		"pager": {Unit: 5, Routes: map[string]int64{"critical": 9, "free": 0}},
		"voice": {Unit: 120},
	}
	for _, c := range []struct {
		kind  notify.Kind
		route string
		units int
		want  int64
	}{
		{"pager", "", 1, 5},
		{"pager", "silent", 1, 5},
		{"pager", "critical", 1, 9},
		{"pager", "critical", 3, 27},
		{"pager", "free", 4, 0},
		{"voice", "", 0, 120}, // Units below 1 count as 1
		{"voice", "ivr", 2, 240},
	} {
		got, err := p.Price(inrAccount(), &notify.Envelope{Kind: c.kind, Route: c.route, Units: c.units})
		if err != nil || got != (notify.Money{Minor: c.want, Currency: record.INR()}) {
			t.Errorf("%s on route %q, %d units: %v, %v; want %d", c.kind, c.route, c.units, got, err, c.want)
		}
	}
	// The stock kinds keep their prices.
	for _, env := range []*notify.Envelope{smsEnv(sms.RouteOTP, 1), chatEnv(chat.GatewayCloud, "", ""), emailEnv(email.PurposeCampaign)} {
		want, _ := DefaultINR().Price(inrAccount(), env)
		if got, err := p.Price(inrAccount(), env); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", env.Kind, got, err, want)
		}
	}
}

func TestPriceKindsErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		kinds map[notify.Kind]KindPrices
		env   *notify.Envelope
		want  []string
	}{
		{"kind without a price", map[notify.Kind]KindPrices{"pager": {Unit: 5}}, &notify.Envelope{Kind: "voice"},
			[]string{`no price for kind "voice"`}},
		{"negative unit", map[notify.Kind]KindPrices{"voice": {Unit: -1}}, &notify.Envelope{Kind: "voice"},
			[]string{"negative voice price -1"}},
		{"negative route", map[notify.Kind]KindPrices{"voice": {Unit: 1, Routes: map[string]int64{"x": -2}}},
			&notify.Envelope{Kind: "voice", Route: "x"}, []string{"negative voice price -2"}},
		{"overflow", map[notify.Kind]KindPrices{"voice": {Unit: 1 << 62}}, &notify.Envelope{Kind: "voice", Units: 4},
			[]string{"overflows"}},
		{"sms in Kinds", map[notify.Kind]KindPrices{sms.Kind: {Unit: 1}}, smsEnv(sms.RouteSMS, 1),
			[]string{`PriceList.Kinds["sms"]`, "priced by PriceList.SMS"}},
		{"chat in Kinds", map[notify.Kind]KindPrices{chat.Kind: {Unit: 1}}, chatEnv(chat.GatewayQR, "", ""),
			[]string{`PriceList.Kinds["chat"]`, "PriceList.Chat"}},
		{"email in Kinds", map[notify.Kind]KindPrices{email.Kind: {Unit: 1}}, emailEnv(""),
			[]string{`PriceList.Kinds["email"]`, "PriceList.Email"}},
		{"push in Kinds", map[notify.Kind]KindPrices{push.Kind: {Unit: 1}}, &notify.Envelope{Kind: push.Kind, Units: 1},
			[]string{`PriceList.Kinds["push"]`, "PriceList.Push"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultINR()
			p.Kinds = c.kinds
			got, err := p.Price(inrAccount(), c.env)
			if err == nil || notify.CodeOf(err) != notify.CodeInternal {
				t.Fatalf("Price = %v, %v; want an internal error", got, err)
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}
