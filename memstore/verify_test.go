package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/notifykit/notify/verify/verifystore"
)

var verifyT0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func newTestVerification(i int, at time.Time) *verifystore.Verification {
	return &verifystore.Verification{
		ID: fmt.Sprintf("v-%d", i), Account: "acme", To: fmt.Sprintf("+91987654%04d", i%100), Purpose: "login",
		CodeHash: []byte{1}, Status: verifystore.VerificationPending, MaxChecks: 3, MaxSends: 3,
		CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute), UpdatedAt: at,
	}
}

// Ended verifications are dropped a day after they end, and not before;
// the indexes drop them too.
func TestVerificationsForgetEnded(t *testing.T) {
	ctx := context.Background()
	s := NewVerifications()
	const n = 3000
	for i := range n {
		at := verifyT0.Add(time.Duration(i) * time.Second)
		v := newTestVerification(i, at)
		if err := s.CreateVerification(ctx, v); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, ok, err := s.FinishVerification(ctx, "acme", v.ID, verifystore.VerificationApproved, at); err != nil || !ok {
				t.Fatalf("approve: %v %v", ok, err)
			}
		}
	}
	// The last verification ends at its ExpiresAt: it is kept a day after
	// it, though ExpireVerifications marked it later.
	last := newTestVerification(n-1, verifyT0.Add((n-1)*time.Second))
	end := last.ExpiresAt.Add(verificationRetention)
	if _, err := s.ExpireVerifications(ctx, end.Add(-time.Microsecond), 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verification(ctx, "acme", last.ID); err != nil {
		t.Fatalf("the last verification, a day after it ended less a microsecond: %v", err)
	}
	// Sweeps run at most once an hour of the callers' times: two hours on,
	// everything has been dropped, and the indexes with it.
	later := end.Add(2 * time.Hour)
	for h := range 3 {
		if _, err := s.ExpireVerifications(ctx, end.Add(time.Duration(h)*time.Hour), 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PendingVerification(ctx, "acme", last.To, "login", later); err == nil {
		t.Fatal("a pending verification a day after all ended")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) != 0 || len(s.byRecipient) != 0 || len(s.expiry) != 0 {
		t.Fatalf("after all ended a day ago: %d kept, %d recipients, %d to expire; want none",
			len(s.byID), len(s.byRecipient), len(s.expiry))
	}
}

// Under steady traffic the store holds about a day of verifications.
func TestVerificationsBounded(t *testing.T) {
	ctx := context.Background()
	s := NewVerifications()
	const perHour = 200
	maxKept := 0
	for i := range 5 * 24 * perHour { // five days
		at := verifyT0.Add(time.Duration(i) * time.Hour / perHour)
		v := newTestVerification(i, at)
		if err := s.CreateVerification(ctx, v); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.TakeSend(ctx, "acme", v.ID, at, 0); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		maxKept = max(maxKept, len(s.byID), len(s.expiry))
		s.mu.Unlock()
	}
	// A day and its ten minutes, an hour between sweeps, and the doubling.
	if limit := 26 * perHour; maxKept > limit {
		t.Fatalf("kept up to %d verifications at %d an hour, want at most %d", maxKept, perHour, limit)
	}
}

// A key whose amounts have all left its window is dropped by a sweep.
func TestCountersForgetKeys(t *testing.T) {
	ctx := context.Background()
	c := NewCounters()
	const w = 16 * time.Minute
	for i := range 5000 {
		if _, _, err := c.Add(ctx, fmt.Sprintf("k%d", i), 1, w, 0, verifyT0); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.Add(ctx, "hot", 1, w, 0, verifyT0.Add(w)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Add(ctx, "hot", 1, w, 0, verifyT0.Add(w+2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	n := len(c.keys)
	buckets := len(c.keys["hot"].buckets)
	c.mu.Unlock()
	if n != 1 || buckets != 2 {
		t.Fatalf("a window after 5000 keys were added to: %d keys, the hot one with %d buckets; want 1 and 2", n, buckets)
	}
	// A hot key keeps at most two windows of buckets.
	for i := range 1000 {
		if _, _, err := c.Add(ctx, "hot", 1, w, 0, verifyT0.Add(w+time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	buckets = len(c.keys["hot"].buckets)
	c.mu.Unlock()
	if buckets > 2*verifystore.CounterBuckets+1 {
		t.Fatalf("a hot key keeps %d buckets, want at most %d", buckets, 2*verifystore.CounterBuckets+1)
	}
	// Giving back all a bucket holds drops it, and the key with it.
	sum, _, err := c.Add(ctx, "gone", 5, w, 0, verifyT0.Add(w))
	if err == nil {
		sum, _, err = c.Add(ctx, "gone", -5, w, 0, verifyT0.Add(w))
	}
	c.mu.Lock()
	_, kept := c.keys["gone"]
	c.mu.Unlock()
	if err != nil || sum != 0 || kept {
		t.Fatalf("after giving all back: sum %d, %v, key kept %v", sum, err, kept)
	}
}

// Limits and overflow are exact at the ends of int64.
func TestCountersOverflow(t *testing.T) {
	ctx := context.Background()
	c := NewCounters()
	const w = time.Hour
	if sum, ok, err := c.Add(ctx, "k", 1<<62, w, 0, verifyT0); err != nil || !ok || sum != 1<<62 {
		t.Fatalf("Add(2^62) = %d, %v, %v", sum, ok, err)
	}
	if sum, _, err := c.Add(ctx, "k", 1<<62-1, w, 0, verifyT0); err != nil || sum != 1<<63-1 {
		t.Fatalf("Add up to MaxInt64 = %d, %v", sum, err)
	}
	if sum, ok, err := c.Add(ctx, "k", 1, w, 0, verifyT0); err == nil || ok {
		t.Fatalf("Add past MaxInt64 = %d, %v, %v; want an error", sum, ok, err)
	}
	if sum, _ := c.Sums(ctx, []string{"k"}, w, verifyT0); sum[0] != 1<<63-1 {
		t.Fatalf("after the refused Add the sum is %d", sum[0])
	}
	// A limit with a large give-back does not overflow.
	if sum, ok, err := c.Add(ctx, "k", -(1 << 62), w, 1<<62, verifyT0); err != nil || !ok || sum != 1<<62-1 {
		t.Fatalf("a give-back under a limit = %d, %v, %v", sum, ok, err)
	}
	if exceeds(0, -1<<63+1, 1<<62) || !exceeds(1<<62, 1, 1<<62) || exceeds(1<<62-1, 1, 1<<62) {
		t.Fatal("exceeds is wrong at the ends")
	}
}
