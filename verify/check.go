package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify/verifystore"
)

// CheckResult is the answer to a check.
type CheckResult struct {
	// Status is approved when the code was right, pending when it was
	// wrong and checks are left (AttemptsLeft of them), or why the
	// verification takes no more checks: expired, max_attempts_reached
	// (also after the last wrong code) or canceled.
	Status       Status
	AttemptsLeft int
	Verification *Verification
}

// Approved reports whether the check approved the code.
func (r *CheckResult) Approved() bool { return r.Status == StatusApproved }

// CheckOptions are a check's choices.
type CheckOptions struct {
	// Requester is who checks, in the app's words, as in StartOptions:
	// the fraud guard bounds the checks of one requester
	// (GuardConfig.RequesterChecks) and counts the checks of a
	// recipient's codes per requester (GuardConfig.Checks). At most 256
	// characters, as StartOptions.Requester.
	Requester string
}

// Check checks code against the account's verification id. Each check
// of a pending verification counts, right or wrong, and the store counts
// them exactly, so that however many run at once no more than
// Config.MaxChecks are ever weighed; the comparison takes the same time
// wherever the codes differ. Only the check that approves answers
// approved: a verification approved already is a Conflict error, so a
// replayed check proves nothing. An unknown id is NotFound; an empty
// code is InvalidArgument and costs no attempt. A check is never charged.
//
// With a Guard, a requester (opts, at most one) over its checks is
// RateLimited before the check counts; a check beyond the recipient's
// checks counts, and is RateLimited without its code compared.
func (s *Service) Check(ctx context.Context, account, id, code string, opts ...CheckOptions) (*CheckResult, error) {
	const op = "verify.Check"
	if err := checkArgs(op, account, id, "id"); err != nil {
		return nil, err
	}
	var o CheckOptions
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		return nil, &notify.Error{Code: notify.CodeInvalidArgument, Op: op, Err: errors.New("at most one CheckOptions")}
	}
	if code == "" {
		// Nothing to weigh: an empty code costs no attempt.
		return nil, &notify.Error{Code: notify.CodeInvalidArgument, Op: op, Fields: record.FieldErrors{{Field: "code", Message: "is required"}}}
	}
	var fe record.FieldErrors
	checkRequester(&fe, o.Requester)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, wrapOp(op, err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if err := s.guard.checkRequester(ctx, op, account, o.Requester, now); err != nil {
		return nil, err
	}
	v, counted, err := s.store.TakeCheck(ctx, account, id, now)
	if err != nil {
		return nil, storeError(op, err)
	}
	if !counted {
		return s.ended(op, v, now)
	}
	if err := s.guard.checkRecipient(ctx, op, account, v.To, o.Requester, now); err != nil {
		return nil, err
	}
	if !digits(code, v.Length) || !s.key.matches(v.ID, v.To, v.Purpose, code, v.CodeHash) {
		out := view(v, now)
		return &CheckResult{Status: out.Status, AttemptsLeft: out.AttemptsLeft, Verification: out}, nil
	}
	v2, approved, err := s.store.FinishVerification(context.WithoutCancel(ctx), account, id, StatusApproved, now)
	if err != nil {
		return nil, storeError(op, err)
	}
	if !approved {
		return s.ended(op, v2, now) // canceled, or approved by a check at the same moment
	}
	s.guard.approved(context.WithoutCancel(ctx), account, v2.To, v2.Prefix, v2.Country, now)
	return &CheckResult{Status: StatusApproved, Verification: view(v2, now)}, nil
}

// CheckRecipient checks code against the newest pending verification of
// to for purpose, as Check does; NotFound when there is none (never
// started, expired, used up or canceled).
func (s *Service) CheckRecipient(ctx context.Context, account, to, purpose, code string, opts ...CheckOptions) (*CheckResult, error) {
	const op = "verify.Check"
	if err := checkArgs(op, account, to, "to"); err != nil {
		return nil, err
	}
	acct, err := s.account(ctx, op, account)
	if err != nil {
		return nil, err
	}
	channels := []Channel{SMS}
	if strings.Contains(to, "@") {
		channels = []Channel{Email}
	}
	var fe record.FieldErrors
	norm, _, _ := s.recipient(&fe, acct, to, channels)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, wrapOp(op, err)
	}
	v, err := s.store.PendingVerification(ctx, account, norm, purpose, s.now().UTC())
	if err != nil {
		return nil, storeError(op, err)
	}
	return s.Check(ctx, account, v.ID, code, opts...)
}

