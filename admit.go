package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The admit step, after a send is prepared and before anything is
// charged: the suppression list, the recipient's preferences
// (preferences.go), the send window, the rate limit and the OTP
// throttle.

// Suppression (issue 31). The list lives in the ledger: store.Ledger
// embeds store.Suppressions, so the Notifier needs no option and the
// root no exported name, and a ledger wrapped by embedding keeps its list
// (an optional interface found by a type assertion was lost to such a
// wrapper, and with it every opt-out).
//
// The list is read after a send is prepared (its recipient normalised,
// its class known) and before anything is charged: admit calls
// suppressed for every send, queued or not, single or composite, before
// any limit's unit is taken; a bulk send and EnqueueTxMany check all
// their recipients at once (suppressedEach), in one read per account and
// channel. A single send with one recipient leaves the read to its
// opening (admitOne, store.Ledger.OpenUnlisted: one statement on
// PostgreSQL), which writes and charges nothing for a recipient the list
// stops; the limits' units it took are given back. So for such a send
// the limits answer first: one the rate limit also refuses is
// rate_limited, not suppressed (nothing is charged either way). A worker (Work) reads it again before
// it claims a queued send, which it fails and refunds when the recipient
// opted out in the meantime. A refusal is CodeSuppressed, names
// the channel and the reason but never the recipient in full, moves no
// money, writes no record and calls no provider.

// The causes of a limit's refusal (an *Error with CodeRateLimited):
// errors.Is tells which limit refused a send.
var (
	// ErrRateLimited: the account's rate limit (WithRateLimit).
	ErrRateLimited = errors.New("too many sends for this account")
	// ErrOTPThrottled: the per-recipient throttle on one-time codes
	// (WithOTPThrottle).
	ErrOTPThrottled = errors.New("too many one-time codes to this recipient")
)

// admission is what admit took from the Notifier's limits for one send:
// the units to give back if the send went nowhere. A nil *admission took
// nothing.
type admission struct {
	n       *Notifier
	ctx     context.Context
	at      time.Time
	rateKey string // "" when no rate unit was taken
	otpKey  string // "" when no OTP unit was taken
}

// admit applies the per-account rate limit and, to a message that carries
// a one-time code, the per-recipient OTP throttle. It runs after Prepare
// (a bad request is refused as such, never as rate limited) and inside the
// idempotency reservation (a replay never counts). A dual OTP passes both
// legs and counts once. A refusal is told to the observers (StateRefused)
// as a request of kind.
func (n *Notifier) admit(ctx context.Context, op string, acct *Account, kind Kind, envs ...*Envelope) (*admission, error) {
	if err := n.refusedFor(ctx, op, acct, envs); err != nil { // before any unit is taken
		return nil, err
	}
	return n.take(ctx, op, acct, kind, envs...)
}

// admitOne is admit for one message about to be opened (p, which it
// may change): when the list can be checked by the opening itself
// (listCheckOf), it leaves the read to it, and reads the preferences and
// takes the limits' units only; a suppressed recipient is then refused
// at the opening, and the units given back as for any send that went
// nowhere. (So a recipient both listed and declining is refused
// CodeDeclined here, CodeSuppressed where the list is read first.)
func (n *Notifier) admitOne(ctx context.Context, op string, acct *Account, kind Kind, p *prepared) (*admission, error) {
	if c, ok := n.listCheckOf(p.env); ok {
		if err := n.declined(ctx, op, acct, []*Envelope{p.env}); err != nil {
			return nil, err
		}
		p.listed = c
		return n.take(ctx, op, acct, kind, p.env)
	}
	return n.admit(ctx, op, acct, kind, p.env)
}

// take is admit once the suppression list let envs through: it takes
// the limits' units. EnqueueTxMany checks the list for all its requests
// at once (suppressedEach), then takes each request's units.
func (n *Notifier) take(ctx context.Context, op string, acct *Account, kind Kind, envs ...*Envelope) (*admission, error) {
	if n.rate == nil && n.otpThrottle == nil {
		return nil, nil
	}
	a := &admission{n: n, ctx: ctx, at: n.now()}
	if n.rate != nil {
		if err := n.rate.Take(ctx, acct.ID, a.at); err != nil {
			return nil, n.refused(ctx, acct, kind, envs, limitError(op, ErrRateLimited, err))
		}
		a.rateKey = acct.ID
	}
	if n.otpThrottle != nil {
		for _, env := range envs {
			if env == nil || !env.CarriesOTP {
				continue
			}
			// The recipient's canonical form: every spelling of one
			// address or number shares one limit.
			to, ok := n.listKey(env.Kind, env.To)
			if !ok {
				to = env.To
			}
			key := acct.ID + "\x00" + to
			if err := n.otpThrottle.Take(ctx, key, a.at); err != nil {
				a.giveBack()
				return nil, n.refused(ctx, acct, kind, envs, limitError(op, ErrOTPThrottled, err))
			}
			a.otpKey = key
			break
		}
	}
	if a.rateKey == "" && a.otpKey == "" {
		return nil, nil // nothing taken, nothing to give back
	}
	return a, nil
}

