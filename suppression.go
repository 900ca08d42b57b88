package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify/store"
)

// Suppression (issue 31). The list lives in the ledger: a store.Ledger
// that also implements store.Suppressions (memstore's and pgstore's do)
// is found the way database/sql finds a driver's optional interfaces, so
// the Notifier needs no option and the root no exported name. A ledger
// without it has no list: nothing is refused, no bounce is kept.
//
// The list is read after a send is prepared (its recipient normalised,
// its class known) and before anything is charged or counted: admit
// calls suppressed for every send, queued or not, single or composite;
// a bulk send and EnqueueTxMany check all their recipients at once
// (suppressedEach), in one read per account and channel when the ledger
// implements store.ManySuppressions. A worker (Work) reads it again before
// it claims a queued send, which it fails and refunds when the recipient
// opted out in the meantime. A refusal is CodeSuppressed, names
// the channel and the reason but never the recipient in full, moves no
// money, writes no record and calls no provider.

// suppressions returns the ledger's suppression list, or nil.
func (n *Notifier) suppressions() store.Suppressions {
	s, _ := n.ledger.(store.Suppressions)
	return s
}

// blocks reports whether an entry for reason stops a message of class:
// a promotional message is stopped by any entry, a transactional one
// only by a hard bounce (the address does not exist; an unsubscribe from
// campaigns must not stop a one-time code or an invoice).
func blocks(reason store.SuppressionReason, class record.PriceClass) bool {
	return class == record.Promotional || reason == store.SuppressHardBounce
}

// suppressed returns CodeSuppressed when the recipient of one of envs
// (nil ones skipped) is on the account's list with an entry that stops
// its class, a store failure when the list cannot be read (a list that
// cannot be read must not let mail through to someone who opted out),
// or nil.
func (n *Notifier) suppressed(ctx context.Context, op string, acct *Account, envs []*Envelope) error {
	s := n.suppressions()
	if s == nil {
		return nil
	}
	for _, env := range envs {
		reason, stop, err := stopped(ctx, s, acct, env)
		if err != nil {
			return storeFailure(op, "suppressions", err)
		}
		if stop {
			return &Error{Code: CodeSuppressed, Op: op, Err: fmt.Errorf(
				"a %s recipient is on the account's suppression list (%s); %s messages are not sent to it",
				env.Kind, reason, env.Class)}
		}
	}
	return nil
}

// stopped reads the list's entries for env's recipients, its To and
// those its content names beside it (an e-mail's cc and bcc, through
// OtherRecipients), and says whether one stops env. A nil env, or a
// kind that cannot name a channel, is never stopped.
func stopped(ctx context.Context, s store.Suppressions, acct *Account, env *Envelope) (store.SuppressionReason, bool, error) {
	if env == nil || !store.SuppressibleKind(env.Kind) {
		return "", false, nil
	}
	reason, stop, err := stoppedTo(ctx, s, acct, env, env.To)
	if stop || err != nil {
		return reason, stop, err
	}
	for _, to := range othersOf(env) {
		if reason, stop, err := stoppedTo(ctx, s, acct, env, to); stop || err != nil {
			return reason, stop, err
		}
	}
	return "", false, nil
}

// othersOf returns the recipients env's content names beside its To
// (otherRecipients), or nil.
func othersOf(env *Envelope) []string {
	if more, ok := env.Content.(otherRecipients); ok {
		return more.OtherRecipients()
	}
	return nil
}

// otherRecipients is the content of a message that goes to more
// recipients than its envelope's To, such as an e-mail with cc or bcc
// (email.Message): each is checked against the list as To is.
type otherRecipients interface{ OtherRecipients() []string }

