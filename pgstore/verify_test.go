package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// verifyT0 has nanoseconds, which the store drops.
var verifyT0 = time.Date(2025, 3, 4, 5, 6, 7, 891_234_567, time.UTC)

// newVerification returns a pending verification created at
// verifyT0, expiring ten minutes later, with 5 checks and 3 sends.
func newVerification(id string) *verifystore.Verification {
	return &verifystore.Verification{
		ID: id, Account: "acme", To: "+919876543210", Purpose: "login",
		Channels: []string{"sms", "chat"}, CodeHash: []byte{0, 1, 2, 0xff}, Length: 6,
		Status: verifystore.VerificationPending, MaxChecks: 5, MaxSends: 3,
		Prefix: "+9198765", Country: "IN",
		CreatedAt: verifyT0, UpdatedAt: verifyT0, ExpiresAt: verifyT0.Add(10 * time.Minute),
	}
}

// kept is v as the store keeps it: its times at the microsecond.
func kept(v *verifystore.Verification) *verifystore.Verification {
	c := verifystore.CloneVerification(v)
	c.CreatedAt = c.CreatedAt.Truncate(time.Microsecond)
	c.UpdatedAt = c.UpdatedAt.Truncate(time.Microsecond)
	c.ExpiresAt = c.ExpiresAt.Truncate(time.Microsecond)
	c.LastSentAt = c.LastSentAt.Truncate(time.Microsecond)
	return c
}

func createVerification(t testing.TB, s *pgstore.Store, v *verifystore.Verification) {
	t.Helper()
	if err := s.CreateVerification(context.Background(), v); err != nil {
		t.Fatalf("CreateVerification(%s): %v", v.ID, err)
	}
}

func wantVerification(t testing.TB, what string, got, want *verifystore.Verification) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s =\n%+v, want\n%+v", what, got, want)
	}
}

// TestVerificationRoundTrip: a verification reads back as created, at
// the microsecond, for its account only; an ID in use is a conflict,
// from any account; a bad field is invalid and names itself, without the
// code hash.
func TestVerificationRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	v := newVerification("v1")
	createVerification(t, s, v)
	v.Channels[0] = "email" // the store copied them
	got, err := s.Verification(ctx, "acme", "v1")
	must(t, err)
	want := kept(newVerification("v1"))
	wantVerification(t, "Verification", got, want)
	if !got.LastSentAt.IsZero() || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("LastSentAt %v, CreatedAt in %v", got.LastSentAt, got.CreatedAt.Location())
	}

	_, err = s.Verification(ctx, "beta", "v1")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.Verification(ctx, "acme", "nope")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.Verification(ctx, "acme", "bad\x00id")
	wantErr(t, err, store.ErrNotFound)
	_, _, err = s.TakeCheck(ctx, "beta", "v1", verifyT0)
	wantErr(t, err, store.ErrNotFound)

	dup := newVerification("v1")
	dup.Account = "beta"
	wantErr(t, s.CreateVerification(ctx, dup), store.ErrConflict)

	// No channels, a last send, an address.
	e := newVerification("v2")
	e.Channels, e.To, e.Prefix, e.Country, e.Purpose = nil, "a@example.com", "", "", ""
	e.LastSentAt = verifyT0.Add(time.Second)
	createVerification(t, s, e)
	got, err = s.Verification(ctx, "acme", "v2")
	must(t, err)
	wantVerification(t, "Verification(v2)", got, kept(e))

	for name, c := range map[string]struct {
		edit  func(*verifystore.Verification)
		field string
	}{
		"no ID":        {func(v *verifystore.Verification) { v.ID = "" }, "id"},
		"no account":   {func(v *verifystore.Verification) { v.Account = "" }, "account"},
		"no code hash": {func(v *verifystore.Verification) { v.CodeHash = nil }, "code_hash"},
		"NUL purpose":  {func(v *verifystore.Verification) { v.Purpose = "a\x00b" }, "purpose"},
		"bad UTF-8":    {func(v *verifystore.Verification) { v.To = "\xff" }, "to"},
		"bad status":   {func(v *verifystore.Verification) { v.Status = verifystore.VerificationMaxAttempts }, "status"},
	} {
		v := newVerification("v-" + strings.ReplaceAll(name, " ", "-"))
		v.CodeHash = []byte("SECRET-HASH")
		c.edit(v)
		err := s.CreateVerification(ctx, v)
		wantErr(t, err, store.ErrInvalid)
		var fe record.FieldErrors
		if !errors.As(err, &fe) || fe[0].Field != c.field {
			t.Errorf("%s: %v, want a FieldErrors naming %s", name, err, c.field)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the error %q holds the code hash", name, err)
		}
	}
	wantErr(t, s.CreateVerification(ctx, nil), store.ErrInvalid)
}

