package wallet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

// ParsePriceList reads a price list in currency c from text, as a
// configuration file or an environment variable gives it: items
// separated by commas, each a price name, '=' and an amount of c as
// Parse reads it ("0.01", "$0.01", "3" for yen):
//
//	sms=0.01, chat=0.02, email=0.01, push=0.001, US:sms=0.01, US/toll-free:sms=0.02
//
// The names are those of the list's fields, a broader one setting every
// price under it:
//
//	sms                      every route: sms.sms, sms.otp, sms.dlt
//	chat                     every rate of both gateways
//	chat.cloud, chat.qr      both rates of one gateway;
//	                         chat.cloud.otp, chat.cloud.promotional, ... one
//	email                    every purpose: email.otp, email.invoice,
//	                         email.notification, email.campaign
//	push                     both classes: push.transactional,
//	                         push.promotional
//
// An SMS or chat name may be scoped to the numbers of one country
// ("US:sms", SMSByCountry and ChatByCountry) and an SMS name to those of
// one type of line in a country ("US/toll-free:sms", SMSByNumberType;
// the types as phone.ParseType reads them). A scope's prices start as the
// broader ones the text gives (the country's for a type), so that
// "sms=0.01, US:sms.otp=0.02" prices the other US routes at 0.01: the
// order of the items does not matter, only how narrow each is. A price
// the text does not give is 0: free.
//
// Every error is CodeInvalidArgument and names the item and the rule: an
// unknown name, route, gateway, purpose, class or type; a scope on e-mail
// or push, or a type on chat; a country that is not two capital letters;
// a negative amount or one with more decimals than c has; an item given
// twice.
func ParsePriceList(text string, c record.Currency) (*PriceList, error) {
	var items []priceItem
	for i, raw := range strings.Split(text, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" && strings.TrimSpace(text) == "" {
			break
		}
		it, err := parsePriceItem(raw, c)
		if err != nil {
			return nil, notify.Errorf(notify.CodeInvalidArgument, "wallet: price item %d (%q): %v", i+1, clipItem(raw), err)
		}
		if j := slices.IndexFunc(items, func(o priceItem) bool { return o.key() == it.key() }); j >= 0 {
			return nil, notify.Errorf(notify.CodeInvalidArgument, "wallet: price item %d (%q) prices what item %d does", i+1, clipItem(raw), items[j].pos)
		}
		it.pos = i + 1
		items = append(items, it)
	}
	// Broad before narrow: a scope starts from the prices above it, and a
	// name sets every price under it before a narrower one sets one.
	slices.SortStableFunc(items, func(a, b priceItem) int {
		return cmp.Or(cmp.Compare(a.depth(), b.depth()), cmp.Compare(len(a.path), len(b.path)))
	})
	p := &PriceList{Currency: c}
	for _, it := range items {
		p.apply(it)
	}
	return p, nil
}

// priceItem is one item of a price list's text.
type priceItem struct {
	pos     int
	country string     // "" for the list's own prices
	typ     phone.Type // with a country: phone.Unknown for the whole country
	typed   bool
	path    []string // "sms", "otp" or "chat", "cloud", "promotional"
	minor   int64
}

func (it priceItem) key() string {
	return fmt.Sprintf("%s/%v/%d:%s", it.country, it.typed, it.typ, strings.Join(it.path, "."))
}

// depth orders scopes: the list's own, a country, a type of line.
func (it priceItem) depth() int {
	switch {
	case it.typed:
		return 2
	case it.country != "":
		return 1
	}
	return 0
}

func parsePriceItem(raw string, c record.Currency) (priceItem, error) {
	var it priceItem
	name, amount, ok := strings.Cut(raw, "=")
	if !ok {
		return it, fmt.Errorf("want NAME=AMOUNT, such as sms=0.01 or US:sms=0.01")
	}
	name, amount = strings.TrimSpace(name), strings.TrimSpace(amount)
	if scope, rest, ok := strings.Cut(name, ":"); ok {
		name = rest
		country, typ, typed := strings.Cut(scope, "/")
		if !phone.IsRegion(country) {
			return it, fmt.Errorf("%q is not an ISO 3166-1 alpha-2 country code in capitals, such as US", country)
		}
		it.country = country
		if typed {
			t, ok := phone.ParseType(typ)
			if !ok {
				return it, fmt.Errorf("%q is not a type of line: want mobile, fixed-line, fixed-line-or-mobile, toll-free or another type phone.ParseType reads", typ)
			}
			it.typ, it.typed = t, true
		}
	}
	it.path = strings.Split(name, ".")
	if err := checkPath(it); err != nil {
		return it, err
	}
	m, err := Parse(amount, c)
	if err != nil {
		return it, fmt.Errorf("the amount is not one of %s (at most %d decimals, such as %s)", codeOr(c), c.Exponent, Format(notify.Money{Minor: 1, Currency: c}))
	}
	if m.Minor < 0 {
		return it, fmt.Errorf("a price is not negative")
	}
	it.minor = m.Minor
	return it, nil
}

