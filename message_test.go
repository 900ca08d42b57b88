package notify_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// recordRig is a Notifier with a clock of its own, and what a second instance
// needs to share its stores (the same database, after a crash).
type recordRig struct {
	acme
	accounts *memstore.Accounts
	messages store.Ledger
	idem     *memstore.Idempotency
	clock    *testclock.Clock
	sms      *memprovider.Provider
	chat     *memprovider.Provider
	events   *eventLog
	// options are added to every instance's.
	options []notify.Option
}

const settleAfter = time.Minute

func newRecordRig(t *testing.T, wrap func(store.Ledger) store.Ledger) *recordRig {
	t.Helper()
	r := &recordRig{
		acme:     newAcme(t),
		accounts: memstore.NewAccounts(),
		clock:    testclock.New(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)),
		sms:      memprovider.New("memsms"),
		chat:     memprovider.New("memchat"),
	}
	if err := r.accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	r.messages = memstore.NewLedger(r.wallet)
	if wrap != nil {
		r.messages = wrap(r.messages)
	}
	r.idem = memstore.NewIdempotency(time.Hour, memstore.WithClock(r.clock.Now), memstore.WithLease(settleAfter))
	r.n = r.instance(t)
	return r
}

// instance returns a Notifier over the rig's stores: the first one, or
// one started after another died.
func (r *recordRig) instance(t *testing.T) *notify.Notifier {
	t.Helper()
	r.events = &eventLog{}
	n, err := notify.New(r.accounts, r.messages, append([]notify.Option{
		notify.WithChannel(&testChannel{kind: sms.Kind, provider: r.sms}),
		notify.WithChannel(&testChannel{kind: chat.Kind, provider: r.chat}),
		notify.WithPrices(flatPricer{}),
		notify.WithIdempotency(r.idem),
		notify.WithSettleAfter(settleAfter),
		notify.WithClock(r.clock.Now),
		notify.WithObserver(r.events),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
	}, r.options...)...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func states(m *record.Message) []record.State {
	var out []record.State
	for _, h := range m.History {
		out = append(out, h.State)
	}
	return out
}

func wantStates(t *testing.T, m *record.Message, want ...record.State) {
	t.Helper()
	got := states(m)
	if len(got) != len(want) {
		t.Fatalf("history of %s = %v, want %v", m.ID, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("history of %s = %v, want %v", m.ID, got, want)
		}
	}
	if m.State != want[len(want)-1] {
		t.Fatalf("state of %s = %s, want %s", m.ID, m.State, want[len(want)-1])
	}
}

func TestRecordOfEachOutcome(t *testing.T) {
	r := newRecordRig(t, nil)
	ctx := context.Background()

	sent, err := r.n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hello", Domain: "shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	m := r.message(t, sent.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateSent)
	if m.ProviderMessageID != sent.ProviderMessageID || m.Provider != "memsms" || m.Cost().Minor != 25 ||
		m.Charge.Minor != 25 || !m.Metered || m.Attempts != 1 || m.Domain != "shop.example" || m.To != "9876543210" {
		t.Fatalf("record of a sent message = %+v", m)
	}

	r.sms.FailNext(1, notify.CodeRejected)
	failed, err := r.n.Send(ctx, smsReq("refused"))
	if notify.CodeOf(err) != notify.CodeRejected || failed == nil {
		t.Fatalf("refused send = %+v, %v", failed, err)
	}
	m = r.message(t, failed.MessageID)
	// Back to pending once the refusal came (nothing in flight), then failed.
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StatePending, record.StateFailed)
	if m.Cost().Minor != 0 || notify.Code(m.ErrorCode) != notify.CodeRejected || failed.Balance.Minor != opening-25 {
		t.Fatalf("record of a refused message = %+v; receipt %+v", m, failed)
	}

	r.sms.FailNext(1, notify.CodeOutcomeUnknown)
	unknown, err := r.n.Send(ctx, smsReq("lost answer"))
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("lost answer: %v", err)
	}
	m = r.message(t, unknown.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown)
	if m.Cost().Minor != 25 || notify.Code(m.ErrorCode) != notify.CodeOutcomeUnknown {
		t.Fatalf("record of an unknown outcome = %+v", m)
	}
	if got := r.balance(t); got != opening-50 {
		t.Fatalf("balance = %d, want %d (sent and unknown charged, refused refunded)", got, opening-50)
	}

	// Records belong to their account.
	if err := r.accounts.Add(&notify.Account{ID: "other", Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.n.Message(ctx, "other", sent.MessageID); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("another account's message: %v, want NotFound", err)
	}
	if _, err := r.n.Message(ctx, "acme", "no-such-id"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("a missing message: %v, want NotFound", err)
	}
}

// blockingVendor takes the first message, tells the test, and answers
// only when released: a process that dies while it waits never hears
// back. Later messages are counted and answered at once.
type blockingVendor struct {
	took    chan *notify.Envelope
	release chan struct{}
	calls   atomic.Int32 // every call, answered or not
}

func newBlockingVendor(t *testing.T, p *memprovider.Provider) *blockingVendor {
	v := &blockingVendor{took: make(chan *notify.Envelope, 16), release: make(chan struct{})}
	p.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		if v.calls.Add(1) > 1 {
			return &notify.Result{}, nil // a second send: counted, so the test fails rather than hangs
		}
		v.took <- env
		<-v.release
		return &notify.Result{}, nil
	})
	return v
}

