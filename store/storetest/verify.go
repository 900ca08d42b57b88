package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// VerificationsHarness connects RunVerifications to one
// verifystore.Verifications.
type VerificationsHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required. It may
	// hand every subtest the same database, but no other run of the suite
	// may use that database at the same time: ExpireVerifications reaches
	// the verifications of every account, and the Expire subtest counts
	// what it marks.
	New func(t *testing.T) verifystore.Verifications
}

// CountersHarness connects RunCounters to one verifystore.Counters.
type CountersHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required. It may
	// hand every subtest the same database: the suite's keys are random.
	New func(t *testing.T) verifystore.Counters
}

// RunVerifications checks a verifystore.Verifications:
//
//   - CreateVerification then Verification returns every field: the
//     CodeHash bytes exactly (a NUL, invalid UTF-8), the Channels in
//     order, an empty Purpose, Prefix and Country, a LastSentAt never
//     set, times to the microsecond;
//   - changing a verification after CreateVerification, or one a method
//     returned (its CodeHash, its Channels), changes nothing in the store;
//   - a second CreateVerification of an ID is ErrConflict, also from
//     another account, and keeps the first; an empty ID, Account or
//     CodeHash is ErrInvalid and keeps nothing;
//   - an unknown ID, or another account's, is ErrNotFound for
//     Verification, TakeCheck, TakeSend and FinishVerification, which
//     then count and change nothing;
//   - PendingVerification answers the account's verification of to and
//     purpose with the latest CreatedAt (not the last created) among
//     those pending at now: not one expired by its ExpiresAt (pending
//     until the microsecond before it) or marked expired, approved,
//     canceled or with its checks spent, nor one of another purpose (the
//     empty one too), recipient or account; else ErrNotFound;
//   - TakeCheck counts checks up to MaxChecks, then answers false and
//     counts nothing; it counts at ExpiresAt less a microsecond and not
//     at ExpiresAt, and not after an approval or a cancellation;
//   - TakeSend counts sends up to MaxSends, the first whatever the
//     cooldown, then one each time the cooldown has passed since
//     LastSentAt (not a microsecond sooner), which it sets to now; none
//     once the verification is approved, canceled, expired or out of
//     checks;
//   - FinishVerification approves or cancels a pending verification once,
//     at now; a second call, either way, answers false and changes
//     nothing; any other status is ErrInvalid and changes nothing; a
//     verification whose check was counted before it expired, or whose
//     last check was counted, is still approved after its ExpiresAt, its
//     Status still pending in the store until then;
//   - every answer is the verification as the store then holds it: with
//     the check or send counted, or, refused, exactly as it was; a call
//     that counts may set UpdatedAt to its now, and no other time;
//   - ExpireVerifications marks exactly the pending verifications whose
//     ExpiresAt is at or before now (its checks spent or not), at most
//     limit a call, and answers how many; Verification then shows them
//     expired, and they count no check or send and approve no more, even
//     at a time before their ExpiresAt; approved and canceled ones keep
//     their status;
//   - a verification is kept a day after it ended (canceled, approved,
//     expired or out of checks), whatever calls the store answers in the
//     meantime, ExpireVerifications included;
//   - a canceled context is context.Canceled for every method that
//     writes, which then writes nothing;
//   - of 64 goroutines checking one verification of MaxChecks 5 at once
//     exactly 5 are answered true, with the counts 1 to 5; of 64 sending,
//     exactly MaxSends are, or one when a cooldown runs; of 64 approving
//     and canceling at once, exactly one is, and its status is kept.
//
// The suite passes every time in, from a fixed instant in 2100, after any
// real clock, so that no sweep by the time of day reaches its
// verifications; it never sleeps and never reads the clock. The Expire
// subtest dates its verifications a month before every other, and marks
// any older ones still pending first.
func RunVerifications(t *testing.T, h VerificationsHarness) {
	t.Helper()
	needs(t, h.New != nil, "VerificationsHarness needs New")
	runAll(t, []subtest{
		{"RoundTrip", func(t *testing.T) { testVerificationRoundTrip(t, h) }},
		{"CallersCannotChangeStore", func(t *testing.T) { testVerificationCopies(t, h) }},
		{"IDInUse", func(t *testing.T) { testVerificationIDInUse(t, h) }},
		{"Invalid", func(t *testing.T) { testVerificationInvalid(t, h) }},
		{"NotFound", func(t *testing.T) { testVerificationNotFound(t, h) }},
		{"Pending", func(t *testing.T) { testPendingVerification(t, h) }},
		{"TakeCheck", func(t *testing.T) { testTakeCheck(t, h) }},
		{"TakeCheckExpiry", func(t *testing.T) { testTakeCheckExpiry(t, h) }},
		{"TakeCheckAfterFinish", func(t *testing.T) { testTakeCheckAfterFinish(t, h) }},
		{"TakeSend", func(t *testing.T) { testTakeSend(t, h) }},
		{"TakeSendCooldown", func(t *testing.T) { testTakeSendCooldown(t, h) }},
		{"TakeSendEnded", func(t *testing.T) { testTakeSendEnded(t, h) }},
		{"Finish", func(t *testing.T) { testFinishVerification(t, h) }},
		{"ApproveAfterExpiry", func(t *testing.T) { testApproveAfterExpiry(t, h) }},
		{"Expire", func(t *testing.T) { testExpireVerifications(t, h) }},
		{"KeptADay", func(t *testing.T) { testVerificationKeptADay(t, h) }},
		{"CanceledContext", func(t *testing.T) { testVerificationCanceledContext(t, h) }},
		{"ConcurrentTakeCheck", func(t *testing.T) { testConcurrentTakeCheck(t, h) }},
		{"ConcurrentTakeSend", func(t *testing.T) { testConcurrentTakeSend(t, h) }},
		{"ConcurrentFinish", func(t *testing.T) { testConcurrentFinish(t, h) }},
	})
}

// verifyEpoch is the suite's first instant: whole microseconds in UTC,
// some of them, as a SQL timestamp keeps, and after any real clock.
var verifyEpoch = time.Date(2100, 1, 2, 3, 4, 5, 123456000, time.UTC)

// expireEpoch dates the verifications of the Expire subtest, a month
// before every other subtest's: its ExpireVerifications reaches every
// account, and must reach no other subtest's verification.
var expireEpoch = verifyEpoch.AddDate(0, -1, 0)

// verifyTTL is how long the suite's verifications live.
const verifyTTL = 10 * time.Minute

// newUUID returns a random version 4 UUID, as verification IDs are.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newCodeHash returns 32 random bytes, as an HMAC-SHA256 is, with a NUL
// first and bytes that are no UTF-8 after it: a store that took them for
// text would change them.
func newCodeHash() []byte {
	h := make([]byte, 32)
	_, _ = rand.Read(h)
	h[0], h[1], h[2], h[31] = 0, 0xc3, 0x28, 0xff
	return h
}

// sampleVerification returns a pending verification of account created
// at at, with every field CreateVerification takes set.
func sampleVerification(account string, at time.Time) *verifystore.Verification {
	return &verifystore.Verification{
		ID: newUUID(), Account: account, To: "+919876543210", Purpose: "login",
		Channels: []string{"chat", "sms", "email"}, CodeHash: newCodeHash(), Length: 6,
		Status: verifystore.VerificationPending, MaxChecks: 5, MaxSends: 3,
		Prefix: "+9198765", Country: "IN",
		CreatedAt: at, ExpiresAt: at.Add(verifyTTL), UpdatedAt: at,
	}
}

// vat shows a time the suite passed in.
func vat(t time.Time) string { return t.Format("2006-01-02T15:04:05.000000Z07:00") }

