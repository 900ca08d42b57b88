package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// nanpPlan reads one US number, as the world plan does.
type nanpPlan struct{}

func (nanpPlan) Parse(raw, _ string) (phone.Number, error) {
	if raw == "+14155550100" {
		return phone.Number{E164: raw, CallingCode: 1, Region: "US", Type: phone.FixedLineOrMobile}, nil
	}
	return phone.Number{}, errors.New("is not a number of this test's plan")
}

// foreignPricer prices everything in one currency, whatever the account's.
type foreignPricer struct{ c record.Currency }

func (p foreignPricer) Price(*notify.Account, *notify.Envelope) (notify.Money, error) {
	return notify.Money{Minor: 1, Currency: p.c}, nil
}

// Accounts in several currencies send side by side, each charged in its
// own; a price in another currency than the account's is refused before
// anything is charged or sent, whoever priced it.
func TestAccountsInAnyCurrency(t *testing.T) {
	accounts := memstore.NewAccounts()
	wal := memstore.NewWallet()
	opening := map[string]notify.Money{
		"us": {Minor: 500, Currency: wallet.USD()},
		"jp": {Minor: 500, Currency: wallet.JPY()},
		"kw": {Minor: 5000, Currency: mustCurrency(t, "KWD")},
	}
	for id, m := range opening {
		if err := accounts.Add(&notify.Account{ID: id, Currency: m.Currency, Countries: []string{"US"},
			Settings: sms.Settings{SenderID: "ACME"}.Map()}); err != nil {
			t.Fatal(err)
		}
		if err := wal.Open(id, m); err != nil {
			t.Fatal(err)
		}
	}
	vendor := memprovider.New("sms")
	ch, err := sms.New(sms.Config{Provider: vendor, Numbers: nanpPlan{}})
	if err != nil {
		t.Fatal(err)
	}
	usd, err := wallet.ParsePriceList("sms=0.02, US:sms=0.01", wallet.USD())
	if err != nil {
		t.Fatal(err)
	}
	jpy, err := wallet.ParsePriceList("sms=3", wallet.JPY())
	if err != nil {
		t.Fatal(err)
	}
	prices := &wallet.Plans{Default: wallet.DefaultINR(), ByCurrency: map[string]*wallet.PriceList{"USD": usd, "JPY": jpy}}
	n, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(ch), notify.WithPrices(prices))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		account string
		want    notify.Money
	}{{"us", notify.Money{Minor: 2, Currency: wallet.USD()}}, {"jp", notify.Money{Minor: 6, Currency: wallet.JPY()}}} {
		rc, err := n.Send(ctx, &sms.Request{Account: c.account, To: "+14155550100", Message: strings.Repeat("long ", 40)})
		if err != nil {
			t.Fatalf("%s: %v", c.account, err)
		}
		if rc.Cost != c.want || rc.Country != "US" {
			t.Errorf("%s: receipt cost %v in %s, want %v", c.account, rc.Cost, rc.Country, c.want)
		}
		bal, err := n.Balance(ctx, c.account)
		if err != nil || bal.Available.Minor != opening[c.account].Minor-c.want.Minor || !bal.Available.Currency.Same(c.want.Currency) {
			t.Errorf("%s: balance %v, %v", c.account, bal.Available, err)
		}
	}

	// KWD has no list: refused, nothing charged or sent.
	sent := len(vendor.Sent())
	_, err = n.Send(ctx, &sms.Request{Account: "kw", To: "+14155550100", Message: "hi"})
	if notify.CodeOf(err) != notify.CodePermissionDenied || !strings.Contains(err.Error(), "KWD") || !strings.Contains(err.Error(), "INR") {
		t.Errorf("KWD account priced in INR: err = %v, want PermissionDenied naming both", err)
	}
	if bal, _ := n.Balance(ctx, "kw"); bal.Available.Minor != 5000 || len(vendor.Sent()) != sent {
		t.Errorf("refused send moved money (%v) or sent (%d)", bal.Available, len(vendor.Sent())-sent)
	}

	// A Pricer of one's own that answers in another currency is refused
	// the same way.
	n2, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(ch), notify.WithPrices(foreignPricer{wallet.EUR()}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = n2.Send(ctx, &sms.Request{Account: "us", To: "+14155550100", Message: "hi"})
	if notify.CodeOf(err) != notify.CodePermissionDenied || !strings.Contains(err.Error(), "EUR") || !strings.Contains(err.Error(), "USD") {
		t.Errorf("EUR price for a USD account: err = %v, want PermissionDenied naming both", err)
	}
	if _, err := n2.Quote(ctx, &sms.Request{Account: "us", To: "+14155550100", Message: "hi"}); notify.CodeOf(err) != notify.CodePermissionDenied {
		t.Errorf("Quote: err = %v, want PermissionDenied", err)
	}
	if bal, _ := n.Balance(ctx, "us"); bal.Available.Minor != 498 || len(vendor.Sent()) != sent {
		t.Errorf("refused send moved money (%v) or sent (%d)", bal.Available, len(vendor.Sent())-sent)
	}
}

func mustCurrency(t *testing.T, code string) record.Currency {
	t.Helper()
	c, err := wallet.CurrencyOf(code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
