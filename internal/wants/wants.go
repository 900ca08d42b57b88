// Package wants states, once, whether a recipient wants a message of a
// category on a channel: the rule the Notifier refuses a send by
// (notify.CodeDeclined) and every page and API that shows a recipient's
// preferences (prefpage, httpapi, adminapi) answers by; and how those
// APIs take, write and read a recipient's choices and locale (Record,
// Read), so that both APIs answer alike.
package wants

import (
	"context"
	"errors"

	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
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

// Choice is a recipient's choice of one category on a channel, as an
// API body gives it.
type Choice struct {
	Category string
	Allowed  bool
}

// Defined reports whether cats holds a category named name.
func Defined(cats []store.Category, name string) bool {
	for _, c := range cats {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Record writes what an API body sets for the recipient to of channel
// kind: each of choices, in order, then, when locale is not nil, their
// locale (canonical, or "" to forget it). The caller has checked that
// every choice names a category cats defines; one removed since stops
// the writes there, those before it standing, and is answered as
// removed (with a nil error): the request's fault, as if it had been gone
// before. Any other error is the store's.
func Record(ctx context.Context, prefs store.Preferences, account string, kind record.Kind, to string, choices []Choice, locale *string) (removed string, err error) {
	for _, c := range choices {
		err := prefs.SetChoice(ctx, account, kind, to, c.Category, c.Allowed)
		if errors.Is(err, store.ErrNotFound) {
			return c.Category, nil
		}
		if err != nil {
			return "", err
		}
	}
	if locale != nil {
		return "", prefs.SetLocale(ctx, account, to, *locale)
	}
	return "", nil
}

// Read reads what the APIs answer of the recipient to on channel kind:
// every category of cats (the account's, read when nil) with what they
// get of it, and their locale ("" for none).
func Read(ctx context.Context, prefs store.Preferences, account string, kind record.Kind, to string, cats []store.Category) ([]Preference, string, error) {
	var err error
	if cats == nil {
		if cats, err = prefs.Categories(ctx, account); err != nil {
			return nil, "", err
		}
	}
	choices, err := prefs.Choices(ctx, account, kind, to)
	if err != nil {
		return nil, "", err
	}
	locales, err := prefs.Locales(ctx, account, []string{to})
	if err != nil {
		return nil, "", err
	}
	return Preferences(cats, choices), locales[to], nil
}
