package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifykit/notify/internal/wants"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Preferences (issue 48), a part of the admit step. A request may name
// a category of its account (Envelope.Category); each recipient may
// allow or decline each category on each channel (store.Preferences, part
// of the Ledger as the suppression list is, so a wrapped ledger keeps
// it). A send that names a category is read against them after it is
// prepared and before anything is charged; one the recipient does not
// want is refused CodeDeclined, naming the category, the channel and why
// (declined, or opt-in and not allowed), and moves no money, writes no
// record and calls no provider. A critical category goes whatever the
// recipient chose, but the suppression list still applies to it: a hard
// bounce stops every message.
//
// Every path reads them where it reads the list: a single send in admit
// (before its opening, which reads the list itself), a bulk send and
// EnqueueTxMany for all their recipients at once, one read per account,
// channel and category; a composite send skips a declined part as it
// skips a suppressed one; a timed fallback skips a declined step; a
// worker reads them again before it claims a queued or scheduled send,
// which it fails and refunds when the recipient has declined since. A
// request that names no category reads nothing.

// declined returns CodeDeclined when the recipient of one of envs (nil
// ones skipped) does not want its category on its channel, InvalidArgument
// naming "category" for a category the account has not defined, a store
// failure when the preferences cannot be read (a "no" that cannot be read
// must not let a message through), or nil.
func (n *Notifier) declined(ctx context.Context, op string, acct *Account, envs []*Envelope) error {
	if !anyCategory(envs) {
		return nil
	}
	whys, err := n.declinedEach(ctx, func(int) *Account { return acct }, envs)
	if err != nil {
		return preferenceFailure(op, err)
	}
	for i, why := range whys {
		if why != "" {
			return &Error{Code: CodeDeclined, Op: op, Err: errors.New(declinedText(envs[i], why))}
		}
	}
	return nil
}

// declinedEachField is declined for many envelopes, envs[i] sent for
// account acct(i): it refuses them all when any is declined, naming each
// such one by the field fmt.Sprintf(field, i) and why, as suppressedEach
// does for the list.
func (n *Notifier) declinedEachField(ctx context.Context, op string, acct func(int) *Account, envs []*Envelope, field string) error {
	if !anyCategory(envs) {
		return nil
	}
	whys, err := n.declinedEach(ctx, acct, envs)
	if err != nil {
		return preferenceFailure(op, err)
	}
	var fields []record.FieldError
	for i, why := range whys {
		if why != "" {
			fields = append(fields, record.FieldError{Field: fmt.Sprintf(field, i), Message: declinedText(envs[i], why)})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: CodeDeclined, Op: op, Fields: fields, Err: fmt.Errorf(
		"%d of the %d recipients do not want the message's category on its channel; nothing was sent or charged", len(fields), len(envs))}
}

// anyCategory reports whether one of envs names a category: a send that
// names none reads no preferences.
func anyCategory(envs []*Envelope) bool {
	for _, env := range envs {
		if env != nil && env.Category != "" {
			return true
		}
	}
	return false
}

// errNoCategory marks a category the account has not defined, found by
// declinedEach, so that preferenceFailure answers it as the caller's.
var errNoCategory = errors.New("no such category")

// preferenceFailure words declinedEach's error for the caller: a category
// the account has not defined is the request's fault, anything else the
// store failing.
func preferenceFailure(op string, err error) error {
	if errors.Is(err, errNoCategory) {
		return &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "category", Message: wants.Undefined}}}
	}
	return storeFailure(op, "preferences", err)
}

// declinedEach answers, for each of envs (envs[i] sent for account
// acct(i)), why its category's rules and a recipient's choice keep it
// from its channel (wants.Not: wants.Declined, wants.NotOptedIn), or ""
// when nothing does. It
// reads the choices of every recipient of one account, channel and
// category (each To, and the recipients its content names beside it) in
// one LookupChoices.
func (n *Notifier) declinedEach(ctx context.Context, acct func(int) *Account, envs []*Envelope) ([]string, error) {
	g := n.groupRecipients(acct, envs, true)
	type answer struct {
		category store.Category
		choices  map[string]bool
	}
	answers := make(map[recipientGroup]answer, len(g.tos))
	for key, tos := range g.tos {
		if !store.SuppressibleKind(record.Kind(key.category)) {
			return nil, errNoCategory // a name no category can have
		}
		c, choices, err := n.ledger.LookupChoices(ctx, key.account, key.category, key.kind, tos)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, errNoCategory
		case err != nil:
			return nil, err
		}
		answers[key] = answer{c, choices}
	}
	whys := make([]string, len(envs))
	for i := range envs {
		a, tos := answers[g.of[i]], g.tos[g.of[i]]
		for _, j := range g.where[i] {
			allowed, chose := a.choices[tos[j]]
			if why := wants.Not(a.category, allowed, chose); why != "" {
				whys[i] = why
				break
			}
		}
	}
	return whys, nil
}

// declinedText words why env's recipient does not want it.
func declinedText(env *Envelope, why string) string {
	if why == wants.NotOptedIn {
		return fmt.Sprintf("%s messages are opt-in and the recipient has not allowed them on %s", env.Category, env.Kind)
	}
	return fmt.Sprintf("the recipient declined %s messages on %s", env.Category, env.Kind)
}

// recipientRefused reports whether err refuses a send for what its
// recipient's entry on the list or preferences say (CodeSuppressed,
// CodeDeclined), rather than for the request or a store failing: a
// composite send skips such a part, a worker fails such a send.
func recipientRefused(err error) bool {
	switch CodeOf(err) {
	case CodeSuppressed, CodeDeclined:
		return true
	}
	return false
}
