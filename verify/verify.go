package verify

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
	"github.com/notifykit/notify/verify/verifystore"
)

// Channel is a channel a code goes by.
type Channel string

// The channels of a verification. SMS and Chat together are the dual
// send: the same code by both at the same moment.
const (
	SMS   Channel = "sms"
	Chat  Channel = "chat"
	Email Channel = "email"
)

// Status is where a verification stands (verifystore.VerificationStatus).
type Status = verifystore.VerificationStatus

// The statuses a verification and a check answer with.
const (
	StatusPending     = verifystore.VerificationPending
	StatusApproved    = verifystore.VerificationApproved
	StatusCanceled    = verifystore.VerificationCanceled
	StatusExpired     = verifystore.VerificationExpired
	StatusMaxAttempts = verifystore.VerificationMaxAttempts
)

// The bounds and defaults of a verification, as Twilio Verify's.
const (
	DefaultTTL       = 10 * time.Minute
	MinTTL           = 30 * time.Second
	MaxTTL           = 24 * time.Hour
	DefaultMaxChecks = 5
	DefaultMaxSends  = 5
	DefaultLength    = 6
	MinLength        = 4
	MaxLength        = 10
	// DefaultCooldown is the least time between two sends of one code.
	DefaultCooldown = 30 * time.Second
	// maxChannelCode is the longest code the SMS and chat channels carry
	// (their otp routes' rule); longer ones go by e-mail only.
	maxChannelCode = 8
	// minSecret is the least length of Config.Secret.
	minSecret = 32
)

// Config configures a Service. Notifier, Accounts, Store and Secret are
// required; the rest have defaults.
type Config struct {
	// Notifier sends the codes, through its channels, charged as any
	// send. A check is never charged.
	Notifier *notify.Notifier
	// Accounts finds the account a verification is started for: its
	// region and allowed countries read the recipient's number.
	Accounts store.Accounts
	// Store keeps the verifications; share one between instances
	// (pgstore) so that any of them can check a code another sent.
	Store verifystore.Verifications
	// Secret derives every code and the hash kept of it: at least 32
	// random bytes, the same on every instance, kept out of the
	// database. Changing it voids every pending verification.
	Secret []byte
	// Guard, when set, refuses a send the fraud guard's rules forbid,
	// before anything is charged.
	Guard *Guard
	// Numbers reads numbers beyond India (phone/world's Plan{}); nil
	// reads them with the registered plan (phone.RegisterPlan), as the
	// channels do: phone/world's when the program imports it, else
	// Indian numbers only.
	Numbers phone.Plan
	// TTL is how long a code is good for; default DefaultTTL, between
	// MinTTL and MaxTTL. StartOptions.TTL overrides it per verification.
	TTL time.Duration
	// MaxChecks and MaxSends bound the checks and the sends of one
	// verification; defaults DefaultMaxChecks and DefaultMaxSends, at
	// most 100.
	MaxChecks, MaxSends int
	// Cooldown is the least time between two sends of a code; default
	// DefaultCooldown. Negative means none.
	Cooldown time.Duration
	// Length is the default number of digits of a code; default
	// DefaultLength, between MinLength and MaxLength.
	Length int
	// Template is the stock or custom template whose wording the SMS and
	// e-mail sends of a code take (filled with OTP and BRAND_NAME; the
	// stock "standard-otp" has English and Hindi), rendered in the
	// verification's locale (StartOptions.Locale) by the template's
	// chain; the channels need a renderer. Empty, the default: the
	// otp route's text and an English e-mail made here.
	Template string
	// Category is the account's category (store.Category) every send of
	// a code names, so that the recipient's preferences apply to it as to
	// any send: a critical one ("otp", "security") always goes; another
	// skips a leg whose channel the recipient declined, and a send all of
	// whose channels they declined fails notify.CodeDeclined, uncharged.
	// Empty, the default: none, no preference read.
	Category string
	// Now is the clock; default time.Now. Tests set it.
	Now func() time.Time
}

// Service starts, checks, resends and cancels verifications. It keeps no
// state of its own: everything is in Config.Store, so any number of
// Services over one store (one per instance) act as one. It is safe for
// concurrent use.
type Service struct {
	n         *notify.Notifier
	accounts  store.Accounts
	store     verifystore.Verifications
	key       keyed
	guard     *Guard
	numbers   phone.Plan
	ttl       time.Duration
	maxChecks int
	maxSends  int
	cooldown  time.Duration
	length    int
	category  string
	template  string
	now       func() time.Time
}

