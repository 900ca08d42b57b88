package adminapi

import (
	"cmp"
	"slices"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

// This file is the one place that converts between an account on the
// wire (accountJSON, the body of a create, a DLT template's body) and
// notify.Account. The wire keeps the fields it always had; the account
// keeps its SMS and chat fields in its channel settings
// (notify.Account.Settings), in the shapes the channels own, which are
// read and written through the channels' packages:
//
//	vendor_id        sms.Settings.SenderID
//	sender_ids       sms.Settings.SenderIDs
//	dlt_templates    sms.Settings.DLTTemplates
//	primary_gateway  chat.Settings.PrimaryGateway
//
// Settings that do not decode are the stored account's trouble, not the
// request's: sms.SettingsOf and chat.SettingsOf return an Internal error,
// which request.fail answers as it answers a store failing (500, a plain
// sentence with the request ID, the details in the log).

type dltJSON struct {
	ID         string            `json:"id"`
	EntityID   string            `json:"entity_id"`
	Content    string            `json:"content"`
	MessageID  string            `json:"message_id,omitempty"`
	MessageIDs map[string]string `json:"message_ids,omitempty"`
	Slug       string            `json:"slug,omitempty"`
}

type accountJSON struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	VendorID       string       `json:"vendor_id"`
	Currency       currencyJSON `json:"currency"`
	PrimaryGateway string       `json:"primary_gateway"`
	PricePlan      string       `json:"price_plan"`
	SenderIDs      []string     `json:"sender_ids"`
	Disabled       bool         `json:"disabled"`
	DLTTemplates   []dltJSON    `json:"dlt_templates"`
	// Region and Countries are where the account sends, as the channels
	// read them: its region (India's when it names none) and the
	// countries it may send to (its region alone when it lists none).
	Region    string   `json:"region"`
	Countries []string `json:"countries"`
	// Locale is the account's default locale (notify.Account.Locale),
	// left out for none (the templates' base).
	Locale string `json:"locale,omitempty"`
	// Balance and BalanceMinor are set when the account has a wallet.
	Balance      *string `json:"balance,omitempty"`
	BalanceMinor *int64  `json:"balance_minor,omitempty"`
	// APIKey is set once: in the answer that made the key.
	APIKey string `json:"api_key,omitempty"`
}

// accountOf is a on the wire, without a balance or a key. It fails when
// a's SMS or chat settings do not decode.
func accountOf(a *notify.Account) (accountJSON, error) {
	s, err := sms.SettingsOf(a)
	if err != nil {
		return accountJSON{}, err
	}
	c, err := chat.SettingsOf(a)
	if err != nil {
		return accountJSON{}, err
	}
	out := accountJSON{ID: a.ID, Name: a.Name, VendorID: s.SenderID, Currency: currencyOf(a.Currency),
		PrimaryGateway: string(c.PrimaryGateway), PricePlan: a.PricePlan, SenderIDs: []string{},
		Disabled: a.Disabled, DLTTemplates: dltsOf(s.DLTTemplates), Locale: a.Locale}
	out.SenderIDs = append(out.SenderIDs, s.SenderIDs...)
	out.Region, out.Countries = places(a)
	return out, nil
}

// places are where a sends, as the channels read its Region and
// Countries: the defaults filled in.
func places(a *notify.Account) (string, []string) {
	region := cmp.Or(a.Region, phone.DefaultRegion)
	if len(a.Countries) == 0 {
		return region, []string{region}
	}
	return region, slices.Clone(a.Countries)
}

func dltsOf(ts []sms.DLTTemplate) []dltJSON {
	out := make([]dltJSON, len(ts))
	for i, t := range ts {
		out[i] = dltJSON{ID: t.ID, EntityID: t.EntityID, Content: t.Content, MessageID: t.MessageID, MessageIDs: t.MessageIDs, Slug: t.Slug}
	}
	return out
}

type dltPage struct {
	Account      string    `json:"account"`
	DLTTemplates []dltJSON `json:"dlt_templates"`
}

// dltPageOf is the answer of the DLT template endpoints: a's DLT
// templates. It fails when a's SMS settings do not decode.
func dltPageOf(a *notify.Account) (dltPage, error) {
	s, err := sms.SettingsOf(a)
	if err != nil {
		return dltPage{}, err
	}
	return dltPage{Account: a.ID, DLTTemplates: dltsOf(s.DLTTemplates)}, nil
}

// template is t as the SMS settings keep it.
func (t dltIn) template() sms.DLTTemplate {
	return sms.DLTTemplate{ID: t.ID, EntityID: t.EntityID, Content: t.Content, MessageID: t.MessageID, MessageIDs: t.MessageIDs, Slug: t.Slug}
}

// account is the account that in, a checked create request, makes, in
// the currency cur. A new account has no settings: it gets those of a
// channel only when the request gives some of its fields, so an account
// made without them has none (the channel's defaults).
func (in *createIn) account(cur record.Currency) (*notify.Account, error) {
	a := &notify.Account{ID: in.ID, Name: in.Name, Currency: cur, PricePlan: in.PricePlan, Disabled: in.Disabled,
		Region: in.Region, Countries: in.Countries, Locale: in.Locale}
	if in.VendorID != "" || len(in.SenderIDs) > 0 || len(in.DLTTemplates) > 0 {
		s := sms.Settings{SenderID: in.VendorID, SenderIDs: in.SenderIDs}
		for _, t := range in.DLTTemplates {
			s.DLTTemplates = append(s.DLTTemplates, t.template())
		}
		if err := sms.SetSettings(a, s); err != nil {
			return nil, err
		}
	}
	if in.PrimaryGateway != "" {
		if err := chat.SetSettings(a, chat.Settings{PrimaryGateway: chat.Gateway(in.PrimaryGateway)}); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// updateSMS changes the SMS settings of a, the copy of an account that
// store.Admin.UpdateAccount hands to its update: it reads them, lets
// change change them, and writes them back. An error, of change or of
// settings that do not decode, is returned as it is, and the update
// stores nothing.
func updateSMS(a *notify.Account, change func(*sms.Settings) error) error {
	s, err := sms.SettingsOf(a)
	if err != nil {
		return err
	}
	if err := change(&s); err != nil {
		return err
	}
	return sms.SetSettings(a, s)
}