// ended answers a check of a verification that takes no more: approved
// already is a Conflict error; otherwise its status.
func (s *Service) ended(op string, v *verifystore.Verification, now time.Time) (*CheckResult, error) {
	out := view(v, now)
	if out.Status == StatusApproved {
		return nil, &notify.Error{Code: notify.CodeConflict, Op: op, Err: errors.New("the verification was approved already: a code approves once")}
	}
	return &CheckResult{Status: out.Status, Verification: out}, nil
}

// maxRequester bounds a requester, in characters.
const maxRequester = 256

// checkRequester adds to fe why requester (StartOptions, ResendOptions,
// CheckOptions) is refused: more than maxRequester characters, or not
// UTF-8. It is the one rule of the field.
func checkRequester(fe *record.FieldErrors, requester string) {
	if !utf8.ValidString(requester) || utf8.RuneCountInString(requester) > maxRequester {
		fe.Addf("requester", "must be at most %d characters of UTF-8", maxRequester)
	}
}

// checkArgs reports a missing account or identifier.
func checkArgs(op, account, id, field string) error {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if strings.TrimSpace(id) == "" {
		fe.Add(field, "is required")
	}
	return wrapOp(op, notify.InvalidFields(fe))
}

// ResendOptions are a resend's choices.
type ResendOptions struct {
	// Channels, when set, send the code by other channels than the
	// start's (an escalation from SMS to chat, say); the recipient stays
	// the same, so e-mail and the phone channels do not mix.
	Channels []Channel
	// Brand, Locale, WebOTPHost, AppHash, Domain and Requester are as in
	// StartOptions.
	Brand, Locale, WebOTPHost, AppHash, Domain, Requester string
}

