package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Suppression (issue 31). The list lives in the ledger: store.Ledger
// embeds store.Suppressions, so the Notifier needs no option and the
// root no exported name, and a ledger wrapped by embedding keeps its list
// (an optional interface found by a type assertion was lost to such a
// wrapper, and with it every opt-out).
//
// The list is read after a send is prepared (its recipient normalised,
// its class known) and before anything is charged or counted: admit
// calls suppressed for every send, queued or not, single or composite;
// a bulk send and EnqueueTxMany check all their recipients at once
// (suppressedEach), in one read per account and channel. A worker (Work) reads it again before
// it claims a queued send, which it fails and refunds when the recipient
// opted out in the meantime. A refusal is CodeSuppressed, names
// the channel and the reason but never the recipient in full, moves no
// money, writes no record and calls no provider.

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
	for _, env := range envs {
		reason, stop, err := stopped(ctx, n.ledger, acct, env)
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
// channel, and refuses them
// all when any is stopped, naming each stopped one by the field
// fmt.Sprintf(field, i) and its reason.
func (n *Notifier) suppressedEach(ctx context.Context, op string, acct func(int) *Account, envs []*Envelope, field string) error {
	reasons, err := stoppedEach(ctx, n.ledger, acct, envs)
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
// It reads every recipient of one account and channel (each To, and the
// recipients its content names beside it) in one LookupSuppressions.
func stoppedEach(ctx context.Context, s store.Suppressions, acct func(int) *Account, envs []*Envelope) ([]store.SuppressionReason, error) {
	g := groupRecipients(acct, envs)
	entries := make(map[suppressionGroup][]store.Suppression, len(g.tos))
	for key, list := range g.tos {
		es, err := s.LookupSuppressions(ctx, key.account, key.kind, list)
		if err != nil {
			return nil, err
		}
		if len(es) != len(list) {
			return nil, fmt.Errorf("the suppression list answered %d entries for %d recipients", len(es), len(list))
		}
		entries[key] = es
	}
	reasons := make([]store.SuppressionReason, len(envs))
	for i, env := range envs {
		for _, j := range g.where[i] {
			if e := entries[g.of[i]][j]; e.Reason != "" && blocks(e.Reason, env.Class) {
				reasons[i] = e.Reason
				break
			}
		}
	}
	return reasons, nil
}

// suppressionGroup is one account's list of one channel: what one
// LookupSuppressions reads.
type suppressionGroup struct {
	account string
	kind    Kind
}

// recipientGroups are the recipients of many envelopes, each once per
// group: tos lists a group's recipients, of[i] is envelope i's group and
// where[i] the places of its recipients in that group's list (none for
// an envelope that is nil or of a kind without a list).
type recipientGroups struct {
	tos   map[suppressionGroup][]string
	of    []suppressionGroup
	where [][]int
}

// groupRecipients gathers the recipients of envs (envs[i] sent for
// account acct(i)) by account and channel.
func groupRecipients(acct func(int) *Account, envs []*Envelope) recipientGroups {
	g := recipientGroups{tos: make(map[suppressionGroup][]string), of: make([]suppressionGroup, len(envs)), where: make([][]int, len(envs))}
	at := make(map[suppressionGroup]map[string]int)
	for i, env := range envs {
		if env == nil || !store.SuppressibleKind(env.Kind) {
			continue
		}
		key := suppressionGroup{acct(i).ID, env.Kind}
		if at[key] == nil {
			at[key] = make(map[string]int)
		}
		g.of[i] = key
		for _, to := range append([]string{env.To}, othersOf(env)...) {
			j, ok := at[key][to]
			if !ok {
				j = len(g.tos[key])
				at[key][to], g.tos[key] = j, append(g.tos[key], to)
			}
			g.where[i] = append(g.where[i], j)
		}
	}
	return g
}

// noteBounce adds the recipient of env to the account's list when err,
// a certain refusal, carries a store.Bounce (a mail server's 5.1.1 "no
// such user"), so that later sends to it are refused before they are
// charged. It is best effort, on a context detached from the caller's
// and bounded like a refund: a list that fails to take it leaves the
// next send to bounce again, which costs a refund, not a wrong charge.
func (n *Notifier) noteBounce(ctx context.Context, acct *Account, env *Envelope, err error) {
	var b store.Bounce
	if env == nil || !store.SuppressibleKind(env.Kind) || !errors.As(err, &b) {
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
	_, _ = n.ledger.AddSuppression(wctx, store.Suppression{Account: acct.ID, Kind: env.Kind, To: to, Reason: reason, At: n.now()})
}
