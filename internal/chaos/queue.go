package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// How an op goes out.
const (
	modeSend    = iota // Notifier.Send
	modeEnqueue        // queued.Sender.Enqueue
	modeSendAt         // queued.Sender.SendAt, a little ahead
)

// planQueue picks, with a stream of its own (so that a run without a
// queue plans exactly what it did before), about a third of the SMS,
// chat and e-mail single sends to go through Enqueue or SendAt (a few
// milliseconds ahead, so that they come due during the run), and about
// one in four of those to be canceled at a random moment after they were
// queued, racing the workers.
func planQueue(seed [32]byte, ops []*op) {
	r := rand.New(rand.NewPCG(uint64(seed[4]), 11))
	seen := map[*op]bool{}
	for _, o := range ops {
		if seen[o] || o.req == nil {
			continue // a repeat goes as its first did; a dual OTP is never queued
		}
		seen[o] = true
		if r.IntN(3) != 0 {
			continue
		}
		o.mode = modeEnqueue
		if r.IntN(2) == 0 {
			o.mode = modeSendAt
			o.after = time.Duration(r.IntN(30_000)) * time.Microsecond
		}
		if r.IntN(4) == 0 {
			o.cancelQ = true
			// From at once to about 1.5 s later: before its worker,
			// racing it, after it.
			o.cancelAfter = time.Duration(r.IntN(3_000)) * time.Microsecond << r.IntN(10)
			// A quarter of them once a worker has had it: a Cancel that
			// comes too late is then in every run, however fast or slow
			// (-race, a busy machine) the workers take their jobs.
			o.cancelTaken = r.IntN(4) == 0
		}
	}
}

// workerKey marks the context of a worker's Work: only there may the
// audit ledger crash a queued send or fail its refund (a Cancel, in its
// caller's goroutine, is left alone: its caller is not a worker a crash
// would kill, and a Cancel refused by a ledger down leaves a queued
// record that a worker then sends).
type workerKey struct{}

func inWorker(ctx context.Context) bool { return ctx.Value(workerKey{}) != nil }

// errCrashed is what the crash worker answers the queue for a Work that
// stopped dead: the queue runs the job again later, which must find the
// record taken and leave it to the reconciler, as a queue would after a
// worker process died (River rescues the job, memqueue retries it).
var errCrashed = errors.New("chaos: the worker died mid-send")

// crashWorker is the queue.Worker of the run: it runs the queue side's Work (queued.Sender)
// on a goroutine of its own, so that a send the audit ledger crashes
// (runtime.Goexit) ends only that goroutine, not the queue's.
type crashWorker struct {
	n *queued.Sender
	// worked hears of every Work of a message that returned or crashed.
	worked *worked
	// ran counts the jobs the queue ran (not the drain's), crashed the
	// Works that stopped dead.
	ran, crashed atomic.Int64
}

type drainKey struct{}

func (c *crashWorker) Work(ctx context.Context, job queue.Job) (time.Time, error) {
	if ctx.Value(drainKey{}) == nil {
		c.ran.Add(1)
	}
	ctx = context.WithValue(ctx, workerKey{}, true)
	var retry time.Time
	var err error
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		retry, err = c.n.Work(ctx, job)
		returned = true
	}()
	<-done
	c.worked.done(job.Message)
	if !returned {
		c.crashed.Add(1)
		return time.Time{}, errCrashed
	}
	return retry, err
}

// worked tells, per message, that a worker's Work of it has returned
// (or crashed): a channel closed then, made by whichever side asks first.
type worked struct {
	mu sync.Mutex
	by map[string]chan struct{}
}

// of returns the channel of message id.
func (w *worked) of(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = make(map[string]chan struct{})
	}
	c, ok := w.by[id]
	if !ok {
		c = make(chan struct{})
		w.by[id] = c
	}
	return c
}