// Resend sends the verification's code again: the same code, never a
// new one, so that a resend adds nothing to guess. It needs the
// verification pending, a send left (Config.MaxSends in all) and the
// cooldown passed since the last send; otherwise it is RateLimited (with
// RetryAfter for the cooldown) or, for a verification that ended, a
// Conflict error. The fraud guard and the charges apply as to Start.
func (s *Service) Resend(ctx context.Context, account, id string, opts ResendOptions) (*Verification, error) {
	const op = "verify.Resend"
	if err := checkArgs(op, account, id, "id"); err != nil {
		return nil, err
	}
	if _, err := s.account(ctx, op, account); err != nil {
		return nil, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	v, err := s.store.Verification(ctx, account, id)
	if err != nil {
		return nil, storeError(op, err)
	}
	channels := opts.Channels
	if len(channels) == 0 {
		for _, c := range v.Channels {
			channels = append(channels, Channel(c))
		}
	}
	var fe record.FieldErrors
	checkChannels(&fe, "channels", channels)
	checkRequester(&fe, opts.Requester)
	if !fe.Has("channels") && (slices.Contains(channels, Email) != slices.Contains(v.Channels, string(Email))) {
		fe.Add("channels", "must reach the verification's recipient: e-mail for an address, sms or chat for a number")
	}
	if v.Length > maxChannelCode && !slices.Contains(channels, Email) {
		fe.Addf("channels", "the code has %d digits: it goes by email only", v.Length)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, wrapOp(op, err)
	}
	// What the store would refuse is refused before the guard counts the
	// send or holds its price, and the options are checked (by the
	// quote) before the store counts it: neither a resend storm nor a
	// bad option uses up the other's budget. TakeSend stays the
	// authority: when a concurrent resend took the send in between, the
	// price held is given back.
	if !sendable(v, now, s.cooldown) {
		return nil, s.noSend(op, v, now)
	}
	p := plan{channels: channels, brand: opts.Brand, locale: opts.Locale, webOTPHost: opts.WebOTPHost,
		appHash: opts.AppHash, domain: opts.Domain, requester: opts.Requester, prefix: v.Prefix, country: v.Country}
	snd := s.sendOf(v, p, s.key.code(v.ID, v.To, v.Purpose, v.Length))
	held, err := s.admit(ctx, op, v, opts.Requester, snd, now)
	if err != nil {
		return nil, err
	}
	v, taken, err := s.store.TakeSend(ctx, account, id, now, s.cooldown)
	if err != nil || !taken {
		held.giveBack(context.WithoutCancel(ctx))
		if err != nil {
			return nil, storeError(op, err)
		}
		return nil, s.noSend(op, v, now)
	}
	legs, sendErr := s.deliver(ctx, snd, held)
	return s.settle(ctx, op, v, opts.Requester, legs, sendErr, now)
}

// sendable reports whether TakeSend would count a send of v at now: the
// store's rule, read off a copy so that a refusal costs no round trip.
func sendable(v *verifystore.Verification, now time.Time, cooldown time.Duration) bool {
	return v.StatusAt(now) == StatusPending && v.Sends < v.MaxSends &&
		(v.LastSentAt.IsZero() || !now.Before(v.LastSentAt.Add(cooldown)))
}

// noSend says why a verification took no send.
func (s *Service) noSend(op string, v *verifystore.Verification, now time.Time) error {
	switch st := v.StatusAt(now); {
	case st != StatusPending:
		return &notify.Error{Code: notify.CodeConflict, Op: op, Err: fmt.Errorf("the verification is %s: it takes no more sends", st)}
	case v.Sends >= v.MaxSends:
		return &notify.Error{Code: notify.CodeRateLimited, Op: op, Err: fmt.Errorf("the code was sent %d times, the most a verification allows", v.Sends)}
	}
	wait := v.LastSentAt.Add(s.cooldown).Sub(now)
	return &notify.Error{Code: notify.CodeRateLimited, Op: op, RetryAfter: max(wait, time.Second),
		Err: fmt.Errorf("a code is sent again at least %s after the last send", s.cooldown)}
}

// Cancel ends the account's verification id: no check approves it
// afterwards. Canceling one that ended already is a Conflict error that
// says how it ended; an unknown id is NotFound.
func (s *Service) Cancel(ctx context.Context, account, id string) (*Verification, error) {
	const op = "verify.Cancel"
	if err := checkArgs(op, account, id, "id"); err != nil {
		return nil, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	// The store moves any verification it keeps pending (a check counted
	// before the expiry, or the last one, still approves), but one that
	// ran out of time or checks has ended for its reader: read it first,
	// and refuse to cancel what ended.
	v, err := s.store.Verification(ctx, account, id)
	if err != nil {
		return nil, storeError(op, err)
	}
	if st := v.StatusAt(now); st != StatusPending {
		return nil, &notify.Error{Code: notify.CodeConflict, Op: op, Err: fmt.Errorf("the verification is %s already", st)}
	}
	v, ok, err := s.store.FinishVerification(ctx, account, id, StatusCanceled, now)
	if err != nil {
		return nil, storeError(op, err)
	}
	if !ok {
		return nil, &notify.Error{Code: notify.CodeConflict, Op: op, Err: fmt.Errorf("the verification is %s already", v.StatusAt(now))}
	}
	return view(v, now), nil
}

// Get returns the account's verification id as it stands, or NotFound.
func (s *Service) Get(ctx context.Context, account, id string) (*Verification, error) {
	const op = "verify.Get"
	if err := checkArgs(op, account, id, "id"); err != nil {
		return nil, err
	}
	v, err := s.store.Verification(ctx, account, id)
	if err != nil {
		return nil, storeError(op, err)
	}
	return view(v, s.now().UTC()), nil
}

// Sweep marks the verifications that expired as such, in batches, and
// answers how many it marked. Expiry needs no sweep (a check after
// ExpiresAt answers expired whatever the store says); the sweep keeps
// the store's statuses true for those who read it, and lets a store drop
// what ended long ago. Run it now and then, as the reconciler is.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	const batch = 1000
	total := 0
	for range 1000 { // bounded: a million verifications a sweep
		n, err := s.store.ExpireVerifications(ctx, s.now().UTC(), batch)
		total += n
		if err != nil {
			return total, storeError("verify.Sweep", err)
		}
		if n < batch {
			break
		}
	}
	return total, nil
}

// SweepTask returns Sweep as a periodic task for a queue's Run
// (queue.Periodic, named "verify_sweep"), every every (a minute when
// zero or less), so that the processes sharing a queue sweep without the
// host scheduling it.
func (s *Service) SweepTask(every time.Duration) queue.Periodic {
	if every <= 0 {
		every = time.Minute
	}
	return queue.Periodic{Name: "verify_sweep", Every: every, Run: func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}}
}