// unless gives the units back unless r shows that something went out, or
// may have: a send refused before or by the vendor does not count.
func (a *admission) unless(r *Receipt) {
	if a == nil || (r != nil && r.Status != record.StateFailed) {
		return
	}
	a.giveBack()
}

func (a *admission) giveBack() {
	if a.rateKey == "" && a.otpKey == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), settleTimeout)
	defer cancel()
	// A failed give-back leaves the unit spent until it expires: the
	// caller is limited a little early, never let through a little late.
	if a.rateKey != "" {
		_ = a.n.rate.Undo(ctx, a.rateKey, a.at)
	}
	if a.otpKey != "" {
		_ = a.n.otpThrottle.Undo(ctx, a.otpKey, a.at)
	}
}

// limitError words a store.Limiter's refusal for the caller, keeping its
// RetryAfter, with cause (ErrRateLimited, ErrOTPThrottled) in its chain;
// any other Limiter error is the store failing.
func limitError(op string, cause, err error) error {
	var limit *store.LimitError
	if errors.As(err, &limit) {
		return &Error{Code: CodeRateLimited, Op: op, RetryAfter: limit.RetryAfter, Err: fmt.Errorf("%w: %s", cause, limit.Rule)}
	}
	return storeFailure(op, "limits", err)
}

// refused tells the observers of a refusal by a limit (StateRefused) and
// returns err; a store's failure to answer is no refusal and is only
// returned.
func (n *Notifier) refused(ctx context.Context, acct *Account, kind Kind, envs []*Envelope, err error) error {
	if len(n.observers) == 0 || CodeOf(err) != CodeRateLimited {
		return err
	}
	r := &Receipt{Account: acct.ID, Kind: kind, Status: record.StateFailed, Cost: Money{Currency: acct.Currency},
		ErrorCode: CodeRateLimited, Error: err.Error()}
	var env *Envelope
	for _, e := range envs {
		if e != nil && r.To == "" {
			r.To = e.To
		}
	}
	if len(envs) == 1 {
		env = envs[0]
	}
	n.observe(ctx, Event{Type: StateRefused, Envelope: env, Receipt: r, Err: err})
	return err
}

// listCheck is the list's check an opening makes (OpenUnlisted): the
// recipient's list key and the reasons that stop the message; zero when
// admit read the list instead.
type listCheck struct {
	to       string
	stopping []store.SuppressionReason
}

// listCheckOf returns the check of env's one recipient, for the opening
// to make, and whether there is one: none when env has a recipient besides
// To (an e-mail's cc), whose entries admit reads, or no list can hold its
// recipient.
func (n *Notifier) listCheckOf(env *Envelope) (listCheck, bool) {
	if !store.SuppressibleKind(env.Kind) || othersOf(env) != nil {
		return listCheck{}, false
	}
	key, ok := n.listKey(env.Kind, env.To)
	if !ok {
		return listCheck{}, false // no entry can name it: nothing to read (stoppedTo)
	}
	stopping := stoppingFor(env.Class)
	if len(stopping) == 0 {
		return listCheck{}, false // a zero check opens unchecked: admit reads instead
	}
	return listCheck{to: key, stopping: stopping}, true
}

// everyReason lists package store's four suppression reasons.
var everyReason = []store.SuppressionReason{store.SuppressHardBounce, store.SuppressComplaint, store.SuppressUnsubscribed, store.SuppressManual}

// The reasons that stop a message of each class (blocks), worked out
// once: read only.
var (
	stopsPromotional   = stoppingReasons(record.Promotional)
	stopsTransactional = stoppingReasons(record.Transactional)
)

// stoppingFor returns the reasons that stop a message of class.
func stoppingFor(class record.PriceClass) []store.SuppressionReason {
	switch class {
	case record.Promotional:
		return stopsPromotional
	case record.Transactional:
		return stopsTransactional
	}
	return stoppingReasons(class)
}

// stoppingReasons lists the reasons whose entries stop a message of
// class, by blocks.
func stoppingReasons(class record.PriceClass) []store.SuppressionReason {
	var out []store.SuppressionReason
	for _, r := range everyReason {
		if blocks(r, class) {
			out = append(out, r)
		}
	}
	return out
}

