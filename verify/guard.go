package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/verify/verifystore"
)

// Rule names a rule of the fraud guard; every refusal names one.
type Rule string

// The fraud guard's rules, in the order they are tried.
const (
	// RuleRequester: too many verifications asked for by one requester
	// (StartOptions.Requester).
	RuleRequester Rule = "requester_velocity"
	// RuleRecipient: too many sends to one recipient (by one requester,
	// when the app names requesters).
	RuleRecipient Rule = "recipient_velocity"
	// RulePrefix: too many sends to one number range: the number without
	// its last GuardConfig.PrefixDigits digits.
	RulePrefix Rule = "prefix_velocity"
	// RulePrefixConversion and RuleCountryConversion: a range, or a
	// country, where too few codes sent are ever entered, the mark of
	// SMS pumping.
	RulePrefixConversion  Rule = "prefix_conversion"
	RuleCountryConversion Rule = "country_conversion"
	// RuleSpendCap: the account's verification sends in the last hour
	// cost what GuardConfig.SpendCap allows.
	RuleSpendCap Rule = "spend_cap"
	// RuleRequesterChecks: too many checks by one requester
	// (GuardConfig.RequesterChecks); the rules of checks follow.
	RuleRequesterChecks Rule = "requester_checks"
	// RuleChecks: too many checks of codes sent to one recipient, by one
	// requester when the check names one (GuardConfig.Checks).
	RuleChecks Rule = "recipient_checks"
)

// Refusal is the cause of an error the fraud guard refused a send with:
// the rule, the limit it states and, for a limit that frees up, when.
type Refusal struct {
	Rule Rule
	// Limit states the rule as configured: "at most 5 per 1h0m0s".
	Limit string
	// RetryAfter, when positive, is when the limit may allow a send
	// again; zero for a block that lasts while the rule holds.
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	return "refused by the fraud guard's " + string(r.Rule) + " rule (" + r.Limit + ")"
}

// Limit is a velocity limit: at most Max in any Window. A zero Limit
// takes the rule's default; a negative Max turns the rule off.
type Limit struct {
	Max    int
	Window time.Duration
}

// Conversion is the rule on codes sent but never entered: over Window,
// a range (prefix) with at least MinSends sends, or a country with at
// least MinCountrySends, of which fewer than MinApprovedPercent percent
// were approved, takes no more sends until its rate recovers.
//
// A block must cost whoever causes it more than it costs the account's
// real users, so it is bounded in what counts and in whom it stops:
// MaxPerRequester bounds what one requester's sends count towards a
// block (a range block then takes sends from several requesters, each
// within its own velocity limit), and a recipient approved within Trust
// is never stopped by it (the account's existing users keep signing in
// while a range is blocked for numbers it has not seen succeed).
type Conversion struct {
	Window             time.Duration
	MinSends           int
	MinCountrySends    int
	MinApprovedPercent int
	// MaxPerRequester is how many of one requester's sends to a range (or
	// a country) count towards its block over Window; default 2, so the
	// default 10 sends take 5 requesters. Sends whose start names no
	// requester all count: name requesters (StartOptions.Requester).
	// Negative: no bound.
	MaxPerRequester int
	// Trust is how long a recipient whose code was approved passes the
	// conversion rule; default 30 days. Negative: nobody passes.
	Trust time.Duration
	// Off turns the rule off.
	Off bool
}

// GuardConfig configures a Guard. Counters is required; every rule has a
// default and each may be turned off.
type GuardConfig struct {
	// Counters keeps the guard's counts; share one between instances
	// (pgstore) so that the limits are the deployment's, not each
	// instance's.
	Counters verifystore.Counters
	// SafeList lists recipients no rule applies to: E.164 numbers
	// ("+919876543210"), number ranges ("+91987654" and every number it
	// begins), e-mail addresses. Use it for the app's own test numbers.
	SafeList []string
	// Requester bounds the verifications one requester asks for; default
	// 10 per hour. Only requests that name a requester count.
	Requester Limit
	// Recipient bounds the sends to one recipient, counted per requester
	// when the request names one, so that an attacker cannot spend a
	// victim's budget; default 5 per hour.
	Recipient Limit
	// Prefix bounds the sends to one range; default 50 per hour.
	Prefix Limit
	// PrefixDigits is how many last digits a number loses to name its
	// range; default 3 (a range of 1,000 numbers), 1 to 6.
	PrefixDigits int
	// Conversion blocks ranges and countries where codes are not
	// entered; defaults: a day's window, 10 sends per range, 200 per
	// country, 20 percent approved.
	Conversion Conversion
	// Checks bounds the checks of codes sent to one recipient, counted
	// per requester when the check names one (CheckOptions.Requester),
	// so that an attacker cannot spend a victim's checks; default 15 per
	// hour (three verifications' worth). A check beyond it is
	// RateLimited, its code not compared, and it counts as one of the
	// verification's checks.
	Checks Limit
	// RequesterChecks bounds the checks one requester makes, whatever
	// the verification; default 30 per hour. Only checks that name a
	// requester count; one beyond it is RateLimited before it counts
	// against the verification.
	RequesterChecks Limit
	// SpendCap is the most an account's verification sends may cost in
	// any hour, in minor units of its currency (priced by
	// notify.Notifier.Quote before each send, so concurrent sends cannot
	// overshoot it); zero means no cap.
	SpendCap int64
}