// crashDuringVendorCall starts a send (of a Composite or Bulk request:
// its first SMS) that the vendor takes and never answers, and returns once
// the vendor has it: from then on the sending instance is as good as dead.
func crashDuringVendorCall(t *testing.T, r *recordRig, req notify.Request) (*notify.Envelope, *blockingVendor) {
	t.Helper()
	v := newBlockingVendor(t, r.sms)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.n.Send(context.Background(), req)
	}()
	t.Cleanup(func() { close(v.release); <-done })
	select {
	case env := <-v.took:
		return env, v
	case <-time.After(10 * time.Second):
		t.Fatal("the vendor never got the message")
		return nil, nil
	}
}

func TestReconcileSettlesACrashDuringTheVendorCall(t *testing.T) {
	r := newRecordRig(t, nil)
	req := smsReq("hello")
	req.IdempotencyKey = "order-1"
	env, vendor := crashDuringVendorCall(t, r, req)
	if got := r.balance(t); got != opening-25 {
		t.Fatalf("balance while the vendor has it = %d", got)
	}

	// A restarted instance: before the threshold nothing is settled.
	n2 := r.instance(t)
	ctx := context.Background()
	if res, err := n2.Reconcile(ctx); err != nil || res != (notify.ReconcileResult{}) {
		t.Fatalf("Reconcile before the threshold = %+v, %v", res, err)
	}
	r.clock.Advance(settleAfter + time.Second)
	res, err := n2.Reconcile(ctx)
	if err != nil || res != (notify.ReconcileResult{Unknown: 1}) {
		t.Fatalf("Reconcile = %+v, %v; want one unknown", res, err)
	}
	m := r.message(t, env.ID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown)
	if m.Cost().Minor != 25 || r.balance(t) != opening-25 {
		t.Fatalf("an unknown message must keep its charge: record %+v, balance %d", m, r.balance(t))
	}
	if got := r.events.String(); got != "otp:unknown" {
		t.Fatalf("events of the reconciler = %q", got)
	}
	// Exactly once: a second pass finds nothing.
	if res, err := n2.Reconcile(ctx); err != nil || res != (notify.ReconcileResult{}) {
		t.Fatalf("second Reconcile = %+v, %v", res, err)
	}
	// A repeat of the key gets the record's receipt: no 409, no second send.
	again, err := n2.Send(ctx, req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again == nil || again.MessageID != env.ID {
		t.Fatalf("repeat after reconciling = %+v, %v; want message %s, unknown", again, err, env.ID)
	}
	if got := vendor.calls.Load(); got != 1 {
		t.Fatalf("the vendor got %d messages, want 1", got)
	}
}

func TestRepeatAfterTheLeaseSettlesTheAbandonedSend(t *testing.T) {
	r := newRecordRig(t, nil)
	req := smsReq("hello")
	req.IdempotencyKey = "order-2"
	env, vendor := crashDuringVendorCall(t, r, req)
	n2 := r.instance(t)
	ctx := context.Background()

	// Within the lease the key is in flight.
	if _, err := n2.Send(ctx, req); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("repeat within the lease: %v, want Conflict", err)
	}
	// After it, the repeat settles what the dead holder left, without
	// waiting for a reconciler, and answers with it.
	r.clock.Advance(settleAfter + time.Second)
	again, err := n2.Send(ctx, req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again == nil || again.MessageID != env.ID {
		t.Fatalf("repeat after the lease = %+v, %v; want message %s, unknown", again, err, env.ID)
	}
	if got := vendor.calls.Load(); got != 1 {
		t.Fatalf("the vendor got %d messages, want 1", got)
	}
	wantStates(t, r.message(t, env.ID), record.StatePending, record.StateAttempting, record.StateUnknown)
	// The key is completed: the next repeat is a plain replay.
	if third, err := n2.Send(ctx, req); notify.CodeOf(err) != notify.CodeOutcomeUnknown || third.MessageID != env.ID {
		t.Fatalf("third repeat = %+v, %v", third, err)
	}
	if res, err := n2.Reconcile(ctx); err != nil || res != (notify.ReconcileResult{}) {
		t.Fatalf("Reconcile after the repeat settled it = %+v, %v", res, err)
	}
}

// lostOpen writes the record and its charge, then loses the answer; while
// failMoves is set, moves into failed fail too (the store unreachable for
// the refund's step), and moves are told on moved.
type lostOpen struct {
	store.Ledger
	failMoves atomic.Bool
	failed    chan struct{} // a move into failed landed
	once      sync.Once
}

func newLostOpen(failMoves bool) *lostOpen {
	l := &lostOpen{failed: make(chan struct{})}
	l.failMoves.Store(failMoves)
	return l
}

func (s *lostOpen) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if _, err := s.Ledger.Open(ctx, m); err != nil {
		return record.Balance{}, err
	}
	return record.Balance{}, notify.Errorf(notify.CodeUnavailable, "connection reset")
}

