package channeltest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
)

// Harness declares the channel under test and what it can do. Channel,
// Account, Valid and Providers are required; every other field is
// optional, and an ability left out is not checked.
type Harness struct {
	// Channel is the channel under test.
	Channel notify.Channel
	// Account is the account every request is prepared and delivered for:
	// each request's AccountID must be its ID. The kit never changes it.
	Account *notify.Account
	// Valid are requests Prepare must accept, at least one; cover each
	// route and each optional part of the content the channel has.
	Valid []notify.Request
	// Invalid are requests Prepare must refuse, each with the fields it
	// must name.
	Invalid []Invalid
	// Providers are the fakes the channel delivers through: every
	// provider an envelope of Valid or BatchRequests may name. No two may
	// share a name.
	Providers []Fake
	// Secrets are strings that must appear in no error and no
	// Envelope.Resend: the one-time codes of Valid and Invalid, say.
	Secrets []string
	// Codec, when set, is the channel's notify.RequestCodec, which lets
	// its requests wait on a queue; it is checked on every valid request.
	Codec notify.RequestCodec
	// Stored are bytes earlier versions of Codec's EncodeRequest wrote,
	// which DecodeRequest must still read (a queued record may wait for
	// days). Needs Codec.
	Stored []Stored
	// Reports, when set, is the channel's notify.ReportHandler.
	Reports notify.ReportHandler
	// Batch, when set, is the channel's notify.BatchDeliverer, checked
	// with BatchRequests.
	Batch notify.BatchDeliverer
	// BatchRequests are at least two valid requests whose envelopes
	// differ only in To: the recipients of one bulk message. Needs Batch.
	BatchRequests []notify.Request
}

// Invalid is a request Prepare must refuse with CodeInvalidArgument.
type Invalid struct {
	// Name names the case in the subtest's name.
	Name string
	// Request is the bad request.
	Request notify.Request
	// Fields are the fields the error must name (record.FieldError.Field),
	// all of them and no other, in any order: at least one.
	Fields []string
}

// Stored is what an earlier version of a channel's EncodeRequest wrote.
type Stored struct {
	// Name names the case in the subtest's name, such as "v1".
	Name string
	// Data are the bytes the earlier version wrote.
	Data []byte
	// Request is what Data must decode to: the same Kind, AccountID, Key
	// and Fingerprint, and the same Envelope from Prepare.
	Request notify.Request
}

// Fake is a provider the channel under test delivers through, as the kit
// drives it; *memprovider.Provider is one. It must behave as memprovider
// does:
//
//   - Name is the provider's notify.Provider name, which envelopes name.
//   - Len counts the messages the fake has taken (an envelope of a batch
//     counts one).
//   - FailNext(n, code) makes the fake's next n sends fail with code:
//     taking nothing, except with notify.CodeOutcomeUnknown, where it takes
//     the message and then loses the answer (Len counts it). FailNext(0,
//     "") clears what is left.
//   - A send whose context has ended takes nothing and fails.
type Fake interface {
	Name() string
	Len() int
	FailNext(n int, code notify.Code)
}

// Run runs the conformance checks against h as subtests of t (see the
// package documentation). It fails t at once when h is malformed: a
// required field missing, a request of another kind or account, an
// Invalid case without fields, Stored without Codec, Batch without two
// BatchRequests, or two fakes of one name.
func Run(t *testing.T, h Harness) {
	t.Helper()
	k := &kit{h: h, fakes: map[string]Fake{}}
	k.checkHarness(t)
	t.Run("Kind", k.testKind)
	t.Run("Fingerprint", k.testFingerprint)
	t.Run("Prepare", k.testPrepare)
	t.Run("PrepareInvalid", k.testInvalid)
	t.Run("PrepareConcurrent", k.testConcurrent)
	t.Run("Recipient", k.testRecipient)
	t.Run("Deliver", k.testDeliver)
	t.Run("DeliverCanceled", k.testDeliverCanceled)
	t.Run("DeliverRefused", func(t *testing.T) { k.testDeliverFailure(t, notify.CodeRejected) })
	t.Run("DeliverUnknown", func(t *testing.T) { k.testDeliverFailure(t, notify.CodeOutcomeUnknown) })
	t.Run("DeliverUnavailable", func(t *testing.T) { k.testDeliverFailure(t, notify.CodeUnavailable) })
	t.Run("Codec", k.testCodec)
	t.Run("Reports", k.testReports)
	t.Run("Batch", k.testBatch)
}