// TestTakeCheck counts checks up to MaxChecks, and none after expiry or
// once finished, answering the verification as it is.
func TestTakeCheck(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	createVerification(t, s, newVerification("v1"))
	for i := 1; i <= 5; i++ {
		at := verifyT0.Add(time.Duration(i) * time.Second)
		v, ok, err := s.TakeCheck(ctx, "acme", "v1", at)
		must(t, err)
		if !ok || v.Checks != i || !v.UpdatedAt.Equal(at.Truncate(time.Microsecond)) {
			t.Fatalf("check %d: %v, checks %d, updated %v", i, ok, v.Checks, v.UpdatedAt)
		}
	}
	v, ok, err := s.TakeCheck(ctx, "acme", "v1", verifyT0.Add(time.Minute))
	must(t, err)
	if ok || v.Checks != 5 || v.StatusAt(verifyT0.Add(time.Minute)) != verifystore.VerificationMaxAttempts {
		t.Fatalf("sixth check: %v, %+v", ok, v)
	}

	// Expiry: at ExpiresAt no check counts, a nanosecond before one does.
	createVerification(t, s, newVerification("v2"))
	exp := verifyT0.Add(10 * time.Minute).Truncate(time.Microsecond)
	if _, ok, err := s.TakeCheck(ctx, "acme", "v2", exp); err != nil || ok {
		t.Fatalf("check at expiry: %v, %v", ok, err)
	}
	if v, ok, err := s.TakeCheck(ctx, "acme", "v2", exp.Add(-time.Nanosecond)); err != nil || !ok || v.Checks != 1 {
		t.Fatalf("check a nanosecond before expiry: %v, %v", ok, err)
	}

	// Finished: no check counts.
	createVerification(t, s, newVerification("v3"))
	if _, ok, err := s.FinishVerification(ctx, "acme", "v3", verifystore.VerificationCanceled, verifyT0); err != nil || !ok {
		t.Fatalf("cancel: %v, %v", ok, err)
	}
	v, ok, err = s.TakeCheck(ctx, "acme", "v3", verifyT0)
	must(t, err)
	if ok || v.Checks != 0 || v.Status != verifystore.VerificationCanceled {
		t.Fatalf("check of a canceled verification: %v, %+v", ok, v)
	}
}

// TestTakeCheckConcurrent: 50 checks at once of one verification allowing
// 5, through two stores (two instances), count exactly 5.
func TestTakeCheckConcurrent(t *testing.T) {
	schema := pgstoretest.Schema(t)
	stores := []*pgstore.Store{pgstoretest.Store(t, schema), pgstoretest.Store(t, schema)}
	ctx := context.Background()
	createVerification(t, stores[0], newVerification("hot"))
	const callers = 50
	var granted atomic.Int64
	seen := make([]atomic.Bool, 6)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			v, ok, err := stores[i%2].TakeCheck(ctx, "acme", "hot", verifyT0)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				granted.Add(1)
				if v.Checks < 1 || v.Checks > 5 || seen[v.Checks].Swap(true) {
					t.Errorf("a granted check answered Checks %d", v.Checks)
				}
			} else if v.Checks != 5 {
				t.Errorf("a refused check answered Checks %d, want 5", v.Checks)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := granted.Load(); n != 5 {
		t.Fatalf("%d checks granted, want 5", n)
	}
	v, err := stores[1].Verification(ctx, "acme", "hot")
	must(t, err)
	if v.Checks != 5 {
		t.Fatalf("Checks = %d", v.Checks)
	}
}

