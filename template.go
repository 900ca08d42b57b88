package notify

import (
	"context"

	"github.com/notifykit/notify/record"
)

// Rendered is a template rendered for one channel.
type Rendered struct {
	Slug string
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
// Render is safe for concurrent use. An unknown slug or a missing or bad
// variable is InvalidArgument naming each problem (variables as
// "variables.NAME").
type TemplateRenderer interface {
	Render(ctx context.Context, kind Kind, acct *Account, slug string, vars record.Vars) (*Rendered, error)
}

// Pricer prices prepared envelopes. wallet.PriceList implements it.
// Price is safe for concurrent use and returns the price in the account's
// currency, or an error (an unpriced kind is Internal: a configuration
// mistake, not the caller's).
type Pricer interface {
	Price(acct *Account, env *Envelope) (Money, error)
}
