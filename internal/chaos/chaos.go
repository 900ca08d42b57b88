// Package chaos is the ledger chaos test of notify, shared by every store
// implementation: many concurrent sends over SMS, chat, e-mail and the
// dual OTP, providers that
// fail at random in every way a provider can, repeated idempotency keys and
// cancelled contexts, and then a strict audit of the money.
//
// Vendors accept and lose the answer, hang until the attempt times out,
// panic; clients hang up at random moments, before and during the vendor
// call.
//
// The audit wraps the Ledger it is given, so it sees every debit (Open),
// refund and price adjustment (Move) and credit (Credit) and what each
// call really returned, and then asks the Ledger itself:
//
//   - balance = opening - charges + refunds, exactly, and never negative;
//   - every charge has a record, settled, and every record with a charge
//     was seen charged; a refunded charge's record failed, and a
//     standing charge's record did not fail at its send;
//   - every message a vendor received is charged exactly once, and stays
//     charged;
//   - every record whose outcome was ever unknown keeps its charge;
//   - no idempotency key was charged for more than one send;
//   - every send that returned success is charged, every one that returned
//     an error is not, unless the error is outcome_unknown, whose charge
//     stands;
//   - no message reached a vendor twice (retries only after a certain
//     refusal).
//
// The run also crashes: sends of SMS, chat and e-mail stop dead
// (runtime.Goexit, which leaves every store as a killed process would):
// about one in fifty after the vendor answered and before its record
// moved, and one in four of those whose record went back to pending (a
// certain refusal, or the wait before a retry) at the next step, before
// its refund or its next vendor call, the first of them always. About three in
// ten find the ledger unreachable when its refusal is to be refunded
// (its first moves into failed fail): the Notifier retries the move in
// the background, and every such refusal must be refunded before the
// restart. A restarted Notifier then reconciles, and the audit reads the
// message records: every crash was settled exactly once.
//
// Then the vendors report on every message they took (reports.go):
// delivered and read, in order and out of it, sent, failed (a chat
// failure sometimes one the QR gateway can overcome, which sends the
// message again), each report one to three times, shuffled and taken by
// 16 goroutines at once, with forged reports among them that must match
// nothing (one named by a vendor ID while a failover is in flight is
// asked for again, as a report that may have outrun that send's move to
// sent, and must match nothing then). Every record must end where its reports lead, with each step
// once; a reported failure is refunded once (every kind but SMS), a
// failover goes out once, and the money audit above holds with them: a
// refund gives back what a failover's price adjustment left.
//
// With a queue (Stores.NewQueue), the Notifier has it (notify.WithQueue),
// and about a third of the SMS, chat and e-mail single sends go through
// Enqueue or SendAt (a few milliseconds ahead, so that they come due
// during the run) instead of Send; about one in four of those is canceled
// at a random moment, from at once to about 1.5 s later, racing the
// queue's workers, whose Run goes on while the senders send. The crashes
// reach the workers too: a queued send's Work stops dead where a send
// would (after its vendor answered, or in pending), on a goroutine of its
// own, so the queue goes on and runs the job again, which must leave the
// attempting record to the reconciler; every vendor refuses, for a while,
// about one queued send in ten, which a worker puts back on the queue,
// its charge held. Once the senders are done, the run drains the queue
// (calling Work for every record still queued or scheduled, as a second
// worker would, while the queue's own go on, then once more after its Run
// stopped), until no record waits, before the restart. The audit then
// holds the queued sends to the money too:
//
//   - every debit is seen: those of a queue that opens its records
//     through the Ledger (memqueue) there, and those of one that opens
//     them in its own transaction (pgqueue, through pgstore's OpenTx) from
//     what the queue's Open was asked and answered, or, when it failed,
//     by reading the record back (its debit commits with it or not at
//     all); the ledger identity above checks the wallet agrees;
//   - a queued or scheduled receipt is a charge, which ends sent (or
//     further), unknown, or failed and refunded exactly once;
//   - a canceled send failed from queued or scheduled, refunded once, and
//     reached no vendor; a Cancel that lost found it taken by a worker,
//     or canceled already;
//   - no record is left queued or scheduled;
//   - and the checks above (no message reached a vendor twice: a worker
//     never retries an unknown outcome) hold for them.
//
// The size is Config.Sends, or the NOTIFY_CHAOS_SENDS environment variable
// when it is set (CI runs 5,000; the full run is 100,000).
package chaos

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/wallet"
)

// Stores are the stores under test. The account must exist in Accounts
// with a wallet in Ledger holding Opening.
type Stores struct {
	// Ledger keeps the money and the message records.
	Ledger      store.Ledger
	Accounts    store.Accounts
	Idempotency store.Keys
	Account     string
	Opening     notify.Money
	// NewQueue, when set, returns the queue the run queues sends on
	// (notify.WithQueue), given the Ledger the run wraps: a queue that
	// opens its records through a Ledger (memqueue) must use that one, so
	// that the audit sees its debits; one that opens them through its
	// store directly (pgqueue over the pgstore.Store that is Ledger) may
	// ignore it. The run starts its Run and stops it before the restart.
	NewQueue func(ledger store.Ledger) (queue.Queue, error)
}

