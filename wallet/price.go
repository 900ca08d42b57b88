package wallet

import (
	"math"
	"strconv"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// PriceList prices messages in one currency. Every price is a count of the
// currency's minor units (paise for INR) per billable unit: SMS prices are
// per segment, chat prices per message, e-mail prices per recipient (to,
// cc and bcc: the e-mail envelope's Units). A zero
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
	// Chat holds the chat prices, by gateway and price class: those of
	// every country ChatByCountry does not name.
	Chat ChatPrices
	// ChatByCountry holds the chat prices of the recipient countries that
	// have prices of their own, as SMSByCountry does. Default nil.
	ChatByCountry map[string]ChatPrices
	// Email holds the e-mail prices, by purpose.
	Email EmailPrices
	// Kinds holds the prices of every other kind, such as a channel of
	// your own ("push", "voice"), by kind; see KindPrices. sms, chat and
	// email are priced by the fields above: an entry for one of them is a
	// configuration error when such a message is priced. Default nil: no
	// other kind has a price.
	Kinds map[notify.Kind]KindPrices
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

// DefaultINR returns the stock price list in Indian rupees, in paise:
//
//	SMS, per segment:   sms route 25, otp route 20, dlt route 18
//	chat, cloud:        otp 35, promotional 90
//	chat, QR session:   otp 10, promotional 20
//	e-mail:             otp 10, invoice 10, notification 8, campaign 5
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
	}
}

// Price returns what env costs acct: the unit price for its kind and
// env.Route (the SMS route, the chat gateway, the e-mail purpose, as the
// channel chose it; a chat message is priced promotional when its
// env.Class is; any other kind by Kinds, see KindPrices), in the
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
		list, own := currencyNames(p.Currency, acct.Currency)
		return notify.Money{}, notify.Errorf(notify.CodeInternal,
			"wallet: price list is in %s but account %q is in %s", list, acct.ID, own)
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
		prices := p.SMS
		if c, ok := p.SMSByCountry[env.Country]; ok {
			prices = c
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
		prices := p.Chat
		if c, ok := p.ChatByCountry[env.Country]; ok {
			prices = c
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
	}
	if k, ok := p.Kinds[env.Kind]; ok {
		return k.unit(env.Route), nil
	}
	return 0, notify.Errorf(notify.CodeInternal, "wallet: no price for kind %q", env.Kind)
}

// Plans prices each account by the price list its PricePlan names: the
// empty plan uses Default, any other name the list in Named. A plan with no
// list is a CodeInternal error, never a silent fallback, so a typo in an
// account's plan cannot undercharge it.
//
// Plans is safe for concurrent use as long as nobody modifies it or its
// lists.
type Plans struct {
	// Default prices accounts with no PricePlan.
	Default *PriceList
	// Named maps plan names to their price lists.
	Named map[string]*PriceList
}

// Price prices env by the plan of acct; see PriceList.Price.
func (p *Plans) Price(acct *notify.Account, env *notify.Envelope) (notify.Money, error) {
	if p == nil || acct == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: plans need an account")
	}
	list := p.Default
	if acct.PricePlan != "" {
		list = p.Named[acct.PricePlan]
	}
	if list == nil {
		return notify.Money{}, notify.Errorf(notify.CodeInternal, "wallet: no price list for plan %q of account %q", acct.PricePlan, acct.ID)
	}
	return list.Price(acct, env)
}

// currencyNames names two different currencies for an error message, by
// code, adding the exponents when only they differ.
func currencyNames(a, b record.Currency) (string, string) {
	name := func(c record.Currency) string {
		n := c.Code
		if n == "" {
			n = "no currency"
		}
		if a.Code == b.Code {
			n += " with exponent " + strconv.Itoa(c.Exponent)
		}
		return n
	}
	return name(a), name(b)
}

// Interface guards
var (
	_ notify.Pricer = (*PriceList)(nil)
	_ notify.Pricer = (*Plans)(nil)
)
