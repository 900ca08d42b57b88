package record

import (
	"encoding/json"
	"fmt"
)

// Account is a customer of the notifier: the owner of a wallet and of the
// messages sent on its behalf. Accounts come from an Accounts store;
// the Notifier never changes one (notify.Account).
type Account struct {
	// ID identifies the account in every store.
	ID string
	// Name is the account's display name, returned with the balance and
	// used as the default BRAND_NAME of templates.
	Name string
	// Currency is the currency of the account's wallet and prices.
	Currency Currency
	// PricePlan names the price list that applies; empty means the default.
	PricePlan string
	// Region is the account's home country, an ISO 3166-1 alpha-2 code
	// ("IN", "US"): a phone number without a country code is read as one
	// of its. Default "" (India: phone.DefaultRegion).
	Region string
	// Countries are the countries the account may send SMS and chat
	// messages to, as ISO 3166-1 alpha-2 codes, or "*" (phone.AnyCountry)
	// for every one. Default empty: its Region only, so that sending
	// abroad, which SMS pumping abuses, is a decision rather than an
	// accident.
	Countries []string
	// Disabled accounts are refused with notify.CodePermissionDenied.
	Disabled bool
	// Locale is the account's default locale, a BCP 47 tag ("hi",
	// "en-IN"): a template's variant for it is rendered when the request's
	// own locale has none. Default "": the template's base.
	Locale string
	// Settings are the account's settings for each channel, by kind: a
	// JSON object that the channel of that kind decodes (sms.Settings:
	// sender IDs and DLT templates; chat.Settings: the primary gateway).
	// Stores keep them as JSON, opaque: they may re-encode one (spacing,
	// key order) but keep its meaning, and a kind without settings is
	// missing, not null. Nil: every channel's defaults.
	Settings map[Kind]json.RawMessage
}

// SetSetting encodes v as the account's settings for kind, replacing any
// (a nil v removes them). It changes a's Settings map in place, making
// one when a has none: call it on an account no one else reads, such as a
// copy in store.Admin.UpdateAccount's update.
func (a *Account) SetSetting(kind Kind, v any) error {
	if v == nil {
		delete(a.Settings, kind)
		return nil
	}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("settings of %s: %w", kind, err)
	}
	if a.Settings == nil {
		a.Settings = make(map[Kind]json.RawMessage)
	}
	a.Settings[kind] = body
	return nil
}
