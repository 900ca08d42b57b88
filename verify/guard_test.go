package verify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/verify"
)

// guarded returns an env whose Service has a Guard of cfg (Counters set).
func guarded(t *testing.T, cfg verify.GuardConfig) *env {
	t.Helper()
	cfg.Counters = memstore.NewCounters()
	g, err := verify.NewGuard(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, func(c *verify.Config) { c.Guard = g })
}

// refusal returns the rule err names, failing t when it names none or
// the code is not want.
func refusal(t *testing.T, err error, want notify.Code) verify.Rule {
	t.Helper()
	var r *verify.Refusal
	if !errors.As(err, &r) || notify.CodeOf(err) != want {
		t.Fatalf("error %v: want %s with a *verify.Refusal", err, want)
	}
	return r.Rule
}

func TestGuardRulesRefuseBeforeCharging(t *testing.T) {
	ctx := context.Background()
	start := func(e *env, to, requester string) error {
		_, err := e.svc.Start(ctx, notifytest.AccountID, to, verify.StartOptions{Channels: []verify.Channel{verify.SMS}, Requester: requester})
		return err
	}
	t.Run("recipient", func(t *testing.T) {
		e := guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: 2, Window: time.Hour}})
		for range 2 {
			if err := start(e, "9876543210", ""); err != nil {
				t.Fatal(err)
			}
		}
		balance, sent := e.kit.Balance(t), e.kit.SMS.Len()
		err := start(e, "9876543210", "")
		if rule := refusal(t, err, notify.CodeRateLimited); rule != verify.RuleRecipient {
			t.Errorf("rule %s", rule)
		}
		var ne *notify.Error
		if errors.As(err, &ne); ne.RetryAfter <= 0 {
			t.Errorf("no RetryAfter: %v", err)
		}
		if e.kit.Balance(t) != balance || e.kit.SMS.Len() != sent {
			t.Error("a refused verification was charged or sent")
		}
		if err := start(e, "9876543211", ""); err != nil {
			t.Errorf("another recipient: %v", err)
		}
		e.clock.Add(time.Hour)
		if err := start(e, "9876543210", ""); err != nil {
			t.Errorf("an hour later: %v", err)
		}
	})
	t.Run("requester cannot lock a victim out", func(t *testing.T) {
		e := guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: 2, Window: time.Hour}, Requester: verify.Limit{Max: 3, Window: time.Hour}})
		for range 2 {
			if err := start(e, "9876543210", "203.0.113.9"); err != nil {
				t.Fatal(err)
			}
		}
		if rule := refusal(t, start(e, "9876543210", "203.0.113.9"), notify.CodeRateLimited); rule != verify.RuleRecipient {
			t.Errorf("rule %s", rule)
		}
		if err := start(e, "9876543210", "198.51.100.7"); err != nil {
			t.Errorf("the victim, from their own address: %v", err)
		}
		if rule := refusal(t, start(e, "9876543299", "203.0.113.9"), notify.CodeRateLimited); rule != verify.RuleRequester {
			t.Errorf("the attacker's fourth request: rule %s", rule)
		}
	})
	t.Run("prefix", func(t *testing.T) {
		e := guarded(t, verify.GuardConfig{Prefix: verify.Limit{Max: 3, Window: time.Hour}})
		for i := range 3 {
			if err := start(e, fmt.Sprintf("9876543%03d", i), ""); err != nil {
				t.Fatal(err)
			}
		}
		if rule := refusal(t, start(e, "9876543999", ""), notify.CodeRateLimited); rule != verify.RulePrefix {
			t.Errorf("rule %s", rule)
		}
		if err := start(e, "9876544000", ""); err != nil {
			t.Errorf("the next range: %v", err)
		}
	})
	t.Run("conversion", func(t *testing.T) {
		e := guarded(t, verify.GuardConfig{Conversion: verify.Conversion{MinSends: 5, MinApprovedPercent: 50}})
		// Five codes in one range, two approved: 40% is too few.
		for i := range 5 {
			v, err := e.svc.Start(ctx, notifytest.AccountID, fmt.Sprintf("9876543%03d", i), verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
			if err != nil {
				t.Fatal(err)
			}
			if i < 2 {
				if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, smsCode(t, e.kit)); err != nil || !res.Approved() {
					t.Fatal(res, err)
				}
			}
		}
		if rule := refusal(t, start(e, "9876543100", ""), notify.CodePermissionDenied); rule != verify.RulePrefixConversion {
			t.Errorf("rule %s", rule)
		}
		if err := start(e, "9876540100", ""); err != nil {
			t.Errorf("another range: %v", err)
		}
	})
	t.Run("safe list", func(t *testing.T) {
		e := guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: 1, Window: time.Hour}, SafeList: []string{"+9198765"}})
		for range 3 {
			if err := start(e, "9876543210", ""); err != nil {
				t.Fatalf("a safe-listed range: %v", err)
			}
		}
		if err := start(e, "9876643210", ""); err != nil {
			t.Fatal(err)
		}
		if rule := refusal(t, start(e, "9876643210", ""), notify.CodeRateLimited); rule != verify.RuleRecipient {
			t.Errorf("rule %s", rule)
		}
	})
	t.Run("spend cap", func(t *testing.T) {
		// The dual send costs an SMS and a chat message; allow two.
		e := guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: -1}})
		price, err := e.kit.Notifier.Quote(ctx, dualOf("9876543210"))
		if err != nil {
			t.Fatal(err)
		}
		e = guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: -1}, SpendCap: 2*price.Minor + price.Minor/2})
		before := e.kit.Balance(t)
		for i := range 2 {
			if _, err := e.svc.Start(ctx, notifytest.AccountID, fmt.Sprintf("98765%05d", i*1000), verify.StartOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, err = e.svc.Start(ctx, notifytest.AccountID, "9123456789", verify.StartOptions{})
		if rule := refusal(t, err, notify.CodeRateLimited); rule != verify.RuleSpendCap {
			t.Errorf("rule %s", rule)
		}
		if spent := before - e.kit.Balance(t); spent != 2*price.Minor {
			t.Errorf("spent %d, want %d", spent, 2*price.Minor)
		}
		// A send the vendor refuses gives its share of the cap back.
		e.clock.Add(time.Hour)
		e.kit.SMS.FailNext(100, notify.CodeRejected)
		e.kit.Cloud.FailNext(100, notify.CodeRejected)
		for range 3 {
			if _, err := e.svc.Start(ctx, notifytest.AccountID, "9123456789", verify.StartOptions{}); notify.CodeOf(err) != notify.CodeRejected {
				t.Fatalf("refused sends: %v", err)
			}
		}
	})
}

