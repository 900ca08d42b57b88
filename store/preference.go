package store

import (
	"context"

	"github.com/notifykit/notify/record"
)

// Category is one kind of message an account sends ("otp", "order",
// "marketing"), named by a request (its Category field) so that the
// Notifier can ask what the recipient wants: each recipient may allow or
// decline each category on each channel (Preferences.SetChoice).
type Category struct {
	// Account is the ID of the account that defines the category.
	Account string
	// Name is the category's name: 1 to 32 bytes of lower-case ASCII
	// letters, digits, "_" or "-", starting with a letter (the rule of a
	// channel's name, SuppressibleKind).
	Name string
	// Description says what the category's messages are, in a few words
	// a recipient reads on the preference page ("Order and delivery
	// updates"): at most 200 bytes of text; empty shows the Name.
	Description string
	// OptIn makes the category opt-in: a recipient gets its messages on a
	// channel only once they allowed it there. False, the default, makes
	// it opt-out: a recipient gets them unless they declined.
	OptIn bool
	// Critical sends the category's messages whatever the recipient
	// chose (one-time codes, security alerts): choices are kept but not
	// read. The suppression list still applies: a hard bounce stops them.
	Critical bool
}

// Preferences keeps each account's categories and its recipients'
// choices (per recipient, category and channel, allowed or not), and the
// locale each recipient wants the account's messages in. Methods
// are safe for concurrent use. Recipients arrive in their channel's
// canonical form (notify.Channel.Recipient), as a suppression list's do,
// and are compared byte for byte; the rules of their shape are the
// list's (storeutil.CheckChoice). An invalid account (empty), channel,
// recipient or category name is ErrInvalid naming the field; a store
// that cannot answer returns ErrUnavailable. The categories and choices
// of two accounts never meet.
//
// Every Ledger is one, for the reason it is a suppression list: a ledger
// wrapped by embedding keeps it, so a wrapper cannot hide a recipient's
// "no". The Notifier reads it before it charges a send that names a
// category (LookupChoices), and refuses one the recipient declined with
// notify.CodeDeclined; and, for a template with variants sent by a
// request that names no locale, the recipients' locales (Locales). storetest's RunPreferences is its conformance
// suite.
type Preferences interface {
	// PutCategory defines c, or replaces the account's category of its
	// name with c, and answers it as kept. A bad name or a description
	// too long is ErrInvalid. Recipients' choices of the category stay.
	PutCategory(ctx context.Context, c Category) (Category, error)

	// Categories answers the account's categories in order of name
	// (byte order); none for an account that defined none.
	Categories(ctx context.Context, account string) ([]Category, error)

	// RemoveCategory deletes the account's category and every choice of
	// it, or answers ErrNotFound when the account has no category of
	// that name. A request that names it is then refused as naming no
	// category.
	RemoveCategory(ctx context.Context, account, name string) error

	// SetChoice records whether the recipient to of channel kind allows
	// the account's category's messages there, replacing the choice it
	// made before. A category the account has not defined is ErrNotFound.
	SetChoice(ctx context.Context, account string, kind record.Kind, to, category string, allowed bool) error

	// Choices answers the recipient's choices on channel kind: allowed or
	// not, by category name; a category the recipient made no choice of
	// is absent. A recipient with no choices has an empty map.
	Choices(ctx context.Context, account string, kind record.Kind, to string) (map[string]bool, error)

	// LookupChoices answers the account's category and the choices of it
	// that the recipients tos of channel kind made: allowed or not, by
	// recipient; a recipient who made none (or one the rules refuse, who
	// can have none) is absent. A category the account has not defined is
	// ErrNotFound. Its answers must be what Categories and Choices would
	// answer, but read at once (pgstore in one statement, memstore under
	// one lock): the Notifier checks every send that names a category
	// through it, and a bulk send's recipients in one call.
	LookupChoices(ctx context.Context, account, category string, kind record.Kind, tos []string) (Category, map[string]bool, error)

	// SetLocale records the locale the recipient to wants the account's
	// messages in, a BCP 47 tag ("hi-IN"), kept canonical, replacing the
	// one recorded before; "" forgets it (none recorded is no error). A
	// recipient is its channel's canonical form whatever the channel, so
	// a number's locale serves SMS and chat alike. A tag that is not a
	// locale is ErrInvalid naming "locale". No category need exist.
	SetLocale(ctx context.Context, account, to, locale string) error

	// Locales answers the recorded locales of those of the recipients tos
	// that have one, by recipient; one without (or one the rules refuse,
	// who can have none) is absent. The Notifier reads it, once per
	// account for all the recipients of a send, when a template with
	// variants is sent by a request that names no locale: the recipient's
	// locale then chooses the variant (notify.Envelope.Localized).
	Locales(ctx context.Context, account string, tos []string) (map[string]string, error)
}