// kit is one run of the checks.
type kit struct {
	h     Harness
	fakes map[string]Fake
}

// checkHarness fails t when h is malformed.
func (k *kit) checkHarness(t *testing.T) {
	t.Helper()
	h := k.h
	switch {
	case h.Channel == nil:
		t.Fatal("channeltest: Harness.Channel is nil")
	case h.Account == nil:
		t.Fatal("channeltest: Harness.Account is nil")
	case len(h.Valid) == 0:
		t.Fatal("channeltest: Harness.Valid is empty: give at least one request the channel takes")
	case len(h.Providers) == 0:
		t.Fatal("channeltest: Harness.Providers is empty: give the fakes the channel delivers through")
	case len(h.Stored) > 0 && h.Codec == nil:
		t.Fatal("channeltest: Harness.Stored needs Harness.Codec")
	case h.Batch != nil && len(h.BatchRequests) < 2:
		t.Fatal("channeltest: Harness.Batch needs at least two Harness.BatchRequests")
	case h.Batch == nil && len(h.BatchRequests) > 0:
		t.Fatal("channeltest: Harness.BatchRequests needs Harness.Batch")
	}
	for i, f := range h.Providers {
		if f == nil {
			t.Fatalf("channeltest: Harness.Providers[%d] is nil", i)
		}
		if _, dup := k.fakes[f.Name()]; dup {
			t.Fatalf("channeltest: Harness.Providers[%d]: two fakes are named %q", i, f.Name())
		}
		k.fakes[f.Name()] = f
	}
	check := func(what string, req notify.Request) {
		t.Helper()
		if req == nil {
			t.Fatalf("channeltest: %s is nil", what)
		}
		if req.AccountID() != h.Account.ID {
			t.Fatalf("channeltest: %s is for account %q, not Harness.Account %q", what, req.AccountID(), h.Account.ID)
		}
	}
	for i, r := range h.Valid {
		check(fmt.Sprintf("Harness.Valid[%d]", i), r)
	}
	for i, c := range h.Invalid {
		check(fmt.Sprintf("Harness.Invalid[%d] (%s)", i, c.Name), c.Request)
		if len(c.Fields) == 0 {
			t.Fatalf("channeltest: Harness.Invalid[%d] (%s) names no field its error must name", i, c.Name)
		}
	}
	for i, s := range h.Stored {
		check(fmt.Sprintf("Harness.Stored[%d] (%s).Request", i, s.Name), s.Request)
	}
	for i, r := range h.BatchRequests {
		check(fmt.Sprintf("Harness.BatchRequests[%d]", i), r)
	}
}

// requests returns every request of the harness, each with its name.
func (k *kit) requests() (names []string, reqs []notify.Request) {
	for i, r := range k.h.Valid {
		names, reqs = append(names, fmt.Sprintf("Harness.Valid[%d]", i)), append(reqs, r)
	}
	for i, c := range k.h.Invalid {
		names, reqs = append(names, fmt.Sprintf("Harness.Invalid[%d] (%s)", i, c.Name)), append(reqs, c.Request)
	}
	for i, s := range k.h.Stored {
		names, reqs = append(names, fmt.Sprintf("Harness.Stored[%d] (%s).Request", i, s.Name)), append(reqs, s.Request)
	}
	for i, r := range k.h.BatchRequests {
		names, reqs = append(names, fmt.Sprintf("Harness.BatchRequests[%d]", i)), append(reqs, r)
	}
	return names, reqs
}

