package storetest_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
	"github.com/notifykit/notify/verify/verifystore"
)

// simpleVerifications is a plain verifystore.Verifications: one mutex, one map,
// scans. With no defect it must pass RunVerifications; each defect must
// make it fail.
type simpleVerifications struct {
	defect string
	mu     sync.Mutex
	m      map[string]*verifystore.Verification
	order  []string // IDs in the order created
}

func (s *simpleVerifications) lock()   { s.mu.Lock() }
func (s *simpleVerifications) unlock() { s.mu.Unlock() }

func (s *simpleVerifications) ctx(ctx context.Context) error {
	if s.defect == "ignores-ctx" {
		return nil
	}
	return ctx.Err()
}

func (s *simpleVerifications) out(v *verifystore.Verification) *verifystore.Verification {
	switch s.defect {
	case "shares":
		return v
	case "shares-hash":
		c := *v
		c.Channels = slices.Clone(v.Channels)
		return &c
	}
	return verifystore.CloneVerification(v)
}

func (s *simpleVerifications) CreateVerification(ctx context.Context, v *verifystore.Verification) error {
	if err := s.ctx(ctx); err != nil {
		return err
	}
	if v.ID == "" || v.Account == "" || (len(v.CodeHash) == 0 && s.defect != "accepts-empty-hash") {
		return store.InvalidField("verification", "needs an ID, an account and a code hash")
	}
	s.lock()
	defer s.unlock()
	if old, ok := s.m[v.ID]; ok && (s.defect != "id-per-account" || old.Account == v.Account) {
		return fmt.Errorf("verification %q exists: %w", v.ID, store.ErrConflict)
	}
	c := verifystore.CloneVerification(v)
	switch s.defect {
	case "keeps-given":
		c = v
	case "millis":
		c.CreatedAt = c.CreatedAt.Truncate(time.Millisecond)
	case "channels-sorted":
		slices.Sort(c.Channels)
	}
	s.m[v.ID] = c
	s.order = append(s.order, v.ID)
	return nil
}

func (s *simpleVerifications) get(account, id string) (*verifystore.Verification, error) {
	v, ok := s.m[id]
	if !ok || (v.Account != account && s.defect != "other-account-visible") {
		return nil, fmt.Errorf("no verification %q: %w", id, store.ErrNotFound)
	}
	return v, nil
}

func (s *simpleVerifications) Verification(ctx context.Context, account, id string) (*verifystore.Verification, error) {
	s.lock()
	defer s.unlock()
	v, err := s.get(account, id)
	if err != nil {
		return nil, err
	}
	return s.out(v), nil
}

// statusAt is StatusAt, or a flawed one.
func (s *simpleVerifications) statusAt(v *verifystore.Verification, now time.Time) verifystore.VerificationStatus {
	switch s.defect {
	case "at-expiry":
		if v.Status == verifystore.VerificationPending && now.Equal(v.ExpiresAt) {
			return verifystore.VerificationPending
		}
	case "marked-still-counts":
		if v.Status == verifystore.VerificationExpired {
			c := *v
			c.Status = verifystore.VerificationPending
			return c.StatusAt(now)
		}
	}
	return v.StatusAt(now)
}

func (s *simpleVerifications) PendingVerification(ctx context.Context, account, to, purpose string, now time.Time) (*verifystore.Verification, error) {
	s.lock()
	defer s.unlock()
	var newest *verifystore.Verification
	for _, id := range s.order {
		v, ok := s.m[id]
		if !ok || v.Account != account || v.To != to || (v.Purpose != purpose && s.defect != "any-purpose") {
			continue
		}
		pending := s.statusAt(v, now) == verifystore.VerificationPending
		if s.defect == "pending-by-status" {
			pending = v.Status == verifystore.VerificationPending
		}
		if s.defect == "newest-only" {
			if newest == nil || !v.CreatedAt.Before(newest.CreatedAt) {
				newest = v
			}
			continue
		}
		if !pending {
			continue
		}
		if newest == nil || !v.CreatedAt.Before(newest.CreatedAt) || s.defect == "last-created" {
			newest = v
		}
	}
	if newest == nil || (s.defect == "newest-only" && s.statusAt(newest, now) != verifystore.VerificationPending) {
		return nil, fmt.Errorf("no pending verification: %w", store.ErrNotFound)
	}
	return s.out(newest), nil
}