// TestTakeSend counts sends up to MaxSends, apart by the cooldown.
func TestTakeSend(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	createVerification(t, s, newVerification("v1"))
	const cooldown = 30 * time.Second
	v, ok, err := s.TakeSend(ctx, "acme", "v1", verifyT0, cooldown)
	must(t, err)
	if !ok || v.Sends != 1 || !v.LastSentAt.Equal(verifyT0.Truncate(time.Microsecond)) {
		t.Fatalf("first send: %v, %+v", ok, v)
	}
	// Within the cooldown of the kept last send (at the microsecond), to
	// the nanosecond.
	last := verifyT0.Truncate(time.Microsecond)
	v, ok, err = s.TakeSend(ctx, "acme", "v1", last.Add(cooldown-time.Nanosecond), cooldown)
	must(t, err)
	if ok || v.Sends != 1 {
		t.Fatalf("send within the cooldown: %v, %+v", ok, v)
	}
	// Exactly the cooldown after it.
	if v, ok, err = s.TakeSend(ctx, "acme", "v1", last.Add(cooldown), cooldown); err != nil || !ok || v.Sends != 2 {
		t.Fatalf("send after the cooldown: %v, %v, %+v", ok, err, v)
	}
	if v, ok, err = s.TakeSend(ctx, "acme", "v1", last.Add(2*cooldown), cooldown); err != nil || !ok || v.Sends != 3 {
		t.Fatalf("third send: %v, %v, %+v", ok, err, v)
	}
	v, ok, err = s.TakeSend(ctx, "acme", "v1", last.Add(5*cooldown), cooldown)
	must(t, err)
	if ok || v.Sends != 3 {
		t.Fatalf("fourth send of 3: %v, %+v", ok, v)
	}
	_, _, err = s.TakeSend(ctx, "beta", "v1", last.Add(5*cooldown), cooldown)
	wantErr(t, err, store.ErrNotFound)

	// No send once the checks are spent, or after expiry.
	m := newVerification("maxed")
	m.MaxChecks = 1
	createVerification(t, s, m)
	_, _, err = s.TakeCheck(ctx, "acme", "maxed", verifyT0)
	must(t, err)
	if _, ok, err := s.TakeSend(ctx, "acme", "maxed", verifyT0, 0); err != nil || ok {
		t.Fatalf("send with no checks left: %v, %v", ok, err)
	}
	createVerification(t, s, newVerification("late"))
	if _, ok, err := s.TakeSend(ctx, "acme", "late", verifyT0.Add(10*time.Minute), 0); err != nil || ok {
		t.Fatalf("send at expiry: %v, %v", ok, err)
	}
}