// diffVerification describes how got differs from want, or returns "".
func diffVerification(got, want *verifystore.Verification) string {
	if got == nil {
		return "nil verification"
	}
	var d diffs
	d.quoted("ID", got.ID, want.ID)
	d.quoted("Account", got.Account, want.Account)
	d.quoted("To", got.To, want.To)
	d.quoted("Purpose", got.Purpose, want.Purpose)
	if !slices.Equal(got.Channels, want.Channels) {
		d.add("Channels = %q, want %q", got.Channels, want.Channels)
	}
	if !bytes.Equal(got.CodeHash, want.CodeHash) {
		d.add("CodeHash = %x, want %x", got.CodeHash, want.CodeHash)
	}
	d.quoted("Length", got.Length, want.Length)
	d.quoted("Status", got.Status, want.Status)
	d.quoted("Checks", got.Checks, want.Checks)
	d.quoted("MaxChecks", got.MaxChecks, want.MaxChecks)
	d.quoted("Sends", got.Sends, want.Sends)
	d.quoted("MaxSends", got.MaxSends, want.MaxSends)
	d.quoted("Prefix", got.Prefix, want.Prefix)
	d.quoted("Country", got.Country, want.Country)
	for _, tm := range []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", got.CreatedAt, want.CreatedAt},
		{"ExpiresAt", got.ExpiresAt, want.ExpiresAt},
		{"LastSentAt", got.LastSentAt, want.LastSentAt},
		{"UpdatedAt", got.UpdatedAt, want.UpdatedAt},
	} {
		if !tm.got.Equal(tm.want) {
			d.add("%s = %v, want %v", tm.name, tm.got, tm.want)
		}
	}
	return d.String()
}

func newVerifications(t *testing.T, h VerificationsHarness) verifystore.Verifications {
	t.Helper()
	s := h.New(t)
	if s == nil {
		t.Fatal("VerificationsHarness.New returned nil")
	}
	return s
}

// createVerification keeps a copy of v: the suite goes on using v as what
// the store must hold.
func createVerification(t *testing.T, s verifystore.Verifications, v *verifystore.Verification) {
	t.Helper()
	if err := s.CreateVerification(context.Background(), verifystore.CloneVerification(v)); err != nil {
		t.Fatalf("CreateVerification(%s): %v", v.ID, err)
	}
}

func readVerification(t *testing.T, s verifystore.Verifications, account, id string) *verifystore.Verification {
	t.Helper()
	v, err := s.Verification(context.Background(), account, id)
	if err != nil {
		t.Fatalf("Verification(%s): %v", id, err)
	}
	if v == nil {
		t.Fatalf("Verification(%s) answered nil and no error", id)
	}
	return v
}

// wantVerification fails t unless the store holds want exactly.
func wantVerification(t *testing.T, s verifystore.Verifications, want *verifystore.Verification, what string) {
	t.Helper()
	if d := diffVerification(readVerification(t, s, want.Account, want.ID), want); d != "" {
		t.Fatalf("%s: Verification(%s): %s", what, want.ID, d)
	}
}

// wantNoVerification fails t unless Verification of account and id is
// ErrNotFound.
func wantNoVerification(t *testing.T, s verifystore.Verifications, account, id, what string) {
	t.Helper()
	_, err := s.Verification(context.Background(), account, id)
	wantErr(t, what+": Verification", err, store.ErrNotFound)
}

// wantWritten fails t unless got, read back after a call at now that
// wrote to the verification, is want, its UpdatedAt left as it was or
// set to now; want takes got's UpdatedAt.
func wantWritten(t *testing.T, what string, got, want *verifystore.Verification, now time.Time) {
	t.Helper()
	w := verifystore.CloneVerification(want)
	if got != nil && got.UpdatedAt.Equal(now) {
		w.UpdatedAt = now
	}
	if d := diffVerification(got, w); d != "" {
		t.Fatalf("%s: %s (UpdatedAt may be %v or the call's %v)", what, d, want.UpdatedAt, now)
	}
	want.UpdatedAt = w.UpdatedAt
}

// answered fails t unless got, what a call at now answered, is the
// verification the store holds, and the store holds want: with the
// UpdatedAt of a call that counted (wrote) as wantWritten allows, else
// exactly.
func answered(t *testing.T, s verifystore.Verifications, what string, got, want *verifystore.Verification, now time.Time, wrote bool) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s answered a nil verification", what)
	}
	back := readVerification(t, s, want.Account, want.ID)
	if wrote {
		wantWritten(t, what+", read back", back, want, now)
	} else if d := diffVerification(back, want); d != "" {
		t.Fatalf("%s, read back: %s", what, d)
	}
	if d := diffVerification(got, back); d != "" {
		t.Fatalf("%s answered a verification unlike the one read back: %s", what, d)
	}
}

// takeCheck calls TakeCheck at now and fails t unless it answers ok and
// counts as that says; want follows.
func takeCheck(t *testing.T, s verifystore.Verifications, want *verifystore.Verification, now time.Time, ok bool, what string) {
	t.Helper()
	got, took, err := s.TakeCheck(context.Background(), want.Account, want.ID, now)
	if err != nil {
		t.Fatalf("%s: TakeCheck at %s: %v", what, vat(now), err)
	}
	if took != ok {
		t.Fatalf("%s: TakeCheck at %s answered %v, want %v (checks %d of %d before)", what, vat(now), took, ok, want.Checks, want.MaxChecks)
	}
	if ok {
		want.Checks++
	}
	answered(t, s, fmt.Sprintf("%s: TakeCheck at %s", what, vat(now)), got, want, now, ok)
}

// takeSend calls TakeSend at now and fails t unless it answers ok and
// counts as that says; want follows.
func takeSend(t *testing.T, s verifystore.Verifications, want *verifystore.Verification, now time.Time, cooldown time.Duration, ok bool, what string) {
	t.Helper()
	got, took, err := s.TakeSend(context.Background(), want.Account, want.ID, now, cooldown)
	if err != nil {
		t.Fatalf("%s: TakeSend at %s: %v", what, vat(now), err)
	}
	if took != ok {
		t.Fatalf("%s: TakeSend at %s, cooldown %v, answered %v, want %v (sends %d of %d before, the last at %s)",
			what, vat(now), cooldown, took, ok, want.Sends, want.MaxSends, vat(want.LastSentAt))
	}
	if ok {
		want.Sends++
		want.LastSentAt = now
	}
	answered(t, s, fmt.Sprintf("%s: TakeSend at %s", what, vat(now)), got, want, now, ok)
}

// finishVerification calls FinishVerification at now and fails t unless
// it answers ok and moves the verification as that says; want follows.
func finishVerification(t *testing.T, s verifystore.Verifications, want *verifystore.Verification, status verifystore.VerificationStatus, now time.Time, ok bool, what string) {
	t.Helper()
	got, done, err := s.FinishVerification(context.Background(), want.Account, want.ID, status, now)
	if err != nil {
		t.Fatalf("%s: FinishVerification(%s) at %s: %v", what, status, vat(now), err)
	}
	if done != ok {
		t.Fatalf("%s: FinishVerification(%s) at %s answered %v, want %v (status %s before)", what, status, vat(now), done, ok, want.Status)
	}
	if ok {
		want.Status = status
		want.UpdatedAt = now // "at now"
	}
	answered(t, s, fmt.Sprintf("%s: FinishVerification(%s) at %s", what, status, vat(now)), got, want, now, false)
}

// wantPending fails t unless PendingVerification at now answers want, as
// the store holds it.
func wantPending(t *testing.T, s verifystore.Verifications, account, to, purpose string, now time.Time, want *verifystore.Verification, what string) {
	t.Helper()
	got, err := s.PendingVerification(context.Background(), account, to, purpose, now)
	if err != nil {
		t.Fatalf("%s: PendingVerification(%q, %q) at %s: %v, want %s", what, to, purpose, vat(now), err, want.ID)
	}
	if got == nil || got.ID != want.ID {
		id := "nil"
		if got != nil {
			id = got.ID
		}
		t.Fatalf("%s: PendingVerification(%q, %q) at %s answered %s, want %s", what, to, purpose, vat(now), id, want.ID)
	}
	if d := diffVerification(got, readVerification(t, s, account, want.ID)); d != "" {
		t.Fatalf("%s: PendingVerification answered a verification unlike the one read back: %s", what, d)
	}
}

// wantNoPending fails t unless PendingVerification at now is ErrNotFound.
func wantNoPending(t *testing.T, s verifystore.Verifications, account, to, purpose string, now time.Time, what string) {
	t.Helper()
	got, err := s.PendingVerification(context.Background(), account, to, purpose, now)
	if err == nil && got != nil {
		t.Fatalf("%s: PendingVerification(%q, %q) at %s answered %s (%s), want ErrNotFound", what, to, purpose, vat(now), got.ID, got.Status)
	}
	wantErr(t, fmt.Sprintf("%s: PendingVerification(%q, %q) at %s", what, to, purpose, vat(now)), err, store.ErrNotFound)
}

