package verify

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify/verifystore"
)

// StartOptions are a verification's choices; the zero value sends a
// code of Config.Length digits by SMS and chat at once, good for
// Config.TTL.
type StartOptions struct {
	// Channels are the channels the code goes by: sms, chat, both (the
	// dual send, at the same moment) or email, which needs an address as
	// the recipient. Default sms and chat.
	Channels []Channel
	// Purpose is what the code is for ("login", "signup"); it is bound
	// into the code's hash, so a code for one purpose approves no other,
	// and Check by recipient looks for the verification of its purpose.
	// At most 64 characters of letters, digits, '_' and '-'.
	Purpose string
	// Brand is the brand named in the messages; default the account's
	// name.
	Brand string
	// Length is the code's number of digits, 4 to 10 (the SMS and chat
	// channels carry at most 8); default Config.Length.
	Length int
	// TTL is how long the code is good for, 30s to 24h; default
	// Config.TTL.
	TTL time.Duration
	// Locale is the locale of the code's messages, a BCP 47 tag (hi,
	// hi-IN, en-US; en_US is read as en-US): the chat template's language
	// (its cloud form: hi, en_US) and, with Config.Template, the variant
	// the SMS and e-mail take. Default: the recipient's stored locale
	// (store.Preferences.SetLocale), else the account's (Account.Locale),
	// for the template; the channel's language for chat.
	Locale string
	// WebOTPHost ends the SMS with the WebOTP line for the site at that
	// host, and AppHash adds an Android app's SMS Retriever hash (see
	// sms.Request.WebOTPHost).
	WebOTPHost, AppHash string
	// Domain is the calling application's domain, recorded with the
	// messages.
	Domain string
	// Requester is who asked, in the app's words (a client IP, a user
	// ID): the fraud guard limits each requester apart, so that one
	// requester cannot use up a recipient's budget and lock its owner
	// out. At most 256 characters.
	Requester string
}

// Start begins a verification of to for the account: it makes a code,
// keeps only its hash, and sends it by the channels asked for, charged
// as any send. Bad options are an InvalidArgument error naming each
// field; a refusal of the fraud guard is RateLimited or
// PermissionDenied with a *Refusal naming its rule as the cause, before
// anything is charged or kept. When no message went out for certain, the
// verification is canceled and the send's error returned; when at least
// one leg was accepted, or may have been, the verification is pending and
// returned with its legs (a leg that failed says why).
func (s *Service) Start(ctx context.Context, account, to string, opts StartOptions) (*Verification, error) {
	const op = "verify.Start"
	acct, err := s.account(ctx, op, account)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	v, p, err := s.plan(acct, to, opts, now)
	if err != nil {
		return nil, wrapOp(op, err)
	}
	v.ID = uuid.NewString()
	code := s.key.code(v.ID, v.To, v.Purpose, v.Length)
	v.CodeHash = s.key.hash(v.ID, v.To, v.Purpose, code)

	send := s.sendOf(v, p, code)
	spend, err := s.admit(ctx, op, v, p.requester, send, now)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateVerification(ctx, v); err != nil {
		spend.giveBack(ctx)
		return nil, storeError(op, err)
	}
	v, ok, err := s.store.TakeSend(ctx, acct.ID, v.ID, now, 0)
	if err == nil && !ok {
		err = fmt.Errorf("the store did not count the first send of a new verification (status %s)", v.Status)
	}
	if err != nil {
		spend.giveBack(ctx)
		return nil, storeError(op, err)
	}
	legs, sendErr := s.deliver(ctx, send, spend)
	return s.settle(ctx, op, v, p.requester, legs, sendErr, now)
}