// OpenUnlisted goes through Open, as a wrapper's must.
func (s *lostOpen) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	return storeutil.OpenUnlisted(ctx, s, m, to, stopping)
}

func (s *lostOpen) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State == record.StateFailed && s.failMoves.Load() {
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "connection reset")
	}
	m, err := s.Ledger.Move(ctx, account, id, u)
	if err == nil && u.State == record.StateFailed {
		s.once.Do(func() { close(s.failed) })
	}
	return m, err
}

// TestUncertainChargeIsNeverKept: the store wrote a record and its charge
// but the answer was lost. The vendor is never called, and the charge is
// refunded: at once when the store answers, else once it answers again
// (retried in the background), and a reconciler after the threshold finds
// nothing left.
func TestUncertainChargeIsNeverKept(t *testing.T) {
	for _, failMoves := range []bool{false, true} {
		lost := newLostOpen(failMoves)
		r := newRecordRig(t, func(s store.Ledger) store.Ledger {
			lost.Ledger = s
			return lost
		})
		rc, err := r.n.Send(context.Background(), smsReq("hello"))
		var se *notify.StoreError
		if rc != nil || !errors.As(err, &se) || notify.CodeOf(err) != notify.CodeUnavailable {
			t.Fatalf("failMoves=%v: send with a lost Open = %+v, %v", failMoves, rc, err)
		}
		if r.sms.Len() != 0 {
			t.Fatal("the vendor was called after an uncertain charge")
		}
		want := int64(opening)
		if failMoves {
			want -= 25 // held until the store takes the refund
		}
		if got := r.balance(t); got != want {
			t.Fatalf("failMoves=%v: balance = %d, want %d", failMoves, got, want)
		}
		if failMoves {
			lost.failMoves.Store(false) // the database is back
			select {
			case <-lost.failed:
			case <-time.After(10 * time.Second):
				t.Fatal("the refund was not written within 10s of the store coming back")
			}
			if got := r.balance(t); got != opening {
				t.Fatalf("balance after the store came back = %d", got)
			}
		}
		r.clock.Advance(settleAfter + time.Second)
		if res, err := r.instance(t).Reconcile(context.Background()); err != nil || res != (notify.ReconcileResult{}) {
			t.Fatalf("failMoves=%v: Reconcile = %+v, %v; want nothing left", failMoves, res, err)
		}
	}
}

