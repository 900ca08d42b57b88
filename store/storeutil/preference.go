package storeutil

import (
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// CategoryRule is the rule of a category's name, in the words an error
// naming the field says it (a request's category field too).
const CategoryRule = "must be 1 to 32 lower-case letters, digits, _ or -, starting with a letter"

// descriptionRule is the rule of a category's description.
const descriptionRule = "must be at most 200 bytes of UTF-8 text without control characters"

// CategoryName reports whether name keeps a category name's rule, the
// rule of a channel's name (store.SuppressibleKind): the Notifier's
// request rules and every store check it through here.
func CategoryName(name string) bool { return store.SuppressibleKind(record.Kind(name)) }

// CheckCategory returns ErrInvalid naming every field of c that breaks
// store.Preferences.PutCategory's rules: an empty account, a bad name, a
// description too long or not text. Stores call it first.
func CheckCategory(c store.Category) error {
	fe := checkCategoryKey(c.Account, c.Name)
	if len(c.Description) > 200 || !utf8.ValidString(c.Description) ||
		strings.IndexFunc(c.Description, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		fe.Add("description", descriptionRule)
	}
	return store.InvalidFields(fe)
}

// CheckCategoryKey returns ErrInvalid naming the fields that break the
// rules of an account's category named name (RemoveCategory's arguments,
// LookupChoices' account and category).
func CheckCategoryKey(account, name string) error {
	return store.InvalidFields(checkCategoryKey(account, name))
}

func checkCategoryKey(account, name string) record.FieldErrors {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if !CategoryName(name) {
		fe.Add("category", CategoryRule)
	}
	return fe
}

// CheckChoice returns ErrInvalid naming the fields that break the rules of
// a recipient's choice (store.Preferences.SetChoice): an empty account, a
// channel that is not a channel's name, a recipient of the wrong shape (the
// suppression list's rule), a bad category name. A category of "" is not
// checked: Choices names none.
func CheckChoice(account string, kind record.Kind, to, category string) error {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	fe = append(fe, checkRecipient(kind, to)...)
	if category != "" && !CategoryName(category) {
		fe.Add("category", CategoryRule)
	}
	return store.InvalidFields(fe)
}

// CheckLookupChoices checks LookupChoices' arguments as CheckSuppressionKeys
// checks a list's: ErrInvalid for an empty account, a bad category or a kind
// that is not a channel's name; it returns each recipient of tos as it is, or
// "" for one the rules refuse (it can have no choice).
func CheckLookupChoices(account, category string, kind record.Kind, tos []string) ([]string, error) {
	fe := checkCategoryKey(account, category)
	if !store.SuppressibleKind(kind) {
		fe = append(fe, channelRule()...)
	}
	if err := store.InvalidFields(fe); err != nil {
		return nil, err
	}
	return CheckSuppressionKeys(account, kind, tos)
}

// CheckLocale checks the arguments of store.Preferences.SetLocale and
// returns locale canonical ("" stays ""): ErrInvalid names an empty
// account, a recipient of the wrong shape (the suppression list's rule)
// and a locale that is not a BCP 47 tag.
func CheckLocale(account, to, tag string) (string, error) {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	fe = append(fe, recipientShape(to)...)
	canonical, ok := locale.Canonical(tag)
	if tag != "" && !ok {
		fe.Add("locale", locale.Rule)
	}
	return canonical, store.InvalidFields(fe)
}

// CheckLocales checks the arguments of store.Preferences.Locales: an
// empty account is ErrInvalid; it returns each recipient of tos as it
// is, or "" for one the rules refuse (it can have no locale).
func CheckLocales(account string, tos []string) ([]string, error) {
	if account == "" {
		return nil, store.InvalidField("account", "is required")
	}
	out := make([]string, len(tos))
	for i, to := range tos {
		if recipientShape(to) == nil {
			out[i] = to
		}
	}
	return out, nil
}
