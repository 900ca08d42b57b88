package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/store"
)

// IdempotencyHarness connects RunIdempotency to one store.Keys.
type IdempotencyHarness struct {
	// New returns an empty store whose entries live for ttl and whose
	// reservations hold their key for lease, dated by the clock now, which
	// the suite moves forward to test expiry; it releases the store with
	// t.Cleanup. Required.
	New func(t *testing.T, ttl, lease time.Duration, now func() time.Time) store.Keys

	// IgnoresClock tells the suite that the store dates entries by a
	// clock of its own (a database's, say); the expiry subtests are then
	// skipped.
	IgnoresClock bool
}

// RunIdempotency checks a store.Keys:
//
//   - the first Reserve of a key gets it: a zero Reservation, no error;
//   - while it is reserved, Reserve is ErrConflict, whatever the
//     fingerprint;
//   - after Complete, Reserve with the same fingerprint returns the stored
//     receipt, exactly the bytes completed (whatever they are: JSON with
//     spaces, NUL bytes, invalid UTF-8, 64 KiB), and with another
//     fingerprint is ErrConflict; a second Complete is ErrConflict and
//     keeps the first receipt;
//   - Complete does not retain the receipt: changing the caller's slice
//     afterwards changes nothing in the store;
//   - Release frees a reserved key; releasing a completed key keeps its
//     receipt; releasing an unknown key is no error;
//   - keys belong to accounts: the same key on two accounts is two keys;
//   - a reservation holds its key for the lease, and not after: then
//     Reserve with the same fingerprint takes the key over and reports
//     when the abandoned reservation was made, and with another one is
//     still ErrConflict; a completed key is not abandoned;
//   - Complete works on a reservation whose lease ran out, and is
//     ErrNotFound for a key never reserved;
//   - receipts expire after the TTL, and not before;
//   - of 64 goroutines reserving one key at once, exactly one gets it.
func RunIdempotency(t *testing.T, h IdempotencyHarness) {
	t.Helper()
	needs(t, h.New != nil, "IdempotencyHarness needs New")
	runAll(t, []subtest{
		{"FirstReserve", func(t *testing.T) { testFirstReserve(t, h) }},
		{"InFlightIsConflict", func(t *testing.T) { testInFlight(t, h) }},
		{"CompletedRepeat", func(t *testing.T) { testCompletedRepeat(t, h) }},
		{"ReceiptBytes", func(t *testing.T) { testReceiptBytes(t, h) }},
		{"ReceiptNotRetained", func(t *testing.T) { testReceiptNotRetained(t, h) }},
		{"OtherFingerprint", func(t *testing.T) { testOtherFingerprint(t, h) }},
		{"Release", func(t *testing.T) { testRelease(t, h) }},
		{"KeysPerAccount", func(t *testing.T) { testKeysPerAccount(t, h) }},
		{"ReceiptExpires", func(t *testing.T) { testReceiptExpires(t, h) }},
		{"LeaseExpires", func(t *testing.T) { testLeaseExpires(t, h) }},
		{"CompleteAfterLease", func(t *testing.T) { testCompleteAfterLease(t, h) }},
		{"ConcurrentReserve", func(t *testing.T) { testConcurrentReserve(t, h) }},
	})
}

const (
	idemTTL   = time.Hour
	idemLease = time.Minute
)

func newIdem(t *testing.T, h IdempotencyHarness) (store.Keys, *testclock.Clock, string) {
	t.Helper()
	c := testclock.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	s := h.New(t, idemTTL, idemLease, c.Now)
	if s == nil {
		t.Fatal("IdempotencyHarness.New returned nil")
	}
	return s, c, newName("acct")
}

// newClockedIdem is newIdem for a subtest that moves the store's clock:
// skipped for a store that keeps its own (IdempotencyHarness.IgnoresClock).
func newClockedIdem(t *testing.T, h IdempotencyHarness) (store.Keys, *testclock.Clock, string) {
	t.Helper()
	if h.IgnoresClock {
		t.Skip("the store keeps its own clock (IdempotencyHarness.IgnoresClock)")
	}
	return newIdem(t, h)
}

func reserve(t *testing.T, s store.Keys, account, key, fp string) []byte {
	t.Helper()
	r, err := s.Reserve(context.Background(), account, key, fp)
	if err != nil {
		t.Fatalf("Reserve(%s): %v", key, err)
	}
	if r.Receipt != nil && !r.Abandoned.IsZero() {
		t.Fatalf("Reserve(%s) returned a receipt and an abandoned reservation at once", key)
	}
	return r.Receipt
}