func testVerificationRoundTrip(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	full := sampleVerification(acct, verifyEpoch)
	full.UpdatedAt = verifyEpoch.Add(time.Microsecond)
	full.ExpiresAt = verifyEpoch.Add(7*time.Minute + 654321*time.Microsecond)

	email := sampleVerification(acct, verifyEpoch.Add(time.Second))
	email.To, email.Purpose, email.Prefix, email.Country = "आशा.o'brien@example.in", "", "", ""
	email.Channels = []string{"email"}
	email.Length, email.MaxChecks, email.MaxSends = 8, 1, 10
	email.CodeHash = slices.Concat(newCodeHash(), newCodeHash()) // 64 bytes

	bare := sampleVerification(acct, verifyEpoch.Add(2*time.Second))
	bare.Channels = nil
	bare.CodeHash = []byte{0}
	bare.Purpose = "password reset"
	bare.MaxSends = 0

	for _, v := range []*verifystore.Verification{full, email, bare} {
		createVerification(t, s, v)
	}
	for _, v := range []*verifystore.Verification{full, email, bare} {
		wantVerification(t, s, v, "after CreateVerification")
	}
	// LastSentAt, once set, round-trips to the microsecond too.
	takeSend(t, s, full, verifyEpoch.Add(time.Minute+time.Microsecond), time.Minute, true, "first send")
	wantVerification(t, s, full, "after TakeSend")
}

func testVerificationCopies(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	ctx := context.Background()
	acct := newName("acct")
	want := sampleVerification(acct, verifyEpoch)
	mine := verifystore.CloneVerification(want)
	if err := s.CreateVerification(ctx, mine); err != nil {
		t.Fatal(err)
	}
	mine.CodeHash[5] ^= 0xff
	mine.Channels[0] = "fax"
	mine.Status, mine.Checks, mine.MaxChecks = verifystore.VerificationApproved, 1, 100
	mine.ExpiresAt = mine.ExpiresAt.Add(time.Hour)
	wantVerification(t, s, want, "after the caller changed what it created")

	got := readVerification(t, s, acct, want.ID)
	got.CodeHash[0] = 'x'
	got.Channels[1] = "fax"
	got.Status, got.MaxSends = verifystore.VerificationCanceled, 100
	wantVerification(t, s, want, "after a reader changed what Verification answered")

	change := func(v *verifystore.Verification) {
		if v != nil {
			v.CodeHash[3] ^= 1
			v.Channels[2] = "fax"
			v.Checks, v.MaxChecks, v.Sends, v.MaxSends = 0, 100, 0, 100
		}
	}
	now := verifyEpoch.Add(time.Second)
	p, err := s.PendingVerification(ctx, acct, want.To, want.Purpose, now)
	if err != nil {
		t.Fatal(err)
	}
	change(p)
	wantVerification(t, s, want, "after a reader changed what PendingVerification answered")

	takeCheck(t, s, want, now, true, "check")
	c, _, err := s.TakeCheck(ctx, acct, want.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	want.Checks++
	change(c)
	wantWritten(t, "after a reader changed what TakeCheck answered", readVerification(t, s, acct, want.ID), want, now)

	snd, _, err := s.TakeSend(ctx, acct, want.ID, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	want.Sends++
	want.LastSentAt = now
	change(snd)
	wantWritten(t, "after a reader changed what TakeSend answered", readVerification(t, s, acct, want.ID), want, now)

	f, _, err := s.FinishVerification(ctx, acct, want.ID, verifystore.VerificationApproved, now)
	if err != nil {
		t.Fatal(err)
	}
	want.Status, want.UpdatedAt = verifystore.VerificationApproved, now
	change(f)
	f.Status = verifystore.VerificationPending
	wantVerification(t, s, want, "after a reader changed what FinishVerification answered")
}

func testVerificationIDInUse(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	ctx := context.Background()
	acct, other := newName("acct"), newName("acct")
	v := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, v)

	again := sampleVerification(acct, verifyEpoch.Add(time.Second))
	again.ID = v.ID
	err := s.CreateVerification(ctx, again)
	wantErr(t, "CreateVerification of an ID in use", err, store.ErrConflict)
	theirs := sampleVerification(other, verifyEpoch.Add(time.Second))
	theirs.ID = v.ID
	err = s.CreateVerification(ctx, theirs)
	wantErr(t, "CreateVerification of an ID another account uses", err, store.ErrConflict)

	wantVerification(t, s, v, "after the refused CreateVerifications")
	wantNoVerification(t, s, other, v.ID, "the other account, after its refused CreateVerification")
	wantPending(t, s, acct, v.To, v.Purpose, verifyEpoch.Add(2*time.Second), v, "after the refused CreateVerifications")
}

func testVerificationInvalid(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	ctx := context.Background()
	acct := newName("acct")
	for _, tt := range []struct {
		name   string
		change func(v *verifystore.Verification)
	}{
		{"no ID", func(v *verifystore.Verification) { v.ID = "" }},
		{"no Account", func(v *verifystore.Verification) { v.Account = "" }},
		{"a nil CodeHash", func(v *verifystore.Verification) { v.CodeHash = nil }},
		{"an empty CodeHash", func(v *verifystore.Verification) { v.CodeHash = []byte{} }},
	} {
		v := sampleVerification(acct, verifyEpoch)
		bad := verifystore.CloneVerification(v)
		tt.change(bad)
		err := s.CreateVerification(ctx, bad)
		wantErr(t, "CreateVerification with "+tt.name, err, store.ErrInvalid)
		if bad.ID != "" {
			wantNoVerification(t, s, acct, bad.ID, "after CreateVerification with "+tt.name)
			wantNoVerification(t, s, "", bad.ID, "after CreateVerification with "+tt.name+", of no account")
			// The refused call kept nothing that holds its ID.
			createVerification(t, s, v)
			wantVerification(t, s, v, "the same verification with its fields, after CreateVerification with "+tt.name)
		}
	}
	wantNoPending(t, s, "", "+919876543210", "login", verifyEpoch, "of no account")
}

func testVerificationNotFound(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	ctx := context.Background()
	acct, other := newName("acct"), newName("acct")
	now := verifyEpoch.Add(time.Second)
	v := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, v)
	for _, c := range []struct{ account, id, what string }{
		{acct, newUUID(), "an unknown ID"},
		{other, v.ID, "another account's ID"},
		{"", v.ID, "an ID, of no account"},
	} {
		_, err := s.Verification(ctx, c.account, c.id)
		wantErr(t, "Verification of "+c.what, err, store.ErrNotFound)
		_, _, err = s.TakeCheck(ctx, c.account, c.id, now)
		wantErr(t, "TakeCheck of "+c.what, err, store.ErrNotFound)
		_, _, err = s.TakeSend(ctx, c.account, c.id, now, 0)
		wantErr(t, "TakeSend of "+c.what, err, store.ErrNotFound)
		_, _, err = s.FinishVerification(ctx, c.account, c.id, verifystore.VerificationApproved, now)
		wantErr(t, "FinishVerification(approved) of "+c.what, err, store.ErrNotFound)
		_, _, err = s.FinishVerification(ctx, c.account, c.id, verifystore.VerificationCanceled, now)
		wantErr(t, "FinishVerification(canceled) of "+c.what, err, store.ErrNotFound)
	}
	wantVerification(t, s, v, "after the calls of other accounts")
	wantNoPending(t, s, other, v.To, v.Purpose, now, "another account")
	wantNoPending(t, s, acct, "+919876543211", v.Purpose, now, "another recipient")
	wantNoPending(t, s, newName("acct"), v.To, v.Purpose, now, "an account without verifications")
}

