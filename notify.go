package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Notifier sends messages through the pipeline of prepare, charge,
// deliver, settle and record. Create one with New; it is safe for
// concurrent use and needs no Close (close the providers and stores you
// created yourself). Its only goroutines of its own retry the refund of a
// message its vendor certainly refused when the ledger failed at that
// moment, each for at most the settle threshold (WithSettleAfter):
// one whose store stays unreachable (or is closed) that long gives up,
// and the reconciler settles the record.
type Notifier struct {
	accounts         store.Accounts
	ledger           store.Ledger
	pricer           Pricer // nil: unmetered
	idem             store.Keys
	settleAfter      time.Duration
	observers        []Observer
	rate             store.Limiter // per account; nil: none
	otpThrottle      store.Limiter // per account and recipient; nil: none
	channels         map[Kind]Channel
	retry            RetryPolicy
	timeout          time.Duration
	providerTimeouts map[string]time.Duration
	breakers         *breakers   // nil: none
	queue            queue.Queue // nil: none
	now              func() time.Time
	newID            func() string
	tracing          *tracing // nil: no spans (WithTracer)
}

// RetryPolicy says how the Notifier retries the failures that IsRetryable
// reports: certain, temporary refusals (CodeUnavailable and
// CodeRateLimited). An unknown outcome is never retried. The delay before retry n is drawn at random from
// [d/2, d] where d = BaseDelay * 2^(n-1), capped at MaxDelay (a vendor's
// RetryAfter, when longer, is waited instead if it is within MaxDelay). No
// retry starts that would not finish its wait before the caller's deadline.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, first one included.
	// Default 3; 1 disables retries.
	MaxAttempts int
	// BaseDelay is the delay before the first retry. Default 100ms.
	BaseDelay time.Duration
	// MaxDelay caps every delay. Default 2s.
	MaxDelay time.Duration
}

// defaultRetry is the RetryPolicy of a Notifier without WithRetry.
var defaultRetry = RetryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}

// orDefaults returns p with its zero fields set to their defaults.
func (p RetryPolicy) orDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = defaultRetry.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = defaultRetry.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = defaultRetry.MaxDelay
	}
	return p
}

// Longest returns the longest one send can take under p (zero fields
// counted as their defaults) when each attempt is bounded by
// attemptTimeout: every attempt running out its time, and each wait
// before a retry as long as MaxDelay allows (the cap of the backoff and of
// a vendor's RetryAfter). The settle threshold (WithSettleAfter) must
// exceed it. An attemptTimeout of zero or less leaves attempts bounded by
// the caller's deadline alone, so there is no longest: Longest returns 0.
func (p RetryPolicy) Longest(attemptTimeout time.Duration) time.Duration {
	if attemptTimeout <= 0 {
		return 0
	}
	p = p.orDefaults()
	return time.Duration(p.MaxAttempts)*attemptTimeout + time.Duration(p.MaxAttempts-1)*p.MaxDelay
}

// Option configures a Notifier in New.
type Option func(*Notifier) error

// WithChannel registers ch for its Kind, replacing any earlier one. Any
// package may define a channel of any kind; requests of that kind go to it.
func WithChannel(ch Channel) Option {
	return func(n *Notifier) error {
		if nilness.Is(ch) {
			return errors.New("WithChannel: nil channel")
		}
		k := ch.Kind()
		if k == "" {
			return errors.New("WithChannel: the channel has an empty kind")
		}
		n.channels[k] = ch
		return nil
	}
}

// WithPrices makes sending metered: every message is priced by prices
// and its price charged to the account's wallet in the ledger, with its
// record, before delivery. Without it every send is free: recorded with a
// zero charge, and no wallet is needed (Balance still reads the ledger's).
func WithPrices(prices Pricer) Option {
	return func(n *Notifier) error {
		if nilness.Is(prices) {
			return errors.New("WithPrices: nil Pricer")
		}
		n.pricer = prices
		return nil
	}
}

