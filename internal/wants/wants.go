// Package wants states, once, whether a recipient wants a message of a
// category on a channel: the rule the Notifier refuses a send by
// (notify.CodeDeclined) and every page and API that shows a recipient's
// preferences (prefpage, httpapi, adminapi) answers by, and how those
// APIs take and show a recipient's locale.
package wants

import (
	"context"

	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/store"
)

// Undefined is the rule a category a request or a choice names breaks
// when the account does not define it: the words every refusal of one
// says (the Notifier's, the APIs').
const Undefined = "must be a category the account defines"

// Why a recipient does not want a message of a category.
const (
	// Declined: they declined the category on the channel.
	Declined = "declined"
	// NotOptedIn: the category is opt-in and they have not allowed it.
	NotOptedIn = "opt_in"
)

// Not says why a recipient whose choice of category c on a channel is
// allowed (chose false when they made none) does not want its messages
// there, or "" when they do: a critical category is always wanted, a
// choice stands, and without one an opt-in category is not wanted, an
// opt-out one is.
func Not(c store.Category, allowed, chose bool) string {
	switch {
	case c.Critical:
		return ""
	case chose && !allowed:
		return Declined
	case !chose && c.OptIn:
		return NotOptedIn
	}
	return ""
}

// Gets reports whether that recipient gets the category's messages on
// the channel: Not answers "".
func Gets(c store.Category, allowed, chose bool) bool { return Not(c, allowed, chose) == "" }

// Category is a category as both HTTP APIs (httpapi, adminapi) show it.
type Category struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	OptIn       bool   `json:"opt_in"`
	Critical    bool   `json:"critical"`
}

// Preference is a category with what one recipient gets of it on a
// channel: Allowed (Gets), and Chosen, whether they made a choice.
type Preference struct {
	Category
	Allowed bool `json:"allowed"`
	Chosen  bool `json:"chosen"`
}

// Shown returns c as the APIs show it.
func Shown(c store.Category) Category {
	return Category{Name: c.Name, Description: c.Description, OptIn: c.OptIn, Critical: c.Critical}
}

// Categories returns cats as the APIs show them, never nil (an empty list
// is [] on the wire).
func Categories(cats []store.Category) []Category {
	out := make([]Category, 0, len(cats))
	for _, c := range cats {
		out = append(out, Shown(c))
	}
	return out
}

// Preferences returns, for each of cats, what a recipient whose choices
// on a channel are choices (store.Preferences.Choices) gets of it, never
// nil.
func Preferences(cats []store.Category, choices map[string]bool) []Preference {
	out := make([]Preference, 0, len(cats))
	for _, c := range cats {
		allowed, chose := choices[c.Name]
		out = append(out, Preference{Category: Shown(c), Allowed: Gets(c, allowed, chose), Chosen: chose})
	}
	return out
}

// LocaleRequired is what a body that sets a recipient's preferences lacks
// when it has neither choices nor a locale.
const LocaleRequired = `is required unless locale is given: an object of category names, each true (allowed) or false (declined), such as {"marketing":false}`

// Locale checks a body's locale for a recipient, as the APIs take it: a
// BCP 47 tag, returned canonical, or "" to forget theirs. It reports
// false, with the message its field error says, for anything else.
func Locale(tag string) (string, string, bool) {
	if tag == "" {
		return "", "", true
	}
	canonical, ok := locale.Canonical(tag)
	if !ok {
		return "", locale.Rule + `, or "" to forget the recipient's`, false
	}
	return canonical, "", true
}

// StoredLocale reads the locale recipient to has recorded with account,
// "" for none.
func StoredLocale(ctx context.Context, prefs store.Preferences, account, to string) (string, error) {
	locales, err := prefs.Locales(ctx, account, []string{to})
	return locales[to], err
}