func testPendingVerification(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct, other := newName("acct"), newName("acct")
	const to, purpose = "+919876543210", "login"
	at := func(d time.Duration) time.Time { return verifyEpoch.Add(d) }
	mk := func(account, to, purpose string, created time.Duration) *verifystore.Verification {
		v := sampleVerification(account, at(created))
		v.To, v.Purpose = to, purpose
		return v
	}
	wantNoPending(t, s, acct, to, purpose, at(0), "before any verification")

	// The newer is created first: the newest is by CreatedAt.
	old := mk(acct, to, purpose, 0)
	newer := mk(acct, to, purpose, time.Minute)
	createVerification(t, s, newer)
	createVerification(t, s, old)
	wantPending(t, s, acct, to, purpose, at(2*time.Minute), newer, "the newer of two")

	// Newer ones of another purpose, recipient or account do not count.
	signup := mk(acct, to, "signup", 4*time.Minute)
	noPurpose := mk(acct, to, "", 4*time.Minute)
	elsewhere := mk(acct, "+919876543211", purpose, 4*time.Minute)
	theirs := mk(other, to, purpose, 4*time.Minute)
	for _, v := range []*verifystore.Verification{signup, noPurpose, elsewhere, theirs} {
		createVerification(t, s, v)
	}
	now := at(4*time.Minute + time.Second)
	wantPending(t, s, acct, to, purpose, now, newer, "with newer ones of other purposes, recipients and accounts")
	wantPending(t, s, acct, to, "signup", now, signup, "of another purpose")
	wantPending(t, s, acct, to, "", now, noPurpose, "of no purpose")
	wantPending(t, s, acct, "+919876543211", purpose, now, elsewhere, "of another recipient")
	wantPending(t, s, other, to, purpose, now, theirs, "of another account")

	// A canceled one gives way to the older pending one.
	finishVerification(t, s, newer, verifystore.VerificationCanceled, at(5*time.Minute), true, "cancel the newer")
	wantPending(t, s, acct, to, purpose, at(5*time.Minute), old, "the newer canceled")
	// So do an approved one and one whose checks are spent.
	approved := mk(acct, to, purpose, 6*time.Minute)
	createVerification(t, s, approved)
	wantPending(t, s, acct, to, purpose, at(6*time.Minute), approved, "the newest")
	finishVerification(t, s, approved, verifystore.VerificationApproved, at(6*time.Minute), true, "approve the newest")
	wantPending(t, s, acct, to, purpose, at(6*time.Minute), old, "the newest approved")
	spent := mk(acct, to, purpose, 7*time.Minute)
	spent.MaxChecks = 1
	createVerification(t, s, spent)
	takeCheck(t, s, spent, at(7*time.Minute), true, "the only check of the newest")
	wantPending(t, s, acct, to, purpose, at(7*time.Minute), old, "the newest out of checks")

	// One expired by its time gives way too, from its ExpiresAt on.
	brief := mk(acct, to, purpose, 8*time.Minute)
	brief.ExpiresAt = at(9 * time.Minute)
	createVerification(t, s, brief)
	wantPending(t, s, acct, to, purpose, at(9*time.Minute-time.Microsecond), brief, "the newest, a microsecond before it expires")
	wantPending(t, s, acct, to, purpose, at(9*time.Minute), old, "the newest expired")
	wantPending(t, s, acct, to, purpose, old.ExpiresAt.Add(-time.Microsecond), old, "a microsecond before the last expires")
	wantNoPending(t, s, acct, to, purpose, old.ExpiresAt, "all ended")
	// None of these calls changed a verification.
	for _, v := range []*verifystore.Verification{old, newer, signup, noPurpose, elsewhere, theirs, approved, brief} {
		wantVerification(t, s, v, "after PendingVerification")
	}
}

func testTakeCheck(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	v.MaxChecks = 3
	createVerification(t, s, v)
	for i := 1; i <= 3; i++ {
		takeCheck(t, s, v, verifyEpoch.Add(time.Duration(i)*time.Second), true, "check "+strconv.Itoa(i))
	}
	for i := 4; i <= 6; i++ {
		takeCheck(t, s, v, verifyEpoch.Add(time.Duration(i)*time.Second), false, "check "+strconv.Itoa(i)+" of 3")
	}
	// Another verification counts apart.
	w := sampleVerification(v.Account, verifyEpoch)
	w.MaxChecks = 1
	createVerification(t, s, w)
	takeCheck(t, s, w, verifyEpoch.Add(time.Second), true, "another's only check")
	takeCheck(t, s, w, verifyEpoch.Add(time.Second), false, "another's second check")
	wantVerification(t, s, v, "after another's checks")
}

func testTakeCheckExpiry(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	createVerification(t, s, v)
	takeCheck(t, s, v, v.ExpiresAt.Add(-time.Microsecond), true, "a microsecond before expiry")
	takeCheck(t, s, v, v.ExpiresAt, false, "at expiry")
	takeCheck(t, s, v, v.ExpiresAt.Add(time.Hour), false, "an hour after expiry")
	takeCheck(t, s, v, v.ExpiresAt, false, "at expiry, again")
}

func testTakeCheckAfterFinish(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	for _, status := range []verifystore.VerificationStatus{verifystore.VerificationApproved, verifystore.VerificationCanceled} {
		v := sampleVerification(acct, verifyEpoch)
		createVerification(t, s, v)
		takeCheck(t, s, v, verifyEpoch.Add(time.Second), true, "before "+string(status))
		finishVerification(t, s, v, status, verifyEpoch.Add(2*time.Second), true, string(status))
		takeCheck(t, s, v, verifyEpoch.Add(3*time.Second), false, "after "+string(status))
		takeCheck(t, s, v, verifyEpoch.Add(time.Second), false, "after "+string(status)+", dated before it")
	}
}

func testTakeSend(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	v.MaxSends = 3
	createVerification(t, s, v)
	// The first send needs no cooldown.
	takeSend(t, s, v, verifyEpoch, time.Hour, true, "first, with a cooldown of an hour")
	takeSend(t, s, v, verifyEpoch.Add(time.Second), 0, true, "second, no cooldown")
	takeSend(t, s, v, verifyEpoch.Add(time.Second), 0, true, "third, at the same instant, no cooldown")
	takeSend(t, s, v, verifyEpoch.Add(2*time.Second), 0, false, "fourth of 3")
	takeSend(t, s, v, verifyEpoch.Add(time.Hour), 0, false, "fourth of 3, an hour later")
	// Sends take no checks, checks no sends.
	takeCheck(t, s, v, verifyEpoch.Add(3*time.Second), true, "a check after the sends")
	none := sampleVerification(v.Account, verifyEpoch)
	none.MaxSends = 0
	createVerification(t, s, none)
	takeSend(t, s, none, verifyEpoch, 0, false, "of a verification of no sends")
}

func testTakeSendCooldown(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	v.MaxSends = 5
	createVerification(t, s, v)
	const cool = 30 * time.Second
	t0 := verifyEpoch.Add(time.Second)
	takeSend(t, s, v, t0, cool, true, "first")
	takeSend(t, s, v, t0, cool, false, "at the same instant")
	takeSend(t, s, v, t0.Add(cool-time.Microsecond), cool, false, "a microsecond before the cooldown passed")
	takeSend(t, s, v, t0.Add(cool), cool, true, "as the cooldown passed")
	takeSend(t, s, v, t0.Add(2*cool-time.Microsecond), cool, false, "a microsecond before the second cooldown passed")
	takeSend(t, s, v, t0.Add(cool+time.Second), 0, true, "without a cooldown")
	takeSend(t, s, v, t0, 0, false, "dated before the last send")
	takeSend(t, s, v, t0.Add(3*cool), 2*cool, false, "a longer cooldown")
	takeSend(t, s, v, t0.Add(3*cool+time.Second), 2*cool, true, "the longer cooldown passed")
}

func testTakeSendEnded(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	mk := func() *verifystore.Verification {
		v := sampleVerification(acct, verifyEpoch)
		v.MaxSends = 10
		createVerification(t, s, v)
		takeSend(t, s, v, verifyEpoch, 0, true, "first send")
		return v
	}
	approved := mk()
	finishVerification(t, s, approved, verifystore.VerificationApproved, verifyEpoch.Add(time.Second), true, "approve")
	takeSend(t, s, approved, verifyEpoch.Add(time.Minute), 0, false, "approved")
	canceled := mk()
	finishVerification(t, s, canceled, verifystore.VerificationCanceled, verifyEpoch.Add(time.Second), true, "cancel")
	takeSend(t, s, canceled, verifyEpoch.Add(time.Minute), 0, false, "canceled")
	spent := sampleVerification(acct, verifyEpoch)
	spent.MaxChecks, spent.MaxSends = 2, 10
	createVerification(t, s, spent)
	takeCheck(t, s, spent, verifyEpoch.Add(time.Second), true, "first check")
	takeSend(t, s, spent, verifyEpoch.Add(time.Minute), 0, true, "a check left")
	takeCheck(t, s, spent, verifyEpoch.Add(2*time.Minute), true, "last check")
	takeSend(t, s, spent, verifyEpoch.Add(3*time.Minute), 0, false, "out of checks")
	expiring := mk()
	takeSend(t, s, expiring, expiring.ExpiresAt.Add(-time.Microsecond), 0, true, "a microsecond before expiry")
	takeSend(t, s, expiring, expiring.ExpiresAt, 0, false, "at expiry")
}