// Guard is the fraud guard: the rules a verification send must pass
// before anything is charged. It keeps its counts in GuardConfig.Counters
// and is safe for concurrent use.
type Guard struct {
	counters     verifystore.Counters
	safe         []string
	requester    Limit
	recipient    Limit
	prefix       Limit
	prefixDigits int
	conv         Conversion
	checks       Limit
	reqChecks    Limit
	spendCap     int64
}

// The guard's defaults.
const (
	DefaultPrefixDigits = 3
	hour                = time.Hour
)

// NewGuard returns a Guard, or an error naming the first bad field.
func NewGuard(cfg GuardConfig) (*Guard, error) {
	if cfg.Counters == nil {
		return nil, errors.New("verify: GuardConfig.Counters is required")
	}
	g := &Guard{counters: cfg.Counters, prefixDigits: cfg.PrefixDigits, conv: cfg.Conversion, spendCap: cfg.SpendCap}
	for _, s := range cfg.SafeList {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			return nil, errors.New("verify: GuardConfig.SafeList has an empty entry")
		}
		g.safe = append(g.safe, s)
	}
	var err error
	if g.requester, err = limitOf("Requester", cfg.Requester, Limit{10, hour}); err != nil {
		return nil, err
	}
	if g.recipient, err = limitOf("Recipient", cfg.Recipient, Limit{5, hour}); err != nil {
		return nil, err
	}
	if g.prefix, err = limitOf("Prefix", cfg.Prefix, Limit{50, hour}); err != nil {
		return nil, err
	}
	if g.checks, err = limitOf("Checks", cfg.Checks, Limit{15, hour}); err != nil {
		return nil, err
	}
	if g.reqChecks, err = limitOf("RequesterChecks", cfg.RequesterChecks, Limit{30, hour}); err != nil {
		return nil, err
	}
	if g.prefixDigits == 0 {
		g.prefixDigits = DefaultPrefixDigits
	}
	if g.prefixDigits < 1 || g.prefixDigits > 6 {
		return nil, fmt.Errorf("verify: GuardConfig.PrefixDigits must be 1 to 6, found %d", g.prefixDigits)
	}
	c := &g.conv
	if c.Window == 0 {
		c.Window = 24 * hour
	}
	if c.MinSends == 0 {
		c.MinSends = 10
	}
	if c.MinCountrySends == 0 {
		c.MinCountrySends = 200
	}
	if c.MinApprovedPercent == 0 {
		c.MinApprovedPercent = 20
	}
	if c.MaxPerRequester == 0 {
		c.MaxPerRequester = 2
	}
	if c.Trust == 0 {
		c.Trust = 30 * 24 * hour
	}
	if c.Window < time.Minute || c.MinSends < 1 || c.MinCountrySends < 1 || c.MinApprovedPercent < 1 || c.MinApprovedPercent > 100 {
		return nil, fmt.Errorf("verify: GuardConfig.Conversion wants a window of at least a minute, sends of at least 1 and 1 to 100 percent, found %+v", *c)
	}
	if g.spendCap < 0 {
		return nil, fmt.Errorf("verify: GuardConfig.SpendCap must not be negative, found %d", g.spendCap)
	}
	return g, nil
}

// limitOf returns l, or def for a zero l; an error names a bad one.
func limitOf(name string, l, def Limit) (Limit, error) {
	switch {
	case l == Limit{}:
		return def, nil
	case l.Max < 0:
		return l, nil
	case l.Max == 0 || l.Window < time.Second:
		return l, fmt.Errorf("verify: GuardConfig.%s must allow at least 1 in a window of at least a second, found %d per %s", name, l.Max, l.Window)
	}
	return l, nil
}

// prefixOf returns the range of an E.164 number: it without its last
// digits (DefaultPrefixDigits on a nil Guard).
func (g *Guard) prefixOf(e164 string) string {
	cut := DefaultPrefixDigits
	if g != nil {
		cut = g.prefixDigits
	}
	if len(e164) <= cut+2 {
		return e164
	}
	return e164[:len(e164)-cut]
}

