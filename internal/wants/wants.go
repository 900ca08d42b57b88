// Package wants states, once, whether a recipient wants a message of a
// category on a channel: the rule the Notifier refuses a send by
// (notify.CodeDeclined) and every page and API that shows a recipient's
// preferences (prefpage, httpapi, adminapi) answers by.
package wants

import "github.com/notifykit/notify/store"

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