// New returns a Service, or an error naming the first bad field of cfg.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Notifier == nil:
		return nil, errors.New("verify: Config.Notifier is required")
	case cfg.Accounts == nil:
		return nil, errors.New("verify: Config.Accounts is required")
	case cfg.Store == nil:
		return nil, errors.New("verify: Config.Store is required")
	case len(cfg.Secret) < minSecret:
		return nil, fmt.Errorf("verify: Config.Secret must be at least %d random bytes, found %d", minSecret, len(cfg.Secret))
	}
	s := &Service{
		n: cfg.Notifier, accounts: cfg.Accounts, store: cfg.Store, key: keyed{secret: slices.Clone(cfg.Secret)},
		guard: cfg.Guard, numbers: cfg.Numbers,
		ttl: cfg.TTL, maxChecks: cfg.MaxChecks, maxSends: cfg.MaxSends, cooldown: cfg.Cooldown, length: cfg.Length, now: cfg.Now,
		category: cfg.Category, template: cfg.Template,
	}
	if s.category != "" && !storeutil.CategoryName(s.category) {
		return nil, fmt.Errorf("verify: Config.Category %s", storeutil.CategoryRule)
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if err := checkTTL(s.ttl); err != nil {
		return nil, fmt.Errorf("verify: Config.TTL %s", err)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxChecks", &s.maxChecks, DefaultMaxChecks}, {"MaxSends", &s.maxSends, DefaultMaxSends}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 1 || *f.v > 100 {
			return nil, fmt.Errorf("verify: Config.%s must be 1 to 100, found %d", f.name, *f.v)
		}
	}
	switch {
	case s.cooldown == 0:
		s.cooldown = DefaultCooldown
	case s.cooldown < 0:
		s.cooldown = 0
	}
	if s.length == 0 {
		s.length = DefaultLength
	}
	if s.length < MinLength || s.length > MaxLength {
		return nil, fmt.Errorf("verify: Config.Length must be %d to %d digits, found %d", MinLength, MaxLength, s.length)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// checkTTL reports a TTL outside MinTTL..MaxTTL.
func checkTTL(d time.Duration) error {
	if d < MinTTL || d > MaxTTL {
		return fmt.Errorf("must be %s to %s, found %s", MinTTL, "24h", d)
	}
	return nil
}

// Verification is a verification as a caller sees it: never its code.
type Verification struct {
	ID       string
	Account  string
	To       string
	Purpose  string
	Channels []Channel
	Status   Status
	// AttemptsLeft is how many more checks it takes; SendsLeft how many
	// more sends.
	AttemptsLeft, SendsLeft int
	CreatedAt, ExpiresAt    time.Time
	// Legs are the messages of the send that Start or Resend made, one
	// per channel, in order; nil elsewhere.
	Legs []Leg
}

// Leg is one message of a send: its channel and its receipt's fields.
type Leg struct {
	Channel   Channel
	MessageID string
	Status    record.State
	Provider  string
	Cost      notify.Money
	// Error says why the leg failed or may not have arrived; empty when
	// it was accepted.
	Error string
}

// view returns v as a caller sees it at now.
func view(v *verifystore.Verification, now time.Time) *Verification {
	out := &Verification{
		ID: v.ID, Account: v.Account, To: v.To, Purpose: v.Purpose, Status: v.StatusAt(now),
		AttemptsLeft: max(v.MaxChecks-v.Checks, 0), SendsLeft: max(v.MaxSends-v.Sends, 0),
		CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt,
	}
	for _, c := range v.Channels {
		out.Channels = append(out.Channels, Channel(c))
	}
	if out.Status != StatusPending {
		out.AttemptsLeft, out.SendsLeft = 0, 0
	}
	return out
}

// storeError returns a store's error as the *notify.Error of op: not
// found as NotFound, a store that cannot answer for now as Unavailable
// (safe to try again), anything else as Internal, its text kept as the
// cause only.
func storeError(op string, err error) error {
	code := notify.CodeInternal
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &notify.Error{Code: notify.CodeNotFound, Op: op, Err: errors.New("no such verification")}
	case errors.Is(err, store.ErrUnavailable):
		code = notify.CodeUnavailable
	case errors.Is(err, store.ErrInvalid):
		code = notify.CodeInvalidArgument
	}
	return &notify.Error{Code: code, Op: op, Err: err}
}
