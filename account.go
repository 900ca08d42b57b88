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
	// PrimaryGateway is the chat gateway that the chat channel's auto
	// gateway uses first: "cloud" or "qr". Empty means "cloud".
	PrimaryGateway string
	// DLTTemplates are the operator-registered SMS templates of the account,
	// used by the dlt route.
	DLTTemplates []DLTTemplate
	// SenderIDs, when set, are the only SMS sender headers the account may
	// use (its VendorID and its DLT headers, say): a sender_id outside the
	// list is refused, so that one account cannot send under another's
	// (a bank's) header. Compared without regard to case. Empty: any
	// header the SMS rules accept. Default empty.
	SenderIDs []string
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
	// MessageID is the template's ID in the SMS vendor's DLT manager
	// (where the vendor has one, such as Fast2SMS's Message ID). Set, the
	// vendor is sent that ID and the values of the template's {#var#}
	// slots rather than the whole text (its dlt route). Default "".
	MessageID string
}
