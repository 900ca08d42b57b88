package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// price prices one SMS of the demo account's kind by the gateway's
// prices for an account in currency c.
func price(t *testing.T, c *config, cur record.Currency, country string, route sms.Route, units int) (notify.Money, error) {
	t.Helper()
	acct := &notify.Account{ID: "demo", Currency: cur}
	return c.prices.pricer().Price(acct, &notify.Envelope{Kind: sms.Kind, Country: country, Route: string(route), Units: units})
}

// TestSMSPricesSetting: NOTIFY_SMS_PRICES prices a segment to each
// country it names, on every route of the stock INR list; the others
// keep India's prices.
func TestSMSPricesSetting(t *testing.T) {
	c, err := loadConfig(envOf(map[string]string{"NOTIFY_SMS_PRICES": " US=70, GB=60 "}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		country string
		route   sms.Route
		units   int
		want    int64
	}{
		{"US", sms.RouteSMS, 1, 70}, {"US", sms.RouteOTP, 2, 140}, {"GB", sms.RouteSMS, 3, 180},
		{"IN", sms.RouteSMS, 1, 25}, {"IN", sms.RouteDLT, 1, 18}, {"FR", sms.RouteSMS, 1, 25},
	} {
		m, err := price(t, c, record.INR(), tt.country, tt.route, tt.units)
		if err != nil || m.Minor != tt.want {
			t.Errorf("%s %s ×%d: %v %v, want %d", tt.country, tt.route, tt.units, m, err, tt.want)
		}
	}
	def, err := loadConfig(envOf())
	if err != nil {
		t.Fatal(err)
	}
	if l := def.prices.lists["INR"]; len(l.SMSByCountry) != 1 || l.SMS != wallet.DefaultINR().SMS || l.Strict || len(def.prices.lists) != 1 {
		t.Errorf("without NOTIFY_SMS_PRICES: %+v", def.prices)
	}
	for _, bad := range []string{"US", "US=", "=70", "us=70", "USA=70", "US=0", "US=-5", "US=0.70", "US=₹0.70", "US=70,US=80",
		"US=70,", "US=70;GB=60", "US=10001", "US=70 GB=60"} {
		_, err := loadConfig(envOf(map[string]string{"NOTIFY_SMS_PRICES": bad}))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_SMS_PRICES: ") {
			t.Errorf("NOTIFY_SMS_PRICES=%q: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestPricesSetting: NOTIFY_PRICES gives a list per currency; each
// account is priced by its currency's, in its minor unit, and one in a
// currency without a list is refused before any charge.
func TestPricesSetting(t *testing.T) {
	c, err := loadConfig(envOf(map[string]string{
		"NOTIFY_CURRENCY": "USD",
		"NOTIFY_PRICES":   " USD: sms=0.02, US:sms=0.01, email=0.01 ; JPY: sms=3 ",
		"NOTIFY_BALANCE":  "$25.00",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.balance != (notify.Money{Minor: 2500, Currency: wallet.USD()}) || !c.prices.currency.Same(wallet.USD()) {
		t.Errorf("balance %v in %v", c.balance, c.prices.currency)
	}
	if got := strings.Join(c.prices.codes(), ","); got != "INR,JPY,USD" {
		t.Errorf("currencies %s, want the stock INR list beside those given", got)
	}
	for _, tt := range []struct {
		cur     record.Currency
		country string
		want    int64
	}{
		{wallet.USD(), "US", 2}, {wallet.USD(), "CA", 4}, {wallet.JPY(), "JP", 6}, {record.INR(), "IN", 40},
	} {
		m, err := price(t, c, tt.cur, tt.country, sms.RouteOTP, 2)
		if err != nil || m.Minor != tt.want || !m.Currency.Same(tt.cur) {
			t.Errorf("%s to %s: %v %v, want %d", tt.cur.Code, tt.country, m, err, tt.want)
		}
	}
	if _, err := price(t, c, wallet.GBP(), "GB", sms.RouteSMS, 1); notify.CodeOf(err) != notify.CodePermissionDenied {
		t.Errorf("a GBP account: %v, want PermissionDenied", err)
	}

	// NOTIFY_PRICES_STRICT: a country a list does not name is refused,
	// India's stock prices included.
	c, err = loadConfig(envOf(map[string]string{"NOTIFY_PRICES": "USD: US:sms=0.01", "NOTIFY_PRICES_STRICT": "on", "NOTIFY_SMS_PRICES": "US=70"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cur     record.Currency
		country string
		want    int64 // -1: refused
	}{
		{wallet.USD(), "US", 1}, {wallet.USD(), "CA", -1}, {record.INR(), "IN", 25}, {record.INR(), "US", 70}, {record.INR(), "FR", -1},
	} {
		m, err := price(t, c, tt.cur, tt.country, sms.RouteSMS, 1)
		if tt.want < 0 {
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), tt.country) {
				t.Errorf("strict %s to %s: %v %v, want InvalidArgument naming the country", tt.cur.Code, tt.country, m, err)
			}
		} else if err != nil || m.Minor != tt.want {
			t.Errorf("strict %s to %s: %v %v, want %d", tt.cur.Code, tt.country, m, err, tt.want)
		}
	}

	for env, want := range map[string]string{
		"NOTIFY_CURRENCY=usd":                        "NOTIFY_CURRENCY: want an ISO 4217 code",
		"NOTIFY_CURRENCY=USD":                        `NOTIFY_CURRENCY=USD needs prices in USD: set NOTIFY_PRICES, such as "USD: sms=0.01`,
		"NOTIFY_PRICES=USD sms=0.01":                 "NOTIFY_PRICES: want CURRENCY: prices",
		"NOTIFY_PRICES=sms=0.01":                     "NOTIFY_PRICES: want CURRENCY: prices",
		"NOTIFY_PRICES=XAU: sms=1":                   `NOTIFY_PRICES: "XAU" is not an ISO 4217`,
		"NOTIFY_PRICES=USD: sms=1; USD: sms=2":       "NOTIFY_PRICES: USD is given twice",
		"NOTIFY_PRICES=USD: sms=0.001":               "NOTIFY_PRICES: USD: price item 1",
		"NOTIFY_PRICES=INR: sms=0.25|US=70":          "NOTIFY_SMS_PRICES prices the stock INR list, and NOTIFY_PRICES gives one",
		"NOTIFY_PRICES_STRICT=maybe":                 "NOTIFY_PRICES_STRICT: want on or off",
		"NOTIFY_CURRENCY=JPY|NOTIFY_BALANCE=100.5":   "NOTIFY_BALANCE: want an amount of JPY",
		"NOTIFY_CURRENCY=JPY|NOTIFY_PRICES=JPY:sms=": "NOTIFY_PRICES: JPY: price item 1",
	} {
		vars := map[string]string{}
		for _, kv := range strings.Split(env, "|") {
			k, v, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(k, "NOTIFY_") {
				k, v = "NOTIFY_SMS_PRICES", kv
			}
			vars[k] = v
		}
		if env == "NOTIFY_CURRENCY=JPY|NOTIFY_BALANCE=100.5" {
			vars["NOTIFY_PRICES"] = "JPY: sms=3"
		}
		_, err := loadConfig(envOf(vars))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", env, err, want)
		}
	}
}

// TestGatewayAccountsInAnyCurrency: the admin API creates accounts in
// USD and JPY, the currencies NOTIFY_PRICES prices; a US send on each is
// charged in its minor unit and its receipt says so; an account the
// gateway could not price is refused at creation, and a send priced
// across currencies never happens.
func TestGatewayAccountsInAnyCurrency(t *testing.T) {
	w := startWorldSMS(t, map[string]string{
		"NOTIFY_ADMIN_KEY": testAdminKey,
		"NOTIFY_PRICES":    "USD: sms=0.02, US:sms=0.01; JPY: sms=3, US:sms=2",
	})
	g := w.g
	keys := map[string]string{}
	for _, c := range []struct{ id, body string }{
		{"us", `{"id":"us","currency":"USD","opening_balance":"5.00","countries":["US"],"vendor_id":"ACME"}`},
		{"jp", `{"id":"jp","currency":"JPY","opening_balance":"500","countries":["US"],"vendor_id":"ACME"}`},
	} {
		a := g.admin(t, http.MethodPost, "/admin/v1/accounts", c.body)
		if a.status != 201 {
			t.Fatalf("create %s: %d %s", c.id, a.status, a.raw)
		}
		keys[c.id] = adminData(a)["api_key"].(string)
	}
	a := g.admin(t, http.MethodPost, "/admin/v1/accounts", `{"id":"kw","currency":"KWD","opening_balance":"1.000"}`)
	if a.status != 400 || !strings.Contains(a.raw, "must be one of INR, JPY, USD") {
		t.Fatalf("create in KWD: %d %s, want 400 naming the currencies priced", a.status, a.raw)
	}
	for _, c := range []struct {
		id, currency string
		cost         float64
		balance      string
	}{{"us", `{"code":"USD","symbol":"$","exponent":2}`, 1, "4.99"}, {"jp", `{"code":"JPY","symbol":"¥","exponent":0}`, 2, "498"}} {
		a := g.post(t, "/sms", keys[c.id], `{"to":"+1 415 555 0100","message":"Your order has shipped"}`)
		if a.status != 200 || a.body["provider"] != "twilio" || a.body["cost_minor"] != c.cost || !strings.Contains(a.raw, `"currency":`+c.currency) {
			t.Fatalf("%s send: %d %s", c.id, a.status, a.raw)
		}
		b := g.json(t, g.send(t, http.MethodGet, g.base+"/balance", map[string]string{"Authorization": "Bearer " + keys[c.id]}, ""))
		if b.status != 200 || !strings.Contains(b.raw, `"balance":"`+c.balance+`"`) || !strings.Contains(b.raw, c.currency) {
			t.Fatalf("%s balance: %d %s", c.id, b.status, b.raw)
		}
	}
	if n := len(w.twilio.Messages()); n != 2 {
		t.Fatalf("Twilio got %d messages, want 2", n)
	}
}

// TestRegionSetting: NOTIFY_REGION is the demo account's country, whose
// numbers need no country code; a bare number of another country names
// the fix.
func TestRegionSetting(t *testing.T) {
	w := startWorldSMS(t, map[string]string{"NOTIFY_REGION": "US", "NOTIFY_COUNTRIES": "US,IN"})
	g := w.g
	if !strings.Contains(g.out.text(), `"to":"(415) 555-0100"`) {
		t.Errorf("banner's example: %s", g.out.text())
	}
	a := g.post(t, "/sms", g.key, `{"to":"(415) 555-0100","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "twilio" || !strings.Contains(a.raw, `"to":"+14155550100","country":"US"`) {
		t.Fatalf("a US national number on a US account: %d %s", a.status, a.raw)
	}
	a = g.post(t, "/sms", g.key, `{"to":"+91 98765 43210","message":"Your order has shipped"}`)
	if a.status != 200 || a.body["provider"] != "smsgateway" {
		t.Fatalf("an Indian number with its code: %d %s", a.status, a.raw)
	}
	a = g.post(t, "/sms", g.key, `{"to":"98765 43210","message":"Your order has shipped"}`)
	if a.status != 400 || !strings.Contains(a.raw, "read as a number of the account's region, US") {
		t.Fatalf("a bare Indian number on a US account: %d %s", a.status, a.raw)
	}

	// On an Indian account a bare US number says to write its code.
	in := startWorldSMS(t, map[string]string{"NOTIFY_COUNTRIES": "IN,US"}).g
	for _, to := range []string{"4155550100", "14155550100"} {
		a := in.post(t, "/sms", in.key, `{"to":"`+to+`","message":"hi"}`)
		if a.status != 400 || !strings.Contains(a.raw, "with its country code, such as +1 415 555 0100") {
			t.Errorf("%s on an Indian account: %d %s", to, a.status, a.raw)
		}
	}
	for _, bad := range []string{"us", "USA", "1"} {
		if _, err := loadConfig(envOf(map[string]string{"NOTIFY_REGION": bad})); err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_REGION: ") {
			t.Errorf("NOTIFY_REGION=%q: %v", bad, err)
		}
	}
}
