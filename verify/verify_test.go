package verify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify"
	"github.com/notifykit/notify/verify/verifystore"
)

var secret = []byte("0123456789abcdef0123456789abcdef-test-secret")

// clock is a settable clock for Config.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countingStore counts the checks a store counted.
type countingStore struct {
	verifystore.Verifications
	checks atomic.Int64
}

func (s *countingStore) TakeCheck(ctx context.Context, account, id string, now time.Time) (*verifystore.Verification, bool, error) {
	v, ok, err := s.Verifications.TakeCheck(ctx, account, id, now)
	if ok {
		s.checks.Add(1)
	}
	return v, ok, err
}

// env is a Service over a notifytest kit.
type env struct {
	kit   *notifytest.Kit
	svc   *verify.Service
	store *countingStore
	clock *clock
}

func newEnv(t *testing.T, mutate func(*verify.Config)) *env {
	t.Helper()
	e := &env{kit: notifytest.New(t), clock: newClock(), store: &countingStore{Verifications: memstore.NewVerifications()}}
	cfg := verify.Config{Notifier: e.kit.Notifier, Accounts: e.kit.Accounts, Store: e.store, Secret: secret, Now: e.clock.Now}
	if mutate != nil {
		mutate(&cfg)
	}
	svc, err := verify.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

// start starts a verification of to for notifytest's account, failing
// the test if it does not start.
func (e *env) start(t *testing.T, to string, opts verify.StartOptions) *verify.Verification {
	t.Helper()
	v, err := e.svc.Start(context.Background(), notifytest.AccountID, to, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// smsCode and chatCode return the code of the last SMS and chat message.
func smsCode(t *testing.T, k *notifytest.Kit) string {
	t.Helper()
	return k.LastSMS(t).Content.(*sms.Message).OTP
}

func chatCode(t *testing.T, k *notifytest.Kit) string {
	t.Helper()
	return k.LastChat(t).Content.(*chat.Message).OTP
}

// wrong returns a code of the same length as code that differs from it.
func wrong(code string, i int) string {
	w := fmt.Sprintf("%0*d", len(code), i)
	if w == code {
		w = fmt.Sprintf("%0*d", len(code), i+1)
	}
	return w
}

func TestStartSendsOneCodeByBothChannelsAndCheckApprovesOnce(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	before := e.kit.Balance(t)
	v := e.start(t, "98765 43210", verify.StartOptions{Purpose: "login", Brand: "Acme"})
	if v.Status != verify.StatusPending || v.To != "+919876543210" || v.AttemptsLeft != 5 || v.SendsLeft != 4 {
		t.Fatalf("started %+v", v)
	}
	if want := e.clock.Now().Add(10 * time.Minute); !v.ExpiresAt.Equal(want) {
		t.Errorf("expires at %v, want %v", v.ExpiresAt, want)
	}
	if len(v.Legs) != 2 || v.Legs[0].Channel != verify.SMS || v.Legs[1].Channel != verify.Chat {
		t.Fatalf("legs %+v", v.Legs)
	}
	var cost int64
	for _, l := range v.Legs {
		if l.Status != record.StateSent || l.MessageID == "" {
			t.Errorf("leg %+v", l)
		}
		cost += l.Cost.Minor
	}
	if got := before - e.kit.Balance(t); got != cost || cost == 0 {
		t.Errorf("charged %d, legs cost %d", got, cost)
	}
	code := smsCode(t, e.kit)
	if len(code) != 6 || code != chatCode(t, e.kit) {
		t.Fatalf("SMS code %q, chat code %q: want one 6-digit code", code, chatCode(t, e.kit))
	}
	// The chat leg went through the cloud authentication template, its
	// button carrying the code.
	if tpl := e.kit.LastChat(t).Content.(*chat.Message).Template; tpl == nil || tpl.Name != notifytest.CloudOTPTemplate ||
		len(tpl.Buttons) != 1 || tpl.Buttons[0].Value != code {
		t.Errorf("chat template %+v", tpl)
	}

	balance := e.kit.Balance(t)
	res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code)
	if err != nil || !res.Approved() {
		t.Fatalf("Check with the code: %+v, %v", res, err)
	}
	if e.kit.Balance(t) != balance {
		t.Error("a check was charged")
	}
	_, err = e.svc.Check(ctx, notifytest.AccountID, v.ID, code)
	if notify.CodeOf(err) != notify.CodeConflict {
		t.Errorf("second check of an approved verification: %v, want Conflict", err)
	}
	got, err := e.svc.Get(ctx, notifytest.AccountID, v.ID)
	if err != nil || got.Status != verify.StatusApproved {
		t.Errorf("Get after approval: %+v, %v", got, err)
	}
}

func TestWrongCodesEndInMaxAttempts(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{})
	code := smsCode(t, e.kit)
	for i := range 6 {
		res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, wrong(code, i))
		if err != nil {
			t.Fatal(err)
		}
		wantLeft, wantStatus := 4-i, verify.StatusPending
		if i >= 4 {
			wantLeft, wantStatus = 0, verify.StatusMaxAttempts
		}
		if res.Status != wantStatus || res.AttemptsLeft != wantLeft {
			t.Errorf("wrong code %d: %s with %d left, want %s with %d", i+1, res.Status, res.AttemptsLeft, wantStatus, wantLeft)
		}
	}
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code); err != nil || res.Approved() || res.Status != verify.StatusMaxAttempts {
		t.Errorf("the right code after the attempts ran out: %+v, %v", res, err)
	}
	if n := e.store.checks.Load(); n != 5 {
		t.Errorf("%d checks counted, want 5", n)
	}
}