func testFinishVerification(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	ctx := context.Background()
	acct := newName("acct")
	at := func(d time.Duration) time.Time { return verifyEpoch.Add(d) }

	a := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, a)
	takeCheck(t, s, a, at(time.Second), true, "check")
	takeSend(t, s, a, at(time.Second), 0, true, "send")
	finishVerification(t, s, a, verifystore.VerificationApproved, at(2*time.Second), true, "approve")
	finishVerification(t, s, a, verifystore.VerificationApproved, at(3*time.Second), false, "approve again")
	finishVerification(t, s, a, verifystore.VerificationCanceled, at(3*time.Second), false, "cancel after approving")

	c := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, c)
	finishVerification(t, s, c, verifystore.VerificationCanceled, at(time.Second), true, "cancel")
	finishVerification(t, s, c, verifystore.VerificationApproved, at(2*time.Second), false, "approve after canceling")
	finishVerification(t, s, c, verifystore.VerificationCanceled, at(2*time.Second), false, "cancel again")

	p := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, p)
	for _, status := range []verifystore.VerificationStatus{
		verifystore.VerificationPending, verifystore.VerificationExpired, verifystore.VerificationMaxAttempts, "", "approve", "APPROVED",
	} {
		_, _, err := s.FinishVerification(ctx, acct, p.ID, status, at(time.Second))
		wantErr(t, fmt.Sprintf("FinishVerification(%q)", status), err, store.ErrInvalid)
		wantVerification(t, s, p, fmt.Sprintf("after FinishVerification(%q)", status))
	}
	finishVerification(t, s, p, verifystore.VerificationApproved, at(2*time.Second), true, "approve after the refused calls")
}

func testApproveAfterExpiry(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	// A check counted a microsecond before the expiry approves after it:
	// the code was checked in time.
	v := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, v)
	takeCheck(t, s, v, v.ExpiresAt.Add(-time.Microsecond), true, "the last moment")
	wantVerification(t, s, v, "after its ExpiresAt, no sweep having run")
	finishVerification(t, s, v, verifystore.VerificationApproved, v.ExpiresAt.Add(5*time.Second), true, "approve after expiry")

	// The last check allowed approves too.
	spent := sampleVerification(acct, verifyEpoch)
	spent.MaxChecks = 1
	createVerification(t, s, spent)
	takeCheck(t, s, spent, verifyEpoch.Add(time.Second), true, "the only check")
	finishVerification(t, s, spent, verifystore.VerificationApproved, verifyEpoch.Add(2*time.Second), true, "approve out of checks")
}

// drainExpired calls ExpireVerifications at now until it marks fewer than
// its limit, and answers how many it marked.
func drainExpired(t *testing.T, s verifystore.Verifications, now time.Time) int {
	t.Helper()
	const limit = 1000
	total := 0
	for range 10000 {
		n, err := s.ExpireVerifications(context.Background(), now, limit)
		if err != nil {
			t.Fatalf("ExpireVerifications(%s, %d): %v", vat(now), limit, err)
		}
		if n < 0 || n > limit {
			t.Fatalf("ExpireVerifications(%s, %d) answered %d", vat(now), limit, n)
		}
		total += n
		if n < limit {
			return total
		}
	}
	t.Fatalf("ExpireVerifications(%s, %d) answered its limit 10000 times", vat(now), limit)
	return total
}

// expire calls ExpireVerifications and fails t unless it answers want.
func expire(t *testing.T, s verifystore.Verifications, now time.Time, limit, want int, what string) {
	t.Helper()
	n, err := s.ExpireVerifications(context.Background(), now, limit)
	if err != nil {
		t.Fatalf("%s: ExpireVerifications(%s, %d): %v", what, vat(now), limit, err)
	}
	if n != want {
		t.Fatalf("%s: ExpireVerifications(%s, %d) answered %d, want %d", what, vat(now), limit, n, want)
	}
}

func testExpireVerifications(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	T := expireEpoch
	at := func(d time.Duration) time.Time { return T.Add(d) }
	// Older verifications, left pending by earlier runs, would be counted.
	drainExpired(t, s, at(time.Hour))

	mk := func(created, expires time.Duration) *verifystore.Verification {
		v := sampleVerification(acct, at(created))
		v.ExpiresAt = at(expires)
		return v
	}
	var due []*verifystore.Verification // those ExpireVerifications at T+5m must mark
	for i := 1; i <= 5; i++ {           // the last one at exactly T+5m
		due = append(due, mk(-time.Hour+time.Duration(i)*time.Second, time.Duration(i)*time.Minute))
	}
	spentDue := mk(-time.Hour, 3*time.Minute)
	spentDue.MaxChecks = 1
	due = append(due, spentDue)
	late := mk(-2*time.Hour, 5*time.Minute+time.Microsecond)
	approved := mk(-time.Hour, time.Minute)
	canceled := mk(-time.Hour, time.Minute)
	spent := mk(-time.Hour, 10*time.Minute)
	spent.MaxChecks = 1
	kept := []*verifystore.Verification{late, approved, canceled, spent}
	for _, v := range slices.Concat(due, kept) {
		createVerification(t, s, v)
	}
	takeCheck(t, s, spentDue, at(-30*time.Minute), true, "the only check")
	takeCheck(t, s, spent, at(-30*time.Minute), true, "the only check")
	finishVerification(t, s, approved, verifystore.VerificationApproved, at(-30*time.Minute), true, "approve")
	finishVerification(t, s, canceled, verifystore.VerificationCanceled, at(-30*time.Minute), true, "cancel")

	now := at(5 * time.Minute)
	expired := func() int {
		n := 0
		for _, v := range due {
			if readVerification(t, s, acct, v.ID).Status == verifystore.VerificationExpired {
				n++
			}
		}
		return n
	}
	expire(t, s, now, 4, 4, "six due, limit 4")
	if n := expired(); n != 4 {
		t.Fatalf("ExpireVerifications answered 4, and %d of the six due are expired", n)
	}
	expire(t, s, now, 4, 2, "two left")
	expire(t, s, now, 4, 0, "none left")
	for i, v := range due {
		v.Status = verifystore.VerificationExpired
		wantWritten(t, "due "+strconv.Itoa(i)+", after ExpireVerifications", readVerification(t, s, acct, v.ID), v, now)
	}
	for i, v := range kept {
		wantVerification(t, s, v, "not due "+strconv.Itoa(i)+", after ExpireVerifications")
	}

	// Marked expired, a verification is over, also at times before its
	// ExpiresAt.
	last := due[4] // expires at T+5m
	before := at(4 * time.Minute)
	takeCheck(t, s, last, before, false, "marked expired")
	takeSend(t, s, last, before, 0, false, "marked expired")
	finishVerification(t, s, last, verifystore.VerificationApproved, before, false, "marked expired")
	finishVerification(t, s, last, verifystore.VerificationCanceled, before, false, "marked expired")
	finishVerification(t, s, spentDue, verifystore.VerificationApproved, before, false, "marked expired, its check counted")
	wantPending(t, s, acct, last.To, last.Purpose, before, late, "the newer one marked expired")
	wantNoPending(t, s, acct, last.To, last.Purpose, at(6*time.Minute), "all expired")

	// An hour on, the late one and the one out of checks are due.
	later := at(time.Hour)
	expire(t, s, later, 100, 2, "an hour later")
	for _, v := range []*verifystore.Verification{late, spent} {
		v.Status = verifystore.VerificationExpired
		wantWritten(t, "an hour later", readVerification(t, s, acct, v.ID), v, later)
	}
	wantVerification(t, s, approved, "approved, an hour later")
	wantVerification(t, s, canceled, "canceled, an hour later")
	expire(t, s, later, 100, 0, "an hour later, again")
}

