package sms

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

// ProviderRule offers the messages it matches to its Provider. A message
// matches a rule when it matches each of the rule's lists that is not
// empty; a rule with no lists matches every message.
type ProviderRule struct {
	// Provider sends the messages the rule matches. Required.
	Provider notify.Provider
	// Countries are the recipients' countries, as ISO 3166-1 alpha-2 codes
	// ("IN", "US"). Default empty: every country.
	Countries []string
	// Prefixes are beginnings of the recipient's E.164 number, with its
	// plus ("+9198", "+1415"). Default empty: every number.
	Prefixes []string
	// Routes are the routes (RouteSMS, RouteOTP, RouteDLT). Default
	// empty: every route.
	Routes []Route
	// Accounts are account IDs. Default empty: every account.
	Accounts []string
}

// matches reports whether a message of account acct to number n on route
// matches r.
func (r *ProviderRule) matches(acct string, n phone.Number, route Route) bool {
	return (len(r.Countries) == 0 || slices.Contains(r.Countries, n.Region)) &&
		(len(r.Prefixes) == 0 || slices.ContainsFunc(r.Prefixes, func(p string) bool { return strings.HasPrefix(n.E164, p) })) &&
		(len(r.Routes) == 0 || slices.Contains(r.Routes, route)) &&
		(len(r.Accounts) == 0 || slices.Contains(r.Accounts, acct))
}

// router is the channel's providers and the rules that order them.
type router struct {
	rules  []ProviderRule
	byName map[string]notify.Provider
	only   notify.Provider // the one provider, when there is one and no rule limits it
	name   string          // only's name
}

// newRouter checks cfg's providers: each rule's and Provider, which
// comes last and matches every message. Two providers may not share a
// name (records and reports tell providers apart by it); one provider
// may appear in several rules.
func newRouter(cfg Config) (router, error) {
	rules := slices.Clone(cfg.Providers)
	if !nilness.Is(cfg.Provider) {
		rules = append(rules, ProviderRule{Provider: cfg.Provider})
	}
	if len(rules) == 0 {
		return router{}, errors.New("sms: Config needs a Provider or Providers: set one, and check its constructor's error")
	}
	r := router{rules: rules, byName: make(map[string]notify.Provider, len(rules))}
	for i, rule := range rules {
		if nilness.Is(rule.Provider) {
			return router{}, fmt.Errorf("sms: Config.Providers[%d].Provider is nil: set a provider, and check its constructor's error", i)
		}
		name := rule.Provider.Name()
		if other, ok := r.byName[name]; ok && other != rule.Provider {
			return router{}, fmt.Errorf("sms: two providers are named %q: records and reports tell providers apart by name", name)
		}
		r.byName[name] = rule.Provider
		for _, c := range rule.Countries {
			if !phone.IsRegion(c) {
				return router{}, fmt.Errorf("sms: Config.Providers[%d].Countries: %q must be an ISO 3166-1 alpha-2 code in capitals, such as IN", i, c)
			}
		}
		for _, p := range rule.Prefixes {
			if len(p) < 2 || p[0] != '+' || p[1] == '0' || strings.IndexFunc(p[1:], func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
				return router{}, fmt.Errorf("sms: Config.Providers[%d].Prefixes: %q must be the start of an E.164 number, such as +9198", i, p)
			}
		}
	}
	if len(r.byName) == 1 && len(rules) == 1 && rules[0].matchesAll() {
		r.only, r.name = rules[0].Provider, rules[0].Provider.Name()
	}
	return r, nil
}

// matchesAll reports whether r has no list that limits it.
func (r *ProviderRule) matchesAll() bool {
	return len(r.Countries) == 0 && len(r.Prefixes) == 0 && len(r.Routes) == 0 && len(r.Accounts) == 0
}

// pick returns the providers of a message, in order: the first is
// where it goes, the rest (nil when none) where it may fail over. ok is
// false when no rule matches it.
func (r *router) pick(acct string, n phone.Number, route Route) (first string, all []string, ok bool) {
	if r.only != nil {
		return r.name, nil, true
	}
	for i := range r.rules {
		if !r.rules[i].matches(acct, n, route) {
			continue
		}
		name := r.rules[i].Provider.Name()
		switch {
		case first == "":
			first = name
		case name == first || slices.Contains(all, name):
			// listed already by an earlier rule
		case all == nil:
			all = []string{first, name}
		default:
			all = append(all, name)
		}
	}
	return first, all, first != ""
}

// withDLTIDs drops from a dlt message's providers those that send
// templates by their own ID only (DLTByIDSender) when its template has
// none for them, and returns the rest, first the first; when none is
// left it reports the template on fe.
func (r *router) withDLTIDs(fe *record.FieldErrors, msg *Message, first string, all []string) (string, []string) {
	names := all
	if names == nil {
		names = []string{first}
	}
	kept := make([]string, 0, len(names))
	var skipped []string
	for _, name := range names {
		p, _ := r.provider(name)
		if _, byID := p.(DLTByIDSender); byID && msg.DLTMessageIDFor(name) == "" {
			skipped = append(skipped, name)
			continue
		}
		kept = append(kept, name)
	}
	switch {
	case len(skipped) == 0:
		return first, all
	case len(kept) == 0:
		fe.Addf("dlt_template_id", "%s has no template ID of %s, which sends DLT templates by that ID only: register it as the template's message_ids.%s",
			rules.Clip(msg.DLTTemplateID), strings.Join(skipped, " or "), skipped[0])
		return "", nil
	case len(kept) == 1:
		return kept[0], nil
	}
	return kept[0], kept
}

// provider returns the provider named name.
func (r *router) provider(name string) (notify.Provider, bool) {
	if r.only != nil {
		return r.only, r.name == name
	}
	p, ok := r.byName[name]
	return p, ok
}

// names lists the providers, for String.
func (r *router) names() []string {
	var out []string
	for _, rule := range r.rules {
		if n := rule.Provider.Name(); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