// TestTakeSendConcurrent: 40 sends at once allowing 3, with no cooldown,
// count exactly 3; with a cooldown, exactly 1.
func TestTakeSendConcurrent(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for _, c := range []struct {
		id       string
		cooldown time.Duration
		want     int64
	}{{"no-cooldown", 0, 3}, {"cooldown", time.Minute, 1}} {
		createVerification(t, s, newVerification(c.id))
		var granted atomic.Int64
		var wg sync.WaitGroup
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ok, err := s.TakeSend(ctx, "acme", c.id, verifyT0, c.cooldown)
				if err != nil {
					t.Error(err)
				} else if ok {
					granted.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := granted.Load(); n != c.want {
			t.Errorf("%s: %d sends granted, want %d", c.id, n, c.want)
		}
	}
}

// TestFinishVerification moves a pending verification once, even past
// its expiry, and refuses other statuses.
func TestFinishVerification(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	createVerification(t, s, newVerification("v1"))
	_, _, err := s.FinishVerification(ctx, "acme", "v1", verifystore.VerificationExpired, verifyT0)
	wantErr(t, err, store.ErrInvalid)
	_, _, err = s.FinishVerification(ctx, "acme", "v1", "", verifyT0)
	wantErr(t, err, store.ErrInvalid)
	// A check counted before the expiry approves after it.
	late := verifyT0.Add(11 * time.Minute)
	v, ok, err := s.FinishVerification(ctx, "acme", "v1", verifystore.VerificationApproved, late)
	must(t, err)
	if !ok || v.Status != verifystore.VerificationApproved || !v.UpdatedAt.Equal(late.Truncate(time.Microsecond)) {
		t.Fatalf("approve: %v, %+v", ok, v)
	}
	v, ok, err = s.FinishVerification(ctx, "acme", "v1", verifystore.VerificationCanceled, late)
	must(t, err)
	if ok || v.Status != verifystore.VerificationApproved {
		t.Fatalf("cancel after approve: %v, %+v", ok, v)
	}
	_, _, err = s.FinishVerification(ctx, "beta", "v1", verifystore.VerificationCanceled, late)
	wantErr(t, err, store.ErrNotFound)

	// Of concurrent finishes exactly one applies.
	createVerification(t, s, newVerification("v2"))
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := verifystore.VerificationApproved
			if i%2 == 1 {
				status = verifystore.VerificationCanceled
			}
			_, ok, err := s.FinishVerification(ctx, "acme", "v2", status, verifyT0)
			if err != nil {
				t.Error(err)
			} else if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d finishes applied, want 1", wins.Load())
	}
}

// TestPendingVerification finds the newest verification pending at now.
func TestPendingVerification(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	_, err := s.PendingVerification(ctx, "acme", "+919876543210", "login", verifyT0)
	wantErr(t, err, store.ErrNotFound)

	old := newVerification("old")
	createVerification(t, s, old)
	newer := newVerification("newer")
	newer.CreatedAt = verifyT0.Add(time.Minute)
	newer.ExpiresAt = verifyT0.Add(3 * time.Minute)
	createVerification(t, s, newer)
	other := newVerification("other-purpose")
	other.Purpose, other.CreatedAt = "signup", verifyT0.Add(2*time.Minute)
	createVerification(t, s, other)

	pending := func(now time.Time) string {
		t.Helper()
		v, err := s.PendingVerification(ctx, "acme", "+919876543210", "login", now)
		if err != nil {
			wantErr(t, err, store.ErrNotFound)
			return ""
		}
		return v.ID
	}
	if id := pending(verifyT0.Add(2 * time.Minute)); id != "newer" {
		t.Fatalf("pending = %q, want newer", id)
	}
	// After newer expires, old is the newest pending.
	if id := pending(verifyT0.Add(3 * time.Minute)); id != "old" {
		t.Fatalf("pending after newer expired = %q, want old", id)
	}
	_, err = s.PendingVerification(ctx, "beta", "+919876543210", "login", verifyT0)
	wantErr(t, err, store.ErrNotFound)
	// Checks spent, or finished: not pending.
	for range 5 {
		_, _, err := s.TakeCheck(ctx, "acme", "newer", verifyT0.Add(2*time.Minute))
		must(t, err)
	}
	if id := pending(verifyT0.Add(2 * time.Minute)); id != "old" {
		t.Fatalf("pending with newer's checks spent = %q, want old", id)
	}
	_, _, err = s.FinishVerification(ctx, "acme", "old", verifystore.VerificationApproved, verifyT0)
	must(t, err)
	if id := pending(verifyT0.Add(2 * time.Minute)); id != "" {
		t.Fatalf("pending with none left = %q", id)
	}
	if v, err := s.PendingVerification(ctx, "acme", "+919876543210", "signup", verifyT0.Add(2*time.Minute)); err != nil || v.ID != "other-purpose" {
		t.Fatalf("pending signup = %v, %v", v, err)
	}
}