// wantReserved fails t unless Reserve gives the caller a key that no one
// held.
func wantReserved(t *testing.T, s store.Keys, account, key, fp string) {
	t.Helper()
	r, err := s.Reserve(context.Background(), account, key, fp)
	switch {
	case err != nil:
		t.Fatalf("Reserve(%s): %v", key, err)
	case r.Receipt != nil:
		t.Fatalf("Reserve(%s) returned a receipt of %d bytes, want the key", key, len(r.Receipt))
	case !r.Abandoned.IsZero():
		t.Fatalf("Reserve(%s) reported an abandoned reservation of %v, want a free key", key, r.Abandoned)
	}
}

func complete(t *testing.T, s store.Keys, account, key string, r []byte) {
	t.Helper()
	if err := s.Complete(context.Background(), account, key, r); err != nil {
		t.Fatalf("Complete(%s): %v", key, err)
	}
}

func testFirstReserve(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	wantReserved(t, s, acct, newName("key"), "fp")
}

func testInFlight(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	_, err := s.Reserve(context.Background(), acct, key, "fp")
	wantErr(t, "Reserve of a key in flight", err, store.ErrConflict)
	wantShownToSender(t, "Reserve of a key in flight", err)
	_, err = s.Reserve(context.Background(), acct, key, "other")
	wantErr(t, "Reserve of a key in flight, other fingerprint", err, store.ErrConflict)
}

func testCompletedRepeat(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	want := sampleReceipt(acct)
	complete(t, s, acct, key, want)
	for i := 0; i < 2; i++ {
		got := reserve(t, s, acct, key, "fp")
		if got == nil {
			t.Fatalf("repeat %d of a completed key got the key again, want the receipt", i)
		}
		if d := diffReceipt(got, want); d != "" {
			t.Fatalf("repeat %d: receipt differs: %s", i, d)
		}
	}
	// A key completes once: a second Complete, with this receipt or
	// another, is ErrConflict and keeps the first.
	for _, again := range [][]byte{want, sampleReceipt(acct)} {
		err := s.Complete(context.Background(), acct, key, again)
		wantErr(t, "a second Complete of a key", err, store.ErrConflict)
	}
	if d := diffReceipt(reserve(t, s, acct, key, "fp"), want); d != "" {
		t.Fatalf("after a refused second Complete: receipt differs: %s", d)
	}
}

// testReceiptBytes: a store keeps a receipt's bytes as they are, whatever
// they are; it neither parses nor normalises them.
func testReceiptBytes(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	odd := oddReceipts()
	names := make([]string, 0, len(odd))
	for name := range odd {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := odd[name]
		key := newName("key")
		wantReserved(t, s, acct, key, "fp")
		complete(t, s, acct, key, bytes.Clone(want))
		if d := diffReceipt(reserve(t, s, acct, key, "fp"), want); d != "" {
			t.Errorf("receipt %s: %s", name, d)
		}
	}
}

// testReceiptNotRetained: Complete copies the receipt; the caller may
// reuse its slice at once.
func testReceiptNotRetained(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	want := sampleReceipt(acct)
	mine := bytes.Clone(want)
	complete(t, s, acct, key, mine)
	for i := range mine {
		mine[i] = 'X'
	}
	if d := diffReceipt(reserve(t, s, acct, key, "fp"), want); d != "" {
		t.Fatalf("after the caller changed the receipt it completed: %s", d)
	}
}

func testOtherFingerprint(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	complete(t, s, acct, key, sampleReceipt(acct))
	_, err := s.Reserve(context.Background(), acct, key, "another request")
	wantErr(t, "Reserve of a completed key with another fingerprint", err, store.ErrConflict)
	wantShownToSender(t, "Reserve of a completed key with another fingerprint", err)
}

func testRelease(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	ctx := context.Background()
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	if err := s.Release(ctx, acct, key); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantReserved(t, s, acct, key, "another fingerprint")

	done := newName("key")
	wantReserved(t, s, acct, done, "fp")
	want := sampleReceipt(acct)
	complete(t, s, acct, done, want)
	if err := s.Release(ctx, acct, done); err != nil {
		t.Fatalf("Release of a completed key: %v", err)
	}
	if got := reserve(t, s, acct, done, "fp"); got == nil || diffReceipt(got, want) != "" {
		t.Fatalf("Release dropped a completed key's receipt: Reserve = %q", got)
	}
	if err := s.Release(ctx, acct, newName("never")); err != nil {
		t.Fatalf("Release of an unknown key: %v", err)
	}
}