// done closes the channel of message id, once.
func (w *worked) done(id string) {
	c := w.of(id)
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// auditQueue notes, in the audit ledger, what a queue's Open opened: a
// queue whose records go through the audit ledger (memqueue, given it)
// is seen by auditLedger.Open already; one that opens them in a
// transaction of its own (pgqueue, through pgstore's OpenTx, which no
// Ledger method sees) is noted here, from what Open was asked and
// answered: on success its record holds the charge it was given, debited
// in the same transaction. An Open that failed may have committed
// anyway (an answer lost): the audit reads such a record back and counts
// its charge then (resolveUncertain), since the record and its debit
// commit together or not at all; the ledger identity then checks that
// the wallet agrees.
type auditQueue struct {
	queue.Queue
	a *auditLedger
}

func (q *auditQueue) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	id, charge, request := m.ID, m.Charge, m.Request
	q.a.mu.Lock()
	q.a.queued[id] = true
	if q.a.r.IntN(10) == 0 {
		// Every vendor refuses its calls for a while: its first take (3
		// attempts, over two vendors at most) fails for certain, for a
		// reason that may pass, and the worker puts it back on the queue.
		q.a.down.pick(id, 6)
	}
	q.a.mu.Unlock()
	b, err := q.Queue.Open(ctx, m)
	q.a.mu.Lock()
	seen := q.a.seen[id]
	if !seen && err != nil {
		q.a.uncertain = append(q.a.uncertain, id)
	}
	q.a.mu.Unlock()
	if !seen {
		q.a.noteOpen(id, charge, request, b, err)
	}
	return b, err
}

func (q *auditQueue) OpenTx(context.Context, any, *record.Message) (record.Balance, error) {
	return record.Balance{}, errors.New("chaos: the run opens no queued send in a transaction")
}

// resolveUncertain counts the debit of every queued record whose Open
// failed, as far as the ledger has it: such a record was written with its
// debit, in one transaction, which committed although its answer was
// lost.
func (a *auditLedger) resolveUncertain(t *testing.T, s Stores) {
	t.Helper()
	a.mu.Lock()
	ids := slices.Clone(a.uncertain)
	a.mu.Unlock()
	for _, id := range ids {
		m, err := s.Ledger.Message(context.Background(), s.Account, id)
		if notify.CodeOf(err) == notify.CodeNotFound {
			continue
		}
		if err != nil {
			t.Errorf("record %s: %v", id, err)
			continue
		}
		a.w.mu.Lock()
		_, known := a.w.debits[id]
		a.w.mu.Unlock()
		if !known && m.Charge.Minor > 0 {
			a.w.note(a.w.debits, id, m.Charge, record.Balance{}, nil)
		}
	}
}

// queuedIDs returns the records the queue was asked to open.
func (a *auditLedger) queuedIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.queued))
	for id := range a.queued {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (a *auditLedger) isQueued(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.queued[id]
}

// vendorDown makes every vendor refuse the messages it picked
// (CodeUnavailable, certain and temporary), for so many calls each.
type vendorDown struct {
	mu    sync.Mutex
	calls map[string]int
}

func (d *vendorDown) pick(id string, calls int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[id] = calls
}

func (d *vendorDown) refuses(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return spend(d.calls, id)
}

// cancelResult is what a Cancel answered.
type cancelResult struct {
	id      string
	receipt *notify.Receipt
	err     error
}

// canceler cancels queued sends at random moments, on goroutines of its
// own, racing the workers.
type canceler struct {
	n       *queued.Sender
	account string
	worked  *worked
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []cancelResult
}

// cancel cancels message id after a while, or, when taken, once a
// worker's Work of it returned (at most a minute: a job the run never
// gets to is canceled then).
func (c *canceler) cancel(id string, after time.Duration, taken bool) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if taken {
			select {
			case <-c.worked.of(id):
			case <-time.After(time.Minute):
			}
		} else {
			time.Sleep(after)
		}
		r, err := c.n.Cancel(context.Background(), c.account, id)
		c.mu.Lock()
		c.results = append(c.results, cancelResult{id: id, receipt: r, err: err})
		c.mu.Unlock()
	}()
}

