package wallet_test

import (
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

func ExampleFormat() {
	fmt.Println(wallet.Format(notify.Money{Minor: 123450, Currency: record.INR()}))
	fmt.Println(wallet.Format(notify.Money{Minor: 1234567850, Currency: record.INR()}))
	fmt.Println(wallet.Format(notify.Money{Minor: -25, Currency: record.INR()}))
	fmt.Println(wallet.Format(notify.Money{Minor: 1234567850, Currency: record.Currency{Code: "USD", Symbol: "$", Exponent: 2}}))
	// Output:
	// ₹1,234.50
	// ₹1,23,45,678.50
	// -₹0.25
	// $12,345,678.50
}

func ExampleParse() {
	for _, s := range []string{"₹1,234.50", "1234.5", "1234", "1234.567", "1,234,567"} {
		m, err := wallet.Parse(s, record.INR())
		if err != nil {
			fmt.Println("error:", notify.CodeOf(err))
			continue
		}
		fmt.Println(m.Minor, "paise")
	}
	// Output:
	// 123450 paise
	// 123450 paise
	// 123400 paise
	// error: invalid_argument
	// error: invalid_argument
}

func ExamplePriceList_Price() {
	prices := wallet.DefaultINR()
	acct := &notify.Account{ID: "acme", Currency: record.INR()}
	env := &notify.Envelope{
		Kind:    sms.Kind,
		Route:   string(sms.RouteDLT), // the channel's route, which prices it
		Units:   2,                    // two segments
		Content: &sms.Message{Route: sms.RouteDLT},
	}
	price, err := prices.Price(acct, env)
	if err != nil {
		panic(err)
	}
	fmt.Println(wallet.Format(price))
	// Output: ₹0.36
}

func ExamplePriceList_Price_byCountry() {
	prices := wallet.DefaultINR()
	// SMS to the United States cost ₹0.70 a segment (₹0.65 on the otp
	// route); every other country keeps the default prices.
	prices.SMSByCountry = map[string]wallet.SMSPrices{"US": {Plain: 70, OTP: 65}}
	acct := &notify.Account{ID: "acme", Currency: record.INR(), Countries: []string{"IN", "US"}}
	for _, country := range []string{"US", "IN"} {
		env := &notify.Envelope{Kind: sms.Kind, Route: string(sms.RouteSMS), Units: 1, Country: country}
		price, err := prices.Price(acct, env)
		if err != nil {
			panic(err)
		}
		fmt.Println(country, wallet.Format(price))
	}
	// Output:
	// US ₹0.70
	// IN ₹0.25
}

func ExamplePlans() {
	bulk := wallet.DefaultINR()
	bulk.SMS.Plain = 15
	plans := &wallet.Plans{
		Default: wallet.DefaultINR(),
		Named:   map[string]*wallet.PriceList{"bulk": bulk},
	}
	env := &notify.Envelope{Kind: sms.Kind, Units: 1}
	for _, plan := range []string{"", "bulk", "gold"} {
		acct := &notify.Account{ID: "acme", Currency: record.INR(), PricePlan: plan}
		price, err := plans.Price(acct, env)
		if err != nil {
			fmt.Printf("plan %q: %v\n", plan, notify.CodeOf(err))
			continue
		}
		fmt.Printf("plan %q: %s\n", plan, wallet.Format(price))
	}
	// Output:
	// plan "": ₹0.25
	// plan "bulk": ₹0.15
	// plan "gold": internal
}

// A channel of your own is priced by the same list: its kind's prices in
// Kinds, per unit and, where a route has its own, by route.
func ExampleKindPrices() {
	prices := wallet.DefaultINR()
	prices.Kinds = map[notify.Kind]wallet.KindPrices{
		"voice": {Unit: 5, Routes: map[string]int64{"critical": 12}},
	}
	acct := &notify.Account{ID: "acme", Currency: record.INR()}
	for _, route := range []string{"", "critical"} {
		price, err := prices.Price(acct, &notify.Envelope{Kind: "voice", Route: route, Units: 1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("voice %q %s\n", route, wallet.Format(price))
	}
	// Output:
	// voice "" ₹0.05
	// voice "critical" ₹0.12
}

// A price list in US dollars, as a configuration file gives it: US
// numbers cost a cent a segment, toll-free ones two on the otp route.
func ExampleParsePriceList() {
	prices, err := wallet.ParsePriceList("sms=0.03, US:sms=0.01, US/toll-free:sms.otp=0.02, email=0.01", wallet.USD())
	if err != nil {
		panic(err)
	}
	acct := &notify.Account{ID: "acme", Currency: wallet.USD()}
	for _, to := range []struct {
		country string
		line    phone.Type
	}{{"US", phone.FixedLineOrMobile}, {"US", phone.TollFree}, {"CA", phone.FixedLineOrMobile}} {
		// An envelope as the SMS channel prepares it for such a number.
		env := &notify.Envelope{Kind: sms.Kind, Route: string(sms.RouteOTP), Units: 1, Country: to.country,
			Content: &sms.Message{Route: sms.RouteOTP, NumberType: to.line}}
		price, err := prices.Price(acct, env)
		if err != nil {
			panic(err)
		}
		fmt.Println(to.country, to.line, wallet.Format(price))
	}
	// Output:
	// US fixed-line or mobile $0.01
	// US toll-free $0.02
	// CA fixed-line or mobile $0.03
}

// A strict list sends only where it has prices: a country it does not
// name is refused before anything is charged.
func ExamplePriceList_Strict() {
	prices, err := wallet.ParsePriceList("US:sms=0.01, CA:sms=0.02", wallet.USD())
	if err != nil {
		panic(err)
	}
	prices.Strict = true
	acct := &notify.Account{ID: "acme", Currency: wallet.USD(), Countries: []string{"*"}}
	for _, country := range []string{"CA", "BR"} {
		price, err := prices.Price(acct, &notify.Envelope{Kind: sms.Kind, Units: 1, Country: country})
		if err != nil {
			fmt.Println(country, err)
			continue
		}
		fmt.Println(country, wallet.Format(price))
	}
	// Output:
	// CA $0.02
	// BR invalid_argument: to: is a number of BR, which the USD price list has no sms price for
}