// TestReconcileRefundsALostOpeningAfterACrash: the record and its charge
// were written, the answer was lost, and the refund's step failed; the
// process dies before the store takes it. The step back to pending, which
// the store did take, is the durable mark that the vendor was never
// called: the reconciler refunds the record rather than keeping its charge
// as unknown.
func TestReconcileRefundsALostOpeningAfterACrash(t *testing.T) {
	lost := newLostOpen(true)
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		lost.Ledger = s
		return lost
	})
	if _, err := r.n.Send(context.Background(), smsReq("hello")); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("send with a lost Open: %v", err)
	}
	if r.balance(t) != opening-25 || r.sms.Len() != 0 {
		t.Fatalf("balance %d, vendor got %d; want the charge held and no send", r.balance(t), r.sms.Len())
	}
	// The process is gone: its late refund never lands (its ledger keeps
	// failing). Another instance's reconciler, after the threshold, on
	// the store that is back.
	r.messages = lost.Ledger
	n2 := r.instance(t)
	r.clock.Advance(settleAfter + time.Second)
	res, err := n2.Reconcile(context.Background())
	if err != nil || res.Refunded != 1 || res.Unknown != 0 {
		t.Fatalf("Reconcile = %+v, %v; want one refund", res, err)
	}
	if r.balance(t) != opening {
		t.Fatalf("balance = %d: a message never sent must be refunded", r.balance(t))
	}
}

// TestRefusalAfterTheReconcilerIsRefunded: a send so slow that a
// reconciler took it for dead and settled it as unknown, and then
// certainly refused by its vendor, is refunded after all (unknown ->
// failed): no money is kept for a message the vendor refused.
func TestRefusalAfterTheReconcilerIsRefunded(t *testing.T) {
	r := newRecordRig(t, nil)
	took, release := make(chan struct{}), make(chan struct{})
	r.sms.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		close(took)
		<-release
		return nil, notify.Errorf(notify.CodeRejected, "number blocked")
	})
	type answer struct {
		rc  *notify.Receipt
		err error
	}
	done := make(chan answer, 1)
	go func() {
		rc, err := r.n.Send(context.Background(), smsReq("hello"))
		done <- answer{rc, err}
	}()
	<-took
	r.clock.Advance(settleAfter + time.Second)
	if res, err := r.instance(t).Reconcile(context.Background()); err != nil || res.Unknown != 1 {
		t.Fatalf("Reconcile = %+v, %v", res, err)
	}
	close(release)
	a := <-done
	if notify.CodeOf(a.err) != notify.CodeRejected || a.rc.Status != record.StateFailed || a.rc.Cost.Minor != 0 {
		t.Fatalf("refusal after reconciling = %+v, %v; want failed, refunded", a.rc, a.err)
	}
	m := r.message(t, a.rc.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown, record.StateFailed)
	if r.balance(t) != opening {
		t.Fatalf("balance %d, want %d", r.balance(t), opening)
	}
}

// storeDownAtRefund is a Ledger that cannot be reached while down
// is set, for moves into failed: a database that goes away just as a
// refusal is to be refunded. landed is closed by the first move into
// failed that gets through.
type storeDownAtRefund struct {
	store.Ledger
	down   atomic.Bool
	failed atomic.Int32 // moves into failed refused while down
	landed chan struct{}
	once   sync.Once
}

func newStoreDownAtRefund() *storeDownAtRefund {
	s := &storeDownAtRefund{landed: make(chan struct{})}
	s.down.Store(true)
	return s
}

func (s *storeDownAtRefund) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State != record.StateFailed {
		return s.Ledger.Move(ctx, account, id, u)
	}
	if s.down.Load() {
		s.failed.Add(1)
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	m, err := s.Ledger.Move(ctx, account, id, u)
	if err == nil {
		s.once.Do(func() { close(s.landed) })
	}
	return m, err
}