func (s *simpleVerifications) take(ctx context.Context, racy, account, id string, now time.Time, ok func(v *verifystore.Verification) bool, count func(v *verifystore.Verification)) (*verifystore.Verification, bool, error) {
	if err := s.ctx(ctx); err != nil {
		return nil, false, err
	}
	s.lock()
	defer s.unlock()
	v, err := s.get(account, id)
	if err != nil {
		return nil, false, err
	}
	if !ok(v) {
		if s.defect == "refusal-touches" {
			v.UpdatedAt = now
		}
		return s.out(v), false, nil
	}
	if s.defect == racy {
		s.unlock()
		for range 10 {
			runtime.Gosched()
		}
		s.lock()
	}
	count(v)
	v.UpdatedAt = now
	return s.out(v), true, nil
}

func (s *simpleVerifications) TakeCheck(ctx context.Context, account, id string, now time.Time) (*verifystore.Verification, bool, error) {
	return s.take(ctx, "racy-check", account, id, now, func(v *verifystore.Verification) bool {
		switch s.defect {
		case "check-no-max":
			return v.Status == verifystore.VerificationPending && now.Before(v.ExpiresAt) && v.Checks <= v.MaxChecks
		case "check-after-finish":
			return now.Before(v.ExpiresAt) && v.Checks < v.MaxChecks
		}
		return s.statusAt(v, now) == verifystore.VerificationPending
	}, func(v *verifystore.Verification) { v.Checks++ })
}

func (s *simpleVerifications) TakeSend(ctx context.Context, account, id string, now time.Time, cooldown time.Duration) (*verifystore.Verification, bool, error) {
	return s.take(ctx, "racy-send", account, id, now, func(v *verifystore.Verification) bool {
		pending := s.statusAt(v, now) == verifystore.VerificationPending
		if s.defect == "send-ignores-checks" {
			pending = v.Status == verifystore.VerificationPending && now.Before(v.ExpiresAt)
		}
		if !pending || (v.Sends >= v.MaxSends && s.defect != "send-no-max") {
			return false
		}
		last := v.LastSentAt
		if s.defect == "cooldown-from-created" && last.IsZero() {
			last = v.CreatedAt
		}
		if last.IsZero() {
			return true
		}
		if s.defect == "cooldown-off-by-one" {
			return now.Sub(last) > cooldown
		}
		return now.Sub(last) >= cooldown
	}, func(v *verifystore.Verification) {
		v.Sends++
		if s.defect != "keeps-last-sent" {
			v.LastSentAt = now
		}
	})
}

func (s *simpleVerifications) FinishVerification(ctx context.Context, account, id string, status verifystore.VerificationStatus, now time.Time) (*verifystore.Verification, bool, error) {
	if status != verifystore.VerificationApproved && status != verifystore.VerificationCanceled && s.defect != "finish-any-status" {
		return nil, false, store.InvalidField("status", "approved or canceled")
	}
	return s.take(ctx, "racy-finish", account, id, now, func(v *verifystore.Verification) bool {
		switch s.defect {
		case "finish-twice":
			return v.Status != verifystore.VerificationExpired
		case "finish-by-statusat":
			return v.StatusAt(now) == verifystore.VerificationPending
		}
		return v.Status == verifystore.VerificationPending
	}, func(v *verifystore.Verification) { v.Status = status })
}