// TestExpireVerifications marks expired ones in batches of limit, and
// deletes those ended a week before.
func TestExpireVerifications(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	for i := range 7 {
		v := newVerification(fmt.Sprint("exp-", i))
		v.ExpiresAt = verifyT0.Add(time.Duration(i) * time.Minute)
		createVerification(t, s, v)
	}
	live := newVerification("live")
	live.ExpiresAt = verifyT0.Add(time.Hour)
	createVerification(t, s, live)
	done := newVerification("done")
	done.ExpiresAt = verifyT0
	createVerification(t, s, done)
	_, _, err := s.FinishVerification(ctx, "acme", "done", verifystore.VerificationApproved, verifyT0)
	must(t, err)

	_, err = s.ExpireVerifications(ctx, verifyT0, 0)
	wantErr(t, err, store.ErrInvalid)
	now := verifyT0.Add(10 * time.Minute)
	var counts []int
	for {
		n, err := s.ExpireVerifications(ctx, now, 3)
		must(t, err)
		counts = append(counts, n)
		if n < 3 {
			break
		}
	}
	if !reflect.DeepEqual(counts, []int{3, 3, 1}) {
		t.Fatalf("counts = %v, want [3 3 1]", counts)
	}
	v, err := s.Verification(ctx, "acme", "exp-3")
	must(t, err)
	if v.Status != verifystore.VerificationExpired || !v.UpdatedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("exp-3 after the sweep: %+v", v)
	}
	for _, id := range []string{"live", "done"} {
		v, err := s.Verification(ctx, "acme", id)
		must(t, err)
		if v.Status == verifystore.VerificationExpired {
			t.Fatalf("%s marked expired", id)
		}
	}
	count := func() (n int) {
		must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_verifications`).Scan(&n))
		return n
	}
	// A day after: everything kept.
	_, err = s.ExpireVerifications(ctx, now.Add(24*time.Hour), 100)
	must(t, err)
	if n := count(); n != 9 {
		t.Fatalf("%d verifications a day after, want 9", n)
	}
	// A week after the sweep that marked "live", all have ended long
	// enough: deleted, 4 at a time.
	later := now.Add(8 * 24 * time.Hour)
	n, err := s.ExpireVerifications(ctx, later, 4)
	must(t, err)
	if n != 0 {
		t.Fatalf("marked %d, want none", n)
	}
	if c := count(); c != 5 {
		t.Fatalf("%d left after one sweep, want 5", c)
	}
	for range 2 {
		_, err := s.ExpireVerifications(ctx, later, 4)
		must(t, err)
	}
	if c := count(); c != 0 {
		t.Fatalf("%d left, want 0", c)
	}
}

// TestExpireVerificationsConcurrent: sweeps from several goroutines mark
// each verification once between them.
func TestExpireVerificationsConcurrent(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	const total = 300
	_, err := pool.Exec(ctx, `INSERT INTO notify_verifications (id, account, recipient, purpose, channels,
		code_hash, length, status, checks, max_checks, sends, max_sends, prefix, country,
		created_at, expires_at, updated_at)
		SELECT 'v' || i, 'acme', '+91' || i, '', '{sms}', '\x01', 6, 'pending', 0, 5, 0, 3, '', '',
			$1, $1, $1 FROM generate_series(1, $2) i`, verifyT0, total)
	must(t, err)
	var marked atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := s.ExpireVerifications(ctx, verifyT0.Add(time.Minute), 20)
				if err != nil {
					t.Error(err)
					return
				}
				marked.Add(int64(n))
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if marked.Load() != total {
		t.Fatalf("marked %d, want %d", marked.Load(), total)
	}
}

// TestCounters: sums over a sliding window of buckets, a limit, amounts
// given back, keys of any bytes.
func TestCounters(t *testing.T) {
	s, pool := newStore(t)
	c := s.Counters()
	ctx := context.Background()
	const window = 16 * time.Minute // buckets of a minute
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(key string, n int64, limit int64, at time.Time) (int64, bool) {
		t.Helper()
		sum, ok, err := c.Add(ctx, key, n, window, limit, at)
		must(t, err)
		return sum, ok
	}
	sums := func(at time.Time, keys ...string) []int64 {
		t.Helper()
		out, err := c.Sums(ctx, keys, window, at)
		must(t, err)
		return out
	}
	key := "acme\x00+919876543210" // a NUL, as limiter keys have
	if sum, ok := add(key, 3, 0, t0); sum != 3 || !ok {
		t.Fatalf("Add = %d, %v", sum, ok)
	}
	if sum, ok := add(key, 4, 10, t0.Add(30*time.Second)); sum != 7 || !ok {
		t.Fatalf("Add within the limit = %d, %v", sum, ok)
	}
	if sum, ok := add(key, 4, 10, t0.Add(time.Minute)); sum != 7 || ok {
		t.Fatalf("Add beyond the limit = %d, %v", sum, ok)
	}
	if sum, ok := add(key, 3, 10, t0.Add(time.Minute)); sum != 10 || !ok {
		t.Fatalf("Add to the limit = %d, %v", sum, ok)
	}
	if sum, ok := add(key, -2, 10, t0.Add(2*time.Minute)); sum != 8 || !ok {
		t.Fatalf("give back = %d, %v", sum, ok)
	}
	if got := sums(t0.Add(2*time.Minute), "other", key, key, ""); !reflect.DeepEqual(got, []int64{0, 8, 8, 0}) {
		t.Fatalf("Sums = %v", got)
	}
	// The first minute's 7 leave the window 16 minutes on.
	if got := sums(t0.Add(16*time.Minute-time.Nanosecond), key); got[0] != 8 {
		t.Fatalf("Sums just before the first bucket leaves = %v", got)
	}
	if got := sums(t0.Add(16*time.Minute), key); got[0] != 1 {
		t.Fatalf("Sums after the first bucket left = %v, want 1", got)
	}
	if got, err := c.Sums(ctx, nil, window, t0); err != nil || len(got) != 0 {
		t.Fatalf("Sums(nil) = %v, %v", got, err)
	}
	_, _, err := c.Add(ctx, key, 1, 0, 0, t0)
	wantErr(t, err, store.ErrInvalid)
	_, err = c.Sums(ctx, []string{key}, -time.Second, t0)
	wantErr(t, err, store.ErrInvalid)

	rows := func() (n int) {
		must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_counters`).Scan(&n))
		return n
	}
	if n := rows(); n != 3 {
		t.Fatalf("%d bucket rows, want 3", n)
	}
	// An Add a window on deletes the key's buckets that left it.
	if sum, _ := add(key, 1, 0, t0.Add(time.Hour)); sum != 1 {
		t.Fatalf("Add an hour on = %d", sum)
	}
	if n := rows(); n != 1 {
		t.Fatalf("%d bucket rows after an Add a window on, want 1", n)
	}
}

