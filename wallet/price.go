package wallet

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

// PriceList prices messages in one currency. Every price is a count of the
// currency's minor units (paise for INR) per billable unit: SMS prices are
// per segment, chat and push prices per message, e-mail prices per
// recipient (to, cc and bcc: the e-mail envelope's Units). A zero
// price makes that message free; a negative one is a configuration error.
//
// A PriceList is safe for concurrent use as long as nobody modifies it;
// build a new one rather than changing one in use.
type PriceList struct {
	// Currency is the currency of every price. Price refuses accounts whose
	// currency differs (by code or exponent).
	Currency record.Currency
	// SMS holds the per-segment SMS prices, by route: those of every
	// country SMSByCountry does not name.
	SMS SMSPrices
	// SMSByCountry holds the SMS prices of the recipient countries that
	// have prices of their own, by ISO 3166-1 alpha-2 code ("US"), the
	// envelope's Country. An entry replaces SMS whole for its country: a
	// route it leaves zero is free there. Default nil: SMS's prices
	// everywhere.
	SMSByCountry map[string]SMSPrices
	// SMSByNumberType holds the SMS prices of the numbers of one type of
	// line in one country (a toll-free or fixed-line number priced apart
	// from a mobile one), as vendors price them: the envelope's Country
	// and its sms.Message's NumberType, as far as the numbering plan
	// tells it (the NANP countries' numbers are mostly
	// phone.FixedLineOrMobile). An entry
	// replaces SMSByCountry's (or SMS) whole for those numbers. Default
	// nil.
	SMSByNumberType map[CountryType]SMSPrices
	// Chat holds the chat prices, by gateway and price class: those of
	// every country ChatByCountry does not name.
	Chat ChatPrices
	// ChatByCountry holds the chat prices of the recipient countries that
	// have prices of their own, as SMSByCountry does. Default nil.
	ChatByCountry map[string]ChatPrices
	// Email holds the e-mail prices, by purpose.
	Email EmailPrices
	// Push holds the push prices (channel/push), by price class: the same
	// for Web Push and FCM, and in every country (a push has none).
	Push PushPrices
	// Kinds holds the prices of every other kind, such as a channel of
	// your own ("voice"), by kind; see KindPrices. sms, chat, email and
	// push are priced by the fields above: an entry for one of them is a
	// configuration error when such a message is priced. Default nil: no
	// other kind has a price.
	Kinds map[notify.Kind]KindPrices
	// Strict refuses an SMS or chat message to a country that no entry of
	// SMSByCountry or SMSByNumberType (ChatByCountry for chat) prices,
	// with a CodeInvalidArgument error naming "to", before anything is
	// charged, where a list that is not strict charges SMS's (Chat's)
	// prices: those are the home country's, and a country added to an
	// account's allow list without a price of its own would otherwise
	// send at them. SMS and Chat still price messages without a country.
	// Default false.
	Strict bool
}

// CountryType names the numbers of one type of line in one country: a
// key of PriceList.SMSByNumberType.
type CountryType struct {
	// Country is the ISO 3166-1 alpha-2 code ("US").
	Country string
	// Type is the type of line; phone.Unknown prices the numbers whose
	// type the plan cannot tell.
	Type phone.Type
}

// SMSPrices are per-segment SMS prices in minor units, one per route.
type SMSPrices struct {
	// Plain is the price on sms.RouteSMS, the default non-DLT route.
	Plain int64
	// OTP is the price on sms.RouteOTP.
	OTP int64
	// DLT is the price on sms.RouteDLT.
	DLT int64
}

// ChatPrices are chat prices in minor units per message, one set per
// gateway.
type ChatPrices struct {
	// Cloud prices messages sent through chat.GatewayCloud.
	Cloud ChatRates
	// QR prices messages sent through chat.GatewayQR.
	QR ChatRates
}

// ChatRates are the prices of one chat gateway, by chat.Type.
type ChatRates struct {
	// OTP is the transactional rate (chat.TypeOTP, the default type).
	OTP int64
	// Promotional is the rate of chat.TypePromotional messages and of
	// messages whose Envelope.Class is record.Promotional.
	Promotional int64
}

// EmailPrices are e-mail prices in minor units per message, by purpose.
type EmailPrices struct {
	OTP     int64
	Invoice int64
	// Notification also prices e-mail with no purpose.
	Notification int64
	Campaign     int64
}

// PushPrices are push prices in minor units per message, by price class
// (notify.Envelope.Class: push.Request.Promotional).
type PushPrices struct {
	Transactional int64
	Promotional   int64
}