// blocks reports whether an entry for reason stops a message of class:
// a promotional message is stopped by any entry, a transactional one
// only by a hard bounce (the address does not exist; an unsubscribe from
// campaigns must not stop a one-time code or an invoice).
func blocks(reason store.SuppressionReason, class record.PriceClass) bool {
	return class == record.Promotional || reason == store.SuppressHardBounce
}

// refusedFor refuses envs for what their recipients' entries say:
// CodeSuppressed for the list (suppressed), then CodeDeclined for their
// preferences (declined); nil when neither stops any of them.
func (n *Notifier) refusedFor(ctx context.Context, op string, acct *Account, envs []*Envelope) error {
	if err := n.suppressed(ctx, op, acct, envs); err != nil {
		return err
	}
	return n.declined(ctx, op, acct, envs)
}

// refusedEach is refusedFor for many envelopes, envs[i] sent for account
// acct(i): the list for them all (suppressedEach), then their preferences
// (declinedEachField), each refusal naming every envelope it stops by
// fmt.Sprintf(field, i).
func (n *Notifier) refusedEach(ctx context.Context, op string, acct func(int) *Account, envs []*Envelope, field string) error {
	if err := n.suppressedEach(ctx, op, acct, envs, field); err != nil {
		return err
	}
	return n.declinedEachField(ctx, op, acct, envs, field)
}

// suppressed returns CodeSuppressed when the recipient of one of envs
// (nil ones skipped) is on the account's list with an entry that stops
// its class, a store failure when the list cannot be read (a list that
// cannot be read must not let mail through to someone who opted out),
// or nil.
func (n *Notifier) suppressed(ctx context.Context, op string, acct *Account, envs []*Envelope) error {
	for _, env := range envs {
		reason, stop, err := n.stopped(ctx, acct, env)
		if err != nil {
			return storeFailure(op, "suppressions", err)
		}
		if stop {
			return suppressedError(op, env, reason)
		}
	}
	return nil
}

// suppressedError is the refusal of env, whose recipient is on the
// account's list for reason.
func suppressedError(op string, env *Envelope, reason store.SuppressionReason) *Error {
	return &Error{Code: CodeSuppressed, Op: op, Err: fmt.Errorf(
		"a %s recipient is on the account's suppression list (%s); %s messages are not sent to it",
		env.Kind, reason, env.Class)}
}