// Config sizes a run.
type Config struct {
	// Sends is the number of requests (repeats included). Default 5,000;
	// NOTIFY_CHAOS_SENDS overrides it.
	Sends int
	// Workers is the number of goroutines sending. Default 64.
	Workers int
}

// Sizes reads NOTIFY_CHAOS_SENDS, or returns def.
func Sizes(def int) int {
	if s := os.Getenv("NOTIFY_CHAOS_SENDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// op is one request of the run; repeats share the same op.
type op struct {
	key    string
	req    notify.Request
	otp    *otp.Request
	cancel time.Duration // >0: cancel the context after this long
	// mode is how it goes out: Send, Enqueue or SendAt (after ahead);
	// cancelQ: a queued send is canceled cancelAfter after it was queued,
	// or, with cancelTaken, once a worker's Work of it has returned.
	mode        int
	after       time.Duration
	cancelQ     bool
	cancelAfter time.Duration
	cancelTaken bool
}

type outcome struct {
	op      *op
	receipt *notify.Receipt
	err     error
	crashed bool // the send stopped dead: it returned nothing
}

// Run drives the run against s and audits it.
func Run(t *testing.T, s Stores, cfg Config) {
	t.Helper()
	if cfg.Sends <= 0 {
		cfg.Sends = 5000
	}
	cfg.Sends = Sizes(cfg.Sends)
	if cfg.Workers <= 0 {
		cfg.Workers = 64
	}
	w := &books{debits: map[string]int64{}, credits: map[string]int64{}}
	var breakerCount breakerCounter

	var seed [32]byte
	for i := range seed {
		seed[i] = byte(rand.Uint32())
	}
	t.Logf("seed %x", seed)
	down := &vendorDown{calls: map[string]int{}}
	v := newVendors(seed, down)
	opts := notifierOptions(t, v, s.Idempotency, &breakerCount)
	msgs := &auditLedger{Ledger: s.Ledger, w: w, down: down, crashAt: map[string]record.State{}, crashable: map[string]bool{},
		downAt: map[string]int{}, late: map[string]bool{}, landed: make(chan struct{}, 1),
		seen: map[string]bool{}, queued: map[string]bool{},
		r: rand.New(rand.NewPCG(uint64(seed[2]), 5))}
	msgs.crashing.Store(true)
	nopts := opts
	var q queue.Queue
	if s.NewQueue != nil {
		var err error
		q, err = s.NewQueue(msgs)
		if err != nil {
			t.Fatal(err)
		}
		nopts = append(slices.Clone(opts), notify.WithQueue(&auditQueue{Queue: q, a: msgs}))
	}
	n, err := notify.New(s.Accounts, msgs, nopts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ledger.PutCategory(context.Background(), store.Category{Account: s.Account, Name: chaosCategory}); err != nil {
		t.Fatal(err)
	}
	providers := v.all()

	ops := plan(seed, s.Account, cfg)
	var worker *crashWorker
	var stopQueue func()
	cancels := &canceler{n: queued.New(n), account: s.Account, worked: &worked{}}
	if s.NewQueue != nil {
		planQueue(seed, ops)
		worker = &crashWorker{n: queued.New(n), worked: cancels.worked}
		stopQueue = runQueue(t, q, worker)
	}
	outcomes := sendAll(n, ops, cfg.Workers, cancels)
	if worker != nil {
		drainQueue(t, s, worker, msgs, cancels, stopQueue)
	}
	msgs.awaitLateRefunds(t, 30*time.Second)
	reconcile(t, s, msgs, opts)
	reportedFailed := reports(t, s, n, providers, seed)
	msgs.resolveUncertain(t, s)
	standing := audit(t, s, w, msgs, outcomes, reportedFailed)
	if worker != nil {
		auditQueued(t, s, w, msgs, outcomes, cancels.results, providers, reportedFailed)
	}
	checkVendors(t, v, &breakerCount, standing, reportedFailed)
}

// vendors are the run's providers.
type vendors struct {
	sms, sms2 *memprovider.Provider // the SMS vendors, the second the failover of the first
	cloud, qr *memprovider.Provider // the chat gateways
	email     *memprovider.Provider
}

// newVendors returns the run's providers, each chaotic with a stream of
// its own from seed, the QR gateway the one that panics.
func newVendors(seed [32]byte, down *vendorDown) vendors {
	v := vendors{
		sms: memprovider.New("sms"), cloud: memprovider.New("cloud"), qr: memprovider.New("qr"),
		sms2: memprovider.New("sms2"), email: memprovider.New("email"),
	}
	chaotic(v.sms, seed, 1, vendorFirstSMS, down)
	chaotic(v.cloud, seed, 2, 0, down)
	chaotic(v.qr, seed, 3, vendorPanics, down)
	chaotic(v.email, seed, 4, 0, down)
	chaotic(v.sms2, seed, 5, 0, down)
	return v
}

// all returns every provider, in the order the checks walk them.
func (v vendors) all() []*memprovider.Provider {
	return []*memprovider.Provider{v.sms, v.sms2, v.cloud, v.qr, v.email}
}

// notifierOptions returns the options of the run's Notifiers, the first
// and the restarted one: the channels over v, the default INR prices,
// idempotency, fast retries, timeouts and breakers so that they all come
// into play within the run, and breakers observed.
func notifierOptions(t *testing.T, v vendors, idempotency store.Keys, breakers *breakerCounter) []notify.Option {
	t.Helper()
	// Two SMS vendors: every SMS fails over from the first to the second
	// on a certain, temporary refusal, and their breakers open and close
	// in the run.
	smsCh, err := sms.New(sms.Config{Providers: []sms.ProviderRule{{Provider: v.sms}, {Provider: v.sms2}}})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: v.cloud, QR: v.qr, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	emailCh, err := email.New(email.Config{Provider: v.email})
	if err != nil {
		t.Fatal(err)
	}
	return []notify.Option{
		notify.WithChannel(smsCh), notify.WithChannel(chatCh), notify.WithChannel(emailCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(idempotency),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 3, BaseDelay: 50 * time.Microsecond, MaxDelay: 500 * time.Microsecond}),
		notify.WithTimeout(5 * time.Millisecond),
		notify.WithBreaker(notify.BreakerPolicy{Failures: 2, Cooldown: time.Millisecond, OnChange: breakers.BreakerChanged}),
	}
}

// sendAll sends ops through n from workers goroutines at once and
// returns their outcomes, in the order of ops. A queued send picked to
// be canceled is handed to cancels as soon as its receipt says it waits.
func sendAll(n *notify.Notifier, ops []*op, workers int, cancels *canceler) []outcome {
	outcomes := make([]outcome, len(ops))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ops) {
					return
				}
				o := sendOrCrash(n, ops[i])
				outcomes[i] = o
				if ops[i].cancelQ && o.err == nil && o.receipt != nil && o.receipt.Status.Waiting() {
					cancels.cancel(o.receipt.MessageID, ops[i].cancelAfter, ops[i].cancelTaken)
				}
			}
		}()
	}
	wg.Wait()
	return outcomes
}