// drain runs, with w, every queued record the queue was asked to open
// that is still queued or scheduled, until none is, while the queue's own
// Run may still be running them too (Work is safe to run more than once
// for one job, concurrently): the retries a worker asked for wait 30
// seconds and more, which the run does not wait for. It gives up after
// timeout.
func drain(t *testing.T, s Stores, w queue.Worker, msgs *auditLedger, timeout time.Duration) (rounds, ran int) {
	t.Helper()
	ctx := context.WithValue(context.Background(), drainKey{}, true)
	deadline := time.Now().Add(timeout)
	ids := msgs.queuedIDs()
	for rounds = 1; ; rounds++ {
		due, waiting := dueJobs(ctx, t, s, ids)
		if waiting == 0 {
			return rounds, ran
		}
		if time.Now().After(deadline) {
			t.Errorf("%d queued sends still wait after %v of draining", waiting, timeout)
			return rounds, ran
		}
		workAll(ctx, w, due)
		ran += len(due)
		time.Sleep(5 * time.Millisecond)
	}
}

// dueJobs reads the records of ids and returns the jobs of those that
// wait and are due (a scheduled send whose time has not come is not), and
// how many wait, due or not.
func dueJobs(ctx context.Context, t *testing.T, s Stores, ids []string) (due []queue.Job, waiting int) {
	t.Helper()
	for _, id := range ids {
		m, err := s.Ledger.Message(ctx, s.Account, id)
		if notify.CodeOf(err) == notify.CodeNotFound {
			continue // its Open failed and wrote nothing
		}
		if err != nil {
			t.Errorf("record %s: %v", id, err)
			continue
		}
		if !m.State.Waiting() {
			continue
		}
		waiting++
		if m.State == record.StateScheduled && time.Now().Before(m.SendAt) {
			continue
		}
		due = append(due, queue.Job{Account: m.Account, Message: m.ID, At: m.SendAt})
	}
	return due, waiting
}

// workAll runs every job of due with w, from 8 goroutines at once, as a
// second worker would alongside the queue's own, and returns once all
// are done. What Work answers is dropped: a retry it asks for comes with
// the drain's next round.
func workAll(ctx context.Context, w queue.Worker, due []queue.Job) {
	concurrently(8, len(due), func(i int) {
		_, _ = w.Work(ctx, due[i]) // a retry it asks for comes with the next round
	})
}