func testVerificationKeptADay(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct, poker := newName("acct"), newName("acct")
	T := verifyEpoch.AddDate(0, 0, 7)
	at := func(d time.Duration) time.Time { return T.Add(d) }

	canceled := sampleVerification(acct, T)
	createVerification(t, s, canceled)
	finishVerification(t, s, canceled, verifystore.VerificationCanceled, at(time.Minute), true, "cancel")
	spent := sampleVerification(acct, T)
	spent.MaxChecks = 1
	createVerification(t, s, spent)
	takeCheck(t, s, spent, at(time.Minute), true, "the only check")
	expired := sampleVerification(acct, T)
	createVerification(t, s, expired)
	approved := sampleVerification(acct, T)
	createVerification(t, s, approved)
	takeCheck(t, s, approved, at(9*time.Minute), true, "check before the expiry")
	finishVerification(t, s, approved, verifystore.VerificationApproved, at(15*time.Minute), true, "approve after the expiry")

	// Each ended verification and when it ended, by StatusAt: the one
	// approved after its expiry ended when it expired.
	ended := []struct {
		v   *verifystore.Verification
		end time.Time
	}{
		{canceled, at(time.Minute)}, {spent, at(time.Minute)}, {expired, expired.ExpiresAt}, {approved, approved.ExpiresAt},
	}
	// poke has the store answer calls at now, which a store may use to
	// forget what it need not keep.
	poke := func(now time.Time) {
		t.Helper()
		drainExpired(t, s, now)
		v := sampleVerification(poker, now)
		createVerification(t, s, v)
		takeCheck(t, s, v, now, true, "poke")
		takeSend(t, s, v, now, 0, true, "poke")
		wantPending(t, s, poker, v.To, v.Purpose, now, v, "poke")
		finishVerification(t, s, v, verifystore.VerificationCanceled, now, true, "poke")
	}
	check := func(now time.Time) {
		t.Helper()
		for _, e := range ended {
			if now.Sub(e.end) >= 24*time.Hour {
				continue
			}
			got, err := s.Verification(context.Background(), acct, e.v.ID)
			if err != nil {
				t.Fatalf("Verification of one that ended at %s, at %s: %v; want it kept a day", vat(e.end), vat(now), err)
			}
			want, markedAt := e.v, e.v.UpdatedAt
			if want.Status == verifystore.VerificationPending && !now.Before(want.ExpiresAt) {
				// This poke's ExpireVerifications marked it, and may
				// have dated it.
				want.Status, markedAt = verifystore.VerificationExpired, now
			}
			wantWritten(t, fmt.Sprintf("one that ended at %s, read at %s", vat(e.end), vat(now)), got, want, markedAt)
		}
	}
	for hour := 1; hour < 24; hour++ {
		now := at(time.Duration(hour) * time.Hour)
		poke(now)
		check(now)
	}
	for _, e := range ended {
		now := e.end.Add(24*time.Hour - time.Microsecond)
		poke(now)
		check(now)
	}
}

func testVerificationCanceledContext(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	v := sampleVerification(acct, verifyEpoch)
	createVerification(t, s, v)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	now := verifyEpoch.Add(time.Second)

	fresh := sampleVerification(acct, verifyEpoch)
	err := s.CreateVerification(ctx, verifystore.CloneVerification(fresh))
	wantErr(t, "CreateVerification with a canceled context", err, context.Canceled)
	_, _, err = s.TakeCheck(ctx, acct, v.ID, now)
	wantErr(t, "TakeCheck with a canceled context", err, context.Canceled)
	_, _, err = s.TakeSend(ctx, acct, v.ID, now, 0)
	wantErr(t, "TakeSend with a canceled context", err, context.Canceled)
	_, _, err = s.FinishVerification(ctx, acct, v.ID, verifystore.VerificationApproved, now)
	wantErr(t, "FinishVerification with a canceled context", err, context.Canceled)
	_, err = s.ExpireVerifications(ctx, v.ExpiresAt, 10)
	wantErr(t, "ExpireVerifications with a canceled context", err, context.Canceled)

	wantVerification(t, s, v, "after the canceled calls")
	wantNoVerification(t, s, acct, fresh.ID, "after a canceled CreateVerification")
	createVerification(t, s, fresh)
}

// counted collects, under concurrency, the counts that the calls
// answered true gave and the ones the others gave.
type counted struct {
	mu      sync.Mutex
	yes, no []int
}

func (c *counted) add(ok bool, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.yes = append(c.yes, n)
	} else {
		c.no = append(c.no, n)
	}
}

// want fails t unless exactly max calls were answered true, with the
// counts 1 to max, and every other with the count max.
func (c *counted) want(t *testing.T, what string, most int) {
	t.Helper()
	slices.Sort(c.yes)
	var all []int
	for i := 1; i <= most; i++ {
		all = append(all, i)
	}
	if !slices.Equal(c.yes, all) {
		t.Fatalf("%s: %d calls answered true, with the counts %v; want %d, with the counts %v", what, len(c.yes), c.yes, most, all)
	}
	for _, n := range c.no {
		if n != most {
			t.Fatalf("%s: a call answered false with the count %d, want %d", what, n, most)
		}
	}
}

func testConcurrentTakeCheck(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	v.MaxChecks = 5
	createVerification(t, s, v)
	now := verifyEpoch.Add(time.Second)
	var c counted
	together(t, Goroutines, 2, func(g, i int) error {
		got, ok, err := s.TakeCheck(context.Background(), v.Account, v.ID, now)
		if err != nil {
			return err
		}
		if got == nil {
			return fmt.Errorf("TakeCheck answered nil and %v", ok)
		}
		c.add(ok, got.Checks)
		return nil
	})
	c.want(t, fmt.Sprintf("%d goroutines checking twice at once, MaxChecks 5", Goroutines), 5)
	v.Checks = 5
	wantWritten(t, "after the concurrent checks", readVerification(t, s, v.Account, v.ID), v, now)
}

func testConcurrentTakeSend(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	acct := newName("acct")
	now := verifyEpoch.Add(time.Second)
	for _, cool := range []time.Duration{0, time.Minute} {
		v := sampleVerification(acct, verifyEpoch)
		v.MaxSends = 5
		createVerification(t, s, v)
		var c counted
		together(t, Goroutines, 2, func(g, i int) error {
			got, ok, err := s.TakeSend(context.Background(), acct, v.ID, now, cool)
			if err != nil {
				return err
			}
			if got == nil {
				return fmt.Errorf("TakeSend answered nil and %v", ok)
			}
			c.add(ok, got.Sends)
			return nil
		})
		want := 5
		if cool > 0 {
			want = 1
		}
		c.want(t, fmt.Sprintf("%d goroutines sending twice at once, MaxSends 5, cooldown %v", Goroutines, cool), want)
		v.Sends, v.LastSentAt = want, now
		wantWritten(t, "after the concurrent sends", readVerification(t, s, acct, v.ID), v, now)
	}
}

func testConcurrentFinish(t *testing.T, h VerificationsHarness) {
	s := newVerifications(t, h)
	v := sampleVerification(newName("acct"), verifyEpoch)
	createVerification(t, s, v)
	now := verifyEpoch.Add(time.Second)
	var (
		mu      sync.Mutex
		winners []verifystore.VerificationStatus
		seen    []verifystore.VerificationStatus
	)
	together(t, Goroutines, 1, func(g, _ int) error {
		status := verifystore.VerificationApproved
		if g%2 == 1 {
			status = verifystore.VerificationCanceled
		}
		got, ok, err := s.FinishVerification(context.Background(), v.Account, v.ID, status, now)
		if err != nil {
			return err
		}
		if got == nil {
			return fmt.Errorf("FinishVerification answered nil and %v", ok)
		}
		mu.Lock()
		defer mu.Unlock()
		if ok {
			winners = append(winners, status)
		}
		seen = append(seen, got.Status)
		return nil
	})
	if len(winners) != 1 {
		t.Fatalf("%d goroutines approving and canceling at once: %d answered true (%v), want exactly one", Goroutines, len(winners), winners)
	}
	for _, st := range seen {
		if st != winners[0] {
			t.Fatalf("a FinishVerification answered the status %s; the one that moved it moved it to %s", st, winners[0])
		}
	}
	v.Status, v.UpdatedAt = winners[0], now
	wantVerification(t, s, v, "after the concurrent FinishVerifications")
}