// stoppedTo reads the list's entry for one recipient of env.
func stoppedTo(ctx context.Context, s store.Suppressions, acct *Account, env *Envelope, to string) (store.SuppressionReason, bool, error) {
	e, ok, err := s.LookupSuppression(ctx, acct.ID, env.Kind, to)
	switch {
	case errors.Is(err, store.ErrInvalid):
		// A recipient the channel accepted but the list's rules do not
		// (a chat handle that is not a number): no entry can exist for it.
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return e.Reason, ok && blocks(e.Reason, env.Class), nil
}

// suppressedBulk checks every recipient of a bulk request, as suppressed
// does one, and refuses the whole request when any is stopped, naming
// each by its index ("to.3") and reason: a bulk send is all or nothing
// before it is charged, as its validation is, so the caller drops the
// recipients named and sends again. The error never carries a
// recipient in full (an address or number is personal data that errors
// and logs must not carry).
func (n *Notifier) suppressedBulk(ctx context.Context, op string, acct *Account, ps []prepared) error {
	envs := make([]*Envelope, len(ps))
	for i := range ps {
		envs[i] = ps[i].env
	}
	return n.suppressedEach(ctx, op, func(int) *Account { return acct }, envs, "to.%d")
}

// suppressedEach checks envs, envs[i] sent for account acct(i), as
// suppressed does one, reading the list in one call per account and
// channel when the ledger can (store.ManySuppressions), and refuses them
// all when any is stopped, naming each stopped one by the field
// fmt.Sprintf(field, i) and its reason.
func (n *Notifier) suppressedEach(ctx context.Context, op string, acct func(int) *Account, envs []*Envelope, field string) error {
	s := n.suppressions()
	if s == nil {
		return nil
	}
	reasons, err := stoppedEach(ctx, s, acct, envs)
	if err != nil {
		return storeFailure(op, "suppressions", err)
	}
	var fields []record.FieldError
	for i, reason := range reasons {
		if reason != "" {
			fields = append(fields, record.FieldError{Field: fmt.Sprintf(field, i), Message: "is on the account's suppression list (" + string(reason) + ")"})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: CodeSuppressed, Op: op, Fields: fields, Err: fmt.Errorf(
		"%d of the %d recipients are on the account's suppression list; nothing was sent or charged", len(fields), len(envs))}
}

// stoppedEach answers, for each of envs (envs[i] sent for account
// acct(i)), the reason of the entry that stops it, or "" when none does.
// With a store.ManySuppressions it reads every recipient of one account
// and channel (each To, and the recipients its content names beside it)
// in one LookupSuppressions; otherwise it asks stopped for each.
func stoppedEach(ctx context.Context, s store.Suppressions, acct func(int) *Account, envs []*Envelope) ([]store.SuppressionReason, error) {
	reasons := make([]store.SuppressionReason, len(envs))
	many, ok := s.(store.ManySuppressions)
	if !ok {
		for i, env := range envs {
			reason, stop, err := stopped(ctx, s, acct(i), env)
			if err != nil {
				return nil, err
			}
			if stop {
				reasons[i] = reason
			}
		}
		return reasons, nil
	}
	// The recipients of each account and channel, each once, and for
	// each envelope where its recipients sit in its group's list.
	type group struct {
		account string
		kind    Kind
	}
	tos := make(map[group][]string)
	at := make(map[group]map[string]int)
	where := make([][]int, len(envs))
	groups := make([]group, len(envs))
	for i, env := range envs {
		if env == nil || !store.SuppressibleKind(env.Kind) {
			continue
		}
		g := group{acct(i).ID, env.Kind}
		if at[g] == nil {
			at[g] = make(map[string]int)
		}
		groups[i] = g
		for _, to := range append([]string{env.To}, othersOf(env)...) {
			j, ok := at[g][to]
			if !ok {
				j = len(tos[g])
				at[g][to], tos[g] = j, append(tos[g], to)
			}
			where[i] = append(where[i], j)
		}
	}
	entries := make(map[group][]store.Suppression, len(tos))
	for g, list := range tos {
		es, err := many.LookupSuppressions(ctx, g.account, g.kind, list)
		if err != nil {
			return nil, err
		}
		if len(es) != len(list) {
			return nil, fmt.Errorf("the suppression list answered %d entries for %d recipients", len(es), len(list))
		}
		entries[g] = es
	}
	for i, env := range envs {
		for _, j := range where[i] {
			if e := entries[groups[i]][j]; e.Reason != "" && blocks(e.Reason, env.Class) {
				reasons[i] = e.Reason
				break
			}
		}
	}
	return reasons, nil
}

// noteBounce adds the recipient of env to the account's list when err,
// a certain refusal, carries a store.Bounce (a mail server's 5.1.1 "no
// such user"), so that later sends to it are refused before they are
// charged. It is best effort, on a context detached from the caller's
// and bounded like a refund: a list that fails to take it leaves the
// next send to bounce again, which costs a refund, not a wrong charge.
func (n *Notifier) noteBounce(ctx context.Context, acct *Account, env *Envelope, err error) {
	var b store.Bounce
	s := n.suppressions()
	if s == nil || env == nil || !store.SuppressibleKind(env.Kind) || !errors.As(err, &b) {
		return
	}
	reason, to := b.BounceReason()
	if !reason.Valid() {
		return
	}
	if to == "" {
		to = env.To
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	_, _ = s.AddSuppression(wctx, store.Suppression{Account: acct.ID, Kind: env.Kind, To: to, Reason: reason, At: n.now()})
}