func (s *simpleVerifications) ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error) {
	if err := s.ctx(ctx); err != nil {
		return 0, err
	}
	s.lock()
	defer s.unlock()
	n := 0
	for _, id := range s.order {
		v, ok := s.m[id]
		if !ok {
			continue
		}
		ended := v.Status != verifystore.VerificationPending || !now.Before(v.ExpiresAt)
		if s.defect == "drops-ended" && ended && now.Sub(v.ExpiresAt) > 20*time.Hour {
			delete(s.m, id) // a day is 24 hours
			continue
		}
		if n >= limit && s.defect != "expire-no-limit" {
			continue
		}
		due := !v.ExpiresAt.After(now)
		if s.defect == "expire-strict" {
			due = v.ExpiresAt.Before(now)
		}
		if s.defect == "expire-skips-spent" && v.Checks >= v.MaxChecks {
			due = false
		}
		if due && (v.Status == verifystore.VerificationPending || (s.defect == "expire-finished" && v.Status == verifystore.VerificationApproved)) {
			v.Status = verifystore.VerificationExpired
			n++
		}
	}
	if s.defect == "expire-miscount" && n > 0 {
		n--
	}
	return n, nil
}

// simpleCounters is a plain verifystore.Counters: it keeps every amount with
// its time and adds them up on each call. With no defect it must pass
// RunCounters; each defect must make it fail.
type simpleCounters struct {
	defect string
	mu     sync.Mutex
	m      map[string][]simpleAmount
}

type simpleAmount struct {
	at time.Time
	n  int64
}

func (c *simpleCounters) key(k string) string {
	switch c.defect {
	case "global-key":
		return ""
	case "cut-at-nul":
		k, _, _ = strings.Cut(k, "\x00")
		return k
	}
	return k
}

func (c *simpleCounters) counts(a simpleAmount, window time.Duration, now time.Time) bool {
	switch c.defect {
	case "no-window":
		return true
	case "exact-window":
		return a.at.After(now.Add(-window))
	case "bucket-short":
		size := max(window/verifystore.CounterBuckets, time.Microsecond)
		return !verifystore.CounterBucket(a.at, window).Before(verifystore.CounterSince(now, window).Add(size))
	}
	return !verifystore.CounterBucket(a.at, window).Before(verifystore.CounterSince(now, window))
}

func (c *simpleCounters) sum(key string, window time.Duration, now time.Time) int64 {
	var sum int64
	for _, a := range c.m[c.key(key)] {
		if c.counts(a, window, now) {
			sum += a.n
		}
	}
	return sum
}

func (c *simpleCounters) Add(ctx context.Context, key string, n int64, window time.Duration, limit int64, now time.Time) (int64, bool, error) {
	if err := ctx.Err(); err != nil && c.defect != "ignores-ctx" {
		return 0, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := c.sum(key, window, now)
	if n < 0 && c.defect == "no-give-back" {
		return sum, false, nil
	}
	over := sum+n > limit
	if c.defect == "limit-ge" {
		over = sum+n >= limit
	}
	if limit > 0 && over {
		switch c.defect {
		case "refusal-adds":
			c.m[c.key(key)] = append(c.m[c.key(key)], simpleAmount{now, n})
		case "refusal-answers-new":
			return sum + n, false, nil
		}
		return sum, false, nil
	}
	if c.defect == "racy" || (c.defect == "lost-update" && limit == 0) {
		list := c.m[c.key(key)]
		c.mu.Unlock()
		for range 10 {
			runtime.Gosched()
		}
		c.mu.Lock()
		c.m[c.key(key)] = append(slices.Clip(list), simpleAmount{now, n})
		return sum + n, true, nil
	}
	c.m[c.key(key)] = append(c.m[c.key(key)], simpleAmount{now, n})
	return sum + n, true, nil
}

func (c *simpleCounters) Sums(ctx context.Context, keys []string, window time.Duration, now time.Time) ([]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, 0, len(keys))
	seen := map[string]bool{}
	for _, k := range keys {
		if c.defect == "sums-dedup" && seen[k] {
			continue
		}
		seen[k] = true
		if _, ok := c.m[c.key(k)]; !ok && c.defect == "skips-unknown" {
			continue
		}
		out = append(out, c.sum(k, window, now))
	}
	return out, nil
}

func runVerifySuites(t *testing.T, defect string) {
	t.Run("Verifications", func(t *testing.T) {
		storetest.RunVerifications(t, storetest.VerificationsHarness{
			New: func(t *testing.T) verifystore.Verifications {
				return &simpleVerifications{defect: defect, m: map[string]*verifystore.Verification{}}
			},
		})
	})
	t.Run("Counters", func(t *testing.T) {
		storetest.RunCounters(t, storetest.CountersHarness{
			New: func(t *testing.T) verifystore.Counters {
				return &simpleCounters{defect: defect, m: map[string][]simpleAmount{}}
			},
		})
	})
}