func TestNewGuardChecksConfig(t *testing.T) {
	c := memstore.NewCounters()
	for name, cfg := range map[string]verify.GuardConfig{
		"Counters":     {},
		"Recipient":    {Counters: c, Recipient: verify.Limit{Max: 0, Window: time.Hour}},
		"PrefixDigits": {Counters: c, PrefixDigits: 7},
		"Conversion":   {Counters: c, Conversion: verify.Conversion{MinApprovedPercent: 101}},
		"SpendCap":     {Counters: c, SpendCap: -1},
		"SafeList":     {Counters: c, SafeList: []string{" "}},
	} {
		if _, err := verify.NewGuard(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewGuard with a bad %s: %v", name, err)
		}
	}
}

// TestRefusedResendKeepsItsSend checks that a resend the guard refuses,
// or whose options are bad, uses up none of the verification's sends,
// and that a resend within the cooldown counts nothing against the
// guard.
func TestRefusedResendKeepsItsSend(t *testing.T) {
	e := guarded(t, verify.GuardConfig{Recipient: verify.Limit{Max: 2, Window: time.Hour}})
	ctx := context.Background()
	v, err := e.svc.Start(ctx, notifytest.AccountID, "9876543210", verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
	if err != nil {
		t.Fatal(err)
	}
	// Within the cooldown: refused by the store's rule, the guard's
	// budget untouched.
	for range 3 {
		if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{}); notify.CodeOf(err) != notify.CodeRateLimited {
			t.Fatalf("resend within the cooldown: %v", err)
		}
	}
	e.clock.Add(30 * time.Second)
	if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{AppHash: "short"}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("resend with a bad app hash: %v", err)
	}
	if _, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{}); err != nil {
		t.Fatalf("the second send, within the recipient limit of 2: %v", err)
	}
	e.clock.Add(30 * time.Second)
	if rule := refusal(t, func() error {
		_, err := e.svc.Resend(ctx, notifytest.AccountID, v.ID, verify.ResendOptions{})
		return err
	}(), notify.CodeRateLimited); rule != verify.RuleRecipient {
		t.Fatalf("rule %s", rule)
	}
	got, err := e.svc.Get(ctx, notifytest.AccountID, v.ID)
	if err != nil || got.SendsLeft != 3 {
		t.Errorf("after two sends and refused resends: %+v, %v; want 3 sends left", got, err)
	}
}