// TestRefusalIsRefundedThoughTheStoreFailedAtThatMoment: the vendor
// certainly refuses, and the ledger is unreachable when the
// refusal's move to failed (which refunds) is to be written. The client
// is told the truth (refused; the refund is not written yet and is being
// retried), the refund lands once the store answers again, and a
// reconciler run after the settle threshold finds nothing to settle: the
// refusal is never taken for an unknown outcome that keeps its charge.
func TestRefusalIsRefundedThoughTheStoreFailedAtThatMoment(t *testing.T) {
	down := newStoreDownAtRefund()
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		down.Ledger = s
		return down
	})
	var refunds atomic.Int64
	refundTold := make(chan struct{}, 4)
	r.options = append(r.options, notify.WithObserver(observerFunc(func(_ context.Context, e notify.Event) {
		refunds.Add(e.Refund.Minor)
		if e.Refund.Minor > 0 {
			refundTold <- struct{}{}
		}
	})))
	r.n = r.instance(t)
	r.sms.FailNext(1, notify.CodeRejected)
	ctx := context.Background()
	rc, err := r.n.Send(ctx, smsReq("hello"))
	if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed {
		t.Fatalf("send = %+v, %v; want a failed receipt, rejected", rc, err)
	}
	if down.failed.Load() == 0 {
		t.Fatal("the store was never asked to fail the record")
	}
	// At this moment the charge stands, and the answer says so, and that
	// the refund is on its way; never that someone else will see to it.
	if rc.Cost.Minor != 25 || r.balance(t) != opening-25 {
		t.Fatalf("receipt cost %d, balance %d: the refund is not written yet", rc.Cost.Minor, r.balance(t))
	}
	if msg := err.Error(); !strings.Contains(msg, "retried") || strings.Contains(msg, "reconciler") {
		t.Errorf("the client is told %q; want the refund said to be retried, not left to the reconciler", msg)
	}

	down.down.Store(false) // the database is back
	select {
	case <-down.landed:
	case <-time.After(10 * time.Second):
		t.Error("the refund was not written within 10s of the store coming back")
	}
	select { // the observers hear of it after the store took it
	case <-refundTold:
	case <-time.After(10 * time.Second):
		t.Error("the observers were not told of the refund within 10s")
	}

	// Reconciled later: nothing is left open, and the refund stands.
	r.clock.Advance(settleAfter + time.Second)
	if res, err := r.instance(t).Reconcile(ctx); err != nil || res != (notify.ReconcileResult{}) {
		t.Errorf("Reconcile after the threshold = %+v, %v; want nothing left to settle", res, err)
	}
	m := r.message(t, rc.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StatePending, record.StateFailed)
	if !m.Refunded || r.balance(t) != opening {
		t.Fatalf("record refunded %v, balance %d: a certain refusal must be refunded", m.Refunded, r.balance(t))
	}
	if notify.Code(m.ErrorCode) != notify.CodeRejected {
		t.Errorf("record error %q (%s), want the vendor's refusal", m.Error, m.ErrorCode)
	}
	if got := refunds.Load(); got != 25 {
		t.Errorf("the observers heard of %d refunded, want 25", got)
	}
}

// pendingSignal is a Ledger that says which record went back to
// pending (a send waiting to retry a certain refusal).
type pendingSignal struct {
	store.Ledger
	pending chan string
}

func (s *pendingSignal) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	m, err := s.Ledger.Move(ctx, account, id, u)
	if err == nil && u.State == record.StatePending {
		s.pending <- id
	}
	return m, err
}

// TestReconcileRefundsACrashWhileWaitingToRetry: the vendor certainly
// refused, for now, and the Notifier waits to try again; a process that
// dies in that wait leaves a record the reconciler refunds, not an
// attempting one whose charge it would keep.
func TestReconcileRefundsACrashWhileWaitingToRetry(t *testing.T) {
	signal := &pendingSignal{pending: make(chan string, 4)}
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		signal.Ledger = s
		return signal
	})
	// One refusal, then a wait of 10-20s before the second attempt: the
	// "crash" comes in that wait.
	r.options = []notify.Option{notify.WithRetry(notify.RetryPolicy{MaxAttempts: 2, BaseDelay: 20 * time.Second, MaxDelay: 20 * time.Second}),
		notify.WithTimeout(5 * time.Second)}
	r.n = r.instance(t)
	r.sms.FailNext(1, notify.CodeUnavailable)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.n.Send(ctx, smsReq("hello"))
		done <- err
	}()
	var id string
	select {
	case id = <-signal.pending:
	case <-time.After(10 * time.Second):
		t.Fatal("the record never went back to pending for the wait")
	}
	if m := r.message(t, id); m.State != record.StatePending || r.balance(t) != opening-25 {
		t.Fatalf("while waiting: %s, balance %d", m.State, r.balance(t))
	}

	// The process "dies": another instance reconciles once the record is
	// stale, and refunds it.
	n2 := r.instance(t)
	r.clock.Advance(settleAfter + time.Second)
	if res, err := n2.Reconcile(context.Background()); err != nil || res != (notify.ReconcileResult{Refunded: 1}) {
		t.Fatalf("Reconcile = %+v, %v; want one refunded", res, err)
	}
	m := r.message(t, id)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StatePending, record.StateFailed)
	if !m.Refunded || r.balance(t) != opening {
		t.Fatalf("record %+v, balance %d: a message the vendor refused must not stay charged", m, r.balance(t))
	}

	// The waiting send, woken, calls the vendor no more and refunds
	// nothing twice.
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the send woke and succeeded after its record was settled")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting send did not end with its context")
	}
	if got := r.sms.Len(); got != 0 || r.balance(t) != opening {
		t.Fatalf("the vendor took %d messages; balance %d", got, r.balance(t))
	}
}

