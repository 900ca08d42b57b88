package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// handWritten is the baseline of BenchmarkPipelineSendSMS: the
// same guarantees for one SMS written by hand, as a team without notify
// would - the request's validator tags checked, the number normalised,
// segments counted and priced, a debit with its reference in a
// mutex-guarded map wallet, a record opened attempting (pending, then
// attempting, as the pipeline's history says) and moved to sent after
// the provider call, the provider called, a receipt built. No
// idempotency, limits, retries, events, indexes or reconciler.
//
// It remembers as many refs and records as the pipeline's memstore does
// in newPipeline, the way a hand-written store bounds them most cheaply:
// two generations of maps, the older dropped whole when the newer fills.
type handWritten struct {
	provider *memprovider.Provider
	account  *notify.Account
	sender   string // the account's SMS sender ID

	mu      sync.Mutex
	balance int64
	refs    generations[int64]
	records generations[*handRecord]
}

// generations is a map that keeps between size and 2*size entries: the
// current generation and the previous one, dropped whole when the
// current one holds size entries.
type generations[V any] struct {
	size     int
	cur, old map[string]V
}

func newGenerations[V any](size int) generations[V] {
	return generations[V]{size: size, cur: make(map[string]V, size)}
}

func (g *generations[V]) put(k string, v V) {
	if len(g.cur) >= g.size {
		g.old, g.cur = g.cur, make(map[string]V, g.size)
	}
	g.cur[k] = v
}

func (g *generations[V]) get(k string) (V, bool) {
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.old[k]
	return v, ok
}

type handRecord struct {
	state             record.State
	providerMessageID string
	history           []record.StateChange
}

func newHandWritten(p *memprovider.Provider) *handWritten {
	return &handWritten{
		provider: p,
		account:  &notify.Account{ID: "acme", Currency: record.INR()},
		sender:   "ACMEIN",
		balance:  1 << 60,
		// As newPipeline's memstore: 65,536 refs at least (memstore keeps
		// up to twice that), records a generation of half the capacity
		// of 65,536.
		refs:    newGenerations[int64](1 << 16),
		records: newGenerations[*handRecord](1 << 15),
	}
}

var (
	errShort     = errors.New("insufficient funds")
	errDuplicate = errors.New("message ID recorded already")
)

func (h *handWritten) send(ctx context.Context, req *sms.Request) (*notify.Receipt, error) {
	var fe record.FieldErrors
	if rules.Check(&fe, req); len(fe) > 0 { // validator/v10 with the request's tags
		return nil, notify.InvalidFields(fe)
	}
	n, err := phone.Parse(req.To, h.account.Region, nil)
	if err != nil {
		return nil, err
	}
	to := n.E164
	enc, segments, _ := sms.Segments(req.Message)
	price := notify.Money{Minor: 25 * int64(segments), Currency: h.account.Currency}
	id := uuid.NewString()
	now := time.Now()

	rec, err := h.open(id, price.Minor, now)
	if err != nil {
		return nil, err
	}

	env := &notify.Envelope{ID: id, Kind: sms.Kind, Account: h.account, To: to, Provider: h.provider.Name(),
		Route: string(sms.RouteSMS), Units: segments, Class: record.Transactional, Price: price,
		Content: &sms.Message{Route: sms.RouteSMS, Text: req.Message, SenderID: h.sender, Encoding: enc, Segments: segments}}
	res, err := h.provider.Send(ctx, env)
	if err != nil {
		return nil, err // a real one would refund or keep the charge by the outcome
	}

	balance := h.settle(rec, res.ProviderMessageID)
	return &notify.Receipt{MessageID: id, Account: h.account.ID, Kind: sms.Kind, To: to, Status: record.StateSent,
		Provider: res.Provider, ProviderMessageID: res.ProviderMessageID, Units: segments, Cost: price,
		Balance: notify.Money{Minor: balance, Currency: price.Currency}, Metered: true, Attempts: 1, CreatedAt: now}, nil
}

// open debits price under the ref id and records the message id opened
// attempting at now, in one step.
func (h *handWritten) open(id string, price int64, now time.Time) (*handRecord, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.balance < price {
		return nil, errShort
	}
	if _, dup := h.records.get(id); dup {
		return nil, errDuplicate
	}
	h.balance -= price
	h.refs.put(id, price)
	history := make([]record.StateChange, 2, 4) // room for sent and a delivery report
	history[0] = record.StateChange{State: record.StatePending, At: now}
	history[1] = record.StateChange{State: record.StateAttempting, At: now}
	rec := &handRecord{state: record.StateAttempting, history: history}
	h.records.put(id, rec)
	return rec, nil
}

// settle moves rec to sent with the vendor's ID and answers the balance.
func (h *handWritten) settle(rec *handRecord, providerMessageID string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec.state, rec.providerMessageID = record.StateSent, providerMessageID
	rec.history = append(rec.history, record.StateChange{State: record.StateSent, At: time.Now()})
	return h.balance
}

// BenchmarkHandWrittenSendSMS is the hand-written baseline the pipeline
// (with its records) is measured against (bench/run's table).
func BenchmarkHandWrittenSendSMS(b *testing.B) {
	p := memprovider.New("mem")
	h := newHandWritten(p)
	ctx := context.Background()
	req := pipelineRequest()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := h.send(ctx, req); err != nil {
			b.Fatal(err)
		}
		if i++; i%4096 == 0 {
			p.Reset() // the capture buffer is for tests; keep memory flat
		}
	}
}

// TestHandWrittenSends keeps the baseline honest: it sends, charges and
// records.
func TestHandWrittenSends(t *testing.T) {
	p := memprovider.New("mem")
	h := newHandWritten(p)
	rc, err := h.send(context.Background(), pipelineRequest())
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := h.records.get(rc.MessageID)
	if rc.Cost.Minor != 25 || p.Len() != 1 || h.balance != 1<<60-25 || rec == nil || rec.state != record.StateSent {
		t.Fatalf("receipt %+v, sent %d, balance %d", rc, p.Len(), h.balance)
	}
}

// TestGenerationsKeep checks the baseline's retention: the newest size
// entries at least, and 2*size at most.
func TestGenerationsKeep(t *testing.T) {
	g := newGenerations[int](4)
	for i := range 11 {
		g.put(string(rune('a'+i)), i)
	}
	if n := len(g.cur) + len(g.old); n < 4 || n > 8 {
		t.Fatalf("kept %d entries, want 4 to 8", n)
	}
	for i := 7; i < 11; i++ {
		if v, ok := g.get(string(rune('a' + i))); !ok || v != i {
			t.Fatalf("entry %d: got %d, %v", i, v, ok)
		}
	}
	if _, ok := g.get("a"); ok {
		t.Fatal("the oldest entry is still kept")
	}
}
