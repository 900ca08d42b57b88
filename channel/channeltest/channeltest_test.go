package channeltest_test

// This file is a reference harness: a small channel ("note") with every
// ability the kit checks (two providers in order, a request codec,
// reports, batches), the test that runs the kit on it, and the broken
// variants of it the kit must catch, each run in a child process.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/provider/memprovider"
)

const noteKind notify.Kind = "note"

// noteRequest asks for one note: Text to the address To.
type noteRequest struct {
	Account        string `json:"-"`
	To             string `json:"to"`
	Text           string `json:"text"`
	Promo          bool   `json:"promo,omitempty"`
	IdempotencyKey string `json:"-"`
}

func (*noteRequest) Kind() notify.Kind   { return noteKind }
func (r *noteRequest) AccountID() string { return r.Account }
func (r *noteRequest) Key() string       { return r.IdempotencyKey }
func (r *noteRequest) Fingerprint(h hash.Hash) {
	fmt.Fprintf(h, "%d:%s%d:%s%t", len(r.To), strings.ToLower(strings.TrimSpace(r.To)), len(r.Text), r.Text, r.Promo)
}

// note is an envelope's content.
type note struct{ Text string }

// noteChannel sends notes through primary, then backup. defect breaks one
// rule, for the kit to catch.
type noteChannel struct {
	primary, backup *memprovider.Provider
	defect          string
	calls           atomic.Int64
}

func (c *noteChannel) Kind() notify.Kind { return noteKind }

// Recipient is the desk a note goes to, trimmed; the defect
// "recipient-drifts" wraps it in brackets each time, so that a form given
// again is not the same.
func (c *noteChannel) Recipient(to string) (string, error) {
	to = strings.TrimSpace(to)
	if to == "" {
		return "", notify.InvalidField("to", "is required")
	}
	if c.defect == "recipient-drifts" {
		return "[" + to + "]", nil
	}
	return to, nil
}

func (c *noteChannel) Prepare(ctx context.Context, _ *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*noteRequest)
	if !ok || r == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "note: a %T is not a note request", req)
	}
	var fe record.FieldErrors
	to := strings.ToLower(strings.TrimSpace(r.To))
	if !strings.Contains(to, "@") {
		fe.Add("to", "must be an address")
	}
	if strings.TrimSpace(r.Text) == "" && c.defect != "misses-field" {
		fe.Add("text", "is required")
	}
	if c.defect == "extra-field" && len(fe) > 0 {
		fe.Add("domain", "is wrong too")
	}
	if len(r.Text) > 100 {
		msg := "must be at most 100 bytes"
		if c.defect == "leaks-secret" {
			msg += ", not " + r.Text
		}
		fe.Add("text", msg)
	}
	if err := notify.InvalidFields(fe); err != nil {
		return nil, err
	}
	env := &notify.Envelope{Kind: noteKind, To: to, Provider: c.primary.Name(),
		Providers: []string{c.primary.Name(), c.backup.Name()}, Units: 1, Class: record.Transactional,
		Content: &note{Text: r.Text}}
	if r.Promo {
		// A promotional note carries no code: its record keeps what
		// sends it again after a failure report.
		env.Class, env.Resend = record.Promotional, []byte(r.Text)
	}
	switch c.defect {
	case "prepare-calls-provider":
		_, _ = c.primary.Send(ctx, env)
	case "wrong-kind":
		env.Kind = "other"
	case "random-prepare":
		env.Content = &note{Text: fmt.Sprint(r.Text, c.calls.Add(1))}
	}
	return env, nil
}

func (c *noteChannel) provider(name string) *memprovider.Provider {
	if name == c.backup.Name() && c.defect != "ignores-provider" {
		return c.backup
	}
	return c.primary
}

func (c *noteChannel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	if c.defect == "ignores-ctx" {
		ctx = context.Background()
	}
	p := c.provider(env.Provider)
	res, err := p.Send(ctx, env)
	if err != nil && c.defect == "fails-over-after-unknown" && p != c.backup {
		return c.backup.Send(ctx, env)
	}
	return res, err
}

// wire is the codec's format, version 1.
type wire struct {
	V       int          `json:"v"`
	Account string       `json:"account"`
	Key     string       `json:"key,omitempty"`
	Request *noteRequest `json:"request"`
}

func (c *noteChannel) EncodeRequest(req notify.Request) ([]byte, error) {
	r, ok := req.(*noteRequest)
	if !ok {
		return nil, fmt.Errorf("note: cannot encode a %T", req)
	}
	return json.Marshal(wire{V: 1, Account: r.Account, Key: r.IdempotencyKey, Request: r})
}