// check is one send the guard weighs.
type check struct {
	account, to, prefix, country, requester string
	price                                   notify.Money
	now                                     time.Time
}

// spend is the part of an account's spend cap a send holds: its quote,
// settled to what the send kept charged once it is done.
type spend struct {
	g       *Guard
	key     string
	held    int64
	now     time.Time
	settled bool
}

// settle replaces the quote held by what the send cost.
func (s *spend) settle(ctx context.Context, cost int64) {
	if s == nil || s.settled {
		return
	}
	s.settled = true
	if d := cost - s.held; d != 0 {
		// A failure here leaves the quote held: the cap errs towards
		// refusing, never towards spending more.
		_, _, _ = s.g.counters.Add(ctx, s.key, d, hour, 0, s.now)
	}
}

// giveBack returns the whole quote: nothing was sent.
func (s *spend) giveBack(ctx context.Context) { s.settle(ctx, 0) }

// admit runs the rules on c, in order, and counts it against each; the
// first that refuses is the error (a *notify.Error whose cause is a
// *Refusal). A recipient on the safe list passes them all. The spend
// returned holds c's price against the cap until it is settled; nil
// without a cap. A guard that cannot read its counts refuses (Unavailable):
// a send it cannot weigh is not made.
func (g *Guard) admit(ctx context.Context, op string, c check) (*spend, error) {
	if g == nil || g.safe != nil && g.safeListed(c.to) {
		return nil, nil
	}
	acct := "v|" + c.account + "|"
	if c.requester != "" {
		if err := g.velocity(ctx, op, RuleRequester, g.requester, acct+"req|"+c.requester, c.now); err != nil {
			return nil, err
		}
	}
	rcpt := acct + "to|" + c.to
	if c.requester != "" {
		rcpt += "|" + c.requester
	}
	if err := g.velocity(ctx, op, RuleRecipient, g.recipient, rcpt, c.now); err != nil {
		return nil, err
	}
	if c.prefix != "" {
		if err := g.velocity(ctx, op, RulePrefix, g.prefix, acct+"pfx|"+c.prefix, c.now); err != nil {
			return nil, err
		}
		if err := g.conversion(ctx, op, acct, c); err != nil {
			return nil, err
		}
	}
	if g.spendCap == 0 || c.price.Minor <= 0 {
		return nil, nil
	}
	key := acct + "spend"
	if _, ok, err := g.counters.Add(ctx, key, c.price.Minor, hour, g.spendCap, c.now); err != nil {
		return nil, guardFailure(op, err)
	} else if !ok {
		return nil, refuse(op, notify.CodeRateLimited, &Refusal{Rule: RuleSpendCap, RetryAfter: hour / verifystore.CounterBuckets,
			Limit: fmt.Sprintf("at most %d minor units of %s per hour", g.spendCap, c.price.Currency.Code)})
	}
	return &spend{g: g, key: key, held: c.price.Minor, now: c.now}, nil
}

// safeListed reports whether to, or a range it begins with, is listed.
func (g *Guard) safeListed(to string) bool {
	for _, s := range g.safe {
		if to == s || strings.HasPrefix(s, "+") && strings.HasPrefix(to, s) {
			return true
		}
	}
	return false
}

// velocity counts one against key under l, or refuses by rule.
func (g *Guard) velocity(ctx context.Context, op string, rule Rule, l Limit, key string, now time.Time) error {
	if l.Max < 0 {
		return nil
	}
	_, ok, err := g.counters.Add(ctx, key, 1, l.Window, int64(l.Max), now)
	switch {
	case err != nil:
		return guardFailure(op, err)
	case !ok:
		return refuse(op, notify.CodeRateLimited, &Refusal{Rule: rule, RetryAfter: max(l.Window/verifystore.CounterBuckets, time.Second),
			Limit: fmt.Sprintf("at most %d per %s", l.Max, l.Window)})
	}
	return nil
}