// drainQueue, once the senders are done, drains the queue until no
// record waits, and stops its Run: the drain races the Cancels still to
// come, and the queue's workers; once they are done, what the workers put
// back as they stopped is drained too. The queue's workers must have run
// jobs, and died in some, or the run did not exercise them.
func drainQueue(t *testing.T, s Stores, worker *crashWorker, msgs *auditLedger, cancels *canceler, stopQueue func()) {
	t.Helper()
	rounds, ran := drain(t, s, worker, msgs, time.Minute)
	cancels.wg.Wait()
	stopQueue()
	again, ranAgain := drain(t, s, worker, msgs, time.Minute)
	t.Logf("queue: its workers ran %d jobs; the drain took %d+%d rounds and %d+%d jobs; %d workers died mid-send",
		worker.ran.Load(), rounds, again, ran, ranAgain, worker.crashed.Load())
	if worker.ran.Load() == 0 || worker.crashed.Load() == 0 {
		t.Errorf("the queue's workers ran %d jobs, %d died: the run did not exercise them", worker.ran.Load(), worker.crashed.Load())
	}
}

// checkVendors checks what the vendors saw. The run must have failed over
// and tripped breakers, or it proved nothing of them; a retry or a
// failover must never reach a vendor that already has the message, and
// whatever a vendor has is paid for (its charge stands, or a report
// failed it since).
func checkVendors(t *testing.T, v vendors, breakers *breakerCounter, standing, reportedFailed map[string]bool) {
	t.Helper()
	if v.sms2.Len() == 0 {
		t.Error("no SMS failed over to the second vendor")
	}
	if breakers.opened.Load() == 0 {
		t.Error("no breaker opened")
	}
	accepted := map[string]string{}
	for _, p := range v.all() {
		for _, env := range p.Sent() {
			if prev, dup := accepted[env.ID]; dup {
				t.Errorf("message %s accepted twice (by %s and %s)", env.ID, prev, p.Name())
			}
			accepted[env.ID] = p.Name()
			if !standing[env.ID] && !reportedFailed[env.ID] {
				t.Errorf("message %s reached %s but is not charged", env.ID, p.Name())
			}
		}
	}
}

// chaosCategory is the category the run's SMS, chat and e-mail requests
// name (opt-out, no recipient declines it), so that every one of them
// reads the preferences on its way, under the same faults as the rest.
const chaosCategory = "order"