// testKind: the channel's kind is not empty and every request is of it.
func (k *kit) testKind(t *testing.T) {
	kind := k.h.Channel.Kind()
	if kind == "" {
		t.Fatal("Channel.Kind() is empty (notify.Channel.Kind: not empty)")
	}
	if again := k.h.Channel.Kind(); again != kind {
		t.Errorf("Channel.Kind() changed from %q to %q", kind, again)
	}
	names, reqs := k.requests()
	for i, r := range reqs {
		if r.Kind() != kind {
			t.Errorf("%s is of kind %q, not the channel's %q: the Notifier would hand it to another channel (notify.Channel.Kind)",
				names[i], r.Kind(), kind)
		}
	}
}

// testFingerprint: a request's fingerprint is the same each time.
func (k *kit) testFingerprint(t *testing.T) {
	names, reqs := k.requests()
	for i, r := range reqs {
		if a, b := fingerprint(r), fingerprint(r); a != b {
			t.Errorf("%s: Fingerprint wrote different bytes twice (notify.Request.Fingerprint depends on the request alone)", names[i])
		}
	}
}

// fingerprint returns the SHA-256 of r's Fingerprint.
func fingerprint(r notify.Request) [sha256.Size]byte {
	h := sha256.New()
	r.Fingerprint(h)
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}

// counts returns how many messages each fake has taken.
func (k *kit) counts() map[string]int {
	out := make(map[string]int, len(k.fakes))
	for name, f := range k.fakes {
		out[name] = f.Len()
	}
	return out
}

// taken returns how many more messages each fake has taken since before,
// leaving out the fakes that took none.
func (k *kit) taken(before map[string]int) map[string]int {
	out := map[string]int{}
	for name, f := range k.fakes {
		if d := f.Len() - before[name]; d != 0 {
			out[name] = d
		}
	}
	return out
}

// clearFailures clears what FailNext left on every fake.
func (k *kit) clearFailures() {
	for _, f := range k.fakes {
		f.FailNext(0, "")
	}
}

// prepare calls Prepare, turning a panic into an error.
func (k *kit) prepare(ctx context.Context, req notify.Request) (env *notify.Envelope, err error) {
	defer func() {
		if p := recover(); p != nil {
			env, err = nil, fmt.Errorf("channeltest: Prepare panicked: %v", p)
		}
	}()
	return k.h.Channel.Prepare(ctx, k.h.Account, req)
}

// deliver calls Deliver, turning a panic into an error.
func (k *kit) deliver(ctx context.Context, env *notify.Envelope) (res *notify.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("channeltest: Deliver panicked: %v", p)
		}
	}()
	return k.h.Channel.Deliver(ctx, env)
}

// mustPrepare prepares req, the what of the harness, failing t when
// Prepare refuses it.
func (k *kit) mustPrepare(t *testing.T, what string, req notify.Request) *notify.Envelope {
	t.Helper()
	env, err := k.prepare(t.Context(), req)
	if err != nil {
		t.Fatalf("%s: Prepare: %v", what, err)
	}
	if env == nil {
		t.Fatalf("%s: Prepare returned neither an Envelope nor an error", what)
	}
	return env
}

// forDelivery prepares valid request i as the Notifier would hand it to
// Deliver: with an ID, the account and the key.
func (k *kit) forDelivery(t *testing.T, what string, i int, req notify.Request) *notify.Envelope {
	t.Helper()
	env := k.mustPrepare(t, what, req)
	env.ID = fmt.Sprintf("channeltest-%d", i)
	env.Account = k.h.Account
	env.IdempotencyKey = req.Key()
	return env
}

