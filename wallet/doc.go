// Package wallet prices messages and formats money.
//
// A PriceList prices a prepared Envelope in one currency's minor units
// (cents for USD, paise for INR, yen for JPY) by kind: SMS per route and
// segment, chat per gateway and type, e-mail per purpose, push per
// message and class, and any other kind (a channel of your own) by its
// KindPrices in PriceList.Kinds, per unit and route. SMS and chat may cost more in one country (SMSByCountry,
// ChatByCountry) and, as vendors price SMS, for one type of line there
// (SMSByNumberType); a Strict list refuses a country it has no price for
// rather than charge its own prices there. It implements notify.Pricer,
// so it is what notify.WithPrices takes.
//
// A list never prices an account in another currency: nothing converts
// money, and such a send is refused (CodePermissionDenied) before
// anything is charged. Plans picks a PriceList by the account's PricePlan
// or, without one, by its currency (Plans.ByCurrency), so that accounts
// in USD, JPY and INR send side by side. ParsePriceList reads a list from
// text ("sms=0.01, US/toll-free:sms=0.02"), as a configuration gives it;
// DefaultINR returns the stock Indian rupee prices.
//
// Format and Parse convert money to and from text exactly: "₹1,23,456.50"
// is 12345650 paise, and no float is involved anywhere.
//
// The conformance suite of the money every store.Ledger keeps (balances,
// debits and credits by reference) is store/storetest's RunWallet.
package wallet