// plan makes the run's requests: a mix of kinds, a key on most, 10%
// repeats of an earlier request and 10% with a context cancelled before
// or during the vendor call.
func plan(seed [32]byte, account string, cfg Config) []*op {
	r := rand.New(rand.NewChaCha8(seed))
	ops := make([]*op, 0, cfg.Sends)
	for i := 0; len(ops) < cfg.Sends; i++ {
		if len(ops) > 0 && r.IntN(10) == 0 {
			ops = append(ops, ops[r.IntN(len(ops))]) // a repeat, same key
			continue
		}
		o := &op{key: fmt.Sprintf("key-%d", i)}
		if r.IntN(5) == 0 {
			o.key = "" // some sends carry no key
		}
		if r.IntN(10) == 0 { // a client that hangs up, before or during the vendor call
			o.cancel = time.Duration(r.IntN(300)) * time.Microsecond
		}
		to := fmt.Sprintf("9%09d", r.IntN(1_000_000_000))
		switch k := r.IntN(10); {
		case k < 3:
			o.req = &sms.Request{Account: account, To: to, Message: strings.Repeat("Your order has shipped. ", 1+r.IntN(12)),
				Category: chaosCategory, IdempotencyKey: o.key}
		case k < 6:
			o.req = &chat.Request{Account: account, To: to, Message: "Your invoice is ready.", Category: chaosCategory, IdempotencyKey: o.key}
		case k < 8:
			o.req = &email.Request{Account: account, To: fmt.Sprintf("user%d@example.com", r.IntN(1000)),
				Subject: "Your receipt", Message: "<p>Thank you for your order.</p>", Purpose: email.PurposeInvoice,
				Category: chaosCategory, IdempotencyKey: o.key}
		default:
			o.otp = &otp.Request{Account: account, To: to, OTP: fmt.Sprintf("%06d", r.IntN(1_000_000)), IdempotencyKey: o.key}
		}
		ops = append(ops, o)
	}
	return ops
}

// sendOrCrash sends o on a goroutine of its own, so that a send the
// audit ledger crashes (runtime.Goexit) ends only that goroutine.
func sendOrCrash(n *notify.Notifier, o *op) outcome {
	out := outcome{op: o, crashed: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		out = send(n, o)
	}()
	<-done
	return out
}

// reconcile stops the crashes and runs a Notifier restarted an hour
// later over the same stores: it must settle every crashed send's record,
// exactly once.
func reconcile(t *testing.T, s Stores, msgs *auditLedger, opts []notify.Option) {
	t.Helper()
	msgs.crashing.Store(false)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	restarted, err := notify.New(s.Accounts, msgs, append(opts, notify.WithClock(later))...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := restarted.Reconcile(ctx)
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	crashes := msgs.crashes.Load()
	if int64(res.Refunded+res.Unknown) != crashes {
		t.Errorf("Reconcile settled %+v; %d sends crashed", res, crashes)
	}
	if again, err := restarted.Reconcile(ctx); err != nil || again != (notify.ReconcileResult{}) {
		t.Errorf("a second Reconcile settled %+v, %v", again, err)
	}
	if crashes == 0 || res.Refunded == 0 || res.Unknown == 0 {
		t.Errorf("the run did not crash at every point: %d crashes, settled %+v", crashes, res)
	}
	t.Logf("%d crashed sends: %d refunded, %d unknown", crashes, res.Refunded, res.Unknown)
}

func send(n *notify.Notifier, o *op) outcome {
	ctx := context.Background()
	if o.cancel > 0 {
		c, cancel := context.WithCancel(ctx)
		t := time.AfterFunc(o.cancel, cancel)
		defer t.Stop()
		defer cancel()
		ctx = c
	}
	var r *notify.Receipt
	var err error
	switch o.mode {
	case modeEnqueue:
		r, err = queued.New(n).Enqueue(ctx, o.req)
		return outcome{op: o, receipt: r, err: err}
	case modeSendAt:
		r, err = queued.New(n).SendAt(ctx, o.req, time.Now().Add(o.after))
		return outcome{op: o, receipt: r, err: err}
	}
	switch req := o.req.(type) {
	case nil:
		r, err = n.Send(ctx, o.otp)
	case *sms.Request:
		r, err = n.Send(ctx, req)
	case *chat.Request:
		r, err = n.Send(ctx, req)
	case *email.Request:
		r, err = n.Send(ctx, req)
	}
	return outcome{op: o, receipt: r, err: err}
}

// chaotic makes p fail about one send in five, in every way a provider can.
// Besides, every vendor refuses, for now, the messages down picks.
func chaotic(p *memprovider.Provider, seed [32]byte, stream uint64, kind vendorKind, down *vendorDown) {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(uint64(seed[0])|uint64(seed[1])<<8, stream))
	panics := kind == vendorPanics
	p.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		if down.refuses(env.ID) {
			return nil, notify.Errorf(notify.CodeUnavailable, "vendor down for this message")
		}
		if kind == vendorFirstSMS && shunned(env.ID) {
			return nil, notify.Errorf(notify.CodeUnavailable, "no route to this number today")
		}
		mu.Lock()
		x := r.IntN(1000)
		mu.Unlock()
		switch {
		case x < 800:
			return &notify.Result{}, nil
		case x < 850: // temporary, before acceptance: retried
			return nil, notify.Errorf(notify.CodeUnavailable, "vendor down")
		case x < 880:
			return nil, &notify.Error{Code: notify.CodeRateLimited, Err: errors.New("slow down")}
		case x < 920: // permanent
			return nil, notify.Errorf(notify.CodeRejected, "number blocked")
		case x < 935: // accepted, then the answer was lost: captured, unknown
			return &notify.Result{}, errors.New("answer lost after the request was written")
		case x < 950: // accepted, and the provider knows the outcome is unknown
			return &notify.Result{}, notify.Errorf(notify.CodeOutcomeUnknown, "HTTP 502 from a proxy")
		case x < 980 || !panics: // hangs until the attempt times out: unknown
			<-ctx.Done()
			return nil, ctx.Err()
		default:
			panic("provider bug")
		}
	})
}