func (c *noteChannel) DecodeRequest(data []byte) (notify.Request, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	if w.V != 1 || w.Request == nil {
		return nil, errors.New("note: not a version 1 note request")
	}
	w.Request.Account = w.Account
	if c.defect != "lossy-codec" {
		w.Request.IdempotencyKey = w.Key
	}
	return w.Request, nil
}

func (c *noteChannel) Refund(*record.Message, *notify.DeliveryReport) bool {
	if c.defect == "flaky-refund" {
		return c.calls.Add(1)%2 == 0
	}
	return true
}

func (c *noteChannel) Failed(_ context.Context, m *record.Message, _ *notify.DeliveryReport, key string) (notify.Request, error) {
	if c.defect == "failed-without-key" {
		key = ""
	}
	return &noteRequest{Account: m.Account, To: m.To, Text: string(m.Resend), IdempotencyKey: key}, nil
}

func (c *noteChannel) MaxBatch() int { return 2 }

func (c *noteChannel) DeliverBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	var out []*notify.Result
	for _, env := range envs {
		res, err := c.provider(env.Provider).Send(ctx, env)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	if c.defect == "short-batch" {
		out = out[:len(out)-1]
	}
	return out, nil
}

const secret = "483920"

// noteHarness is the harness of a note channel with defect.
func noteHarness(defect string) channeltest.Harness {
	ch := &noteChannel{primary: memprovider.New("primary"), backup: memprovider.New("backup"), defect: defect}
	req := func(to, text string) *noteRequest { return &noteRequest{Account: "acme", To: to, Text: text} }
	keyed := req(" Ann@Example.com ", "Your code is "+secret)
	keyed.IdempotencyKey = "order-17"
	promo := req("bob@example.com", "Sale!")
	promo.Promo = true
	return channeltest.Harness{
		Channel: ch,
		Account: &notify.Account{ID: "acme", Currency: record.INR()},
		Valid:   []notify.Request{req("ann@example.com", "Hello"), keyed, promo},
		Invalid: []channeltest.Invalid{
			{Name: "no text", Request: req("ann@example.com", " "), Fields: []string{"text"}},
			{Name: "everything", Request: req("nobody", strings.Repeat(secret, 20)), Fields: []string{"to", "text"}},
		},
		Providers: []channeltest.Fake{ch.primary, ch.backup},
		Secrets:   []string{secret},
		Codec:     ch,
		Stored: []channeltest.Stored{{Name: "v1",
			Data:    []byte(`{"v":1,"account":"acme","key":"k1","request":{"to":"ann@example.com","text":"Hi"}}`),
			Request: &noteRequest{Account: "acme", To: "ann@example.com", Text: "Hi", IdempotencyKey: "k1"}}},
		Reports:       ch,
		Batch:         ch,
		BatchRequests: []notify.Request{req("a@example.com", "Hi all"), req("b@example.com", "Hi all"), req("c@example.com", "Hi all")},
	}
}

func TestConformance(t *testing.T) {
	channeltest.Run(t, noteHarness(""))
}

// TestWithoutAbilities: a harness that declares no ability passes, those
// checks skipped.
func TestWithoutAbilities(t *testing.T) {
	h := noteHarness("")
	h.Codec, h.Stored, h.Reports, h.Batch, h.BatchRequests, h.Invalid = nil, nil, nil, nil, nil, nil
	channeltest.Run(t, h)
}

func TestBrokenHelper(t *testing.T) {
	defect := os.Getenv("CHANNELTEST_DEFECT")
	if defect == "" {
		t.Skip("run by TestKitCatchesDefects")
	}
	channeltest.Run(t, noteHarness(defect))
}

func TestKitCatchesDefects(t *testing.T) {
	if os.Getenv("CHANNELTEST_DEFECT") != "" {
		t.Skip("child process")
	}
	for _, tt := range []struct {
		defect, want string
	}{
		{"prepare-calls-provider", "it has no side effects"},
		{"wrong-kind", `Envelope.Kind = "other"`},
		{"extra-field", `the error names ["domain" "text"], want ["text"]`},
		{"misses-field", "(no text): Prepare accepted it"},
		{"leaks-secret", "the error holds Harness.Secrets[0]"},
		{"random-prepare", "Prepare is not deterministic"},
		{"ignores-provider", `want one message taken by "backup"`},
		{"ignores-ctx", "must honour ctx"},
		{"fails-over-after-unknown", "never another provider after an unknown outcome"},
		{"lossy-codec", "the codec loses it"},
		{"flaky-refund", "one answer"},
		{"failed-without-key", "key as its idempotency key"},
		{"short-batch", "1 results for 2 envelopes"},
		{"recipient-drifts", "want it back as it is"},
	} {
		t.Run(tt.defect, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CHANNELTEST_DEFECT="+tt.defect)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the kit passed or did not run (err %v); output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
