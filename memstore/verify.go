package memstore

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// verificationRetention is how long Verifications keeps a verification
// after it ended: a day, as verifystore.Verifications asks at least.
const verificationRetention = 24 * time.Hour

// verificationSweep is how often, in the times callers pass, Verifications
// drops the verifications it need no longer keep.
const verificationSweep = time.Hour

// Verifications is an in-memory verifystore.Verifications, for one process; use
// pgstore's to share verifications between processes.
//
// A verification is kept without its code, as verifystore.Verification is: its
// CodeHash bytes exactly as given. Verifications are copied on the way in
// and on the way out (verifystore.CloneVerification), so neither the caller of
// CreateVerification nor a reader can change what the store holds. Each
// counting method (TakeCheck, TakeSend, FinishVerification) decides and
// writes under one mutex, so under any concurrency no more checks are
// evaluated, no more sends made and no more approvals given than a
// verification allows. A method that counts sets UpdatedAt to its now
// (unless the verification was updated later already); FinishVerification
// sets it to its now. A refusal changes nothing.
//
// Time is only what the callers pass in; the store reads no clock.
// Verification takes none: it answers the Status last written, which
// Verification.StatusAt reads at a time. ExpireVerifications marks the
// pending verifications whose ExpiresAt has come, soonest first.
//
// Memory: a verification is kept until a day after it ended (a day after
// its ExpiresAt, or after its approval or cancellation when that came
// later), then dropped by a sweep
// that runs once an hour of the times callers pass, or sooner when the
// number kept has doubled; pending ones are kept until they expire, and a
// day more. So the store holds the verifications of about the last day.
//
// The zero value is not usable; call NewVerifications. Methods are safe
// for concurrent use.
type Verifications struct {
	mu   sync.Mutex
	byID map[string]*verifystore.Verification
	// byRecipient finds the verifications of an account, recipient and
	// purpose, whatever their status.
	byRecipient map[recipient][]*verifystore.Verification
	// expiry holds the verifications pending when it was last built or
	// since created, soonest ExpiresAt first; one that has ended since is
	// skipped when it comes up.
	expiry expiryHeap
	sweep  sweeper
}

// recipient keys PendingVerification's lookups.
type recipient struct{ account, to, purpose string }

// NewVerifications returns an empty store.
func NewVerifications() *Verifications {
	return &Verifications{
		byID:        make(map[string]*verifystore.Verification),
		byRecipient: make(map[recipient][]*verifystore.Verification),
		sweep:       sweeper{every: int64(verificationSweep)},
	}
}

