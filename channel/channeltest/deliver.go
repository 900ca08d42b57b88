package channeltest

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
)

// providersOf returns the providers the Notifier may hand env to, in its
// order: env.Providers, or env.Provider alone.
func providersOf(env *notify.Envelope) []string {
	if len(env.Providers) > 0 {
		return env.Providers
	}
	return []string{env.Provider}
}

// testDeliver delivers each valid request's envelope to each of its
// providers in turn, as the Notifier does: a copy naming the provider.
func (k *kit) testDeliver(t *testing.T) {
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d]", i)
		env := k.forDelivery(t, what, i, req)
		for _, name := range providersOf(env) {
			if k.fakes[name] == nil {
				continue // reported by Prepare
			}
			e := *env
			e.Provider = name
			ref := k.forDelivery(t, what, i, req) // what e must still be after Deliver
			ref.Provider = name
			w := fmt.Sprintf("%s, delivered to %q", what, name)
			before := k.counts()
			res, err := k.deliver(t.Context(), &e)
			if err != nil {
				t.Errorf("%s: Deliver: %v", w, err)
				continue
			}
			k.checkResult(t, w, res, name)
			if d := k.taken(before); !maps.Equal(d, map[string]int{name: 1}) {
				t.Errorf("%s: the fakes took %v, want one message taken by %q (notify.Channel.Deliver sends to env.Provider, once)", w, d, name)
			}
			if diff := diffEnvelope(ref, &e); diff != "" {
				t.Errorf("%s: Deliver changed the envelope's %s (notify.Envelope: nothing changes it once Deliver is called)", w, diff)
			}
		}
	}
}

// checkResult checks an accepted message's Result: its vendor ID, and
// the provider it names, which must be provider or none.
func (k *kit) checkResult(t *testing.T, what string, res *notify.Result, provider string) {
	t.Helper()
	if res == nil {
		t.Errorf("%s: Deliver returned neither a Result nor an error", what)
		return
	}
	if res.ProviderMessageID == "" {
		t.Errorf("%s: the Result has no ProviderMessageID (notify.Result: required)", what)
	}
	if res.Provider != "" && res.Provider != provider {
		t.Errorf("%s: the Result names provider %q, but %q took the message (notify.Result.Provider)", what, res.Provider, provider)
	}
}

// testDeliverCanceled delivers with an ended context: nothing may be
// taken, and Deliver must fail.
func (k *kit) testDeliverCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d], with an ended context", i)
		env := k.forDelivery(t, what, i, req)
		before := k.counts()
		res, err := k.deliver(ctx, env)
		if d := k.taken(before); len(d) > 0 {
			t.Errorf("%s: the fakes took %v (notify.Channel.Deliver must honour ctx)", what, d)
		}
		if err == nil {
			t.Errorf("%s: Deliver succeeded (Result %+v) (notify.Channel.Deliver must honour ctx)", what, res)
		}
		k.checkSecrets(t, what, err)
	}
}

// testDeliverFailure makes env.Provider's fake fail with code and checks
// the outcome Deliver reports and which fakes the channel called.
func (k *kit) testDeliverFailure(t *testing.T, code notify.Code) {
	defer k.clearFailures()
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d], its provider failing with %s", i, code)
		env := k.forDelivery(t, what, i, req)
		f := k.fakes[env.Provider]
		if f == nil {
			continue // reported by Prepare
		}
		before := k.counts()
		f.FailNext(1, code)
		res, err := k.deliver(t.Context(), env)
		k.clearFailures()
		taken := k.taken(before)
		k.checkSecrets(t, what, err)
		switch code {
		case notify.CodeRejected:
			checkRejected(t, what, res, err, taken)
		case notify.CodeOutcomeUnknown:
			checkUnknown(t, what, env.Provider, res, err, taken)
		case notify.CodeUnavailable:
			k.checkUnavailable(t, what, env.Provider, res, err, taken)
		}
	}
}

// checkRejected: a permanent refusal is a certain one, and no other
// provider is tried.
func checkRejected(t *testing.T, what string, res *notify.Result, err error, taken map[string]int) {
	t.Helper()
	if err == nil || notify.OutcomeOf(err) != record.StateFailed || notify.IsRetryable(err) {
		t.Errorf("%s: Deliver answered %+v, %v; want a certain, permanent refusal (notify.Channel.Deliver: classified as for Provider.Send)", what, res, err)
	}
	if len(taken) > 0 {
		t.Errorf("%s: the fakes took %v: a channel tries another provider only after a certain, temporary refusal", what, taken)
	}
}

// checkUnknown: a lost answer is an unknown outcome, and the message went
// to its provider alone.
func checkUnknown(t *testing.T, what, provider string, res *notify.Result, err error, taken map[string]int) {
	t.Helper()
	if err == nil || notify.OutcomeOf(err) != record.StateUnknown {
		t.Errorf("%s: Deliver answered %+v, %v; want an unknown outcome (notify.OutcomeOf), which the fake's lost answer is", what, res, err)
	}
	if !maps.Equal(taken, map[string]int{provider: 1}) {
		t.Errorf("%s: the fakes took %v, want one message by %q alone: never another provider after an unknown outcome", what, taken, provider)
	}
}

// checkUnavailable: a temporary refusal is a certain one, or the channel
// tried one other provider, which took the message once and which the
// Result names.
func (k *kit) checkUnavailable(t *testing.T, what, provider string, res *notify.Result, err error, taken map[string]int) {
	t.Helper()
	if err != nil {
		if notify.OutcomeOf(err) != record.StateFailed {
			t.Errorf("%s: Deliver's error %v is not a certain refusal, which the fake's was (notify.Channel.Deliver: classified as for Provider.Send)", what, err)
		}
		if len(taken) > 0 {
			t.Errorf("%s: Deliver failed, yet the fakes took %v", what, taken)
		}
		return
	}
	var other string
	for name := range taken {
		other = name
	}
	if len(taken) != 1 || other == provider || taken[other] != 1 {
		t.Errorf("%s: Deliver succeeded and the fakes took %v, want one message taken by one other provider", what, taken)
		return
	}
	if res == nil || res.Provider != other {
		t.Errorf("%s: %q took the message after %q refused it, and the Result %+v does not name it (notify.Result.Provider)", what, other, provider, res)
	}
	k.checkResult(t, what, res, other)
}