// TestNoWrongCodeApproves tries every code but the right one of a 4-digit
// verification, in batches of five over fresh verifications of the same
// recipient and purpose: none approves, and each right code does.
func TestNoWrongCodeApproves(t *testing.T) {
	e := newEnv(t, func(c *verify.Config) { c.Length = 4; c.MaxChecks = 100 })
	ctx := context.Background()
	tried := 0
	for round := 0; tried < 10_000; round++ {
		v := e.start(t, "9876543210", verify.StartOptions{})
		code := smsCode(t, e.kit)
		e.kit.SMS.Reset()
		e.kit.Cloud.Reset()
		for range 94 { // and 5 malformed ones: 99 of the 100 checks
			guess := fmt.Sprintf("%04d", tried%10_000)
			tried++
			if guess == code {
				continue
			}
			res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, guess)
			if err != nil || res.Approved() {
				t.Fatalf("wrong code %s of %s: %+v, %v", guess, code, res, err)
			}
		}
		for _, bad := range []string{"", code + "0", code[:3], " " + code[1:], code[:3] + "x"} {
			if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, bad); err == nil && res.Approved() {
				t.Fatalf("malformed code %q approved", bad)
			}
		}
		if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code); err != nil || !res.Approved() {
			t.Fatalf("the right code %s after wrong ones: %+v, %v", code, res, err)
		}
		e.clock.Add(time.Hour) // out of the recipient limit's reach
	}
}