// stopped reads the list's entries for env's recipients, its To and
// those its content names beside it (an e-mail's cc and bcc, through
// OtherRecipients), and says whether one stops env. A nil env, or a
// kind that cannot name a channel, is never stopped.
func (n *Notifier) stopped(ctx context.Context, acct *Account, env *Envelope) (store.SuppressionReason, bool, error) {
	if env == nil || !store.SuppressibleKind(env.Kind) {
		return "", false, nil
	}
	reason, stop, err := n.stoppedTo(ctx, acct, env, env.To)
	if stop || err != nil {
		return reason, stop, err
	}
	for _, to := range othersOf(env) {
		if reason, stop, err := n.stoppedTo(ctx, acct, env, to); stop || err != nil {
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
func (n *Notifier) stoppedTo(ctx context.Context, acct *Account, env *Envelope, to string) (store.SuppressionReason, bool, error) {
	key, ok := n.listKey(env.Kind, to)
	if !ok {
		return "", false, nil // not a recipient of the channel: no entry can name it
	}
	e, ok, err := n.ledger.LookupSuppression(ctx, acct.ID, env.Kind, key)
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

// suppressedBulk checks every recipient of a bulk request, as refusedFor
// does one (the list, then the preferences), and refuses the whole
// request when any is stopped, naming each by its index ("to.3") and
// reason: a bulk send is all or nothing
// before it is charged, as its validation is, so the caller drops the
// recipients named and sends again. The error never carries a
// recipient in full (an address or number is personal data that errors
// and logs must not carry).
func (n *Notifier) suppressedBulk(ctx context.Context, op string, acct *Account, ps []prepared) error {
	envs := make([]*Envelope, len(ps))
	for i := range ps {
		envs[i] = ps[i].env
	}
	return n.refusedEach(ctx, op, func(int) *Account { return acct }, envs, "to.%d")
}

// suppressedEach checks envs, envs[i] sent for account acct(i), as
// suppressed does one, reading the list in one call per account and
// channel, and refuses them
// all when any is stopped, naming each stopped one by the field
// fmt.Sprintf(field, i) and its reason.
func (n *Notifier) suppressedEach(ctx context.Context, op string, acct func(int) *Account, envs []*Envelope, field string) error {
	reasons, err := n.stoppedEach(ctx, acct, envs)
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
func (n *Notifier) stoppedEach(ctx context.Context, acct func(int) *Account, envs []*Envelope) ([]store.SuppressionReason, error) {
	g := n.groupRecipients(acct, envs, false)
	entries := make(map[recipientGroup][]store.Suppression, len(g.tos))
	for key, list := range g.tos {
		es, err := n.ledger.LookupSuppressions(ctx, key.account, key.kind, list)
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

// recipientGroup is one account's list of one channel, what one
// LookupSuppressions reads, or, with a category, the choices of it on
// one channel, what one LookupChoices reads.
type recipientGroup struct {
	account  string
	kind     Kind
	category string
}

// recipientGroups are the recipients of many envelopes, each once per
// group: tos lists a group's recipients, of[i] is envelope i's group and
// where[i] the places of its recipients in that group's list (none for
// an envelope that is nil or of a kind without a list, or without a
// category when grouped by it).
type recipientGroups struct {
	tos   map[recipientGroup][]string
	of    []recipientGroup
	where [][]int
}

// groupRecipients gathers the recipients of envs (envs[i] sent for
// account acct(i)) by account and channel, and by category when
// byCategory is set (then an envelope without one is left out).
func (n *Notifier) groupRecipients(acct func(int) *Account, envs []*Envelope, byCategory bool) recipientGroups {
	g := recipientGroups{tos: make(map[recipientGroup][]string), of: make([]recipientGroup, len(envs)), where: make([][]int, len(envs))}
	at := make(map[recipientGroup]map[string]int)
	for i, env := range envs {
		if env == nil || !store.SuppressibleKind(env.Kind) || byCategory && env.Category == "" {
			continue
		}
		key := recipientGroup{acct(i).ID, env.Kind, ""}
		if byCategory {
			key.category = env.Category
		}
		if at[key] == nil {
			at[key] = make(map[string]int)
		}
		g.of[i] = key
		for _, to := range append([]string{env.To}, othersOf(env)...) {
			to, ok := n.listKey(env.Kind, to)
			if !ok {
				continue // not a recipient of the channel: no entry can name it
			}
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

// heldUntil returns when env's send window (Envelope.Window) next lets
// it go, when that is after at; zero when it may go at at, and always for
// a message with a one-time code.
func (n *Notifier) heldUntil(env *Envelope, at time.Time) time.Time {
	if env.Window == nil || env.CarriesOTP {
		return time.Time{}
	}
	if next := env.Window(at); next.After(at) {
		return next
	}
	return time.Time{}
}

// windowed returns when a queued send of env asked for at (zero or past:
// now) goes: at, or its send window's next opening when the window
// holds it then.
func (n *Notifier) windowed(env *Envelope, at, now time.Time) time.Time {
	due := at
	if due.Before(now) {
		due = now
	}
	if until := n.heldUntil(env, due); !until.IsZero() {
		return until // outside its send window: it waits for the opening
	}
	return at
}

// windowError refuses a send outside its send window, which opens at
// until: RateLimited, with the wait as RetryAfter; advice says what to do
// instead, if anything.
func (n *Notifier) windowError(op string, until time.Time, advice string) *Error {
	msg := "outside its send window, which opens at " + until.UTC().Format(time.RFC3339)
	if advice != "" {
		msg += "; " + advice
	}
	return &Error{Code: CodeRateLimited, Op: op, RetryAfter: until.Sub(n.now()), Err: errors.New(msg)}
}

// Recipient returns to, a recipient of kind, in the canonical form its
// channel writes (Channel.Recipient): the key every list kept by
// recipient uses. Write to a suppression list through it (the admin API
// does), so that the Notifier, which reads the list in this form before
// every send, finds the entry. A kind the Notifier has no channel for is
// InvalidArgument naming "channel" (an entry for it could not be
// written in the form its channel will read), a recipient the channel
// refuses InvalidArgument naming "to".
func (n *Notifier) Recipient(kind Kind, to string) (string, error) {
	const op = "notify.Recipient"
	ch := n.channels[kind]
	if ch == nil {
		return "", &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "channel",
			Message: "must be a channel this notifier sends on"}}}
	}
	key, err := ch.Recipient(to)
	if err != nil {
		return "", wrap(op, "", CodeInvalidArgument, err)
	}
	return key, nil
}

// listKey is to, a recipient of a message of kind, in its channel's
// canonical form, or false when the channel refuses it (no entry of a
// list can name it). A kind without a channel keeps to as it is.
func (n *Notifier) listKey(kind Kind, to string) (string, bool) {
	ch := n.channels[kind]
	if ch == nil {
		return to, true
	}
	key, err := ch.Recipient(to)
	return key, err == nil
}
