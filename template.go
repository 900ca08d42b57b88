package notify

import (
	"context"

	"github.com/notifykit/notify/record"
)

// Rendered is a template rendered for one channel.
type Rendered struct {
	Slug string
	// Locale is the variant rendered, a BCP 47 tag as the template names
	// it ("hi"), or "" for the template's base.
	Locale string
	// Varies reports that the template has a variant for the kind in some
	// locale: another locale could word it otherwise. Only then does a
	// channel let the recipient's stored locale choose the variant
	// (Envelope.Localized).
	Varies bool
	// Class is the template's price class.
	Class record.PriceClass
	// Subject is the e-mail subject (e-mail only).
	Subject string
	// Text is the plain-text body: the SMS or chat text, or the e-mail's
	// text part.
	Text string
	// HTML is the e-mail's HTML part, with every value escaped.
	HTML string
	// Values are the variables the template used, defaults applied, in
	// declaration order; channels use them for positional parameters.
	Values []string
}

// TemplateRenderer renders stock and custom templates. The template
// package has the implementation; channels call it.
//
// Render renders slug for kind in the variant of locale, a BCP 47 tag
// ("hi-IN"; "" for none), as its fallback chain finds it: the tag, its
// language ("hi"), the account's default locale (Account.Locale), then the
// template's base; Rendered.Locale says which, and Rendered.Varies whether
// the template has variants for kind at all. It is safe for concurrent
// use. An unknown slug, a locale that is not a BCP 47 tag, or a missing
// or bad variable is InvalidArgument naming each problem (variables as
// "variables.NAME", the locale as "locale").
type TemplateRenderer interface {
	Render(ctx context.Context, kind Kind, acct *Account, slug, locale string, vars record.Vars) (*Rendered, error)
}

// Pricer prices prepared envelopes. wallet.PriceList implements it.
// Price is safe for concurrent use and returns the price in the account's
// currency, or an error (an unpriced kind is Internal: a configuration
// mistake, not the caller's).
type Pricer interface {
	Price(acct *Account, env *Envelope) (Money, error)
}
