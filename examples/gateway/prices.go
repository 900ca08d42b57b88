package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// priceConfig is what the gateway charges, in which currencies.
type priceConfig struct {
	// currency is NOTIFY_CURRENCY (default INR): the demo account's
	// currency, which NOTIFY_BALANCE and NOTIFY_VERIFY_SPEND_CAP are
	// read in.
	currency record.Currency
	// lists are the price lists by currency code: NOTIFY_PRICES's, and
	// INR's stock list (wallet.DefaultINR with NOTIFY_SMS_PRICES) unless
	// NOTIFY_PRICES gives INR's. Accounts in another currency cannot be
	// created through the admin API, and cannot send.
	lists map[string]*wallet.PriceList
	// strict is NOTIFY_PRICES_STRICT=on: every list refuses a country it
	// has no price for (wallet.PriceList.Strict).
	strict bool
}

// loadPrices reads NOTIFY_CURRENCY, NOTIFY_PRICES, NOTIFY_SMS_PRICES and
// NOTIFY_PRICES_STRICT.
func (c *config) loadPrices(get func(string) string) error {
	code := get("NOTIFY_CURRENCY")
	if code == "" {
		code = record.INR().Code
	}
	cur, err := wallet.CurrencyOf(code)
	if err != nil {
		return fmt.Errorf("NOTIFY_CURRENCY: want an ISO 4217 code in capitals, such as USD, not %q", code)
	}
	c.prices.currency = cur
	if c.prices.lists, err = parsePrices(get("NOTIFY_PRICES")); err != nil {
		return err
	}
	smsPrices, err := parseSMSPrices(get("NOTIFY_SMS_PRICES"))
	if err != nil {
		return err
	}
	inr := c.prices.lists["INR"]
	switch {
	case inr != nil && smsPrices != nil:
		return fmt.Errorf("NOTIFY_SMS_PRICES prices the stock INR list, and NOTIFY_PRICES gives one: put its countries in NOTIFY_PRICES's INR list (US:sms=0.70)")
	case inr == nil:
		inr = stockINR(smsPrices)
		c.prices.lists = setList(c.prices.lists, inr)
	}
	if c.prices.lists[cur.Code] == nil {
		return fmt.Errorf("NOTIFY_CURRENCY=%s needs prices in %s: set NOTIFY_PRICES, such as %q", cur.Code, cur.Code,
			cur.Code+": sms=0.01, chat=0.02, email=0.01, push=0.01")
	}
	if c.prices.strict, err = onOff("NOTIFY_PRICES_STRICT", get("NOTIFY_PRICES_STRICT")); err != nil {
		return err
	}
	for _, l := range c.prices.lists {
		l.Strict = c.prices.strict
	}
	return nil
}

// stockINR is the INR list when NOTIFY_PRICES gives none: the stock
// prices (wallet.DefaultINR: push too, 2 paise transactional and 5
// promotional, in every country), India's, with an SMS segment to each country of
// NOTIFY_SMS_PRICES at its price on every route. India's prices are
// named India's too, so that a strict list still prices India.
func stockINR(smsPrices map[string]int64) *wallet.PriceList {
	p := wallet.DefaultINR()
	p.SMSByCountry = map[string]wallet.SMSPrices{phone.DefaultRegion: p.SMS}
	p.ChatByCountry = map[string]wallet.ChatPrices{phone.DefaultRegion: p.Chat}
	for cc, paise := range smsPrices {
		p.SMSByCountry[cc] = wallet.SMSPrices{Plain: paise, OTP: paise, DLT: paise}
	}
	return p
}

// parsePrices reads NOTIFY_PRICES: price lists separated by semicolons,
// each a currency code, a colon and the list as wallet.ParsePriceList
// reads it, such as
//
//	USD: sms=0.02, US:sms=0.01, email=0.01; JPY: sms=3
func parsePrices(s string) (map[string]*wallet.PriceList, error) {
	if s == "" {
		return nil, nil
	}
	lists := map[string]*wallet.PriceList{}
	for _, part := range strings.Split(s, ";") {
		code, text, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || strings.Contains(code, "=") {
			return nil, fmt.Errorf("NOTIFY_PRICES: want CURRENCY: prices; ..., such as \"USD: sms=0.01, US:sms=0.01; JPY: sms=3\"")
		}
		code = strings.TrimSpace(code)
		cur, err := wallet.CurrencyOf(code)
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_PRICES: %q is not an ISO 4217 currency code in capitals, such as USD", code)
		}
		if lists[code] != nil {
			return nil, fmt.Errorf("NOTIFY_PRICES: %s is given twice", code)
		}
		l, err := wallet.ParsePriceList(text, cur)
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_PRICES: %s: %s", code, walletText(err))
		}
		lists[code] = l
	}
	return lists, nil
}

// walletText is the text of a wallet error for the gateway's user:
// without its code and package.
func walletText(err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), string(notify.CodeOf(err))+": "), "wallet: ")
}

func setList(lists map[string]*wallet.PriceList, l *wallet.PriceList) map[string]*wallet.PriceList {
	if lists == nil {
		lists = map[string]*wallet.PriceList{}
	}
	lists[l.Currency.Code] = l
	return lists
}

// maxSMSPrice bounds a price of NOTIFY_SMS_PRICES, in paise per segment
// (₹100), against a typo.
const maxSMSPrice = 10_000

// parseSMSPrices reads NOTIFY_SMS_PRICES: comma-separated COUNTRY=PAISE,
// the price of one SMS segment to that country on every route of the
// stock INR list, such as US=70,GB=60. Empty: none (every country at
// India's prices, unless NOTIFY_PRICES_STRICT).
func parseSMSPrices(s string) (map[string]int64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int64{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		cc, price, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("NOTIFY_SMS_PRICES: %q: want COUNTRY=PAISE, such as US=70 (₹0.70 a segment), separated by commas", item)
		}
		if !phone.IsRegion(cc) {
			return nil, fmt.Errorf("NOTIFY_SMS_PRICES: %q is not an ISO 3166-1 alpha-2 code in capitals, such as US", cc)
		}
		if _, dup := out[cc]; dup {
			return nil, fmt.Errorf("NOTIFY_SMS_PRICES: %s is priced twice", cc)
		}
		n, err := strconv.ParseInt(price, 10, 64)
		if err != nil || n < 1 || n > maxSMSPrice {
			return nil, fmt.Errorf("NOTIFY_SMS_PRICES: %s: want whole paise per segment from 1 to %d, such as %s=70 for ₹0.70", cc, maxSMSPrice, cc)
		}
		out[cc] = n
	}
	return out, nil
}

// pricer prices every account by the list of its currency: the gateway
// has no price plans, so an account's price_plan is not read.
func (p *priceConfig) pricer() *wallet.Plans { return &wallet.Plans{ByCurrency: p.lists} }

// codes are the currencies the gateway has prices in, sorted.
func (p *priceConfig) codes() []string { return slices.Sorted(maps.Keys(p.lists)) }

// pricesCountry reports whether the demo account's list has SMS prices of
// its own for country cc.
func (p *priceConfig) pricesCountry(cc string) bool {
	l := p.lists[p.currency.Code]
	if _, ok := l.SMSByCountry[cc]; ok {
		return true
	}
	for k := range l.SMSByNumberType {
		if k.Country == cc {
			return true
		}
	}
	return false
}
