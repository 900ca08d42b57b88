package sms

import (
	"encoding/json"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/settings"
)

// Settings are an account's SMS settings: the JSON object kept under
// the "sms" kind of notify.Account.Settings. SetSettings writes them;
// the SMS channel reads them on every send (decoding each account's once,
// and again only when they change).
type Settings struct {
	// SenderID is the account's sender identity, the sender header of a
	// request that names none. Default "".
	SenderID string `json:"sender_id,omitempty"`
	// SenderIDs, when set, are the only sender headers the account may
	// use (its SenderID and its DLT headers, say): a sender_id outside the
	// list is refused, so that one account cannot send under another's
	// (a bank's) header. Compared without regard to case. Empty: any
	// header the SMS rules accept.
	SenderIDs []string `json:"sender_ids,omitempty"`
	// DLTTemplates are the operator-registered templates of the account,
	// which the dlt route sends.
	DLTTemplates []DLTTemplate `json:"dlt_templates,omitempty"`
}

// DLTTemplate is an SMS template registered with the operators (India's
// DLT scheme). Content holds the approved text, with {#var#} where a
// variable of at most 30 characters goes.
type DLTTemplate struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	Content  string `json:"content"`
	// MessageIDs are the template's IDs in the SMS vendors' DLT managers,
	// by provider name (Fast2SMS's Message ID as "smsgateway", MSG91's
	// template ID as "msg91"): a vendor given its ID is sent that ID and
	// the values of the template's {#var#} slots rather than the whole
	// text. A provider that sends templates by ID only (a DLTByIDSender:
	// provider/msg91) is skipped on the dlt route for a template without
	// its ID, so that no vendor is ever sent another's ID. Default nil.
	MessageIDs map[string]string `json:"message_ids,omitempty"`
	// MessageID is the one vendor ID of a template registered before
	// MessageIDs: the ID of every provider when MessageIDs is nil, and
	// ignored otherwise. Name the vendor in MessageIDs instead: one ID
	// read by two vendors is right for at most one of them. Default "".
	MessageID string `json:"message_id,omitempty"`
	// Slug names the template (a request's template_slug) whose SMS text,
	// in one of its locale variants, this registration approves. A
	// dlt-route request with that template_slug and no dlt_template_id
	// goes under the registration of its slug whose content its rendered
	// text matches, so that each language's variant goes under its own
	// DLT ID. Default "": only a request naming the ID uses it.
	Slug string `json:"slug,omitempty"`
}

// messageIDs returns the template's vendor IDs as the Message carries
// them: MessageIDs, or the one MessageID for every provider.
func (t DLTTemplate) messageIDs() (ids map[string]string, any string) {
	if t.MessageIDs != nil {
		return t.MessageIDs, ""
	}
	return nil, t.MessageID
}

// SetSettings writes s as acct's SMS settings, in acct's Settings map
// (see notify.Account.SetSetting: call it on an account no one else
// reads yet).
func SetSettings(acct *notify.Account, s Settings) error { return acct.SetSetting(Kind, s) }

// Map returns the Settings map of an account whose only settings are s,
// for an account literal: notify.Account{ID: "acme", Settings:
// sms.Settings{SenderID: "ACMEIN"}.Map()}. Use SetSettings to add them to an
// account's others.
func (s Settings) Map() map[notify.Kind]json.RawMessage { return settings.Map(Kind, s) }

// SettingsOf decodes acct's SMS settings: the zero Settings when it has
// none, an Internal error (the account's configuration is broken, not
// the request) when they are not the JSON of a Settings.
func SettingsOf(acct *notify.Account) (Settings, error) {
	return settings.Decode[Settings](acct, Kind)
}