// plan checks the options and the recipient and returns the
// verification to keep, not yet with ID and hash, and how to send it.
func (s *Service) plan(acct *notify.Account, to string, opts StartOptions, now time.Time) (*verifystore.Verification, plan, error) {
	var fe record.FieldErrors
	channels := opts.Channels
	if len(channels) == 0 {
		channels = []Channel{SMS, Chat}
	}
	checkChannels(&fe, "channels", channels)
	length := opts.Length
	if length == 0 {
		length = s.length
	}
	switch {
	case length < MinLength || length > MaxLength:
		fe.Addf("length", "must be %d to %d digits, found %d", MinLength, MaxLength, length)
	case length > maxChannelCode && (slices.Contains(channels, SMS) || slices.Contains(channels, Chat)):
		fe.Addf("length", "codes of more than %d digits go by email only: the SMS and chat channels carry codes of 4 to 8 digits", maxChannelCode)
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = s.ttl
	}
	if err := checkTTL(ttl); err != nil {
		fe.Add("ttl_seconds", err.Error())
	}
	if !validPurpose(opts.Purpose) {
		fe.Add("purpose", "must be at most 64 letters, digits, '_' and '-'")
	}
	checkRequester(&fe, opts.Requester)
	p := plan{brand: opts.Brand, locale: opts.Locale, webOTPHost: opts.WebOTPHost, appHash: opts.AppHash,
		domain: opts.Domain, requester: opts.Requester, channels: channels}
	v := &verifystore.Verification{Account: acct.ID, Purpose: opts.Purpose, Length: length,
		Status: verifystore.VerificationPending, MaxChecks: s.maxChecks, MaxSends: s.maxSends,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(ttl)}
	for _, c := range channels {
		v.Channels = append(v.Channels, string(c))
	}
	if !fe.Has("channels") {
		v.To, v.Prefix, v.Country = s.recipient(&fe, acct, to, channels)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, plan{}, err
	}
	p.prefix, p.country = v.Prefix, v.Country
	return v, p, nil
}

// checkChannels adds to fe what is wrong with a list of channels: one it
// does not know, one twice, or e-mail with a phone channel (a
// verification has one recipient).
func checkChannels(fe *record.FieldErrors, field string, channels []Channel) {
	for i, c := range channels {
		switch {
		case c != SMS && c != Chat && c != Email:
			fe.Addf(field, "must be sms, chat or email, not %q", clip(string(c)))
			return
		case slices.Contains(channels[:i], c):
			fe.Addf(field, "lists %s twice", c)
			return
		}
	}
	if slices.Contains(channels, Email) && len(channels) > 1 {
		fe.Add(field, "email goes alone: a verification has one recipient, an address or a phone number")
	}
}

// recipient reads to for the channels: an e-mail address, or a phone
// number in E.164 form the account may send to, with its prefix and
// country for the fraud guard. A problem is added to fe.
func (s *Service) recipient(fe *record.FieldErrors, acct *notify.Account, to string, channels []Channel) (norm, prefix, country string) {
	to = strings.TrimSpace(to)
	if to == "" {
		fe.Add("to", "is required")
		return "", "", ""
	}
	if channels[0] == Email {
		a, err := mail.ParseAddress(to)
		if err != nil || a.Name != "" || a.Address != to {
			fe.Add("to", "must be a bare e-mail address such as name@example.com")
			return "", "", ""
		}
		return strings.ToLower(a.Address), "", ""
	}
	n, err := phone.ParseAllowed(to, acct.Region, acct.Countries, s.numbers)
	if err != nil {
		fe.Add("to", err.Error())
		return "", "", ""
	}
	return n.E164, s.guard.prefixOf(n.E164), n.Region
}

// validPurpose reports whether p may name a purpose.
func validPurpose(p string) bool {
	if len(p) > 64 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// account returns the account, enabled, or the error Send would give.
func (s *Service) account(ctx context.Context, op, id string) (*notify.Account, error) {
	if id == "" {
		return nil, &notify.Error{Code: notify.CodeInvalidArgument, Op: op, Fields: record.FieldErrors{{Field: "account", Message: "is required"}}}
	}
	if err := ctx.Err(); err != nil {
		return nil, &notify.Error{Code: notify.CodeCanceled, Op: op, Err: err}
	}
	acct, err := s.accounts.Account(ctx, id)
	if err != nil {
		if e := storeError(op, err); notify.CodeOf(e) == notify.CodeNotFound {
			return nil, &notify.Error{Code: notify.CodeNotFound, Op: op, Err: fmt.Errorf("no account %q", clip(id))}
		} else {
			return nil, e
		}
	}
	if acct.Disabled {
		return nil, &notify.Error{Code: notify.CodePermissionDenied, Op: op, Err: fmt.Errorf("account %q is disabled", clip(id))}
	}
	return acct, nil
}

// wrapOp names op on a field error from plan.
func wrapOp(op string, err error) error {
	if e, ok := err.(*notify.Error); ok && e.Op == "" {
		e.Op = op
	}
	return err
}