// concurrently calls fn(i) for every i below n, from workers goroutines
// at once, each taking the next i, and returns once all calls are done.
func concurrently(workers, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// auditQueued holds the queued sends to what their callers were told:
// a queued or scheduled receipt is a charge that ends sent (or further),
// unknown, or failed and refunded once; a canceled send failed from
// queued or scheduled, refunded once, and never reached a vendor; a
// Cancel that lost found the record taken by a worker, or canceled by
// another Cancel. No record the queue opened is left queued or scheduled.
func auditQueued(t *testing.T, s Stores, w *books, msgs *auditLedger, outcomes []outcome, cancels []cancelResult,
	providers []*memprovider.Provider, reportedFailed map[string]bool) {
	t.Helper()
	vendor := map[string]string{}
	for _, p := range providers {
		for _, env := range p.Sent() {
			vendor[env.ID] = p.Name()
		}
	}
	// The books stay locked through the audit: refundedOnce reads them.
	w.mu.Lock()
	defer w.mu.Unlock()

	ended := auditQueuedEnds(t, s, msgs)
	queued := auditQueuedReceipts(t, s, w, outcomes, reportedFailed)
	canceled, lost := auditCancels(t, s, w, cancels, vendor)
	t.Logf("queue: %d queued receipts, ending %v (failed: %v; %d retried later by a worker); %d canceled, %d Cancels lost to a worker",
		queued, ended.byState, ended.failedBy, ended.requeued, canceled, lost)
	if queued == 0 || canceled == 0 || lost == 0 || ended.requeued == 0 ||
		ended.byState[record.StateSent]+ended.byState[record.StateDelivered]+ended.byState[record.StateRead] == 0 {
		t.Errorf("the run did not exercise the queue: %d queued, %d canceled, %d Cancels lost to a worker, %d retried later, ending %v",
			queued, canceled, lost, ended.requeued, ended.byState)
	}
}

// queuedEnds is how the records the queue opened ended.
type queuedEnds struct {
	byState  map[record.State]int
	failedBy map[string]int // the failed, by error code
	requeued int            // put back on the queue by a worker at least once
}

// auditQueuedEnds checks that no record the queue opened waits still,
// and counts how they ended.
func auditQueuedEnds(t *testing.T, s Stores, msgs *auditLedger) queuedEnds {
	t.Helper()
	e := queuedEnds{byState: map[record.State]int{}, failedBy: map[string]int{}}
	for _, id := range msgs.queuedIDs() {
		m, err := s.Ledger.Message(context.Background(), s.Account, id)
		if notify.CodeOf(err) == notify.CodeNotFound {
			continue
		}
		if err != nil {
			t.Errorf("queued message %s: %v", id, err)
			continue
		}
		e.byState[m.State]++
		if m.State == record.StateFailed {
			e.failedBy[m.ErrorCode]++
		}
		if m.State.Waiting() {
			t.Errorf("queued message %s is still %s at the end of the run", id, m.State)
		}
		if requeued(m) {
			e.requeued++
		}
	}
	return e
}

// requeued reports whether m went back to queued after it began: a
// worker put it back on the queue.
func requeued(m *record.Message) bool {
	for i, c := range m.History {
		if i > 0 && c.State == record.StateQueued {
			return true
		}
	}
	return false
}

// queuedRecord reads the record of the queued message id, failing t (and
// returning nil) if it cannot.
func queuedRecord(t *testing.T, s Stores, id string) *record.Message {
	t.Helper()
	m, err := s.Ledger.Message(context.Background(), s.Account, id)
	if err != nil {
		t.Errorf("queued message %s: %v", id, err)
		return nil
	}
	return m
}

// refundedOnce reports whether m was refunded, exactly once, what its
// charge kept after any price adjustment. The caller holds w.mu.
func (w *books) refundedOnce(m *record.Message) bool {
	credit, ok := w.credits[store.RefundRefPrefix+m.ID]
	return ok && m.Refunded && credit == w.debits[m.ID]-w.credits[store.AdjustRefPrefix+m.ID]
}

// auditQueuedReceipts checks that every queued or scheduled receipt (from
// Enqueue or SendAt, never Send) is a charge, which ends sent, unknown,
// or failed and refunded exactly once (or kept, when a report failed an
// SMS). It returns how many receipts were queued. The caller holds w.mu.
func auditQueuedReceipts(t *testing.T, s Stores, w *books, outcomes []outcome, reportedFailed map[string]bool) (queued int) {
	t.Helper()
	for _, o := range outcomes {
		if o.crashed || o.err != nil || o.receipt == nil || !o.receipt.Status.Waiting() {
			continue
		}
		queued++
		id := o.receipt.MessageID
		if o.op.mode == modeSend {
			t.Errorf("Send answered %s with a %s receipt", id, o.receipt.Status)
		}
		if o.receipt.Cost.Minor <= 0 {
			t.Errorf("queued message %s costs nothing: %+v", id, o.receipt.Cost)
			continue
		}
		if _, ok := w.debits[id]; !ok {
			t.Errorf("queued message %s was not seen charged", id)
		}
		if m := queuedRecord(t, s, id); m != nil {
			auditQueuedEnd(t, w, id, m, reportedFailed[id])
		}
	}
	return queued
}

// auditQueuedEnd checks where m, the record of the queued receipt of id,
// ended: sent (or further) or unknown, its charge kept, or failed and
// refunded exactly once, unless a report failed it (reported) and the
// charge was kept. The caller holds w.mu.
func auditQueuedEnd(t *testing.T, w *books, id string, m *record.Message, reported bool) {
	t.Helper()
	switch m.State {
	case record.StateSent, record.StateDelivered, record.StateRead, record.StateUnknown:
		if m.Refunded {
			t.Errorf("queued message %s is %s but refunded", id, m.State)
		}
	case record.StateFailed:
		if !w.refundedOnce(m) && !(reported && !m.Refunded) {
			t.Errorf("queued message %s failed (%s) but was not refunded once: refunded %v, credit %d, charge %d",
				id, m.ErrorCode, m.Refunded, w.credits[store.RefundRefPrefix+id], w.debits[id])
		}
	default:
		t.Errorf("queued message %s ended %s", id, m.State)
	}
}

// auditCancels checks every Cancel: a canceled send failed, refunded
// once, and no vendor (vendor maps a message to the one that took it) saw
// it; a Cancel that lost found the record taken or canceled already. It
// returns how many Cancels canceled and how many lost to a worker. The
// caller holds w.mu.
func auditCancels(t *testing.T, s Stores, w *books, cancels []cancelResult, vendor map[string]string) (canceled, lost int) {
	t.Helper()
	for _, c := range cancels {
		m := queuedRecord(t, s, c.id)
		if m == nil {
			continue
		}
		if c.err != nil {
			if auditLostCancel(t, c, m) {
				lost++
			}
			continue
		}
		canceled++
		auditCanceled(t, w, c, m, vendor)
	}
	return canceled, lost
}

// auditLostCancel checks a Cancel that failed: only for a conflict, with
// the record m taken by a worker (it reports true: the Cancel lost to
// it) or canceled already, by another Cancel.
func auditLostCancel(t *testing.T, c cancelResult, m *record.Message) (lost bool) {
	t.Helper()
	if notify.CodeOf(c.err) != notify.CodeConflict {
		t.Errorf("Cancel of %s: %v", c.id, c.err)
		return false
	}
	taken := slices.ContainsFunc(m.History, func(s record.StateChange) bool { return s.State == record.StateAttempting })
	switch {
	case taken:
		return true
	case m.ErrorCode != string(notify.CodeCanceled):
		t.Errorf("Cancel of %s conflicted, but no worker took it and it was not canceled: %s %v", c.id, m.State, m.History)
	}
	return false
}

// auditCanceled checks a Cancel that succeeded: it answered a failed
// receipt, and the record m failed as canceled, refunded once, reached no
// vendor, and was waiting when it was canceled. The caller holds w.mu.
func auditCanceled(t *testing.T, w *books, c cancelResult, m *record.Message, vendor map[string]string) {
	t.Helper()
	switch {
	case c.receipt == nil || c.receipt.Status != record.StateFailed:
		t.Errorf("Cancel of %s answered %+v", c.id, c.receipt)
	case m.State != record.StateFailed || m.ErrorCode != string(notify.CodeCanceled):
		t.Errorf("canceled message %s is %s (%s)", c.id, m.State, m.ErrorCode)
	case !w.refundedOnce(m):
		t.Errorf("canceled message %s was not refunded once: refunded %v, credit %d, charge %d",
			c.id, m.Refunded, w.credits[store.RefundRefPrefix+c.id], w.debits[c.id])
	case vendor[c.id] != "":
		t.Errorf("canceled message %s reached %s", c.id, vendor[c.id])
	case len(m.History) < 2 || !m.History[len(m.History)-2].State.Waiting():
		// A worker may have taken it before, and put it back on the
		// queue after a certain refusal: a Cancel may stop it then.
		t.Errorf("canceled message %s was not waiting when it was canceled: %v", c.id, m.History)
	}
}

// runQueue starts q's Run with w, and returns what stops it and waits for
// it to return.
func runQueue(t *testing.T, q queue.Queue, w queue.Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, w) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("queue Run: %v", err)
		}
	}
}