// WithIdempotency enables idempotency keys: a repeat of a key within the
// store's retention returns the first receipt and never sends twice.
// Without it, a request that carries a key is refused with
// CodeInvalidArgument naming idempotency_key (ignoring the key would send
// a repeat twice).
func WithIdempotency(keys store.Keys) Option {
	return func(n *Notifier) error {
		if nilness.Is(keys) {
			return errors.New("WithIdempotency: nil store.Keys")
		}
		n.idem = keys
		return nil
	}
}

// WithSettleAfter sets how long a send may take before its record, still
// pending or attempting, is taken for the remains of a holder that died
// and settled by Reconcile (or by a repeat of its idempotency key). It
// must be longer than any send: New refuses a threshold that does not
// exceed RetryPolicy.Longest of the retry policy (WithRetry) and the
// longest attempt timeout (WithTimeout, WithProviderTimeout), since a live
// send would be settled as abandoned. With an attempt timeout of zero or
// less, sends are bounded only by the callers' deadlines, which the
// threshold must then exceed unchecked. A message with several providers
// (Envelope.Providers) may call each in turn in one attempt, which New
// cannot see: with n providers, keep the threshold above n times that
// longest (a send the reconciler settled unknown meanwhile stops before
// its next provider and is refunded if every call was refused). Default
// 2 minutes.
func WithSettleAfter(d time.Duration) Option {
	return func(n *Notifier) error {
		if d <= 0 {
			return errors.New("WithSettleAfter: the duration must be positive")
		}
		n.settleAfter = d
		return nil
	}
}

// WithRateLimit limits each account's sends through l, keyed by the
// account ID (memstore.NewRateLimit for one process, pgstore's for
// instances sharing a budget). A send beyond it fails with
// CodeRateLimited and Error.RetryAfter, before anything is charged; its
// cause is ErrRateLimited, and observers hear of it (StateRefused). Only
// valid requests count, once each (a dual OTP once for both legs);
// idempotent replays and sends that certainly went nowhere do not, nor
// do the failovers a delivery report sends (they stand for a message
// that was counted). Default: no limit.
func WithRateLimit(l store.Limiter) Option {
	return func(n *Notifier) error {
		if nilness.Is(l) {
			return errors.New("WithRateLimit: nil store.Limiter")
		}
		n.rate = l
		return nil
	}
}

// WithOTPThrottle limits one-time codes per account and recipient through
// l (a window limit such as memstore.NewWindowLimit(5, 15*time.Minute)),
// keyed by the account ID, a NUL byte and the recipient in its channel's
// canonical form (Notifier.Recipient), so every spelling of one address
// or number shares one limit. Every
// message that carries a code counts (Envelope.CarriesOTP: the SMS otp
// route, a chat OTP, e-mail of purpose otp, any template with an OTP
// variable), and a dual OTP counts once; replays and sends that certainly went nowhere do not. A
// send beyond it fails with CodeRateLimited and Error.RetryAfter, before
// anything is charged; its cause is ErrOTPThrottled, and observers hear of
// it (StateRefused). Keying by account as well keeps one account from
// locking a number out of another's codes. Default: no throttle.
func WithOTPThrottle(l store.Limiter) Option {
	return func(n *Notifier) error {
		if nilness.Is(l) {
			return errors.New("WithOTPThrottle: nil store.Limiter")
		}
		n.otpThrottle = l
		return nil
	}
}

// WithObserver adds an observer of delivery events; observers are called
// in the order they were added.
func WithObserver(o Observer) Option {
	return func(n *Notifier) error {
		if nilness.Is(o) {
			return errors.New("WithObserver: nil observer")
		}
		n.observers = append(n.observers, o)
		return nil
	}
}

// WithRetry sets the retry policy; zero fields keep their defaults.
func WithRetry(p RetryPolicy) Option {
	return func(n *Notifier) error {
		if p.MaxAttempts < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
			return errors.New("WithRetry: negative values")
		}
		n.retry = p.orDefaults()
		return nil
	}
}