// checkPath checks an item's name against the fields of a PriceList.
func checkPath(it priceItem) error {
	kind, rest := it.path[0], it.path[1:]
	switch notify.Kind(kind) {
	case sms.Kind:
		if len(rest) > 1 || len(rest) == 1 && !slices.Contains([]string{"sms", "otp", "dlt"}, rest[0]) {
			return fmt.Errorf("want sms, sms.sms, sms.otp or sms.dlt")
		}
		return nil
	case chat.Kind:
		if it.typed {
			return fmt.Errorf("chat is priced by country, not by type of line")
		}
		if len(rest) > 2 || len(rest) >= 1 && !slices.Contains([]string{"cloud", "qr"}, rest[0]) ||
			len(rest) == 2 && !slices.Contains([]string{"otp", "promotional"}, rest[1]) {
			return fmt.Errorf("want chat, chat.cloud or chat.qr, then .otp or .promotional for one rate")
		}
		return nil
	case email.Kind:
		if it.country != "" {
			return fmt.Errorf("e-mail has one price everywhere: no country")
		}
		if len(rest) > 1 || len(rest) == 1 && !slices.Contains([]string{"otp", "invoice", "notification", "campaign"}, rest[0]) {
			return fmt.Errorf("want email, or email.otp, email.invoice, email.notification or email.campaign")
		}
		return nil
	case push.Kind:
		if it.country != "" {
			return fmt.Errorf("push has one price everywhere: no country")
		}
		if len(rest) > 1 || len(rest) == 1 && !slices.Contains([]string{"transactional", "promotional"}, rest[0]) {
			return fmt.Errorf("want push, push.transactional or push.promotional")
		}
		return nil
	}
	return fmt.Errorf("%q is not a price: want sms, chat, email or push, and a part of one after a dot", strings.Join(it.path, "."))
}

// apply sets the prices it names, creating its scope from the prices
// above it when it is the first of its scope.
func (p *PriceList) apply(it priceItem) {
	switch notify.Kind(it.path[0]) {
	case sms.Kind:
		prices := p.SMS
		if it.country != "" {
			if c, ok := p.SMSByCountry[it.country]; ok {
				prices = c
			}
		}
		key := CountryType{Country: it.country, Type: it.typ}
		if it.typed {
			if c, ok := p.SMSByNumberType[key]; ok {
				prices = c
			}
		}
		setSMS(&prices, it.path[1:], it.minor)
		switch {
		case it.typed:
			p.SMSByNumberType = setIn(p.SMSByNumberType, key, prices)
		case it.country != "":
			p.SMSByCountry = setIn(p.SMSByCountry, it.country, prices)
		default:
			p.SMS = prices
		}
	case chat.Kind:
		prices := p.Chat
		if c, ok := p.ChatByCountry[it.country]; ok && it.country != "" {
			prices = c
		}
		setChat(&prices, it.path[1:], it.minor)
		if it.country != "" {
			p.ChatByCountry = setIn(p.ChatByCountry, it.country, prices)
		} else {
			p.Chat = prices
		}
	case email.Kind:
		e := &p.Email
		for _, f := range []struct {
			name  string
			price *int64
		}{{"otp", &e.OTP}, {"invoice", &e.Invoice}, {"notification", &e.Notification}, {"campaign", &e.Campaign}} {
			if len(it.path) == 1 || it.path[1] == f.name {
				*f.price = it.minor
			}
		}
	case push.Kind:
		if len(it.path) == 1 || it.path[1] == "transactional" {
			p.Push.Transactional = it.minor
		}
		if len(it.path) == 1 || it.path[1] == "promotional" {
			p.Push.Promotional = it.minor
		}
	}
}

func setSMS(s *SMSPrices, rest []string, minor int64) {
	for _, f := range []struct {
		route string
		price *int64
	}{{"sms", &s.Plain}, {"otp", &s.OTP}, {"dlt", &s.DLT}} {
		if len(rest) == 0 || rest[0] == f.route {
			*f.price = minor
		}
	}
}

func setChat(c *ChatPrices, rest []string, minor int64) {
	for _, g := range []struct {
		name  string
		rates *ChatRates
	}{{"cloud", &c.Cloud}, {"qr", &c.QR}} {
		if len(rest) > 0 && rest[0] != g.name {
			continue
		}
		if len(rest) < 2 || rest[1] == "otp" {
			g.rates.OTP = minor
		}
		if len(rest) < 2 || rest[1] == "promotional" {
			g.rates.Promotional = minor
		}
	}
}

// setIn sets m[k] = v, making m when it is nil.
func setIn[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}

// clipItem keeps an error message short whatever the item is.
func clipItem(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