// RunCounters checks a verifystore.Counters:
//
//   - Add without a limit adds to a key's sum and answers the sum over
//     the window after the call; a zero limit is none; Sums agrees;
//   - Add with a limit adds while the sum plus n is at most the limit,
//     and otherwise answers false and the sum unchanged, adding nothing;
//   - a negative n gives back, with a limit too;
//   - an amount counts from the instant it is added until the start of
//     its bucket (verifystore.CounterBucket) plus the window: at the
//     microsecond before it and not at it, as verifystore.CounterSince puts it,
//     for windows of 10µs, 16µs, 90s, 16m, 1h and 24h, at the start,
//     middle and end of a bucket; a limit frees up as amounts leave;
//   - keys are independent, also keys that share a prefix or hold a NUL
//     byte;
//   - Sums answers the sums of several keys in order, a key twice, zero
//     for a key never added to, nothing for no keys;
//   - a canceled context is context.Canceled for Add, which adds nothing;
//   - of 64 goroutines adding under one limit at once, as many as it
//     allows add, with the sums 1 to the limit, and the others are refused
//     at the limit; mixed amounts never exceed it and lose nothing;
//     additions and give-backs without a limit lose nothing.
//
// Times are passed in, from a fixed instant on, in order for each key;
// the suite never sleeps and never reads the clock.
func RunCounters(t *testing.T, h CountersHarness) {
	t.Helper()
	needs(t, h.New != nil, "CountersHarness needs New")
	runAll(t, []subtest{
		{"Add", func(t *testing.T) { testCounterAdd(t, h) }},
		{"Limit", func(t *testing.T) { testCounterLimit(t, h) }},
		{"GiveBack", func(t *testing.T) { testCounterGiveBack(t, h) }},
		{"Window", func(t *testing.T) { testCounterWindow(t, h) }},
		{"WindowBoundaries", func(t *testing.T) { testCounterWindowBoundaries(t, h) }},
		{"LimitSlides", func(t *testing.T) { testCounterLimitSlides(t, h) }},
		{"KeysIndependent", func(t *testing.T) { testCounterKeysIndependent(t, h) }},
		{"Sums", func(t *testing.T) { testCounterSums(t, h) }},
		{"CanceledContext", func(t *testing.T) { testCounterCanceledContext(t, h) }},
		{"ConcurrentLimit", func(t *testing.T) { testCounterConcurrentLimit(t, h) }},
		{"ConcurrentAdd", func(t *testing.T) { testCounterConcurrentAdd(t, h) }},
	})
}

func newCounters(t *testing.T, h CountersHarness) verifystore.Counters {
	t.Helper()
	c := h.New(t)
	if c == nil {
		t.Fatal("CountersHarness.New returned nil")
	}
	return c
}

// counterKey returns a fresh key shaped like the fraud guard's.
func counterKey() string { return "sends\x00" + newName("acct") + "\x00+9198765" }

// addCount calls Add and fails t unless it answers wantSum and wantAdded.
func addCount(t *testing.T, c verifystore.Counters, key string, n int64, window time.Duration, limit int64, now time.Time, wantSum int64, wantAdded bool, what string) {
	t.Helper()
	sum, added, err := c.Add(context.Background(), key, n, window, limit, now)
	if err != nil {
		t.Fatalf("%s: Add(%d, window %v, limit %d) at %s: %v", what, n, window, limit, vat(now), err)
	}
	if sum != wantSum || added != wantAdded {
		t.Fatalf("%s: Add(%d, window %v, limit %d) at %s = %d, %v; want %d, %v", what, n, window, limit, vat(now), sum, added, wantSum, wantAdded)
	}
}

// wantSums fails t unless Sums answers want.
func wantSums(t *testing.T, c verifystore.Counters, keys []string, window time.Duration, now time.Time, want []int64, what string) {
	t.Helper()
	got, err := c.Sums(context.Background(), keys, window, now)
	if err != nil {
		t.Fatalf("%s: Sums(window %v) at %s: %v", what, window, vat(now), err)
	}
	if !slices.Equal(got, want) || len(got) != len(want) {
		t.Fatalf("%s: Sums(window %v) at %s = %v, want %v", what, window, vat(now), got, want)
	}
}

// wantSum fails t unless Sums of key answers want.
func wantSum(t *testing.T, c verifystore.Counters, key string, window time.Duration, now time.Time, want int64, what string) {
	t.Helper()
	wantSums(t, c, []string{key}, window, now, []int64{want}, what)
}

// countedUntil returns the first instant at which an amount added at t no
// longer counts in a sum over window: the first at which CounterSince is
// after the start of the amount's bucket, the start of the bucket after
// the one window less a bucket on.
func countedUntil(t time.Time, window time.Duration) time.Time {
	size := max(window/verifystore.CounterBuckets, time.Microsecond)
	last := verifystore.CounterBucket(t, window).Add(window - size) // the last bucket that counts it
	return verifystore.CounterBucket(last, window).Add(size)
}

func testCounterAdd(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = 16 * time.Minute
	t0 := verifyEpoch
	wantSum(t, c, key, w, t0, 0, "a key never added to")
	addCount(t, c, key, 5, w, 0, t0, 5, true, "first")
	addCount(t, c, key, 7, w, 0, t0, 12, true, "second, at the same instant")
	addCount(t, c, key, 3, w, 0, t0.Add(time.Second), 15, true, "a second later")
	addCount(t, c, key, 1_000_000_000_000, w, 0, t0.Add(5*time.Minute), 1_000_000_000_015, true, "a large amount, minutes later")
	addCount(t, c, key, 0, w, 0, t0.Add(6*time.Minute), 1_000_000_000_015, true, "nothing")
	wantSum(t, c, key, w, t0.Add(10*time.Minute), 1_000_000_000_015, "within the window")
}

func testCounterLimit(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = time.Hour
	t0 := verifyEpoch
	addCount(t, c, key, 4, w, 10, t0, 4, true, "4 of 10")
	addCount(t, c, key, 4, w, 10, t0, 8, true, "8 of 10")
	addCount(t, c, key, 3, w, 10, t0, 8, false, "11 of 10")
	addCount(t, c, key, 3, w, 10, t0.Add(time.Minute), 8, false, "11 of 10, a minute later")
	addCount(t, c, key, 2, w, 10, t0.Add(time.Minute), 10, true, "10 of 10")
	addCount(t, c, key, 1, w, 10, t0.Add(time.Minute), 10, false, "11 of 10")
	wantSum(t, c, key, w, t0.Add(time.Minute), 10, "after the refusals")
	addCount(t, c, key, 5, w, 0, t0.Add(2*time.Minute), 15, true, "no limit")
	addCount(t, c, key, 5, w, 20, t0.Add(2*time.Minute), 20, true, "20 of 20")
	addCount(t, c, key, 1, w, 20, t0.Add(2*time.Minute), 20, false, "21 of 20")
	addCount(t, c, key, 1, w, 15, t0.Add(2*time.Minute), 20, false, "already over a lower limit")

	fresh := counterKey()
	addCount(t, c, fresh, 11, w, 10, t0, 0, false, "more than the limit at once")
	wantSum(t, c, fresh, w, t0, 0, "after a refused first Add")
	addCount(t, c, fresh, 10, w, 10, t0, 10, true, "the limit at once")
}

func testCounterGiveBack(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = time.Hour
	t0 := verifyEpoch
	addCount(t, c, key, 10, w, 10, t0, 10, true, "the limit")
	addCount(t, c, key, 1, w, 10, t0, 10, false, "over the limit")
	addCount(t, c, key, -4, w, 10, t0, 6, true, "give back 4, with the limit")
	addCount(t, c, key, 4, w, 10, t0, 10, true, "take them again")
	addCount(t, c, key, -3, w, 0, t0.Add(time.Minute), 7, true, "give back 3, no limit")
	addCount(t, c, key, -7, w, 0, t0.Add(time.Minute), 0, true, "give back the rest")
	wantSum(t, c, key, w, t0.Add(time.Minute), 0, "all given back")
	addCount(t, c, key, 10, w, 10, t0.Add(time.Minute), 10, true, "the limit again")
}