// DefaultINR returns the stock price list in Indian rupees, in paise:
//
//	SMS, per segment:   sms route 25, otp route 20, dlt route 18
//	chat, cloud:        otp 35, promotional 90
//	chat, QR session:   otp 10, promotional 20
//	e-mail:             otp 10, invoice 10, notification 8, campaign 5
//	push:               transactional 2, promotional 5
//
// Each call returns a new PriceList, which the caller may adjust before use.
func DefaultINR() *PriceList {
	return &PriceList{
		Currency: record.INR(),
		SMS:      SMSPrices{Plain: 25, OTP: 20, DLT: 18},
		Chat: ChatPrices{
			Cloud: ChatRates{OTP: 35, Promotional: 90},
			QR:    ChatRates{OTP: 10, Promotional: 20},
		},
		Email: EmailPrices{OTP: 10, Invoice: 10, Notification: 8, Campaign: 5},
		Push:  PushPrices{Transactional: 2, Promotional: 5},
	}
}

// Price returns what env costs acct: the unit price for its kind and
// env.Route (the SMS route, the chat gateway, the e-mail purpose, as the
// channel chose it; a chat message is priced promotional when its
// env.Class is, and a push by its env.Class; any other kind by Kinds, see
// KindPrices), in the
// recipient's country (env.Country) when the list has prices for it,
// times env.Units (a Units below 1 counts as 1), in the account's
// currency. It never reads the envelope's content.
//
// Every error is CodeInternal, because each is a configuration mistake
// rather than the caller's: a nil list, account or envelope; a price list
// in another currency than the account's; a kind, route, gateway or
// e-mail purpose without a price; an entry of Kinds for sms, chat or
// email; a negative price; a total that overflows int64.
func (p *PriceList) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	if p == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: nil price list")
	}
	if acct == nil || env == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: price needs an account and an envelope")
	}
	if !p.Currency.Same(acct.Currency) {
		return notify.Money{}, currencyError(p.Currency, acct)
	}
	unit, err := p.unitPrice(acct, env)
	if err != nil {
		return notify.Money{}, err
	}
	if unit < 0 {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: negative %s price %d", env.Kind, unit)
	}
	units := int64(env.Units)
	if units < 1 {
		units = 1
	}
	if unit > 0 && units > math.MaxInt64/unit {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: price of %d units at %d overflows", units, unit)
	}
	return notify.Money{Minor: unit * units, Currency: acct.Currency}, nil
}

// unitPrice returns the price of one billable unit of env.
func (p *PriceList) unitPrice(acct *notify.Account, env *notify.Envelope) (int64, error) {
	if _, ok := p.Kinds[env.Kind]; ok {
		if err := builtInKindError(env.Kind); err != nil {
			return 0, err
		}
	}
	switch env.Kind {
	case sms.Kind:
		route := sms.Route(env.Route)
		if route == "" {
			route = sms.RouteSMS
		}
		prices, err := p.smsPrices(env)
		if err != nil {
			return 0, err
		}
		switch route {
		case sms.RouteSMS:
			return prices.Plain, nil
		case sms.RouteOTP:
			return prices.OTP, nil
		case sms.RouteDLT:
			return prices.DLT, nil
		}
		return 0, notify.Errorf(notify.CodeInternal, "wallet: no SMS price for route %q", route)

	case chat.Kind:
		gw := chat.Gateway(env.Route)
		if gw == "" || gw == chat.GatewayAuto {
			gw = chat.PrimaryGateway(acct)
		}
		prices, ok := p.ChatByCountry[env.Country]
		if !ok {
			if err := p.unpriced(env); err != nil {
				return 0, err
			}
			prices = p.Chat
		}
		var rates ChatRates
		switch gw {
		case chat.GatewayCloud:
			rates = prices.Cloud
		case chat.GatewayQR:
			rates = prices.QR
		default:
			return 0, notify.Errorf(notify.CodeInternal, "wallet: no chat price for gateway %q", gw)
		}
		if env.Class == record.Promotional {
			return rates.Promotional, nil
		}
		return rates.OTP, nil

	case email.Kind:
		purpose := email.Purpose(env.Route)
		if purpose == "" {
			purpose = email.PurposeNotification
		}
		switch purpose {
		case email.PurposeOTP:
			return p.Email.OTP, nil
		case email.PurposeInvoice:
			return p.Email.Invoice, nil
		case email.PurposeNotification:
			return p.Email.Notification, nil
		case email.PurposeCampaign:
			return p.Email.Campaign, nil
		}
		return 0, notify.Errorf(notify.CodeInternal, "wallet: no e-mail price for purpose %q", purpose)

	case push.Kind:
		if env.Class == record.Promotional {
			return p.Push.Promotional, nil
		}
		return p.Push.Transactional, nil
	}
	if k, ok := p.Kinds[env.Kind]; ok {
		return k.unit(env.Route), nil
	}
	return 0, notify.Errorf(notify.CodeInternal, "wallet: no price for kind %q", env.Kind)
}