// secretIn returns a description of the first secret s holds, or "".
func (k *kit) secretIn(s string) string {
	for i, secret := range k.h.Secrets {
		if secret != "" && strings.Contains(s, secret) {
			return fmt.Sprintf("Harness.Secrets[%d]", i)
		}
	}
	return ""
}

// checkSecrets fails t when err's text holds a secret.
func (k *kit) checkSecrets(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if s := k.secretIn(err.Error()); s != "" {
		t.Errorf("%s: the error holds %s (notify.Error: messages never contain secrets)", what, s)
	}
}

// testPrepare checks each valid request's envelope, and that Prepare has
// no side effects and answers the same twice.
func (k *kit) testPrepare(t *testing.T) {
	kind := k.h.Channel.Kind()
	acct := cloneAccount(k.h.Account)
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d]", i)
		fp := fingerprint(req)
		before := k.counts()
		env := k.mustPrepare(t, what, req)
		again := k.mustPrepare(t, what, req)
		if d := k.taken(before); len(d) > 0 {
			t.Errorf("%s: Prepare called the providers (%v): it has no side effects (notify.Channel.Prepare)", what, d)
		}
		if fingerprint(req) != fp {
			t.Errorf("%s: Prepare changed the request (its Fingerprint): it has no side effects (notify.Channel.Prepare)", what)
		}
		if diff := diffAccount(acct, k.h.Account); diff != "" {
			t.Fatalf("%s: Prepare changed the account's %s: it has no side effects (notify.Channel.Prepare)", what, diff)
		}
		if diff := diffEnvelope(env, again); diff != "" {
			t.Errorf("%s: Prepare is not deterministic: twice, the Envelopes differ in %s", what, diff)
		}
		k.checkHeader(t, what, kind, env)
	}
}

// checkHeader checks the fields of env that a channel fills.
func (k *kit) checkHeader(t *testing.T, what string, kind notify.Kind, env *notify.Envelope) {
	t.Helper()
	if env.Kind != kind {
		t.Errorf("%s: Envelope.Kind = %q, want the channel's %q (notify.Channel.Prepare sets Kind)", what, env.Kind, kind)
	}
	if env.To == "" {
		t.Errorf("%s: Envelope.To is empty (notify.Channel.Prepare sets To, the normalised recipient)", what)
	}
	if env.Provider == "" {
		t.Errorf("%s: Envelope.Provider is empty (notify.Channel.Prepare picks a provider)", what)
	} else if k.fakes[env.Provider] == nil {
		t.Errorf("%s: Envelope.Provider %q is none of Harness.Providers", what, env.Provider)
	}
	if env.Providers != nil {
		if len(env.Providers) == 0 || env.Providers[0] != env.Provider {
			t.Errorf("%s: Envelope.Providers %q does not start with Provider %q (notify.Envelope.Providers: Provider first)",
				what, env.Providers, env.Provider)
		}
		for _, p := range env.Providers {
			if k.fakes[p] == nil {
				t.Errorf("%s: Envelope.Providers names %q, none of Harness.Providers", what, p)
			}
		}
	}
	if env.Units < 1 {
		t.Errorf("%s: Envelope.Units = %d, want at least 1 (notify.Envelope.Units: billable units, otherwise 1)", what, env.Units)
	}
	if env.Class != record.Transactional && env.Class != record.Promotional {
		t.Errorf("%s: Envelope.Class = %q, want %q or %q (notify.Channel.Prepare sets Class)",
			what, env.Class, record.Transactional, record.Promotional)
	}
	if env.Content == nil {
		t.Errorf("%s: Envelope.Content is nil (notify.Channel.Prepare sets the content)", what)
	}
	if s := k.secretIn(string(env.Resend)); s != "" {
		t.Errorf("%s: Envelope.Resend holds %s (notify.Envelope.Resend carries no secret)", what, s)
	}
}

