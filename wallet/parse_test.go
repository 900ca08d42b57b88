package wallet

import (
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
)

func TestParsePriceList(t *testing.T) {
	got, err := ParsePriceList(" sms=0.02, sms.otp=0.01,chat=0.05, chat.qr.promotional=$0.03, email=0.01, email.campaign=0, push=0.01, push.promotional=0.02,"+
		"US/toll-free:sms.otp=0.04, US:sms.dlt=0.03, GB:chat.cloud=0.09, DE/mobile:sms=0.07", USD())
	if err != nil {
		t.Fatal(err)
	}
	want := &PriceList{
		Currency: USD(),
		SMS:      SMSPrices{Plain: 2, OTP: 1, DLT: 2},
		// A country starts from the list's own prices, a type from its
		// country's, whatever the order of the items.
		SMSByCountry: map[string]SMSPrices{"US": {Plain: 2, OTP: 1, DLT: 3}},
		SMSByNumberType: map[CountryType]SMSPrices{
			{Country: "US", Type: phone.TollFree}: {Plain: 2, OTP: 4, DLT: 3},
			{Country: "DE", Type: phone.Mobile}:   {Plain: 7, OTP: 7, DLT: 7},
		},
		Chat:          ChatPrices{Cloud: ChatRates{OTP: 5, Promotional: 5}, QR: ChatRates{OTP: 5, Promotional: 3}},
		ChatByCountry: map[string]ChatPrices{"GB": {Cloud: ChatRates{OTP: 9, Promotional: 9}, QR: ChatRates{OTP: 5, Promotional: 3}}},
		Email:         EmailPrices{OTP: 1, Invoice: 1, Notification: 1, Campaign: 0},
		Push:          PushPrices{Transactional: 1, Promotional: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePriceList =\n%+v\nwant\n%+v", got, want)
	}

	yen, err := ParsePriceList("sms=3,email=¥1", JPY())
	if err != nil || yen.SMS.OTP != 3 || yen.Email.Campaign != 1 || !yen.Currency.Same(JPY()) {
		t.Errorf("yen: %+v, %v", yen, err)
	}
	if empty, err := ParsePriceList("  ", USD()); err != nil || !reflect.DeepEqual(empty, &PriceList{Currency: USD()}) {
		t.Errorf("empty text: %+v, %v; want a list with no prices", empty, err)
	}
}

func TestParsePriceListRefuses(t *testing.T) {
	for text, want := range map[string]string{
		"sms":                       "want NAME=AMOUNT",
		"sms=0.01,":                 "item 2",
		"fax=0.01":                  `"fax" is not a price`,
		"sms.flash=0.01":            "want sms, sms.sms",
		"sms.otp.x=0.01":            "want sms, sms.sms",
		"chat.pigeon=0.01":          "want chat, chat.cloud",
		"chat.cloud.bulk=0.01":      "want chat, chat.cloud",
		"US/mobile:chat=0.01":       "not by type of line",
		"US:email=0.01":             "no country",
		"email.spam=0.01":           "email.otp",
		"IN:push=0.01":              "push has one price everywhere",
		"push.silent=0.01":          "want push, push.transactional or push.promotional",
		"us:sms=0.01":               `"us" is not an ISO 3166-1`,
		"USA:sms=0.01":              `"USA" is not an ISO 3166-1`,
		"US/cell:sms=0.01":          `"cell" is not a type of line`,
		"US/unknown:sms=0.01":       `"unknown" is not a type of line`,
		"sms=0.001":                 "at most 2 decimals, such as $0.01",
		"sms=-0.01":                 "not negative",
		"sms=1e3":                   "not one of USD",
		"sms=0.01,sms=0.02":         "item 2 (\"sms=0.02\") prices what item 1 does",
		"US:sms=1, US:sms = 2":      "prices what item 1 does",
		"sms=€0.01":                 "not one of USD",
		strings.Repeat("x", 200):    "…",
		"sms=92233720368547758.08":  "not one of USD",
		"sms.otp=0.01,sms.dlt=0,x=": "item 3",
	} {
		_, err := ParsePriceList(text, USD())
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePriceList(%q) = %v, want InvalidArgument containing %q", text, err, want)
		}
	}
}

// FuzzParsePriceList: any text is a list of non-negative prices in the
// currency asked for, or an InvalidArgument error; never a panic.
func FuzzParsePriceList(f *testing.F) {
	for _, s := range []string{"sms=0.01", "US/toll-free:sms.otp=0.04,chat=1", "email.campaign=0,GB:chat.qr.otp=$1", "a=b=c", ",,:", "US/:sms=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePriceList(text, USD())
		if err != nil {
			if notify.CodeOf(err) != notify.CodeInvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			return
		}
		if !p.Currency.Same(USD()) {
			t.Fatalf("currency %+v", p.Currency)
		}
		all := []SMSPrices{p.SMS}
		for _, s := range p.SMSByCountry {
			all = append(all, s)
		}
		for _, s := range p.SMSByNumberType {
			all = append(all, s)
		}
		for _, s := range all {
			if s.Plain < 0 || s.OTP < 0 || s.DLT < 0 {
				t.Fatalf("negative price in %+v", s)
			}
		}
	})
}