// vendorKind says how a chaotic vendor differs from the others.
type vendorKind int

const (
	// vendorPanics panics now and then, where the others hang.
	vendorPanics vendorKind = iota + 1
	// vendorFirstSMS, the first of the two SMS vendors, also refuses a
	// sixteenth of the messages (by ID), temporarily, every time it is
	// asked: those fail over, so every run exercises the failover and
	// not only the runs whose dice gave three temporary refusals in a
	// row or an open breaker.
	vendorFirstSMS
)

// shunned reports whether the first SMS vendor refuses message id.
func shunned(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%16 == 0
}

// breakerCounter counts the breakers that opened.
type breakerCounter struct{ opened atomic.Int64 }

func (b *breakerCounter) BreakerChanged(_ context.Context, _ string, open bool, _ error) {
	if open {
		b.opened.Add(1)
	}
}

// books is what the audit knows of the money: what every debit and
// credit the ledger reported moved, by ref.
type books struct {
	mu       sync.Mutex
	debits   map[string]int64
	credits  map[string]int64
	negative []string
}

func (w *books) note(into map[string]int64, ref string, m notify.Money, b record.Balance, err error) {
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if prev, ok := into[ref]; ok && prev != m.Minor {
		w.negative = append(w.negative, fmt.Sprintf("ref %s moved %d then %d", ref, prev, m.Minor))
	}
	into[ref] = m.Minor
	if b.Available.Minor < 0 {
		w.negative = append(w.negative, fmt.Sprintf("balance %d after %s", b.Available.Minor, ref))
	}
}

// auditLedger notes the money a Ledger moves in the audit's books (debits
// in Open, refunds and price adjustments in Move, credits in Credit) and
// the ID of every record opened, and crashes sends: Open picks about one
// SMS, chat or e-mail in fifty to die after its vendor call, Move picks
// one in four of those whose record went back to pending to die there,
// and the Move there ends the goroutine instead (dual OTP legs run on
// goroutines of their own, which a crash would not spare, so they never
// crash). It also picks about three in ten whose first
// storeDownMoves moves into failed fail as an unreachable database's
// would (Unavailable): more than the pipeline tries at once, so a
// refusal's refund must be retried later to land.
type auditLedger struct {
	store.Ledger
	w        *books
	crashing atomic.Bool
	crashes  atomic.Int64

	mu      sync.Mutex
	r       *rand.Rand
	opened  []string                // the ID of every record Open was asked to write
	crashAt map[string]record.State // the state the send dies in
	// crashable holds the records whose sends may die (not a dual OTP's
	// legs); pendingSteps counts their moves into pending, every fourth
	// of which, from the first, picks its send to die in pending.
	crashable    map[string]bool
	pendingSteps int
	downAt       map[string]int  // moves into failed still to fail, by message ID
	late         map[string]bool // moves into failed that failed and have not landed since
	refunds      int             // of those, how many landed
	landed       chan struct{}   // nudged when one lands
	// seen holds the records Open was asked to write; queued those a
	// queue was (through its Open, which may or may not go through
	// Open here); uncertain those of a queue's Open that failed and did
	// not go through Open here, which the audit reads back.
	seen      map[string]bool
	queued    map[string]bool
	uncertain []string
	down      *vendorDown // picks queued sends every vendor refuses for a while
}

// storeDownMoves is how many moves into failed of a message picked for a
// store fault fail.
const storeDownMoves = 4

func (a *auditLedger) Credit(ctx context.Context, account string, m notify.Money, ref string) (record.Balance, error) {
	b, err := a.Ledger.Credit(ctx, account, m, ref)
	a.w.note(a.w.credits, ref, m, b, err)
	return b, err
}