// conversion refuses a range or a country where too few codes sent were
// approved.
func (g *Guard) conversion(ctx context.Context, op, acct string, c check) error {
	if g.conv.Off {
		return nil
	}
	keys := []string{acct + "sent|pfx|" + c.prefix, acct + "ok|pfx|" + c.prefix}
	if c.country != "" {
		keys = append(keys, acct+"sent|cc|"+c.country, acct+"ok|cc|"+c.country)
	}
	sums, err := g.counters.Sums(ctx, keys, g.conv.Window, c.now)
	if err != nil {
		return guardFailure(op, err)
	}
	low := func(sent, ok int64, min int) bool {
		return sent >= int64(min) && ok*100 < sent*int64(g.conv.MinApprovedPercent)
	}
	rule := fmt.Sprintf("at least %d%% of codes sent approved, over %s", g.conv.MinApprovedPercent, g.conv.Window)
	var r *Refusal
	switch {
	case low(sums[0], sums[1], g.conv.MinSends):
		r = &Refusal{Rule: RulePrefixConversion, Limit: fmt.Sprintf("%s, in a range after %d sends", rule, g.conv.MinSends)}
	case len(sums) == 4 && low(sums[2], sums[3], g.conv.MinCountrySends):
		r = &Refusal{Rule: RuleCountryConversion, Limit: fmt.Sprintf("%s, in a country after %d sends", rule, g.conv.MinCountrySends)}
	default:
		return nil
	}
	if g.trusted(ctx, acct, c.to, c.now) {
		return nil // a recipient that proved itself lately: a block is not for it
	}
	return refuse(op, notify.CodePermissionDenied, r)
}

// trusted reports whether a code sent to to was approved within
// Conversion.Trust. A count that cannot be read trusts nobody.
func (g *Guard) trusted(ctx context.Context, acct, to string, now time.Time) bool {
	if g.conv.Trust < 0 {
		return false
	}
	sums, err := g.counters.Sums(ctx, []string{acct + "okto|" + to}, g.conv.Trust, now)
	return err == nil && sums[0] > 0
}

// sent counts a code sent to a range and country, for the conversion
// rule, as requester's: at most Conversion.MaxPerRequester of one
// requester's sends count over the window. A failure is dropped: the
// count errs towards fewer sends, which only delays a block.
func (g *Guard) sent(ctx context.Context, account, prefix, country, requester string, now time.Time) {
	if g == nil || g.conv.Off || prefix == "" {
		return
	}
	if requester != "" && g.conv.MaxPerRequester > 0 {
		key := "v|" + account + "|sentby|" + prefix + "|" + requester
		if _, ok, err := g.counters.Add(ctx, key, 1, g.conv.Window, int64(g.conv.MaxPerRequester), now); err != nil || !ok {
			return // this requester has counted its share towards a block
		}
	}
	g.tally(ctx, "sent", account, prefix, country, now)
}

// approved counts a code approved in a range and country, and trusts its
// recipient, to, for Conversion.Trust.
func (g *Guard) approved(ctx context.Context, account, to, prefix, country string, now time.Time) {
	g.tally(ctx, "ok", account, prefix, country, now)
	if g != nil && !g.conv.Off && g.conv.Trust > 0 {
		_, _, _ = g.counters.Add(ctx, "v|"+account+"|okto|"+to, 1, g.conv.Trust, 0, now)
	}
}

func (g *Guard) tally(ctx context.Context, what, account, prefix, country string, now time.Time) {
	if g == nil || g.conv.Off || prefix == "" {
		return
	}
	acct := "v|" + account + "|" + what + "|"
	_, _, _ = g.counters.Add(ctx, acct+"pfx|"+prefix, 1, g.conv.Window, 0, now)
	if country != "" {
		_, _, _ = g.counters.Add(ctx, acct+"cc|"+country, 1, g.conv.Window, 0, now)
	}
}

// checkRequester counts a check against its requester's limit
// (RequesterChecks), before it counts against the verification.
func (g *Guard) checkRequester(ctx context.Context, op, account, requester string, now time.Time) error {
	if g == nil || requester == "" {
		return nil
	}
	return g.velocity(ctx, op, RuleRequesterChecks, g.reqChecks, "v|"+account+"|chkreq|"+requester, now)
}

// checkRecipient counts a check of a code sent to to against the
// recipient's limit (Checks), per requester when named. A safe-listed
// recipient is not limited.
func (g *Guard) checkRecipient(ctx context.Context, op, account, to, requester string, now time.Time) error {
	if g == nil || g.safe != nil && g.safeListed(to) {
		return nil
	}
	key := "v|" + account + "|chkto|" + to
	if requester != "" {
		key += "|" + requester
	}
	return g.velocity(ctx, op, RuleChecks, g.checks, key, now)
}

// refuse returns the error of a refusal.
func refuse(op string, code notify.Code, r *Refusal) error {
	return &notify.Error{Code: code, Op: op, RetryAfter: r.RetryAfter, Err: r}
}

// guardFailure returns the error of a guard whose counts could not be
// read: Unavailable, since nothing was sent and a retry is safe.
func guardFailure(op string, err error) error {
	return &notify.Error{Code: notify.CodeUnavailable, Op: op, Err: fmt.Errorf("the fraud guard cannot read its counts: %w", err)}
}
