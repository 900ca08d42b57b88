// Package wallet prices messages and formats money.
//
// A PriceList prices a prepared Envelope in minor units (paise for INR) by
// kind: SMS per route and segment, chat per gateway and type, e-mail per
// purpose, and any other kind (a channel of your own) by its KindPrices in
// PriceList.Kinds, per unit and route. It implements notify.Pricer, so it
// is what notify.WithPrices
// takes. Plans picks a PriceList by the account's
// PricePlan. DefaultINR returns the stock Indian rupee prices.
//
// Format and Parse convert money to and from text exactly: "₹1,23,456.50"
// is 12345650 paise, and no float is involved anywhere.
//
// The conformance suite of the money every store.Ledger keeps (balances,
// debits and credits by reference) is store/storetest's RunWallet.
package wallet