// TestRangeBlockCostsTheAttackerMore (issue 45 D10 d): one requester's
// unapproved codes cannot block a range alone (each counts at most
// Conversion.MaxPerRequester sends towards it), and a block, once made
// by several, still lets through the numbers of the range whose codes
// were approved lately (Conversion.Trust): the account's users keep
// signing in.
func TestRangeBlockCostsTheAttackerMore(t *testing.T) {
	ctx := context.Background()
	start := func(e *env, to, requester string) (*verify.Verification, error) {
		return e.svc.Start(ctx, notifytest.AccountID, to, verify.StartOptions{Channels: []verify.Channel{verify.SMS}, Requester: requester})
	}
	e := guarded(t, verify.GuardConfig{Conversion: verify.Conversion{MinSends: 5, MinApprovedPercent: 50},
		Requester: verify.Limit{Max: -1}})
	// A user of the range signs in: trusted from here on.
	v, err := start(e, "9876543500", "198.51.100.7")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.svc.Check(ctx, notifytest.AccountID, v.ID, smsCode(t, e.kit)); err != nil || !res.Approved() {
		t.Fatal(res, err)
	}
	// One attacker, ten codes never entered: two count, no block.
	for i := range 10 {
		if _, err := start(e, fmt.Sprintf("9876543%03d", i), "203.0.113.9"); err != nil {
			t.Fatalf("start %d by one requester: %v", i, err)
		}
	}
	if _, err := start(e, "9876543100", "198.51.100.8"); err != nil {
		t.Fatalf("a new number of the range after one requester's ten codes: %v", err)
	}
	// A second requester's code makes it a block of the range (5 sends
	// counted, 1 approved) for numbers it has not seen succeed...
	if _, err := start(e, "9876543200", "203.0.113.10"); err != nil {
		t.Fatal(err)
	}
	_, err = start(e, "9876543300", "198.51.100.9")
	if rule := refusal(t, err, notify.CodePermissionDenied); rule != verify.RulePrefixConversion {
		t.Fatalf("a new number after two requesters' codes: rule %s", rule)
	}
	// ...but not for the user who signed in before.
	if _, err := start(e, "9876543500", "198.51.100.7"); err != nil {
		t.Fatalf("the range's trusted user: %v", err)
	}
}

// TestGuardBoundsChecks (issue 45 D10 g): one requester's checks are
// bounded whatever the verification, before they count; the checks of
// one recipient's codes are bounded per requester, so an attacker
// spends its own budget, not the victim's.
func TestGuardBoundsChecks(t *testing.T) {
	ctx := context.Background()
	e := guarded(t, verify.GuardConfig{Checks: verify.Limit{Max: 3, Window: time.Hour}, RequesterChecks: verify.Limit{Max: 4, Window: time.Hour},
		Recipient: verify.Limit{Max: -1}, Requester: verify.Limit{Max: -1}})
	begin := func(to string) *verify.Verification {
		v, err := e.svc.Start(ctx, notifytest.AccountID, to, verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(v *verify.Verification, code, requester string) (*verify.CheckResult, error) {
		return e.svc.Check(ctx, notifytest.AccountID, v.ID, code, verify.CheckOptions{Requester: requester})
	}
	victim := begin("9876543210")
	code := smsCode(t, e.kit)
	for range 3 {
		if _, err := check(victim, wrongOf(code), "203.0.113.9"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := check(victim, code, "203.0.113.9")
	if rule := refusal(t, err, notify.CodeRateLimited); rule != verify.RuleChecks {
		t.Fatalf("the attacker's fourth check of the number: rule %s", rule)
	}
	// The attacker's fifth check, of another number: over its own budget.
	other := begin("9876500000")
	if _, err := check(other, "000000", "203.0.113.9"); err == nil {
		t.Fatal("the attacker's fifth check went through")
	} else if rule := refusal(t, err, notify.CodeRateLimited); rule != verify.RuleRequesterChecks {
		t.Fatalf("rule %s", rule)
	}
	// The victim, from their own address, is not held back by the
	// attacker's checks of their number.
	fresh := begin("9876543210")
	if res, err := check(fresh, smsCode(t, e.kit), "198.51.100.7"); err != nil || !res.Approved() {
		t.Fatalf("the victim's own check: %+v, %v", res, err)
	}
}

// wrongOf is a code of code's length other than code.
func wrongOf(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}