// testInvalid checks that each invalid request is refused, naming its
// fields, the same each time, without side effects.
func (k *kit) testInvalid(t *testing.T) {
	if len(k.h.Invalid) == 0 {
		t.Skip("Harness.Invalid is empty")
	}
	for i, c := range k.h.Invalid {
		what := fmt.Sprintf("Harness.Invalid[%d] (%s)", i, c.Name)
		before := k.counts()
		fp := fingerprint(c.Request)
		env, err := k.prepare(t.Context(), c.Request)
		if d := k.taken(before); len(d) > 0 {
			t.Errorf("%s: Prepare called the providers (%v): it has no side effects (notify.Channel.Prepare)", what, d)
		}
		if fingerprint(c.Request) != fp {
			t.Errorf("%s: Prepare changed the request (its Fingerprint): it has no side effects", what)
		}
		if err == nil {
			t.Errorf("%s: Prepare accepted it (Envelope to %q); want InvalidArgument naming %q", what, envTo(env), c.Fields)
			continue
		}
		k.checkSecrets(t, what, err)
		got, ok := k.fields(t, what, err)
		if !ok {
			continue
		}
		want := slices.Clone(c.Fields)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the error names %q, want %q (notify.Channel.Prepare names every bad field): %v", what, got, want, err)
		}
		_, err2 := k.prepare(t.Context(), c.Request)
		if got2, _ := k.fields(t, what+", asked again", err2); !slices.Equal(got2, got) {
			t.Errorf("%s: asked again, Prepare names %q, not %q: it is not deterministic", what, got2, got)
		}
	}
}

// fields returns the sorted, distinct fields an InvalidArgument error
// names, failing t when err is not one or a field lacks its name or rule.
func (k *kit) fields(t *testing.T, what string, err error) ([]string, bool) {
	t.Helper()
	var ne *notify.Error
	if err == nil || !errors.As(err, &ne) || notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("%s: Prepare's error %v is not a CodeInvalidArgument *notify.Error (notify.Channel.Prepare)", what, err)
		return nil, false
	}
	if len(ne.Fields) == 0 {
		t.Errorf("%s: the InvalidArgument error names no field (notify.Channel.Prepare names every bad field): %v", what, err)
		return nil, false
	}
	var out []string
	for _, f := range ne.Fields {
		if f.Field == "" || f.Message == "" {
			t.Errorf("%s: a field error without its field or its rule: %+v", what, f)
		}
		out = append(out, f.Field)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// envTo is env's recipient, or "" for nil.
func envTo(env *notify.Envelope) string {
	if env == nil {
		return ""
	}
	return env.To
}

// concurrency is how many goroutines the concurrent checks run.
const concurrency = 8

// testConcurrent prepares the valid requests from several goroutines at
// once (notify.Channel: safe for concurrent use), each getting the
// envelope a lone Prepare gets. Run the tests with -race.
func (k *kit) testConcurrent(t *testing.T) {
	want := make([]*notify.Envelope, len(k.h.Valid))
	for i, req := range k.h.Valid {
		want[i] = k.mustPrepare(t, fmt.Sprintf("Harness.Valid[%d]", i), req)
	}
	got := make([][]*notify.Envelope, concurrency)
	errs := make([][]error, concurrency)
	var wg sync.WaitGroup
	for g := range concurrency {
		got[g], errs[g] = make([]*notify.Envelope, len(k.h.Valid)), make([]error, len(k.h.Valid))
		wg.Go(func() {
			for i, req := range k.h.Valid {
				got[g][i], errs[g][i] = k.prepare(t.Context(), req)
			}
		})
	}
	wg.Wait()
	for g := range concurrency {
		for i := range k.h.Valid {
			if errs[g][i] != nil {
				t.Errorf("Harness.Valid[%d], prepared concurrently: %v", i, errs[g][i])
			} else if diff := diffEnvelope(want[i], got[g][i]); diff != "" {
				t.Errorf("Harness.Valid[%d], prepared concurrently: the Envelope differs in %s", i, diff)
			}
		}
	}
}