// CreateVerification keeps a copy of v, which must be pending with no
// checks and no sends counted. ErrConflict when its ID is in use (also by
// another account, and until the verification of that ID is dropped, a
// day after it ended); ErrInvalid, naming the fields, when v is nil, its
// ID, Account or CodeHash is empty, its Status is not pending, or its
// Checks or Sends are not zero. A ctx that has ended is Canceled or
// DeadlineExceeded, and keeps nothing.
func (s *Verifications) CreateVerification(ctx context.Context, v *verifystore.Verification) error {
	if err := ctx.Err(); err != nil {
		return ctxError("create verification", err)
	}
	if v == nil {
		return store.InvalidField("verification", "must not be nil")
	}
	var bad record.FieldErrors
	if v.ID == "" {
		bad.Add("id", "must not be empty")
	}
	if v.Account == "" {
		bad.Add("account", "must not be empty")
	}
	if len(v.CodeHash) == 0 {
		bad.Add("code_hash", "must not be empty")
	}
	if v.Status != verifystore.VerificationPending {
		bad.Add("status", "must be pending")
	}
	if v.Checks != 0 || v.Sends != 0 {
		bad.Add("checks", "a new verification has no checks or sends counted")
	}
	if err := store.InvalidFields(bad); err != nil {
		return err
	}
	c := verifystore.CloneVerification(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.CreatedAt.IsZero() {
		s.sweepAt(c.CreatedAt)
	}
	if _, ok := s.byID[c.ID]; ok {
		return fmt.Errorf("memstore: verification %q exists: %w", c.ID, store.ErrConflict)
	}
	s.byID[c.ID] = c
	r := recipientOf(c)
	s.byRecipient[r] = append(s.byRecipient[r], c)
	heap.Push(&s.expiry, c)
	return nil
}

// Verification returns a copy of the account's verification, or
// ErrNotFound (also for another account's).
func (s *Verifications) Verification(ctx context.Context, account, id string) (*verifystore.Verification, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("verification", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.get(account, id)
	if err != nil {
		return nil, err
	}
	return verifystore.CloneVerification(v), nil
}

// PendingVerification returns a copy of the account's verification of to
// and purpose with the latest CreatedAt among those pending at now
// (StatusAt); else ErrNotFound.
func (s *Verifications) PendingVerification(ctx context.Context, account, to, purpose string, now time.Time) (*verifystore.Verification, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("pending verification", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepAt(now)
	var newest *verifystore.Verification
	for _, v := range s.byRecipient[recipient{account, to, purpose}] {
		if v.StatusAt(now) == verifystore.VerificationPending && (newest == nil || !v.CreatedAt.Before(newest.CreatedAt)) {
			newest = v
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("memstore: no pending verification of %q for %q: %w", to, purpose, store.ErrNotFound)
	}
	return verifystore.CloneVerification(newest), nil
}

// TakeCheck counts one check of the verification when it is pending at
// now (StatusAt: not finished or marked expired, before its ExpiresAt,
// with checks left), and answers a copy with the check counted and true.
// Otherwise it counts nothing and answers a copy as it is and false.
// ErrNotFound for an unknown ID or another account's.
func (s *Verifications) TakeCheck(ctx context.Context, account, id string, now time.Time) (*verifystore.Verification, bool, error) {
	return s.take(ctx, "take check", account, id, now, func(v *verifystore.Verification) bool {
		if v.StatusAt(now) != verifystore.VerificationPending {
			return false
		}
		v.Checks++
		return true
	})
}

// TakeSend counts one send of the verification when it is pending at now
// (StatusAt), has sends left (Sends < MaxSends) and either has none yet
// or its LastSentAt is at least cooldown before now. It then sets
// LastSentAt to now and answers a copy and true. Otherwise it counts
// nothing and answers a copy as it is and false. ErrNotFound for an
// unknown ID or another account's.
func (s *Verifications) TakeSend(ctx context.Context, account, id string, now time.Time, cooldown time.Duration) (*verifystore.Verification, bool, error) {
	return s.take(ctx, "take send", account, id, now, func(v *verifystore.Verification) bool {
		if v.StatusAt(now) != verifystore.VerificationPending || v.Sends >= v.MaxSends {
			return false
		}
		if !v.LastSentAt.IsZero() && v.LastSentAt.Add(cooldown).After(now) {
			return false
		}
		v.Sends++
		v.LastSentAt = now
		return true
	})
}

// take runs count on the verification under the mutex; when it counts,
// UpdatedAt moves on to now.
func (s *Verifications) take(ctx context.Context, op, account, id string, now time.Time, count func(*verifystore.Verification) bool) (*verifystore.Verification, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, ctxError(op, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepAt(now)
	v, err := s.get(account, id)
	if err != nil {
		return nil, false, err
	}
	ok := count(v)
	if ok && now.After(v.UpdatedAt) {
		v.UpdatedAt = now
	}
	return verifystore.CloneVerification(v), ok, nil
}

// FinishVerification moves a pending verification to status, approved or
// canceled (anything else is ErrInvalid, whatever the ID), sets UpdatedAt
// to now, and answers a copy and true. A verification whose Status is not
// pending is answered as it is and false; one pending whatever StatusAt
// says at now is moved: a check counted before its expiry, or its last
// check, still approves. ErrNotFound for an unknown ID or another
// account's.
func (s *Verifications) FinishVerification(ctx context.Context, account, id string, status verifystore.VerificationStatus, now time.Time) (*verifystore.Verification, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, ctxError("finish verification", err)
	}
	if status != verifystore.VerificationApproved && status != verifystore.VerificationCanceled {
		return nil, false, store.InvalidField("status", "must be approved or canceled, not "+string(status))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepAt(now)
	v, err := s.get(account, id)
	if err != nil {
		return nil, false, err
	}
	if v.Status != verifystore.VerificationPending {
		return verifystore.CloneVerification(v), false, nil
	}
	v.Status, v.UpdatedAt = status, now
	return verifystore.CloneVerification(v), true, nil
}

// ExpireVerifications marks up to limit verifications still pending whose
// ExpiresAt is at or before now as expired, soonest ExpiresAt first, moves
// their UpdatedAt on to now, and answers how many it marked. A limit below
// one marks none.
func (s *Verifications) ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, ctxError("expire verifications", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepAt(now)
	n := 0
	for n < limit && len(s.expiry) > 0 && !s.expiry[0].ExpiresAt.After(now) {
		v := heap.Pop(&s.expiry).(*verifystore.Verification)
		if v.Status != verifystore.VerificationPending {
			continue // finished since it was pushed
		}
		v.Status = verifystore.VerificationExpired
		if now.After(v.UpdatedAt) {
			v.UpdatedAt = now
		}
		n++
	}
	return n, nil
}

// get returns the account's verification, or ErrNotFound. s.mu is held.
func (s *Verifications) get(account, id string) (*verifystore.Verification, error) {
	v, ok := s.byID[id]
	if !ok || v.Account != account {
		return nil, fmt.Errorf("memstore: no verification %q: %w", id, store.ErrNotFound)
	}
	return v, nil
}

// sweepAt drops, when a sweep is due at now, the verifications kept a day
// after they ended, and rebuilds the indexes from those left. s.mu is
// held.
func (s *Verifications) sweepAt(now time.Time) {
	t := now.UnixNano()
	if !s.sweep.due(t, len(s.byID)) {
		return
	}
	s.byID = sweepMap(&s.sweep, s.byID, func(v *verifystore.Verification) bool {
		return now.After(keptUntil(v))
	})
	// Fresh indexes, which hold no dropped verification.
	s.byRecipient = make(map[recipient][]*verifystore.Verification, len(s.byID))
	s.expiry = nil
	for _, v := range s.byID {
		r := recipientOf(v)
		s.byRecipient[r] = append(s.byRecipient[r], v)
		if v.Status == verifystore.VerificationPending {
			s.expiry = append(s.expiry, v)
		}
	}
	heap.Init(&s.expiry)
}

// keptUntil is when v may be dropped: a day after it ended, which is at
// the latest at its ExpiresAt or, for one approved or canceled after it,
// then. The time ExpireVerifications marked it does not count: it ended
// at its ExpiresAt.
func keptUntil(v *verifystore.Verification) time.Time {
	end := v.ExpiresAt
	if v.Status != verifystore.VerificationExpired && v.UpdatedAt.After(end) {
		end = v.UpdatedAt
	}
	return end.Add(verificationRetention)
}

func recipientOf(v *verifystore.Verification) recipient {
	return recipient{v.Account, v.To, v.Purpose}
}

// expiryHeap orders verifications by ExpiresAt, soonest first.
type expiryHeap []*verifystore.Verification

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].ExpiresAt.Before(h[j].ExpiresAt) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(*verifystore.Verification)) }
func (h *expiryHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return v
}

// counterSweep is how often, in the times callers pass, Counters drops the
// keys whose amounts have all left their window.
const counterSweep = time.Minute

// Counters is an in-memory verifystore.Counters, for one process; use pgstore's
// to share sums between processes.
//
// Each key keeps a sum per bucket of its window (verifystore.CounterBucket), the
// buckets in order: at most the CounterBuckets of the window and as many
// again, for callers whose times arrive slightly out of order. A sum over
// the window at now adds the buckets that start at or after
// verifystore.CounterSince(now, window), also any dated after now. Add decides
// and adds under one mutex, so that under any concurrency a limit is
// never exceeded. Time is only what the callers pass in; the store reads
// no clock.
//
// A limited Add is refused whenever the sum plus n would exceed the limit,
// also when n is negative and the sum is over the limit already (added
// without one): give back without a limit. A sum that would overflow an
// int64 is ErrInvalid.
//
// Memory follows the keys active within one window: a bucket is dropped
// once it is a window older than the window of the latest Add, or its sum
// is zero, and a key whose buckets have all left its window by a sweep
// that runs once a minute of the times callers pass, or sooner when the
// number of keys has doubled.
//
// The zero value is not usable; call NewCounters. Methods are safe for
// concurrent use.
type Counters struct {
	mu    sync.RWMutex
	keys  map[string]*counter
	sweep sweeper
}

// counter is one key's sums.
type counter struct {
	window  time.Duration // the longest it was added to with
	buckets []counterBucket
}

// counterBucket is the sum added to a key in the bucket that starts at
// start.
type counterBucket struct {
	start time.Time
	sum   int64
}

// NewCounters returns an empty store.
func NewCounters() *Counters {
	return &Counters{keys: make(map[string]*counter), sweep: sweeper{every: int64(counterSweep)}}
}

// Add adds n (negative to give back) to key's bucket of now, unless limit
// > 0 and the sum over the window ending at now plus n would exceed it.
// It answers the sum over the window after the call and whether it added.
// A window that is not positive, or a sum that would overflow, is
// ErrInvalid; a ctx that has ended is Canceled or DeadlineExceeded. Both
// add nothing.
func (c *Counters) Add(ctx context.Context, key string, n int64, window time.Duration, limit int64, now time.Time) (int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, ctxError("add to counter", err)
	}
	if window <= 0 {
		return 0, false, store.InvalidField("window", "must be positive")
	}
	bucket := verifystore.CounterBucket(now, window)
	since := verifystore.CounterSince(now, window)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sweep.due(now.UnixNano(), len(c.keys)) {
		c.keys = sweepMap(&c.sweep, c.keys, func(k *counter) bool { return k.stale(now) })
	}
	k := c.keys[key]
	if k == nil {
		k = &counter{window: window}
	}
	k.window = max(k.window, window)
	// Buckets a window older than this one's oldest count for no Add or
	// Sums at a time near now.
	k.buckets = slices.DeleteFunc(k.buckets, func(b counterBucket) bool { return b.start.Before(since.Add(-window)) })
	sum, ok := k.sum(since)
	if !ok {
		return 0, false, fmt.Errorf("memstore: counter %q: the sum overflows: %w", key, store.ErrInvalid)
	}
	if limit > 0 && exceeds(sum, n, limit) {
		c.keep(key, k)
		return sum, false, nil
	}
	after, ok := addInt64(sum, n)
	i, found := slices.BinarySearchFunc(k.buckets, bucket, func(b counterBucket, t time.Time) int { return b.start.Compare(t) })
	if !found {
		k.buckets = slices.Insert(k.buckets, i, counterBucket{start: bucket})
	}
	in, ok2 := addInt64(k.buckets[i].sum, n)
	if !ok || !ok2 {
		if !found {
			k.buckets = slices.Delete(k.buckets, i, i+1)
		}
		c.keep(key, k)
		return sum, false, fmt.Errorf("memstore: counter %q: adding %d overflows the sum: %w", key, n, store.ErrInvalid)
	}
	k.buckets[i].sum = in
	if in == 0 {
		k.buckets = slices.Delete(k.buckets, i, i+1)
	}
	c.keep(key, k)
	return after, true, nil
}

// keep stores k under key, or drops key when k holds nothing. c.mu is
// held.
func (c *Counters) keep(key string, k *counter) {
	if len(k.buckets) == 0 {
		delete(c.keys, key)
		return
	}
	c.keys[key] = k
}

// Sums answers the sum of each key over window ending at now, in the
// order of keys, zero for a key never added to (or whose amounts have all
// left the window). A window that is not positive is ErrInvalid.
func (c *Counters) Sums(ctx context.Context, keys []string, window time.Duration, now time.Time) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("counter sums", err)
	}
	if window <= 0 {
		return nil, store.InvalidField("window", "must be positive")
	}
	since := verifystore.CounterSince(now, window)
	out := make([]int64, len(keys))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, key := range keys {
		if k := c.keys[key]; k != nil {
			sum, ok := k.sum(since)
			if !ok {
				return nil, fmt.Errorf("memstore: counter %q: the sum overflows: %w", key, store.ErrInvalid)
			}
			out[i] = sum
		}
	}
	return out, nil
}

// sum adds the buckets that start at or after since; false when that
// overflows.
func (k *counter) sum(since time.Time) (int64, bool) {
	var sum int64
	i, _ := slices.BinarySearchFunc(k.buckets, since, func(b counterBucket, t time.Time) int { return b.start.Compare(t) })
	for _, b := range k.buckets[i:] {
		var ok bool
		if sum, ok = addInt64(sum, b.sum); !ok {
			return 0, false
		}
	}
	return sum, true
}

// stale reports whether all of k's amounts have left its window at now.
func (k *counter) stale(now time.Time) bool {
	return len(k.buckets) == 0 || k.buckets[len(k.buckets)-1].start.Before(verifystore.CounterSince(now, k.window))
}

// exceeds reports whether sum + n > limit, without overflowing.
func exceeds(sum, n, limit int64) bool {
	if n < 0 && limit > math.MaxInt64+n { // limit - n > MaxInt64 >= sum
		return false
	}
	return sum > limit-n
}

// addInt64 returns a + b, and false when that overflows.
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// Interface guards
var (
	_ verifystore.Verifications = (*Verifications)(nil)
	_ verifystore.Counters      = (*Counters)(nil)
)