// TestConcurrentChecksCountExactly runs 50 checks of one verification at
// once, one of them with the right code: exactly MaxChecks are weighed,
// and the right code approves only if it was among them.
func TestConcurrentChecksCountExactly(t *testing.T) {
	for round := range 20 {
		e := newEnv(t, nil)
		ctx := context.Background()
		v := e.start(t, "9876543210", verify.StartOptions{})
		code := smsCode(t, e.kit)
		right := round % 50
		if round%2 == 1 {
			right = -1 // every code wrong
		}
		var approved, weighedWrong atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 50 {
			wg.Go(func() {
				<-start
				guess := wrong(code, i)
				if i == right {
					guess = code
				}
				res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, guess)
				switch {
				case err != nil && notify.CodeOf(err) != notify.CodeConflict:
					t.Errorf("check %d: %v", i, err)
				case err != nil:
				case res.Approved():
					if guess != code {
						t.Errorf("wrong code %s approved", guess)
					}
					approved.Add(1)
				case res.Status == verify.StatusPending || res.Status == verify.StatusMaxAttempts && res.Verification.AttemptsLeft == 0 && guess != code:
					weighedWrong.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		// The right code, once weighed, ends the verification: the checks
		// after it are not counted. Without it, exactly five are.
		n := e.store.checks.Load()
		switch approved.Load() {
		case 0:
			if n != 5 {
				t.Fatalf("round %d: %d checks counted, want exactly 5", round, n)
			}
		case 1:
			if n < 1 || n > 5 {
				t.Fatalf("round %d: %d checks counted with the right code among them, want 1 to 5", round, n)
			}
		default:
			t.Fatalf("round %d: approved %d times", round, approved.Load())
		}
		if approved.Load() == 0 && weighedWrong.Load() < 5 {
			t.Fatalf("round %d: %d wrong codes answered as weighed, want at least 5", round, weighedWrong.Load())
		}
	}
}

func TestExpiryBoundary(t *testing.T) {
	e := newEnv(t, func(c *verify.Config) { c.TTL = 30 * time.Second })
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{})
	code := smsCode(t, e.kit)
	e.clock.Add(30*time.Second - time.Microsecond)
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, wrong(code, 1)); err != nil || res.Status != verify.StatusPending {
		t.Fatalf("a microsecond before expiry: %+v, %v", res, err)
	}
	e.clock.Add(time.Microsecond)
	res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code)
	if err != nil || res.Approved() || res.Status != verify.StatusExpired {
		t.Fatalf("the right code at expiry: %+v, %v", res, err)
	}
	if n, err := e.svc.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep: %d, %v; want 1", n, err)
	}
	if got, _ := e.svc.Get(ctx, notifytest.AccountID, v.ID); got.Status != verify.StatusExpired {
		t.Errorf("after the sweep: %s", got.Status)
	}
	if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{}); notify.CodeOf(err) != notify.CodeConflict {
		t.Errorf("resend of an expired verification: %v, want Conflict", err)
	}
}