// smsPrices returns the SMS prices of env's recipient: those of its
// country's numbers of its type, else of its country, else SMS.
func (p *PriceList) smsPrices(env *notify.Envelope) (SMSPrices, error) {
	if m := sms.MessageOf(env); m != nil && len(p.SMSByNumberType) > 0 {
		if prices, ok := p.SMSByNumberType[CountryType{Country: env.Country, Type: m.NumberType}]; ok {
			return prices, nil
		}
	}
	if prices, ok := p.SMSByCountry[env.Country]; ok {
		return prices, nil
	}
	return p.SMS, p.unpriced(env)
}

// unpriced is the error of a strict list for a message to a country it
// has no price of its own for, or nil.
func (p *PriceList) unpriced(env *notify.Envelope) error {
	if !p.Strict || env.Country == "" {
		return nil
	}
	return notify.InvalidField("to", fmt.Sprintf("is a number of %s, which the %s price list has no %s price for",
		env.Country, codeOr(p.Currency), env.Kind))
}

// Plans prices each account by the price list of its PricePlan in Named
// or, for an account without a plan (or when Named is nil: no plans are
// in use), by the list of its currency in ByCurrency, else by Default.
// A plan Named does not hold is a CodeInternal error, never a silent
// fallback, so that a typo in an account's plan cannot undercharge it; an
// account whose currency no list is in is CodePermissionDenied, as a list
// in another currency than the account's is (see PriceList.Price).
//
// Plans is safe for concurrent use as long as nobody modifies it or its
// lists.
type Plans struct {
	// Default prices the accounts without a plan whose currency
	// ByCurrency does not name. Default nil: none.
	Default *PriceList
	// ByCurrency prices accounts by their currency's ISO 4217 code
	// ("USD"): one list per currency the accounts hold. Default nil.
	ByCurrency map[string]*PriceList
	// Named maps plan names to their price lists. Nil: accounts' plans
	// are not read.
	Named map[string]*PriceList
}

// Price prices env by the plan of acct; see PriceList.Price.
func (p *Plans) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	if p == nil || acct == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: plans need an account")
	}
	if acct.PricePlan != "" && p.Named != nil {
		list := p.Named[acct.PricePlan]
		if list == nil {
			return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: no price list for plan %q of account %q", acct.PricePlan, acct.ID)
		}
		return list.Price(acct, env)
	}
	list := p.ByCurrency[acct.Currency.Code]
	if list == nil {
		list = p.Default
	}
	if list == nil && len(p.ByCurrency) > 0 {
		return notify.Money{}, notify.Errorf(notify.CodePermissionDenied, "wallet: account %q is in %s, and there are prices in %s only",
			acct.ID, codeOr(acct.Currency), strings.Join(slices.Sorted(maps.Keys(p.ByCurrency)), ", "))
	}
	if list == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: no price list for account %q", acct.ID)
	}
	return list.Price(acct, env)
}

// currencyError is the error of a send of acct priced by a list in
// currency list: CodeInternal for an account without a currency, else
// CodePermissionDenied, because the account cannot send
// until it has prices in its currency, and nothing converts one currency
// into another.
func currencyError(list record.Currency, acct *notify.Account) error {
	if acct.Currency.Code == "" {
		return notify.Errorf(notify.CodeInternal, "wallet: account %q has no currency, and its prices are in %s", acct.ID, codeOr(list))
	}
	a, b := codeOr(list), acct.Currency.Code
	if a == b {
		a += " with exponent " + strconv.Itoa(list.Exponent)
		b += " with exponent " + strconv.Itoa(acct.Currency.Exponent)
	}
	return notify.Errorf(notify.CodePermissionDenied,
		"wallet: account %q is in %s, and its prices are in %s: no price is converted from another currency", acct.ID, b, a)
}

// Interface guards
var (
	_ notify.Pricer = (*PriceList)(nil)
	_ notify.Pricer = (*Plans)(nil)
)
