package notify

// Account is a customer of the notifier: the owner of a wallet and of the
// messages sent on its behalf. Accounts come from an AccountStore; the
// Notifier never changes one.
type Account struct {
	// ID identifies the account in every store.
	ID string
	// Name is the account's display name, returned with the balance and
	// used as the default BRAND_NAME of templates.
	Name string
	// VendorID is the account's sender identity, the default SMS sender_id.
	VendorID string
	// Currency is the currency of the account's wallet and prices.
	Currency Currency
	// PrimaryGateway is the chat gateway that GatewayAuto uses first:
	// GatewayCloud or GatewayQR. Empty means GatewayCloud.
	PrimaryGateway ChatGateway
	// DLTTemplates are the operator-registered SMS templates of the account,
	// used by the dlt route.
	DLTTemplates []DLTTemplate
	// PricePlan names the price list that applies; empty means the default.
	PricePlan string
	// Disabled accounts are refused with CodePermissionDenied.
	Disabled bool
}

// DLTTemplate is an SMS template registered with the operators (India's DLT
// scheme). Content holds the approved text, with {#var#} where a variable
// of at most 30 characters goes.
type DLTTemplate struct {
	ID       string
	EntityID string
	Content  string
}

// FindDLTTemplate returns the registered DLT template with the given ID.
func (a *Account) FindDLTTemplate(id string) (DLTTemplate, bool) {
	for _, t := range a.DLTTemplates {
		if t.ID == id {
			return t, true
		}
	}
	return DLTTemplate{}, false
}

// PrimaryChatGateway returns PrimaryGateway, with the empty value read as
// GatewayCloud.
func (a *Account) PrimaryChatGateway() ChatGateway {
	if a.PrimaryGateway == "" || a.PrimaryGateway == GatewayAuto {
		return GatewayCloud
	}
	return a.PrimaryGateway
}
