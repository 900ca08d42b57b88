package verifystore

import (
	"context"
	"slices"
	"time"
)

// VerificationStatus is where a kept verification stands. A store keeps
// only the statuses a call writes; "expired" and "max_attempts_reached"
// are also read off the times and counts (Verification.StatusAt), so a
// verification ends on time whether or not a sweep has marked it.
type VerificationStatus string

// The verification statuses. Only a pending verification changes: it
// moves once, to approved, canceled or expired, and never back.
const (
	VerificationPending     VerificationStatus = "pending"
	VerificationApproved    VerificationStatus = "approved"
	VerificationCanceled    VerificationStatus = "canceled"
	VerificationExpired     VerificationStatus = "expired"
	VerificationMaxAttempts VerificationStatus = "max_attempts_reached"
)

// Verification is one verification a store keeps: a code sent to a
// recipient, to be checked a bounded number of times before it expires.
// The code itself is never kept: CodeHash is an HMAC of it that only the
// holder of the server's secret can compute (package verify).
type Verification struct {
	// ID identifies the verification in every store (a UUID).
	ID string
	// Account is the ID of the account that started it.
	Account string
	// To is the normalised recipient: an E.164 number or an address.
	To string
	// Purpose is what the code is for ("login", "signup", ...), bound
	// into CodeHash; may be empty.
	Purpose string
	// Channels are the channels the code goes by, in the order asked
	// ("sms", "chat", "email").
	Channels []string
	// CodeHash is the HMAC-SHA256 of the code, bound to ID, To and
	// Purpose. Stores keep its bytes as they are.
	CodeHash []byte
	// Length is the code's number of digits.
	Length int
	// Status is the status a call last wrote: pending, approved, canceled
	// or expired.
	Status VerificationStatus
	// Checks counts the checks evaluated; MaxChecks is the most allowed.
	Checks, MaxChecks int
	// Sends counts the sends of the code; MaxSends is the most allowed.
	Sends, MaxSends int
	// Prefix and Country group the recipient for the fraud guard's
	// conversion tracking (a number without its last digits, its ISO
	// country); empty for an address.
	Prefix, Country string
	// CreatedAt, ExpiresAt, LastSentAt and UpdatedAt are the
	// verification's times, in UTC at microsecond precision.
	CreatedAt, ExpiresAt, LastSentAt, UpdatedAt time.Time
}

// StatusAt returns v's status at now: its Status unless it is pending,
// and then expired from ExpiresAt on, max_attempts_reached once its
// checks are spent, else pending.
func (v *Verification) StatusAt(now time.Time) VerificationStatus {
	switch {
	case v.Status != VerificationPending:
		return v.Status
	case !now.Before(v.ExpiresAt):
		return VerificationExpired
	case v.Checks >= v.MaxChecks:
		return VerificationMaxAttempts
	}
	return VerificationPending
}

// CloneVerification returns a deep copy of v.
func CloneVerification(v *Verification) *Verification {
	c := *v
	c.Channels = slices.Clone(v.Channels)
	c.CodeHash = slices.Clone(v.CodeHash)
	return &c
}

// Verifications keeps verifications, shared by every instance that uses
// the same store. Each counting method decides and counts in one atomic
// step, so that under any concurrency no more checks are evaluated and
// no more sends made than a verification allows. Methods are safe for
// concurrent use; they copy what they are given and return copies. A
// verification of another account is store.ErrNotFound. Stores keep a
// verification at least until a day after it ended; what they keep
// longer is theirs to decide.
type Verifications interface {
	// CreateVerification keeps v, whose Status is pending and whose
	// Checks and Sends are zero. store.ErrConflict when its ID is in use;
	// store.ErrInvalid when ID, Account or CodeHash is empty.
	CreateVerification(ctx context.Context, v *Verification) error

	// Verification returns the account's verification, or store.ErrNotFound.
	Verification(ctx context.Context, account, id string) (*Verification, error)

	// PendingVerification returns the account's newest verification of
	// to and purpose that is pending at now (StatusAt), or store.ErrNotFound.
	PendingVerification(ctx context.Context, account, to, purpose string, now time.Time) (*Verification, error)

	// TakeCheck counts one check of the verification when it is pending
	// at now (StatusAt) and answers it with the check counted and true.
	// Otherwise it counts nothing and answers it as it is and false.
	TakeCheck(ctx context.Context, account, id string, now time.Time) (*Verification, bool, error)

	// TakeSend counts one send of the verification when it is pending at
	// now, has sends left and its last send is at least cooldown before
	// now (or it has none); it sets LastSentAt to now and answers it and
	// true. Otherwise it counts nothing and answers it as it is and
	// false.
	TakeSend(ctx context.Context, account, id string, now time.Time, cooldown time.Duration) (*Verification, bool, error)

	// FinishVerification moves a pending verification to status
	// (approved or canceled; anything else is store.ErrInvalid) at now and
	// answers it and true. One that is not pending (whatever StatusAt
	// says: a check counted before the expiry may still approve) is
	// answered as it is and false.
	FinishVerification(ctx context.Context, account, id string, status VerificationStatus, now time.Time) (*Verification, bool, error)

	// ExpireVerifications marks up to limit verifications still pending
	// whose ExpiresAt is at or before now as expired, and answers how
	// many it marked; the caller repeats it while it answers limit.
	ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error)
}

// Counters keeps sums of amounts added per key over a sliding window,
// shared by every instance that uses the same store: the fraud guard's
// velocity limits, conversion tracking and spend caps. A key's window is
// cut into CounterBuckets buckets, so a sum covers the window ending at
// now to within one bucket: an amount counts from the time it was added
// until window (rounded down to a bucket) has passed. A key is always
// used with the same window. Methods are safe for concurrent use; times
// come from the caller, never the store's clock.
type Counters interface {
	// Add adds n (which may be negative, to give back) to key at now,
	// unless limit > 0 and the sum over the window plus n would exceed
	// limit. It answers the sum over the window after the call and
	// whether it added; deciding and adding are one atomic step.
	Add(ctx context.Context, key string, n int64, window time.Duration, limit int64, now time.Time) (sum int64, added bool, err error)

	// Sums answers the sum of each key over window ending at now, zero
	// for a key never added to.
	Sums(ctx context.Context, keys []string, window time.Duration, now time.Time) ([]int64, error)
}

// CounterBuckets is the number of buckets a Counters window is cut into.
const CounterBuckets = 16

// CounterBucket returns the start of the bucket of window that holds t:
// t truncated to the bucket size, window/CounterBuckets rounded down to
// whole microseconds (at least one), so that a SQL timestamp holds every
// bucket start exactly. Stores use it so that they all cut windows alike.
func CounterBucket(t time.Time, window time.Duration) time.Time {
	return t.Truncate(bucketSize(window)).UTC()
}

// bucketSize is the size of a bucket of window.
func bucketSize(window time.Duration) time.Duration {
	return max((window / CounterBuckets).Truncate(time.Microsecond), time.Microsecond)
}

// CounterSince returns the start of the oldest bucket a sum over window
// ending at now includes: buckets that start after now-window.
func CounterSince(now time.Time, window time.Duration) time.Time {
	return CounterBucket(now, window).Add(-window + bucketSize(window))
}