// TestRetryWaitsPending: a send retried after a certain refusal goes
// pending for the wait and attempting again before the next call.
func TestRetryWaitsPending(t *testing.T) {
	r := newRecordRig(t, nil)
	r.options = []notify.Option{notify.WithRetry(notify.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})}
	r.n = r.instance(t)
	r.sms.FailNext(2, notify.CodeUnavailable)
	rc, err := r.n.Send(context.Background(), smsReq("hello"))
	if err != nil || rc.Attempts != 3 {
		t.Fatalf("receipt %+v, %v", rc, err)
	}
	wantStates(t, r.message(t, rc.MessageID), record.StatePending, record.StateAttempting, record.StatePending,
		record.StateAttempting, record.StatePending, record.StateAttempting, record.StateSent)
}

// refundNeverLands fails, while dead is set, every move into failed that
// carries the vendor's refusal (the send's own, and its retries in the
// background): the process that tried them died before any landed. The
// reconciler's moves get through.
type refundNeverLands struct {
	store.Ledger
	dead atomic.Bool
}

func (s *refundNeverLands) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if s.dead.Load() && u.State == record.StateFailed && notify.Code(u.ErrorCode) == notify.CodeRejected {
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "could not serialize access due to concurrent update")
	}
	return s.Ledger.Move(ctx, account, id, u)
}

// TestRefusalRefundedByTheReconcilerWhenItsProcessDied: the vendor
// certainly refuses; the store fails the refund's step, and the process
// dies before its retries land. The record was moved back to pending
// first, so the reconciler, later, refunds it: a certain refusal never
// keeps its charge for want of a process to finish it.
func TestRefusalRefundedByTheReconcilerWhenItsProcessDied(t *testing.T) {
	refusing := &refundNeverLands{}
	refusing.dead.Store(true)
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		refusing.Ledger = s
		return refusing
	})
	r.sms.FailNext(1, notify.CodeRejected)
	ctx := context.Background()
	rc, err := r.n.Send(ctx, smsReq("hello"))
	if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed || r.balance(t) != opening-25 {
		t.Fatalf("send = %+v, %v, balance %d; want a failed receipt, its refund not written yet", rc, err, r.balance(t))
	}

	// Another instance reconciles after the threshold.
	r.clock.Advance(settleAfter + time.Second)
	res, err := r.instance(t).Reconcile(ctx)
	refusing.dead.Store(false) // the dead process's retries now meet a settled record
	if err != nil || res != (notify.ReconcileResult{Refunded: 1}) {
		t.Fatalf("Reconcile = %+v, %v; want the refusal refunded", res, err)
	}
	m := r.message(t, rc.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StatePending, record.StateFailed)
	if !m.Refunded || r.balance(t) != opening {
		t.Fatalf("record %+v, balance %d: a certain refusal must be refunded", m, r.balance(t))
	}
}