// TestSimpleVerifications shows that plain, correct stores pass the
// suites.
func TestSimpleVerifications(t *testing.T) {
	runVerifySuites(t, "")
}

// TestVerifyFlawedHelper runs the suites against flawed stores when
// started by TestVerifySuitesCatchDefects in a child process; its failure
// is expected.
func TestVerifyFlawedHelper(t *testing.T) {
	runVerifySuites(t, childDefect(t, "STORETEST_VERIFY_DEFECT"))
}

func TestVerifySuitesCatchDefects(t *testing.T) {
	wantDefectsCaught(t, "TestVerifyFlawedHelper", "STORETEST_VERIFY_DEFECT", []flaw{
		{"shares", "Verifications/CallersCannotChangeStore"},
		{"shares-hash", "Verifications/CallersCannotChangeStore"},
		{"keeps-given", "Verifications/CallersCannotChangeStore"},
		{"millis", "Verifications/RoundTrip"},
		{"channels-sorted", "Verifications/RoundTrip"},
		{"keeps-last-sent", "Verifications/RoundTrip"},
		{"id-per-account", "Verifications/IDInUse"},
		{"accepts-empty-hash", "Verifications/Invalid"},
		{"other-account-visible", "Verifications/NotFound"},
		{"any-purpose", "Verifications/Pending"},
		{"last-created", "Verifications/Pending"},
		{"pending-by-status", "Verifications/Pending"},
		{"newest-only", "Verifications/Pending"},
		{"check-no-max", "Verifications/TakeCheck"},
		{"refusal-touches", "Verifications/TakeCheck"},
		{"at-expiry", "Verifications/TakeCheckExpiry"},
		{"check-after-finish", "Verifications/TakeCheckAfterFinish"},
		{"send-no-max", "Verifications/TakeSend"},
		{"cooldown-from-created", "Verifications/TakeSend"},
		{"cooldown-off-by-one", "Verifications/TakeSendCooldown"},
		{"send-ignores-checks", "Verifications/TakeSendEnded"},
		{"finish-twice", "Verifications/Finish"},
		{"finish-any-status", "Verifications/Finish"},
		{"finish-by-statusat", "Verifications/ApproveAfterExpiry"},
		{"expire-strict", "Verifications/Expire"},
		{"expire-no-limit", "Verifications/Expire"},
		{"expire-finished", "Verifications/Expire"},
		{"expire-miscount", "Verifications/Expire"},
		{"expire-skips-spent", "Verifications/Expire"},
		{"marked-still-counts", "Verifications/Expire"},
		{"drops-ended", "Verifications/KeptADay"},
		{"ignores-ctx", "Verifications/CanceledContext"},
		{"ignores-ctx", "Counters/CanceledContext"},
		{"racy-check", "Verifications/ConcurrentTakeCheck"},
		{"racy-send", "Verifications/ConcurrentTakeSend"},
		{"racy-finish", "Verifications/ConcurrentFinish"},
		{"global-key", "Counters/KeysIndependent"},
		{"cut-at-nul", "Counters/KeysIndependent"},
		{"limit-ge", "Counters/Limit"},
		{"refusal-adds", "Counters/Limit"},
		{"refusal-answers-new", "Counters/Limit"},
		{"no-give-back", "Counters/GiveBack"},
		{"no-window", "Counters/Window"},
		{"exact-window", "Counters/Window"},
		{"exact-window", "Counters/WindowBoundaries"},
		{"bucket-short", "Counters/WindowBoundaries"},
		{"bucket-short", "Counters/LimitSlides"},
		{"sums-dedup", "Counters/Sums"},
		{"skips-unknown", "Counters/Sums"},
		{"racy", "Counters/ConcurrentLimit"},
		{"lost-update", "Counters/ConcurrentAdd"},
	})
}