func TestResendSendsTheSameCode(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
	code := smsCode(t, e.kit)
	_, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{})
	var ne *notify.Error
	if !errors.As(err, &ne) || ne.Code != notify.CodeRateLimited || ne.RetryAfter != 30*time.Second {
		t.Fatalf("resend within the cooldown: %v, want RateLimited after 30s", err)
	}
	e.clock.Add(30 * time.Second)
	r, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{})
	if err != nil || len(r.Legs) != 1 || r.SendsLeft != 3 {
		t.Fatalf("resend: %+v, %v", r, err)
	}
	if got := smsCode(t, e.kit); got != code {
		t.Errorf("resend sent %q, first send %q", got, code)
	}
	// An escalation to chat sends the same code there.
	e.clock.Add(30 * time.Second)
	if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{Channels: []verify.Channel{verify.Chat}}); err != nil {
		t.Fatal(err)
	}
	if got := chatCode(t, e.kit); got != code {
		t.Errorf("escalation sent %q, first send %q", got, code)
	}
	for range 2 {
		e.clock.Add(30 * time.Second)
		if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Add(30 * time.Second)
	if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{}); notify.CodeOf(err) != notify.CodeRateLimited {
		t.Errorf("a sixth send: %v, want RateLimited", err)
	}
	if n := e.kit.SMS.Len() + e.kit.Cloud.Len(); n != 5 {
		t.Errorf("%d messages sent, want 5", n)
	}
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code); err != nil || !res.Approved() {
		t.Errorf("the code after resends: %+v, %v", res, err)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{})
	if c, err := e.svc.Cancel(ctx, notifytest.AccountID, v.ID); err != nil || c.Status != verify.StatusCanceled {
		t.Fatalf("Cancel: %+v, %v", c, err)
	}
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, smsCode(t, e.kit)); err != nil || res.Status != verify.StatusCanceled {
		t.Errorf("check after cancel: %+v, %v", res, err)
	}
	if _, err := e.svc.Cancel(ctx, notifytest.AccountID, v.ID); notify.CodeOf(err) != notify.CodeConflict {
		t.Errorf("second cancel: %v, want Conflict", err)
	}
	if _, err := e.svc.Check(ctx, "other", v.ID, "123456"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("another account's check: %v, want NotFound", err)
	}
	if _, err := e.svc.Cancel(ctx, notifytest.AccountID, "no-such-id"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("cancel of an unknown id: %v, want NotFound", err)
	}

	// One that ran out of checks, or of time, ended already, though the
	// store keeps it pending until a sweep: Conflict, and it stays as it
	// ended.
	used := e.start(t, "9876543211", verify.StartOptions{})
	for i := range 5 {
		if _, err := e.svc.Check(ctx, notifytest.AccountID, used.ID, wrong(smsCode(t, e.kit), i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Cancel(ctx, notifytest.AccountID, used.ID); notify.CodeOf(err) != notify.CodeConflict || !strings.Contains(err.Error(), "max_attempts_reached") {
		t.Errorf("cancel of a verification out of checks: %v, want Conflict saying max_attempts_reached", err)
	}
	if g, err := e.svc.Get(ctx, notifytest.AccountID, used.ID); err != nil || g.Status != verify.StatusMaxAttempts {
		t.Errorf("after the refused cancel: %+v, %v; want max_attempts_reached", g, err)
	}
	old := e.start(t, "9876543212", verify.StartOptions{})
	e.clock.Add(time.Hour)
	if _, err := e.svc.Cancel(ctx, notifytest.AccountID, old.ID); notify.CodeOf(err) != notify.CodeConflict || !strings.Contains(err.Error(), "expired") {
		t.Errorf("cancel of an expired verification: %v, want Conflict saying expired", err)
	}
}

// TestRequesterIsCountedInCharacters: a requester of 256 characters
// passes whatever their bytes (é is two); 257 is InvalidArgument naming
// requester, at the start, the check and the resend alike.
func TestRequesterIsCountedInCharacters(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ok, long := strings.Repeat("é", 256), strings.Repeat("é", 257)
	v, err := e.svc.Start(ctx, notifytest.AccountID, "9876543210", verify.StartOptions{Requester: ok})
	if err != nil {
		t.Fatalf("256 characters, 512 bytes: %v", err)
	}
	field := func(what string, err error) {
		t.Helper()
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || !ne.Fields.Has("requester") {
			t.Errorf("%s with 257 characters: %v, want InvalidArgument naming requester", what, err)
		}
	}
	_, err = e.svc.Start(ctx, notifytest.AccountID, "9876543211", verify.StartOptions{Requester: long})
	field("start", err)
	_, err = e.svc.Check(ctx, notifytest.AccountID, v.ID, "000000", verify.CheckOptions{Requester: long})
	field("check", err)
	_, err = e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{Requester: long})
	field("resend", err)
	if _, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, smsCode(t, e.kit), verify.CheckOptions{Requester: ok}); err != nil {
		t.Errorf("check with 256 characters: %v", err)
	}
}

