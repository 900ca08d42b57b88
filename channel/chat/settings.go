package chat

import (
	"encoding/json"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/settings"
)

// Settings are an account's chat settings: the JSON object kept under the
// "chat" kind of notify.Account.Settings. SetSettings writes them; the
// chat channel reads them (decoding each account's once, and again only
// when they change).
type Settings struct {
	// PrimaryGateway is the gateway GatewayAuto tries first: GatewayCloud
	// or GatewayQR. Default "" (cloud).
	PrimaryGateway Gateway `json:"primary_gateway,omitempty"`
}

// SetSettings writes s as acct's chat settings, in acct's Settings map
// (see notify.Account.SetSetting: call it on an account no one else
// reads yet).
func SetSettings(acct *notify.Account, s Settings) error { return acct.SetSetting(Kind, s) }

// Map returns the Settings map of an account whose only settings are s,
// for an account literal: notify.Account{ID: "acme", Settings:
// chat.Settings{PrimaryGateway: chat.GatewayQR}.Map()}. Use
// SetSettings to add them to an account's others.
func (s Settings) Map() map[notify.Kind]json.RawMessage { return settings.Map(Kind, s) }

// SettingsOf decodes acct's chat settings: the zero Settings when it has
// none, an Internal error (the account's configuration is broken, not
// the request) when they are not the JSON of a Settings.
func SettingsOf(acct *notify.Account) (Settings, error) {
	return settings.Decode[Settings](acct, Kind)
}

// primary is the gateway GatewayAuto tries first for an account whose
// PrimaryGateway is p: p, with an empty or auto value read as
// GatewayCloud.
func primary(p Gateway) Gateway {
	switch p {
	case "", GatewayAuto:
		return GatewayCloud
	default:
		return p
	}
}
