package wallet

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

func inrAccount() *notify.Account {
	return &notify.Account{ID: "acme", Currency: record.INR()}
}

func smsEnv(route sms.Route, segments int) *notify.Envelope {
	return &notify.Envelope{Kind: sms.Kind, Route: string(route), Units: segments, Content: &sms.Message{Route: route, Segments: segments}}
}

// chatEnv is a chat envelope as the chat channel prepares it: the type
// promotional is the promotional price class.
func chatEnv(gw chat.Gateway, typ chat.Type, class record.PriceClass) *notify.Envelope {
	if typ == chat.TypePromotional {
		class = record.Promotional
	}
	return &notify.Envelope{Kind: chat.Kind, Route: string(gw), Units: 1, Class: class, Content: &chat.Message{Gateway: gw, Type: typ}}
}

func emailEnv(p email.Purpose) *notify.Envelope {
	return &notify.Envelope{Kind: email.Kind, Route: string(p), Units: 1, Content: &email.Message{Purpose: p}}
}

// in sends env to a number of country.
func in(country string, env *notify.Envelope) *notify.Envelope { env.Country = country; return env }

func TestPriceDefaultINR(t *testing.T) {
	qrAcct := inrAccount()
	qrAcct.Settings = chat.Settings{PrimaryGateway: chat.GatewayQR}.Map()
	tests := []struct {
		name string
		acct *notify.Account
		env  *notify.Envelope
		want int64
	}{
		{"sms default route", inrAccount(), smsEnv("", 1), 25},
		{"sms route, 3 segments", inrAccount(), smsEnv(sms.RouteSMS, 3), 75},
		{"otp route", inrAccount(), smsEnv(sms.RouteOTP, 1), 20},
		{"dlt route, 2 segments", inrAccount(), smsEnv(sms.RouteDLT, 2), 36},
		{"sms without content counts as route sms", inrAccount(), &notify.Envelope{Kind: sms.Kind, Units: 2}, 50},
		{"zero units count as one", inrAccount(), smsEnv(sms.RouteSMS, 0), 25},
		{"cloud otp", inrAccount(), chatEnv(chat.GatewayCloud, chat.TypeOTP, ""), 35},
		{"cloud default type", inrAccount(), chatEnv(chat.GatewayCloud, "", ""), 35},
		{"cloud promotional type", inrAccount(), chatEnv(chat.GatewayCloud, chat.TypePromotional, ""), 90},
		{"cloud promotional class", inrAccount(), chatEnv(chat.GatewayCloud, chat.TypeOTP, record.Promotional), 90},
		{"qr otp", inrAccount(), chatEnv(chat.GatewayQR, chat.TypeOTP, record.Transactional), 10},
		{"qr promotional", inrAccount(), chatEnv(chat.GatewayQR, chat.TypePromotional, ""), 20},
		{"auto uses cloud by default", inrAccount(), chatEnv(chat.GatewayAuto, "", ""), 35},
		{"empty gateway uses the primary", qrAcct, chatEnv("", "", ""), 10},
		{"auto uses the primary", qrAcct, chatEnv(chat.GatewayAuto, chat.TypePromotional, ""), 20},
		{"chat without content", inrAccount(), &notify.Envelope{Kind: chat.Kind, Units: 1}, 35},
		{"email otp", inrAccount(), emailEnv(email.PurposeOTP), 10},
		{"email invoice", inrAccount(), emailEnv(email.PurposeInvoice), 10},
		{"email notification", inrAccount(), emailEnv(email.PurposeNotification), 8},
		{"email no purpose", inrAccount(), emailEnv(""), 8},
		{"email campaign", inrAccount(), emailEnv(email.PurposeCampaign), 5},
		{"push", inrAccount(), &notify.Envelope{Kind: push.Kind, Units: 1, Class: record.Transactional}, 2},
		{"push promotional", inrAccount(), &notify.Envelope{Kind: push.Kind, Units: 1, Class: record.Promotional}, 5},
		{"push without a class", inrAccount(), &notify.Envelope{Kind: push.Kind}, 2},
	}
	prices := DefaultINR()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prices.Price(tt.acct, tt.env)
			if err != nil {
				t.Fatalf("Price: %v", err)
			}
			want := notify.Money{Minor: tt.want, Currency: record.INR()}
			if got != want {
				t.Errorf("Price = %v, want %v", got, want)
			}
		})
	}
}