// WithTimeout sets the time one delivery attempt may take, for providers
// without a timeout of their own (WithProviderTimeout). Default 10s; zero
// or less leaves attempts bounded by the caller's context alone.
func WithTimeout(d time.Duration) Option {
	return func(n *Notifier) error { n.timeout = d; return nil }
}

// WithProviderTimeout sets the attempt timeout of the provider named name
// (Envelope.Provider).
func WithProviderTimeout(name string, d time.Duration) Option {
	return func(n *Notifier) error {
		if name == "" {
			return errors.New("WithProviderTimeout: empty provider name")
		}
		if n.providerTimeouts == nil {
			n.providerTimeouts = make(map[string]time.Duration)
		}
		n.providerTimeouts[name] = d
		return nil
	}
}

// WithClock sets the clock used for receipt times and for the limiters'
// windows (WithRateLimit, WithOTPThrottle). Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(n *Notifier) error {
		if now == nil {
			return errors.New("WithClock: nil clock")
		}
		n.now = now
		return nil
	}
}

// WithIDGenerator sets how message IDs are made; they must be unique, as
// they are the wallet references of charges. Default: random UUIDs.
func WithIDGenerator(newID func() string) Option {
	return func(n *Notifier) error {
		if newID == nil {
			return errors.New("WithIDGenerator: nil generator")
		}
		n.newID = newID
		return nil
	}
}

// defaultSettleAfter is the settle threshold of WithSettleAfter.
const defaultSettleAfter = 2 * time.Minute

// New returns a Notifier that finds accounts in accounts and keeps the
// money and the record of every message in ledger: a record of each send,
// its charge when metered (WithPrices), its refund when the vendor
// certainly refused it. Channels, prices, idempotency, limits and
// observers are optional and added with options; a kind without a channel
// fails with CodeUnavailable.
func New(accounts store.Accounts, ledger store.Ledger, opts ...Option) (*Notifier, error) {
	if nilness.Is(accounts) {
		return nil, errors.New("notify.New: nil store.Accounts")
	}
	if nilness.Is(ledger) {
		return nil, errors.New("notify.New: nil store.Ledger")
	}
	n := &Notifier{
		accounts: accounts,
		ledger:   ledger,
		channels: make(map[Kind]Channel, 3),
		retry:    defaultRetry,
		timeout:  10 * time.Second,
		now:      time.Now,
		newID:    newMessageID,

		settleAfter: defaultSettleAfter,
	}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("notify.New: option %d is nil", i)
		}
		if err := opt(n); err != nil {
			return nil, fmt.Errorf("notify.New: %w", err)
		}
	}
	if err := n.checkSettleAfter(); err != nil {
		return nil, fmt.Errorf("notify.New: %w", err)
	}
	return n, nil
}

// checkSettleAfter refuses a settle threshold that a live send can
// outlast (see WithSettleAfter).
func (n *Notifier) checkSettleAfter() error {
	timeout := n.timeout
	for _, d := range n.providerTimeouts {
		if d <= 0 || timeout <= 0 {
			return nil // bounded by the caller's deadline alone
		}
		timeout = max(timeout, d)
	}
	if longest := n.retry.Longest(timeout); longest > 0 && n.settleAfter <= longest {
		return fmt.Errorf("WithSettleAfter: %v does not exceed the longest a send can take, %v "+
			"(%d attempts of up to %v, and up to %v before each retry); raise it, or shorten WithTimeout or WithRetry",
			n.settleAfter, longest, n.retry.MaxAttempts, timeout, n.retry.MaxDelay)
	}
	return nil
}

// Balance returns the account's wallet balance with its name filled in.
// An unknown account is NotFound, as is one without a wallet in the
// store.Ledger.
func (n *Notifier) Balance(ctx context.Context, account string) (record.Balance, error) {
	const op = "notify.Balance"
	acct, err := n.account(ctx, op, account)
	if err != nil {
		return record.Balance{}, err
	}
	b, err := n.ledger.Balance(ctx, acct.ID)
	if err != nil {
		return record.Balance{}, storeFailure(op, "ledger", err)
	}
	b.Name = acct.Name
	return b, nil
}