func (a *auditLedger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	// Open takes m (the store may keep it as the record): read it first.
	id, charge, request := m.ID, m.Charge, m.Request
	b, err := a.Ledger.Open(ctx, m)
	a.noteOpen(id, charge, request, b, err)
	return b, err
}

// OpenUnlisted notes the record it opened, as Open does; a recipient the
// list stops opens nothing.
func (a *auditLedger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	id, charge, request := m.ID, m.Charge, m.Request
	b, e, err := a.Ledger.OpenUnlisted(ctx, m, to, stopping)
	if e.Reason == "" {
		a.noteOpen(id, charge, request, b, err)
	}
	return b, e, err
}

// noteOpen notes a record opened, by the Ledger's Open or a queue's: its
// debit, and whether and where its send is to crash.
func (a *auditLedger) noteOpen(id string, charge notify.Money, request notify.Kind, b record.Balance, err error) {
	a.mu.Lock()
	a.opened = append(a.opened, id) // an error may leave the record written
	a.seen[id] = true
	a.mu.Unlock()
	if err != nil {
		return
	}
	if charge.Minor > 0 {
		a.w.note(a.w.debits, id, charge, b, nil)
	}
	if a.crashing.Load() && request != otp.Kind {
		a.mu.Lock()
		a.crashable[id] = true
		switch x := a.r.IntN(50); {
		case x == 0:
			a.crashAt[id] = record.StateAttempting
		case x < 17:
			a.downAt[id] = storeDownMoves
		}
		a.mu.Unlock()
	}
}

func (a *auditLedger) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	// A queued send crashes, and finds the ledger down, only in a
	// worker: never in a Cancel.
	chaos := a.crashing.Load() && (inWorker(ctx) || !a.isQueued(id))
	if chaos && a.dies(id, u.State) {
		if !u.From.Waiting() {
			// A send that dies leaves its record open, for the
			// reconciler. A worker that dies on its claim (a move out
			// of queued or scheduled, which a record requeued after a
			// retry takes again) leaves it waiting instead: its job
			// runs again and settles it, so it is no crash the
			// reconciler must find. Counting it made the run fail
			// about once in 50 (one crash more than the reconciler
			// settled).
			a.crashes.Add(1)
		}
		runtime.Goexit()
	}
	if u.State == record.StateFailed && chaos && a.storeDown(id) {
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "chaos: the ledger is unreachable")
	}
	m, err := a.Ledger.Move(ctx, account, id, u)
	if err == nil && u.State == record.StatePending && a.crashing.Load() {
		a.pickPendingCrash(id)
	}
	if err == nil && u.State == record.StateFailed {
		a.landedLate(id)
	}
	if err == nil && u.State == record.StateFailed && m.Refunded {
		a.w.mu.Lock()
		_, known := a.w.debits[id]
		a.w.mu.Unlock()
		if !known {
			// Open's answer was lost (a client that hung up mid-statement)
			// and the pipeline failed the record at once: the record
			// proves the debit, which Open makes with it or not at all.
			a.w.note(a.w.debits, id, m.Charge, record.Balance{}, nil)
		}
		a.w.note(a.w.credits, store.RefundRefPrefix+id, m.Charge, record.Balance{}, nil)
	}
	if err == nil && u.State == record.StateSent && u.Reprice != nil {
		a.w.mu.Lock()
		charged := a.w.debits[id]
		a.w.mu.Unlock()
		if diff := charged - m.Charge.Minor; diff > 0 {
			a.w.note(a.w.credits, store.AdjustRefPrefix+id, notify.Money{Minor: diff, Currency: m.Charge.Currency}, record.Balance{}, nil)
		}
	}
	return m, err
}

// storeDown reports whether this move into failed of id is to fail.
func (a *auditLedger) storeDown(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !spend(a.downAt, id) {
		return false
	}
	a.late[id] = true
	return true
}

// spend takes one from the count of id in counts, reporting whether
// there was one to take.
func spend(counts map[string]int, id string) bool {
	if counts[id] == 0 {
		return false
	}
	counts[id]--
	return true
}

// landedLate notes that a move into failed of id landed.
func (a *auditLedger) landedLate(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.late[id] {
		return
	}
	delete(a.late, id)
	a.refunds++
	select {
	case a.landed <- struct{}{}:
	default:
	}
}

// awaitLateRefunds waits, up to timeout, until every move into failed
// that the store fault refused has landed since: the refusals whose
// refund the store failed at the time are refunded before the restart
// reconciles (which would otherwise take them for abandoned sends).
func (a *auditLedger) awaitLateRefunds(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		left, done := len(a.late), a.refunds
		a.mu.Unlock()
		if left == 0 {
			t.Logf("%d refusals refunded after the store failed at the time", done)
			if done == 0 {
				t.Error("the run did not exercise a store failing at a refusal's refund")
			}
			return
		}
		select {
		case <-a.landed:
		case <-deadline.C:
			t.Errorf("%d refusals whose refund the store failed at the time are still not refunded after %v (%d were)", left, timeout, done)
			return
		}
	}
}