func TestPriceByCountry(t *testing.T) {
	prices := DefaultINR()
	prices.SMSByCountry = map[string]SMSPrices{"US": {Plain: 70, OTP: 65}}
	prices.ChatByCountry = map[string]ChatPrices{"US": {Cloud: ChatRates{OTP: 120, Promotional: 300}}}
	tests := []struct {
		name string
		env  *notify.Envelope
		want int64
	}{
		{"US sms, 2 segments", in("US", smsEnv(sms.RouteSMS, 2)), 140},
		{"US otp route", in("US", smsEnv(sms.RouteOTP, 1)), 65},
		{"India keeps the default", in("IN", smsEnv(sms.RouteSMS, 1)), 25},
		{"a country without prices takes the default", in("GB", smsEnv(sms.RouteOTP, 1)), 20},
		{"no country takes the default", smsEnv(sms.RouteSMS, 1), 25},
		{"US cloud promotional", in("US", chatEnv(chat.GatewayCloud, chat.TypePromotional, "")), 300},
		{"US qr: free where the country's list says nothing", in("US", chatEnv(chat.GatewayQR, chat.TypeOTP, "")), 0},
		{"India's cloud", in("IN", chatEnv(chat.GatewayCloud, chat.TypeOTP, "")), 35},
		{"e-mail ignores the country", in("US", emailEnv(email.PurposeOTP)), 10},
	}
	for _, tt := range tests {
		got, err := prices.Price(inrAccount(), tt.env)
		if err != nil || got.Minor != tt.want {
			t.Errorf("%s: Price = %v, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}

func TestPriceErrors(t *testing.T) {
	usd := record.Currency{Code: "USD", Symbol: "$", Exponent: 2}
	negative := DefaultINR()
	negative.SMS.OTP = -1
	huge := DefaultINR()
	huge.SMS.Plain = math.MaxInt64 / 2
	inr0 := record.Currency{Code: "INR", Symbol: "₹", Exponent: 0}
	tests := []struct {
		name    string
		prices  *PriceList
		acct    *notify.Account
		env     *notify.Envelope
		wantMsg []string
		code    notify.Code // default CodeInternal
	}{
		{"nil list", nil, inrAccount(), smsEnv("", 1), []string{"nil price list"}, ""},
		{"nil account", DefaultINR(), nil, smsEnv("", 1), []string{"account"}, ""},
		{"nil envelope", DefaultINR(), inrAccount(), nil, []string{"envelope"}, ""},
		{"other currency", DefaultINR(), &notify.Account{ID: "us", Currency: usd}, smsEnv("", 1), []string{`"us"`, "INR", "USD"}, notify.CodePermissionDenied},
		{"account without currency", DefaultINR(), &notify.Account{ID: "x"}, smsEnv("", 1), []string{"INR", "no currency"}, ""},
		{"other exponent", DefaultINR(), &notify.Account{ID: "x", Currency: inr0}, smsEnv("", 1), []string{"exponent 2", "exponent 0"}, notify.CodePermissionDenied},
		{"unknown route", DefaultINR(), inrAccount(), smsEnv("flash", 1), []string{`route "flash"`}, ""},
		{"unknown gateway", DefaultINR(), inrAccount(), chatEnv("pigeon", "", ""), []string{`gateway "pigeon"`}, ""},
		{"unknown purpose", DefaultINR(), inrAccount(), emailEnv("spam"), []string{`purpose "spam"`}, ""},
		{"otp kind", DefaultINR(), inrAccount(), &notify.Envelope{Kind: otp.Kind}, []string{`kind "otp"`}, ""},
		{"empty kind", DefaultINR(), inrAccount(), &notify.Envelope{}, []string{`kind ""`}, ""},
		{"negative price", negative, inrAccount(), smsEnv(sms.RouteOTP, 1), []string{"negative"}, ""},
		{"overflow", huge, inrAccount(), smsEnv(sms.RouteSMS, 3), []string{"overflows"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.prices.Price(tt.acct, tt.env)
			if err == nil {
				t.Fatalf("Price = %v, want an error", got)
			}
			want := tt.code
			if want == "" {
				want = notify.CodeInternal
			}
			if c := notify.CodeOf(err); c != want {
				t.Errorf("code = %q, want %s (err %v)", c, want, err)
			}
			if !strings.HasPrefix(err.Error(), string(want)+": wallet: ") {
				t.Errorf("error %q lacks the wallet prefix", err)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestPlans(t *testing.T) {
	gold := DefaultINR()
	gold.SMS.Plain = 12
	plans := &Plans{Default: DefaultINR(), Named: map[string]*PriceList{"gold": gold}}

	acct := inrAccount()
	got, err := plans.Price(acct, smsEnv("", 2))
	if err != nil || got.Minor != 50 {
		t.Errorf("default plan: Price = %v, %v; want 50 paise", got, err)
	}
	acct.PricePlan = "gold"
	got, err = plans.Price(acct, smsEnv("", 2))
	if err != nil || got.Minor != 24 {
		t.Errorf("gold plan: Price = %v, %v; want 24 paise", got, err)
	}
	acct.PricePlan = "platinum"
	if _, err := plans.Price(acct, smsEnv("", 1)); notify.CodeOf(err) != notify.CodeInternal || !strings.Contains(err.Error(), `"platinum"`) {
		t.Errorf("unknown plan: err = %v, want Internal naming the plan", err)
	}
	if _, err := (&Plans{}).Price(inrAccount(), smsEnv("", 1)); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("no default: err = %v, want Internal", err)
	}
	if _, err := plans.Price(nil, smsEnv("", 1)); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("nil account: err = %v, want Internal", err)
	}
	usd := &notify.Account{ID: "us", Currency: record.Currency{Code: "USD", Exponent: 2}}
	if _, err := plans.Price(usd, smsEnv("", 1)); notify.CodeOf(err) != notify.CodePermissionDenied {
		t.Errorf("currency mismatch through plans: err = %v, want PermissionDenied", err)
	}

	// One list per currency: the account's currency picks it.
	usdList := &PriceList{Currency: USD(), SMS: SMSPrices{Plain: 1, OTP: 1, DLT: 1}}
	jpyList := &PriceList{Currency: JPY(), SMS: SMSPrices{Plain: 3, OTP: 2, DLT: 2}}
	plans.ByCurrency = map[string]*PriceList{"USD": usdList, "JPY": jpyList}
	usd.Currency = USD()
	if got, err := plans.Price(usd, smsEnv("", 2)); err != nil || got != (notify.Money{Minor: 2, Currency: USD()}) {
		t.Errorf("USD account: Price = %v, %v; want 2 cents", got, err)
	}
	jpy := &notify.Account{ID: "jp", Currency: JPY()}
	if got, err := plans.Price(jpy, smsEnv(sms.RouteOTP, 3)); err != nil || got != (notify.Money{Minor: 6, Currency: JPY()}) {
		t.Errorf("JPY account: Price = %v, %v; want 6 yen", got, err)
	}
	if got, err := plans.Price(inrAccount(), smsEnv("", 1)); err != nil || got.Minor != 25 {
		t.Errorf("INR account beside ByCurrency: Price = %v, %v; want Default's 25 paise", got, err)
	}
	gbp := &notify.Account{ID: "uk", Currency: GBP()}
	if _, err := plans.Price(gbp, smsEnv("", 1)); notify.CodeOf(err) != notify.CodePermissionDenied || !strings.Contains(err.Error(), "GBP") {
		t.Errorf("a currency without a list: err = %v, want PermissionDenied naming GBP", err)
	}
	// Without Default, a currency no list is in names those there are;
	// without Named, an account's plan is not read.
	byCurrency := &Plans{ByCurrency: plans.ByCurrency}
	if _, err := byCurrency.Price(gbp, smsEnv("", 1)); notify.CodeOf(err) != notify.CodePermissionDenied ||
		!strings.Contains(err.Error(), "GBP") || !strings.Contains(err.Error(), "JPY, USD") {
		t.Errorf("a currency without a list, no default: err = %v, want PermissionDenied naming GBP and the lists", err)
	}
	usd.PricePlan = "whatever"
	if got, err := byCurrency.Price(usd, smsEnv("", 1)); err != nil || got.Minor != 1 {
		t.Errorf("no plans in use: Price = %v, %v; want the USD list's 1 cent", got, err)
	}
	jpy.PricePlan = "gold" // a named plan is the plan's list, whatever the currency
	if _, err := plans.Price(jpy, smsEnv("", 1)); notify.CodeOf(err) != notify.CodePermissionDenied {
		t.Errorf("a named plan in another currency: err = %v, want PermissionDenied", err)
	}
}

func TestDefaultINRIsFresh(t *testing.T) {
	a := DefaultINR()
	a.SMS.Plain = 1
	if b := DefaultINR(); b.SMS.Plain != 25 {
		t.Errorf("changing one DefaultINR list changed another: %d", b.SMS.Plain)
	}
}

func TestPriceSymbolIsPresentation(t *testing.T) {
	acct := &notify.Account{ID: "x", Currency: record.Currency{Code: "INR", Exponent: 2}}
	got, err := DefaultINR().Price(acct, smsEnv("", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got.Currency != acct.Currency {
		t.Errorf("price currency = %+v, want the account's %+v", got.Currency, acct.Currency)
	}
}

// Vendors price a country's numbers by type of line: a type's entry wins
// over its country's, which wins over the list's own prices.
func TestPriceByNumberType(t *testing.T) {
	prices := DefaultINR()
	prices.SMSByCountry = map[string]SMSPrices{"US": {Plain: 70, OTP: 70, DLT: 70}}
	prices.SMSByNumberType = map[CountryType]SMSPrices{
		{Country: "US", Type: phone.TollFree}: {Plain: 90, OTP: 90, DLT: 90},
		{Country: "GB", Type: phone.Mobile}:   {Plain: 60, OTP: 55, DLT: 60},
	}
	typed := func(country string, typ phone.Type, route sms.Route) *notify.Envelope {
		env := in(country, smsEnv(route, 2))
		sms.MessageOf(env).NumberType = typ
		return env
	}
	for _, tt := range []struct {
		name string
		env  *notify.Envelope
		want int64
	}{
		{"US toll-free", typed("US", phone.TollFree, sms.RouteSMS), 180},
		{"US fixed-line or mobile: the country's", typed("US", phone.FixedLineOrMobile, sms.RouteSMS), 140},
		{"GB mobile otp", typed("GB", phone.Mobile, sms.RouteOTP), 110},
		{"GB fixed line: the list's own", typed("GB", phone.FixedLine, sms.RouteSMS), 50},
		{"India", typed("IN", phone.Mobile, sms.RouteDLT), 36},
	} {
		if got, err := prices.Price(inrAccount(), tt.env); err != nil || got.Minor != tt.want {
			t.Errorf("%s: Price = %v, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}

// A strict list refuses a country it has no price for, naming "to", and
// prices the countries it names and messages without a country.
func TestPriceStrict(t *testing.T) {
	prices := DefaultINR()
	prices.Strict = true
	prices.SMSByCountry = map[string]SMSPrices{"IN": prices.SMS}
	prices.SMSByNumberType = map[CountryType]SMSPrices{{Country: "US", Type: phone.FixedLineOrMobile}: {Plain: 70}}
	prices.ChatByCountry = map[string]ChatPrices{"IN": prices.Chat}
	for _, tt := range []struct {
		name string
		env  *notify.Envelope
		want int64 // -1: refused
	}{
		{"India's SMS", in("IN", smsEnv(sms.RouteSMS, 1)), 25},
		{"a US number of the priced type", func() *notify.Envelope {
			env := in("US", smsEnv(sms.RouteSMS, 1))
			sms.MessageOf(env).NumberType = phone.FixedLineOrMobile
			return env
		}(), 70},
		{"a US number of another type", in("US", smsEnv(sms.RouteSMS, 1)), -1},
		{"a German SMS", in("DE", smsEnv(sms.RouteOTP, 1)), -1},
		{"India's chat", in("IN", chatEnv(chat.GatewayCloud, chat.TypeOTP, "")), 35},
		{"a German chat", in("DE", chatEnv(chat.GatewayCloud, chat.TypeOTP, "")), -1},
		{"an SMS without a country", smsEnv(sms.RouteSMS, 1), 25},
		{"e-mail has no country", emailEnv(email.PurposeOTP), 10},
	} {
		got, err := prices.Price(inrAccount(), tt.env)
		if tt.want >= 0 {
			if err != nil || got.Minor != tt.want {
				t.Errorf("%s: Price = %v, %v; want %d", tt.name, got, err, tt.want)
			}
			continue
		}
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "to" ||
			!strings.Contains(ne.Fields[0].Message, tt.env.Country) || !strings.Contains(ne.Fields[0].Message, "INR price list") {
			t.Errorf("%s: err = %v, want InvalidArgument naming to, the country and the list", tt.name, err)
		}
	}
	prices.Strict = false
	if got, err := prices.Price(inrAccount(), in("DE", smsEnv(sms.RouteOTP, 1))); err != nil || got.Minor != 20 {
		t.Errorf("not strict: a German SMS = %v, %v; want the list's own 20", got, err)
	}
}