func testKeysPerAccount(t *testing.T, h IdempotencyHarness) {
	s, _, a := newIdem(t, h)
	b := newName("acct")
	key := newName("key")
	wantReserved(t, s, a, key, "fp")
	wantReserved(t, s, b, key, "fp")
	ra, rb := sampleReceipt(a), sampleReceipt(b)
	complete(t, s, a, key, ra)
	complete(t, s, b, key, rb)
	if got := reserve(t, s, a, key, "fp"); got == nil || diffReceipt(got, ra) != "" {
		t.Errorf("account a got receipt %q, want its own %q", got, ra)
	}
	if got := reserve(t, s, b, key, "fp"); got == nil || diffReceipt(got, rb) != "" {
		t.Errorf("account b got receipt %q, want its own %q", got, rb)
	}
}

func testReceiptExpires(t *testing.T, h IdempotencyHarness) {
	s, c, acct := newClockedIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	c.Advance(idemTTL / 2)
	want := sampleReceipt(acct)
	complete(t, s, acct, key, want)
	// The receipt lives for the TTL from Complete, not from Reserve.
	c.Advance(idemTTL - time.Second)
	if got := reserve(t, s, acct, key, "fp"); got == nil || diffReceipt(got, want) != "" {
		t.Fatalf("a second before expiry: Reserve = %q, want the receipt", got)
	}
	c.Advance(2 * time.Second)
	wantReserved(t, s, acct, key, "fp")
}

func testLeaseExpires(t *testing.T, h IdempotencyHarness) {
	s, c, acct := newClockedIdem(t, h)
	key := newName("key")
	reservedAt := c.Now()
	wantReserved(t, s, acct, key, "fp")
	c.Advance(idemLease - time.Second)
	_, err := s.Reserve(context.Background(), acct, key, "fp")
	wantErr(t, "Reserve a second before the lease runs out", err, store.ErrConflict)
	c.Advance(2 * time.Second)
	// Another request never takes the key over: the abandoned send may
	// have gone out, and its repeat must find it.
	_, err = s.Reserve(context.Background(), acct, key, "other fp")
	wantErr(t, "Reserve with another fingerprint after the lease", err, store.ErrConflict)
	r, err := s.Reserve(context.Background(), acct, key, "fp")
	if err != nil || r.Receipt != nil {
		t.Fatalf("Reserve after the lease = %+v, %v; want the key", r, err)
	}
	if !r.Abandoned.Equal(reservedAt) {
		t.Fatalf("Reserve after the lease: Abandoned = %v, want the first reservation's time %v", r.Abandoned, reservedAt)
	}
	// The new holder has a lease of its own.
	_, err = s.Reserve(context.Background(), acct, key, "fp")
	wantErr(t, "Reserve of a key taken over", err, store.ErrConflict)

	// A completed key is not a reservation: no lease, no abandonment.
	done := newName("key")
	wantReserved(t, s, acct, done, "fp")
	want := sampleReceipt(acct)
	complete(t, s, acct, done, want)
	c.Advance(2 * idemLease)
	if got := reserve(t, s, acct, done, "fp"); got == nil || diffReceipt(got, want) != "" {
		t.Fatalf("Reserve of a completed key after a lease = %q, want its receipt", got)
	}
	// A released key is free, not abandoned.
	rel := newName("key")
	wantReserved(t, s, acct, rel, "fp")
	if err := s.Release(context.Background(), acct, rel); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * idemLease)
	wantReserved(t, s, acct, rel, "fp")
}

func testCompleteAfterLease(t *testing.T, h IdempotencyHarness) {
	s, c, acct := newClockedIdem(t, h)
	key := newName("key")
	wantReserved(t, s, acct, key, "fp")
	c.Advance(idemLease + time.Second)
	want := sampleReceipt(acct)
	complete(t, s, acct, key, want)
	if got := reserve(t, s, acct, key, "fp"); got == nil || diffReceipt(got, want) != "" {
		t.Fatalf("Reserve after a Complete past the lease = %q, want its receipt", got)
	}
	err := s.Complete(context.Background(), acct, newName("never"), want)
	wantErr(t, "Complete of a key never reserved", err, store.ErrNotFound)
}

func testConcurrentReserve(t *testing.T, h IdempotencyHarness) {
	s, _, acct := newIdem(t, h)
	key := newName("key")
	wantOneWins(t, "Reserve", "got the key", func() error {
		r, err := s.Reserve(context.Background(), acct, key, "fp")
		if err == nil && r.Receipt != nil {
			return fmt.Errorf("returned a receipt (%q) of a send that never completed", r.Receipt)
		}
		return err
	})
}