// pickPendingCrash picks every fourth send whose record moved into
// pending, from the first, to die at its next move: records open
// attempting, so only a refusal or a wait before a retry leaves one
// pending, and a crash there must be refunded by the reconciler.
func (a *auditLedger) pickPendingCrash(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, picked := a.crashAt[id]; picked || !a.crashable[id] {
		return
	}
	if a.pendingSteps%4 == 0 {
		a.crashAt[id] = record.StatePending
	}
	a.pendingSteps++
}

// dies reports whether the send of id dies on the move to state.
func (a *auditLedger) dies(id string, to record.State) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.crashAt[id]
	if !ok || !record.CanMove(at, to) {
		return false
	}
	delete(a.crashAt, id)
	return true
}

// auditRecord checks the record of a charged message: it exists and is
// settled; its charge was refunded if and only if the record says so, and
// only a failed record is refunded. A failure a report brought may keep
// its charge (an SMS); any other failed record was refunded.
func auditRecord(t *testing.T, s Stores, id string, refunded, reported bool) {
	t.Helper()
	m, err := s.Ledger.Message(context.Background(), s.Account, id)
	switch {
	case err != nil:
		t.Errorf("charged message %s has no record: %v", id, err)
	case m.State.Open() || m.State.Waiting():
		t.Errorf("message %s is still %s after reconciling", id, m.State)
	case refunded != m.Refunded:
		t.Errorf("message %s is %s, refunded %v, but its record says refunded %v", id, m.State, refunded, m.Refunded)
	case refunded && m.State != record.StateFailed:
		t.Errorf("message %s is %s but refunded", id, m.State)
	case m.State == record.StateFailed && !refunded && !reported:
		t.Errorf("message %s failed at its send but keeps its charge", id)
	case m.Cost().Minor != 0 && refunded:
		t.Errorf("refunded message %s still costs %d", id, m.Cost().Minor)
	}
}

// audit checks the money and returns the messages whose charge stands.
//
// reportedFailed are the messages a delivery report failed after their
// send: a refund of one of them, or a charge kept, is the report's doing.
func audit(t *testing.T, s Stores, w *books, msgs *auditLedger, outcomes []outcome, reportedFailed map[string]bool) map[string]bool {
	t.Helper()
	charged, refunded, balance := auditBalance(t, s, w)
	auditCredits(t, w)
	// Every charge's record is settled; a charge not refunded stands.
	standing := map[string]bool{}
	for id := range w.debits {
		_, refunded := w.credits[store.RefundRefPrefix+id]
		auditRecord(t, s, id, refunded, reportedFailed[id])
		if !refunded {
			standing[id] = true
		}
	}
	auditOpened(t, s, w, msgs, standing, reportedFailed)

	// What callers were told matches the money.
	told := auditOutcomes(t, outcomes, standing, reportedFailed)
	t.Logf("%d sends: %d ok, %d failed %v; charged %d, refunded %d, balance %d of %d",
		len(outcomes), told.ok, told.failed, told.codes, charged, refunded, balance, s.Opening.Minor)
	if told.ok == 0 || told.failed == 0 || refunded == 0 || told.unknown == 0 {
		t.Errorf("the run did not exercise every path: %d ok, %d failed, %d unknown, %d refunded", told.ok, told.failed, told.unknown, refunded)
	}
	return standing
}

// auditBalance checks the ledger identity, balance = opening - charges +
// refunds exactly, and that no balance the ledger answered, nor the
// final one, was negative. It returns what the books charged and
// refunded, and the final balance.
func auditBalance(t *testing.T, s Stores, w *books) (charged, refunded, balance int64) {
	t.Helper()
	for _, m := range w.debits {
		charged += m
	}
	for _, m := range w.credits {
		refunded += m
	}
	b, err := s.Ledger.Balance(context.Background(), s.Account)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.Opening.Minor - charged + refunded; b.Available.Minor != want {
		t.Errorf("ledger identity broken: balance %d, opening %d - charges %d + refunds %d = %d",
			b.Available.Minor, s.Opening.Minor, charged, refunded, want)
	}
	if b.Available.Minor < 0 || len(w.negative) > 0 {
		t.Errorf("balance went wrong: final %d; %v", b.Available.Minor, w.negative)
	}
	return charged, refunded, b.Available.Minor
}