// TestBulkKeyRepeatedAfterACrashAnswersTheBulkReceipt: a bulk request's
// process dies with its first recipient at the vendor. A repeat of its
// key after the lease answers the bulk receipt, from its request record:
// every recipient a leg, in order (the first unknown, the others not
// sent), never one recipient's receipt, and nothing is sent again.
func TestBulkKeyRepeatedAfterACrashAnswersTheBulkReceipt(t *testing.T) {
	r := newRecordRig(t, nil)
	req := &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale today", IdempotencyKey: "bulk-1"},
		To: []string{"9876543210", "9876543211", "9876543212"}}
	first, vendor := crashDuringVendorCall(t, r, req)

	r.clock.Advance(settleAfter + time.Second)
	n2 := r.instance(t)
	rc, err := n2.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || rc == nil {
		t.Fatalf("repeat = %+v, %v; want the bulk receipt, unknown", rc, err)
	}
	if rc.Kind != sms.Kind || rc.To != "" || len(rc.Legs) != 3 || rc.Status != record.StateUnknown {
		t.Fatalf("repeat answered %+v with %d legs; want the bulk receipt of 3 recipients", rc, len(rc.Legs))
	}
	if l := rc.Legs[0]; l.MessageID != first.ID || l.Status != record.StateUnknown || l.Cost.Minor != 25 {
		t.Errorf("leg 0 = %+v; want the message at the vendor, unknown and charged", l)
	}
	for i, l := range rc.Legs[1:] {
		if l.Status != record.StateFailed || l.MessageID != "" || l.Cost.Minor != 0 {
			t.Errorf("leg %d = %+v; want not sent", i+1, l)
		}
	}
	// Asked again, the same receipt: the key is completed with it.
	again, err := n2.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || again == nil || again.MessageID != rc.MessageID || len(again.Legs) != 3 {
		t.Fatalf("second repeat = %+v, %v; want receipt %s again", again, err, rc.MessageID)
	}
	if got := vendor.calls.Load(); got != 1 || r.balance(t) != opening-25 {
		t.Fatalf("the vendor got %d messages, balance %d; want 1, charged once", got, r.balance(t))
	}
}

// TestDualOTPKeyRepeatedAfterACrashAnswersBothLegs: a dual OTP's process
// dies with its SMS part at the vendor. A repeat of its key after the
// lease answers the dual receipt with both legs, SMS first, from its
// request record; nothing is sent again.
func TestDualOTPKeyRepeatedAfterACrashAnswersBothLegs(t *testing.T) {
	r := newRecordRig(t, nil)
	chatTook := make(chan struct{}, 1)
	r.chat.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		chatTook <- struct{}{}
		return &notify.Result{}, nil
	})
	req := &otp.Request{Account: "acme", To: "9876543210", OTP: "482913", IdempotencyKey: "otp-1"}
	first, vendor := crashDuringVendorCall(t, r, req)
	select { // the chat part went too, before the "crash"
	case <-chatTook:
	case <-time.After(10 * time.Second):
		t.Fatal("the chat part never reached its vendor")
	}

	r.clock.Advance(settleAfter + time.Second)
	n2 := r.instance(t)
	rc, err := n2.Send(context.Background(), req)
	if rc == nil || rc.Kind != otp.Kind || len(rc.Legs) != 2 {
		t.Fatalf("repeat = %+v, %v; want the dual receipt with both legs", rc, err)
	}
	if l := rc.Legs[0]; l.Kind != sms.Kind || l.MessageID != first.ID || l.Status != record.StateUnknown {
		t.Errorf("SMS leg = %+v; want the message at the vendor, unknown", l)
	}
	if l := rc.Legs[1]; l.Kind != chat.Kind || l.MessageID == "" || l.Status == "" {
		t.Errorf("chat leg = %+v; want the chat part's record", l)
	}
	if got := vendor.calls.Load(); got != 1 {
		t.Fatalf("the SMS vendor got %d messages, want 1", got)
	}
}

// ReconcileTask is Reconcile as a queue's periodic task, every half
// settle threshold.
func TestReconcileTask(t *testing.T) {
	r := newRecordRig(t, nil)
	env, _ := crashDuringVendorCall(t, r, smsReq("hello"))
	n2 := r.instance(t)
	task := queued.New(n2).ReconcileTask()
	if task.Name != "notify_reconcile" || task.Every != settleAfter/2 {
		t.Fatalf("task %q every %v, want notify_reconcile every %v", task.Name, task.Every, settleAfter/2)
	}
	r.clock.Advance(settleAfter + time.Second)
	if err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := r.message(t, env.ID); m.State != record.StateUnknown {
		t.Fatalf("after the task the record is %s, want unknown", m.State)
	}
}