// TestCountersCleanup: Cleanup deletes the buckets of keys no longer
// added to once they left the window.
func TestCountersCleanup(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s, pool := newStore(t, pgstore.WithClock(func() time.Time { return now }))
	c := s.Counters()
	ctx := context.Background()
	for i := range 5 {
		_, _, err := c.Add(ctx, fmt.Sprint("k", i), 1, time.Hour, 0, now)
		must(t, err)
	}
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("Cleanup removed %d live buckets", n)
	}
	now = now.Add(time.Hour)
	n, err = s.Cleanup(ctx)
	must(t, err)
	var left int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_counters`).Scan(&left))
	if n != 5 || left != 0 {
		t.Fatalf("Cleanup removed %d, left %d; want 5 and 0", n, left)
	}
}

// TestCountersLimitConcurrent: limited Adds of one key from two stores
// (two instances) at once, across two buckets, never exceed the limit
// together; unlimited Adds all count.
func TestCountersLimitConcurrent(t *testing.T) {
	schema := pgstoretest.Schema(t)
	counters := []*pgstore.Counters{pgstoretest.Store(t, schema).Counters(), pgstoretest.Store(t, schema).Counters()}
	ctx := context.Background()
	const window, limit, callers = time.Hour, 25, 60
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var added atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Add(2)
		// Two buckets: the lock, not a bucket's row, serialises them.
		at := t0.Add(time.Duration(i%2) * window / verifystore.CounterBuckets)
		go func() {
			defer wg.Done()
			<-start
			sum, ok, err := counters[i%2].Add(ctx, "spend", 1, window, limit, at)
			if err != nil {
				t.Error(err)
				return
			}
			if sum > limit {
				t.Errorf("Add answered sum %d over the limit", sum)
			}
			if ok {
				added.Add(1)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if _, ok, err := counters[i%2].Add(ctx, "free", 2, window, 0, at); err != nil || !ok {
				t.Errorf("unlimited Add: %v, %v", ok, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if added.Load() != limit {
		t.Fatalf("%d Adds under a limit of %d", added.Load(), limit)
	}
	got, err := counters[0].Sums(ctx, []string{"spend", "free"}, window, t0.Add(window/2))
	must(t, err)
	if !reflect.DeepEqual(got, []int64{limit, 2 * callers}) {
		t.Fatalf("Sums = %v, want [%d %d]", got, limit, 2*callers)
	}
}

// TestVerificationsWithSchemaAndPrefix: the statements find their tables
// under another schema and prefix.
func TestVerificationsWithSchemaAndPrefix(t *testing.T) {
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 2)
	schema := pgstoretest.RandomName("notify_v_")
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+schema+` CASCADE`) })
	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithTablePrefix("x_"))
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	createVerification(t, s, newVerification("v1"))
	if _, ok, err := s.TakeCheck(ctx, "acme", "v1", verifyT0); err != nil || !ok {
		t.Fatalf("TakeCheck: %v, %v", ok, err)
	}
	if n, err := s.ExpireVerifications(ctx, verifyT0.Add(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("ExpireVerifications = %d, %v", n, err)
	}
	if _, _, err := s.Counters().Add(ctx, "k", 1, time.Minute, 5, verifyT0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Counters().Sums(ctx, []string{"k"}, time.Minute, verifyT0); err != nil || got[0] != 1 {
		t.Fatalf("Sums = %v, %v", got, err)
	}
}

// TestVerificationsDatabaseDown: every method is store.ErrUnavailable,
// promptly, when no server listens.
func TestVerificationsDatabaseDown(t *testing.T) {
	pgstoretest.URL(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/notify?sslmode=disable&connect_timeout=2", closedPort(t))
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url) // connects lazily
	must(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool)
	must(t, err)
	c := s.Counters()
	for name, call := range map[string]func() error{
		"CreateVerification": func() error { return s.CreateVerification(ctx, newVerification("v")) },
		"Verification":       func() error { _, err := s.Verification(ctx, "a", "v"); return err },
		"PendingVerification": func() error {
			_, err := s.PendingVerification(ctx, "a", "t", "p", verifyT0)
			return err
		},
		"TakeCheck": func() error { _, _, err := s.TakeCheck(ctx, "a", "v", verifyT0); return err },
		"TakeSend":  func() error { _, _, err := s.TakeSend(ctx, "a", "v", verifyT0, 0); return err },
		"FinishVerification": func() error {
			_, _, err := s.FinishVerification(ctx, "a", "v", verifystore.VerificationApproved, verifyT0)
			return err
		},
		"ExpireVerifications": func() error { _, err := s.ExpireVerifications(ctx, verifyT0, 10); return err },
		"Add":                 func() error { _, _, err := c.Add(ctx, "k", 1, time.Minute, 0, verifyT0); return err },
		"Add limited":         func() error { _, _, err := c.Add(ctx, "k", 1, time.Minute, 5, verifyT0); return err },
		"Sums":                func() error { _, err := c.Sums(ctx, []string{"k"}, time.Minute, verifyT0); return err },
	} {
		start := time.Now()
		wantErr(t, call(), store.ErrUnavailable)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v", name, d)
		}
	}
}