// TestTheStoreKeepsNoCode reads every field the store keeps: no code, and
// the hash is bound to its verification (it does not match the same code
// for another).
func TestTheStoreKeepsNoCode(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{Purpose: "login"})
	code := smsCode(t, e.kit)
	kept, err := e.store.Verification(ctx, notifytest.AccountID, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	dump := fmt.Sprintf("%+v %x %s", *kept, kept.CodeHash, kept.CodeHash)
	if strings.Contains(dump, code) || bytes.Contains(kept.CodeHash, []byte(code)) {
		t.Fatalf("the store keeps the code: %s", dump)
	}
	if len(kept.CodeHash) != 32 {
		t.Errorf("hash of %d bytes, want an HMAC-SHA256", len(kept.CodeHash))
	}
	// The same code for another purpose is another hash: a code approves
	// its own verification only.
	v2 := e.start(t, "9876543210", verify.StartOptions{Purpose: "signup"})
	if _, err := e.svc.CheckRecipient(ctx, notifytest.AccountID, "9876543210", "signup", code); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.Get(ctx, notifytest.AccountID, v2.ID); got.Status == verify.StatusApproved && smsCode(t, e.kit) != code {
		t.Error("the login code approved the signup verification")
	}
	// Check by recipient finds the login verification.
	if res, err := e.svc.CheckRecipient(ctx, notifytest.AccountID, "+91 98765 43210", "login", code); err != nil || !res.Approved() ||
		res.Verification.ID != v.ID {
		t.Errorf("CheckRecipient: %+v, %v", res, err)
	}
}