func testCounterWindow(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = 16 * time.Minute // buckets of a minute
	t0 := verifyEpoch          // 5.123456s into its minute
	t1 := t0.Add(3 * time.Minute)
	addCount(t, c, key, 7, w, 0, t0, 7, true, "at t0")
	addCount(t, c, key, 2, w, 0, t1, 9, true, "at t0+3m")
	end0 := t0.Truncate(time.Minute).Add(w) // t0's bucket plus the window
	end1 := t1.Truncate(time.Minute).Add(w)
	if u := countedUntil(t0, w); !u.Equal(end0) {
		t.Fatalf("suite: countedUntil(t0) = %v, want %v", u, end0)
	}
	wantSum(t, c, key, w, end0.Add(-time.Microsecond), 9, "a microsecond before t0's amount leaves")
	wantSum(t, c, key, w, end0, 2, "as t0's amount leaves")
	addCount(t, c, key, 1, w, 0, end0, 3, true, "as t0's amount leaves")
	wantSum(t, c, key, w, end1.Add(-time.Microsecond), 3, "a microsecond before t1's amount leaves")
	wantSum(t, c, key, w, end1, 1, "as t1's amount leaves")
	wantSum(t, c, key, w, end0.Add(w), 0, "a window after the last")
	addCount(t, c, key, 4, w, 0, end0.Add(w), 4, true, "a window after the last")
}

func testCounterWindowBoundaries(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	for _, w := range []time.Duration{10 * time.Microsecond, 16 * time.Microsecond, 90 * time.Second,
		16 * time.Minute, time.Hour, 24 * time.Hour} {
		size := max(w/verifystore.CounterBuckets, time.Microsecond)
		start := verifystore.CounterBucket(verifyEpoch, w)
		for _, t0 := range []time.Time{start, start.Add((size / 2).Truncate(time.Microsecond)), start.Add(size - time.Microsecond)} {
			key := counterKey()
			until := countedUntil(t0, w)
			what := fmt.Sprintf("window %v, added at %s", w, vat(t0))
			addCount(t, c, key, 1, w, 0, t0, 1, true, what)
			wantSum(t, c, key, w, t0, 1, what+", at once")
			wantSum(t, c, key, w, until.Add(-time.Microsecond), 1, what+", a microsecond before "+vat(until))
			wantSum(t, c, key, w, until, 0, what+", at "+vat(until))
			addCount(t, c, key, 1, w, 1, until, 1, true, what+", added again at "+vat(until)+" under a limit of 1")
		}
	}
}

func testCounterLimitSlides(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = 16 * time.Minute
	t0 := verifyEpoch
	t1 := t0.Add(5 * time.Minute)
	addCount(t, c, key, 6, w, 10, t0, 6, true, "6 of 10")
	addCount(t, c, key, 4, w, 10, t1, 10, true, "10 of 10")
	end0 := countedUntil(t0, w)
	addCount(t, c, key, 1, w, 10, end0.Add(-time.Microsecond), 10, false, "a microsecond before the first 6 leave")
	addCount(t, c, key, 1, w, 10, end0, 5, true, "as the first 6 leave")
	addCount(t, c, key, 6, w, 10, end0, 5, false, "11 of 10")
	addCount(t, c, key, 5, w, 10, end0, 10, true, "10 of 10 again")
	addCount(t, c, key, 1, w, 10, countedUntil(t1, w), 7, true, "as the 4 leave")
}

func testCounterKeysIndependent(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	const w = time.Hour
	t0 := verifyEpoch
	acct := newName("acct")
	keys := []string{
		acct,
		acct + "\x00" + "+919876543210",
		acct + "\x00" + "+919876543211",
		acct + "\x00" + "+9198765432",
		acct + "x",
		acct[:len(acct)-1],
		acct + "\x00" + "नमस्ते",
	}
	var want []int64
	for i, k := range keys {
		n := int64(i + 1)
		addCount(t, c, k, n, w, 0, t0, n, true, "key "+strconv.Itoa(i))
		want = append(want, n)
	}
	wantSums(t, c, keys, w, t0, want, "every key")
	// A limit on one key counts that key alone.
	addCount(t, c, keys[1], 8, w, 10, t0, 10, true, "key 1 to its limit")
	addCount(t, c, keys[2], 7, w, 10, t0, 10, true, "key 2 to the same limit")
	want[1], want[2] = 10, 10
	wantSums(t, c, keys, w, t0, want, "after the limited adds")
}

func testCounterSums(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	const w = 16 * time.Minute
	t0 := verifyEpoch
	a, b, never := counterKey(), counterKey(), counterKey()
	addCount(t, c, a, 3, w, 0, t0, 3, true, "a")
	addCount(t, c, b, 5, w, 0, t0.Add(10*time.Minute), 5, true, "b")
	now := t0.Add(11 * time.Minute)
	wantSums(t, c, []string{a, never, b, a}, w, now, []int64{3, 0, 5, 3}, "a, never, b, a")
	wantSums(t, c, []string{never}, w, now, []int64{0}, "a key never added to")
	wantSums(t, c, nil, w, now, []int64{}, "no keys")
	wantSums(t, c, []string{}, w, now, []int64{}, "an empty list")
	later := countedUntil(t0, w)
	wantSums(t, c, []string{a, never, b, a}, w, later, []int64{0, 0, 5, 0}, "after a's amount left")
}

func testCounterCanceledContext(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	key := counterKey()
	const w = time.Hour
	addCount(t, c, key, 5, w, 0, verifyEpoch, 5, true, "before")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := c.Add(ctx, key, 3, w, 0, verifyEpoch)
	wantErr(t, "Add with a canceled context", err, context.Canceled)
	_, _, err = c.Add(ctx, key, 3, w, 100, verifyEpoch)
	wantErr(t, "Add with a limit and a canceled context", err, context.Canceled)
	wantSum(t, c, key, w, verifyEpoch, 5, "after the canceled Adds")
}

func testCounterConcurrentLimit(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	const w = time.Hour
	now := verifyEpoch
	key := counterKey()
	const limit = 100
	var got counted
	together(t, Goroutines, 5, func(g, i int) error {
		sum, added, err := c.Add(context.Background(), key, 1, w, limit, now)
		if err != nil {
			return err
		}
		got.add(added, int(sum))
		return nil
	})
	got.want(t, fmt.Sprintf("%d goroutines adding 1 five times at once, limit %d", Goroutines, limit), limit)
	wantSum(t, c, key, w, now, limit, "after the concurrent adds")

	// Amounts of 1 to 3: never over the limit, nothing lost.
	mixed := counterKey()
	var (
		mu    sync.Mutex
		total int64
	)
	together(t, Goroutines, 5, func(g, i int) error {
		n := int64((g+i)%3 + 1)
		sum, added, err := c.Add(context.Background(), mixed, n, w, limit, now)
		if err != nil {
			return err
		}
		if sum > limit {
			return fmt.Errorf("Add(%d) answered the sum %d, over the limit of %d", n, sum, limit)
		}
		if !added && sum+n <= limit {
			return fmt.Errorf("Add(%d) refused at the sum %d, under the limit of %d", n, sum, limit)
		}
		if added {
			mu.Lock()
			total += n
			mu.Unlock()
		}
		return nil
	})
	if total > limit || total < limit-2 {
		t.Fatalf("concurrent adds of 1 to 3 under a limit of %d added %d in all", limit, total)
	}
	wantSum(t, c, mixed, w, now, total, "after the concurrent adds of 1 to 3")
}

func testCounterConcurrentAdd(t *testing.T, h CountersHarness) {
	c := newCounters(t, h)
	const w = time.Hour
	now := verifyEpoch
	key := counterKey()
	together(t, Goroutines, 5, func(g, i int) error {
		n := int64(3)
		if g%2 == 1 {
			n = -1
		}
		_, added, err := c.Add(context.Background(), key, n, w, 0, now)
		if err == nil && !added {
			err = fmt.Errorf("Add(%d) without a limit answered false", n)
		}
		return err
	})
	want := int64(Goroutines/2*5*3 - Goroutines/2*5)
	wantSum(t, c, key, w, now, want, "after the concurrent adds and give-backs")
}