// auditCredits checks that every credit fits a charge: a price adjustment
// (a failover to a cheaper gateway) gives back part of one, a refund the
// rest of it.
func auditCredits(t *testing.T, w *books) {
	t.Helper()
	for ref, m := range w.credits {
		if id, ok := strings.CutPrefix(ref, store.AdjustRefPrefix); ok {
			if m <= 0 || m >= w.debits[id] {
				t.Errorf("adjustment %s of %d does not fit its charge of %d", ref, m, w.debits[id])
			}
			continue
		}
		id, ok := strings.CutPrefix(ref, store.RefundRefPrefix)
		if !ok || w.debits[id]-w.credits[store.AdjustRefPrefix+id] != m {
			t.Errorf("credit %s of %d matches no charge (charged %d, adjusted %d)", ref, m, w.debits[id], w.credits[store.AdjustRefPrefix+id])
		}
	}
}

// auditOpened reads back every record Open was asked to write: every
// record with a charge was seen charged; every record whose outcome was
// ever unknown keeps its charge; no key paid for twice: at most one
// charged record per key and kind.
func auditOpened(t *testing.T, s Stores, w *books, msgs *auditLedger, standing, reportedFailed map[string]bool) {
	t.Helper()
	msgs.mu.Lock()
	opened := slices.Clone(msgs.opened)
	msgs.mu.Unlock()
	byKey := map[string]map[notify.Kind]string{}
	for _, id := range opened {
		m, err := s.Ledger.Message(context.Background(), s.Account, id)
		if notify.CodeOf(err) == notify.CodeNotFound {
			continue // Open failed and wrote nothing
		}
		if err != nil {
			t.Errorf("record %s: %v", id, err)
			continue
		}
		if _, charged := w.debits[id]; m.Charge.Minor > 0 && !charged {
			t.Errorf("record %s charges %d, but no debit of it was seen", id, m.Charge.Minor)
		}
		if wasUnknown(m) && !standing[id] && !reportedFailed[id] {
			t.Errorf("message %s had an unknown outcome but is not charged", id)
		}
		if m.IdempotencyKey == "" || m.State == record.StateFailed || !standing[id] {
			continue
		}
		sent := byKey[m.IdempotencyKey]
		if sent == nil {
			sent = map[notify.Kind]string{}
			byKey[m.IdempotencyKey] = sent
		}
		if prev, dup := sent[m.Kind]; dup {
			t.Errorf("key %s charged twice for %s: %s and %s", m.IdempotencyKey, m.Kind, prev, id)
		}
		sent[m.Kind] = id
	}
}

// wasUnknown reports whether m's outcome is, or ever was, unknown: such a
// charge must stand whatever the record went on to.
func wasUnknown(m *record.Message) bool {
	unknown := m.State == record.StateUnknown
	for _, c := range m.History {
		unknown = unknown || c.State == record.StateUnknown
	}
	return unknown
}

// tally counts what the run's sends told their callers.
type tally struct {
	ok, failed, unknown int
	codes               map[notify.Code]int // of the errors
}

// auditOutcomes checks that what callers were told matches the money:
// an outcome_unknown error comes with an unknown receipt, any other
// error leaves no charge standing (a dual OTP's legs aside), and a
// success that sent at a cost is charged (unless a report failed it
// since). A send that crashed told nothing and is skipped.
func auditOutcomes(t *testing.T, outcomes []outcome, standing, reportedFailed map[string]bool) tally {
	t.Helper()
	n := tally{codes: map[notify.Code]int{}}
	for _, o := range outcomes {
		if o.crashed {
			continue // it told its caller nothing
		}
		if o.err != nil {
			n.failed++
			n.codes[notify.CodeOf(o.err)]++
			if notify.CodeOf(o.err) == notify.CodeOutcomeUnknown {
				n.unknown++
			}
			auditFailedOutcome(t, o, standing)
			continue
		}
		n.ok++
		legs := []*notify.Receipt{o.receipt}
		if o.receipt.Kind == otp.Kind {
			legs = o.receipt.Legs
		}
		for _, leg := range legs {
			if leg.Status == record.StateSent && leg.Cost.Minor > 0 && !standing[leg.MessageID] && !reportedFailed[leg.MessageID] {
				t.Errorf("send of %s succeeded but is not charged", leg.MessageID)
			}
		}
	}
	return n
}

// auditFailedOutcome checks a send that returned an error: outcome_unknown
// comes with an unknown receipt (its charge stands); any other error
// leaves no charge standing, but a dual OTP's, whose legs settle apart.
func auditFailedOutcome(t *testing.T, o outcome, standing map[string]bool) {
	t.Helper()
	if notify.CodeOf(o.err) == notify.CodeOutcomeUnknown {
		if o.receipt == nil || o.receipt.Status != record.StateUnknown {
			t.Errorf("outcome_unknown (%v) without an unknown receipt: %+v", o.err, o.receipt)
		}
		return
	}
	if o.receipt != nil && o.receipt.Kind != otp.Kind && standing[o.receipt.MessageID] {
		t.Errorf("send failed (%v) but message %s stays charged", o.err, o.receipt.MessageID)
	}
}