func TestEmailVerification(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v, err := e.svc.Start(ctx, notifytest.AccountID, "Asha@Example.com", verify.StartOptions{
		Channels: []verify.Channel{verify.Email}, Length: 10, Brand: "Acme", TTL: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if v.To != "asha@example.com" {
		t.Errorf("recipient %q, want it in lower case", v.To)
	}
	m := e.kit.LastEmail(t).Content.(*email.Message)
	if m.Purpose != email.PurposeOTP || m.Subject != "Your Acme verification code" || !strings.Contains(m.Text, "valid for 15 minutes") {
		t.Errorf("e-mail %+v", m)
	}
	code := strings.Fields(m.Text)[0]
	if len(code) != 10 {
		t.Fatalf("code %q, want 10 digits", code)
	}
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, code); err != nil || !res.Approved() {
		t.Errorf("check: %+v, %v", res, err)
	}
}

func TestStartRefusesBadInputBeforeCharging(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	before := e.kit.Balance(t)
	for _, tc := range []struct {
		name string
		to   string
		opts verify.StartOptions
		want map[string]string
	}{
		{"no recipient", "", verify.StartOptions{}, map[string]string{"to": "required"}},
		{"bad number", "12345", verify.StartOptions{}, map[string]string{"to": "10 digits"}},
		{"unknown channel", "9876543210", verify.StartOptions{Channels: []verify.Channel{"fax"}}, map[string]string{"channels": `not "fax"`}},
		{"channel twice", "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.SMS, verify.SMS}}, map[string]string{"channels": "twice"}},
		{"email and sms", "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.SMS, verify.Email}}, map[string]string{"channels": "alone"}},
		{"short code", "9876543210", verify.StartOptions{Length: 3}, map[string]string{"length": "4 to 10"}},
		{"long code by SMS", "9876543210", verify.StartOptions{Length: 9}, map[string]string{"length": "email only"}},
		{"short TTL", "9876543210", verify.StartOptions{TTL: 29 * time.Second}, map[string]string{"ttl_seconds": "30s to 24h"}},
		{"long TTL", "9876543210", verify.StartOptions{TTL: 25 * time.Hour}, map[string]string{"ttl_seconds": "30s to 24h"}},
		{"bad purpose", "9876543210", verify.StartOptions{Purpose: "log in"}, map[string]string{"purpose": "letters"}},
		{"bad app hash", "9876543210", verify.StartOptions{AppHash: "short"}, map[string]string{"app_hash": "11-character"}},
		{"email to a number", "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.Email}}, map[string]string{"to": "e-mail address"}},
	} {
		_, err := e.svc.Start(ctx, notifytest.AccountID, tc.to, tc.opts)
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", tc.name, err)
			continue
		}
		got := map[string]string{}
		for _, f := range ne.Fields {
			got[f.Field] = f.Message
		}
		for field, part := range tc.want {
			if !strings.Contains(got[field], part) {
				t.Errorf("%s: fields %v, want %s naming %q", tc.name, got, field, part)
			}
		}
	}
	if e.kit.Balance(t) != before || e.kit.SMS.Len()+e.kit.Cloud.Len()+e.kit.Email.Len() != 0 {
		t.Error("bad input was charged or sent")
	}
}

// TestFailedSendCancels checks that a verification whose every leg was
// refused for certain is canceled, refunded, and answers the error.
func TestFailedSendCancels(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	before := e.kit.Balance(t)
	e.kit.SMS.FailNext(100, notify.CodeRejected)
	v, err := e.svc.Start(ctx, notifytest.AccountID, "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
	if notify.CodeOf(err) != notify.CodeRejected || v == nil || v.Status != verify.StatusCanceled {
		t.Fatalf("Start with the vendor refusing: %+v, %v", v, err)
	}
	if e.kit.Balance(t) != before {
		t.Error("a refused send stayed charged")
	}
}

func TestNewChecksConfig(t *testing.T) {
	k := notifytest.New(t)
	good := verify.Config{Notifier: k.Notifier, Accounts: k.Accounts, Store: memstore.NewVerifications(), Secret: secret}
	for name, mutate := range map[string]func(*verify.Config){
		"Notifier":  func(c *verify.Config) { c.Notifier = nil },
		"Accounts":  func(c *verify.Config) { c.Accounts = nil },
		"Store":     func(c *verify.Config) { c.Store = nil },
		"Secret":    func(c *verify.Config) { c.Secret = secret[:31] },
		"TTL":       func(c *verify.Config) { c.TTL = 25 * time.Hour },
		"MaxChecks": func(c *verify.Config) { c.MaxChecks = 101 },
		"Length":    func(c *verify.Config) { c.Length = 11 },
		"Category":  func(c *verify.Config) { c.Category = "Login Codes" },
	} {
		cfg := good
		mutate(&cfg)
		if _, err := verify.New(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("New with a bad %s: %v", name, err)
		}
	}
	if _, err := verify.New(good); err != nil {
		t.Error(err)
	}
}

// The codes' sends name Config.Category, so the recipient's preferences
// apply: a declined channel's leg is skipped and not charged, a send all
// of whose channels are declined fails CodeDeclined uncharged, and a
// critical category goes whatever was chosen.
func TestCategoryFollowsPreferences(t *testing.T) {
	ctx := context.Background()
	for _, critical := range []bool{false, true} {
		e := newEnv(t, func(c *verify.Config) { c.Category = "login" })
		if _, err := e.kit.Ledger.PutCategory(ctx, store.Category{Account: notifytest.AccountID, Name: "login", Critical: critical}); err != nil {
			t.Fatal(err)
		}
		if err := e.kit.Ledger.SetChoice(ctx, notifytest.AccountID, chat.Kind, "+919876543210", "login", false); err != nil {
			t.Fatal(err)
		}
		before := e.kit.Balance(t)
		v := e.start(t, "9876543210", verify.StartOptions{Purpose: "login", Brand: "Acme"})
		chats := len(e.kit.SentChat())
		if critical {
			if chats != 1 || v.Legs[1].Status != record.StateSent {
				t.Fatalf("critical: chat sent %d, legs %+v; want both legs sent", chats, v.Legs)
			}
			continue
		}
		if chats != 0 || v.Legs[0].Status != record.StateSent || v.Legs[1].Status != record.StateFailed ||
			before-e.kit.Balance(t) != v.Legs[0].Cost.Minor {
			t.Fatalf("chat declined: chat sent %d, legs %+v, charged %d; want the SMS leg alone, charged alone", chats, v.Legs, before-e.kit.Balance(t))
		}
		before = e.kit.Balance(t)
		_, err := e.svc.Start(ctx, notifytest.AccountID, "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.Chat}})
		if notify.CodeOf(err) != notify.CodeDeclined || e.kit.Balance(t) != before {
			t.Fatalf("a chat-only verification the recipient declined: %v; want CodeDeclined, nothing charged", err)
		}
	}
}

// With Config.Template, the codes' SMS and e-mail take the template's
// variant of the verification's locale (Hindi for hi-IN) and the chat its
// language; without a locale, the recipient's stored one, else the
// English base.
func TestLocaleOfTheCode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, func(c *verify.Config) { c.Template = "standard-otp" })
	e.start(t, "9876543210", verify.StartOptions{Purpose: "login", Brand: "Acme", Locale: "hi-IN"})
	code := smsCode(t, e.kit)
	if text := sms.MessageOf(e.kit.LastSMS(t)).Text; !strings.Contains(text, code) || !strings.Contains(text, "कोड") {
		t.Errorf("SMS in hi-IN: %q; want the Hindi variant with the code", text)
	}
	if m := chat.MessageOf(e.kit.LastChat(t)); m.Template == nil || m.Template.Language != "hi_IN" {
		t.Errorf("chat in hi-IN: %+v; want the cloud template in hi_IN", m.Template)
	}
	if _, err := e.svc.Start(ctx, notifytest.AccountID, "asha@example.com", verify.StartOptions{Channels: []verify.Channel{verify.Email},
		Brand: "Acme", Locale: "hi"}); err != nil {
		t.Fatal(err)
	}
	if m := email.MessageOf(e.kit.LastEmail(t)); !strings.Contains(m.HTML, "कोड") {
		t.Errorf("e-mail in hi: subject %q; want the Hindi variant", m.Subject)
	}
	e.start(t, "9876543211", verify.StartOptions{Purpose: "login", Brand: "Acme"})
	if text := sms.MessageOf(e.kit.LastSMS(t)).Text; strings.Contains(text, "कोड") || !strings.Contains(text, "code") {
		t.Errorf("SMS without a locale: %q; want the English base", text)
	}
	// No locale named: the recipient's stored one chooses the variant.
	if err := e.kit.Ledger.SetLocale(ctx, notifytest.AccountID, "+919876543213", "hi"); err != nil {
		t.Fatal(err)
	}
	e.start(t, "9876543213", verify.StartOptions{Purpose: "login", Brand: "Acme"})
	if text := sms.MessageOf(e.kit.LastSMS(t)).Text; !strings.Contains(text, "कोड") {
		t.Errorf("SMS to a recipient whose stored locale is hi: %q; want the Hindi variant", text)
	}
	_, err := e.svc.Start(ctx, notifytest.AccountID, "9876543212", verify.StartOptions{Locale: "Hindi please"})
	var ne *notify.Error
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || ne.Fields[0].Field != "locale" {
		t.Errorf("a bad locale: %v; want InvalidArgument naming locale", err)
	}
}

// dualOf is the dual OTP request Start sends to to.
func dualOf(to string) notify.Request {
	return &otp.Request{Account: notifytest.AccountID, To: to, OTP: "123456"}
}

// TestEmptyCodeCostsNoAttempt checks that a check without a code is
// refused before it is counted.
func TestEmptyCodeCostsNoAttempt(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{})
	if _, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, ""); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("an empty code: %v, want InvalidArgument", err)
	}
	if n := e.store.checks.Load(); n != 0 {
		t.Errorf("an empty code counted %d checks", n)
	}
}

// SweepTask is Sweep as a queue's periodic task.
func TestSweepTask(t *testing.T) {
	e := newEnv(t, func(c *verify.Config) { c.TTL = 30 * time.Second })
	ctx := context.Background()
	v := e.start(t, "9876543210", verify.StartOptions{})
	task := e.svc.SweepTask(0)
	if task.Name != "verify_sweep" || task.Every != time.Minute {
		t.Fatalf("SweepTask(0): %q every %v, want verify_sweep every minute", task.Name, task.Every)
	}
	e.clock.Add(30 * time.Second)
	if err := task.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("a sweep after the task marked %d, %v; want nothing left", n, err)
	}
	if got, _ := e.svc.Get(ctx, notifytest.AccountID, v.ID); got.Status != verify.StatusExpired {
		t.Fatalf("after the task: %s, want expired", got.Status)
	}
}
