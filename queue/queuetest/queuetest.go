package queuetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// wait bounds every wait of the suite for a job to run: generous, since
// a queue on a database polls, and a failing queue only costs the wait.
const wait = 30 * time.Second

var inr = record.Currency{Code: "INR", Symbol: "₹", Exponent: 2}

// Run runs the conformance suite against the queues h makes.
func Run(t *testing.T, h Harness) {
	t.Run("OpenQueuedRunsOnce", func(t *testing.T) { testOpenQueued(t, h) })
	t.Run("OpenScheduledWaitsForItsTime", func(t *testing.T) { testOpenScheduled(t, h) })
	t.Run("OpenRefusesOtherStates", func(t *testing.T) { testOpenOtherStates(t, h) })
	t.Run("OpenShortWalletWritesNothing", func(t *testing.T) { testOpenShort(t, h) })
	t.Run("OpenTxRollbackLeavesNothing", func(t *testing.T) { testTxRollback(t, h) })
	t.Run("OpenTxCommitRunsOnce", func(t *testing.T) { testTxCommit(t, h) })
	t.Run("OpenTxForeignTx", func(t *testing.T) { testTxForeign(t, h) })
	t.Run("OpenManyAllOrNone", func(t *testing.T) { testOpenMany(t, h) })
	t.Run("RetryRunsAgainAtItsTime", func(t *testing.T) { testRetry(t, h) })
	t.Run("FailedRunRunsAgain", func(t *testing.T) { testFailedRun(t, h) })
	t.Run("ManyJobsEachClaimedOnce", func(t *testing.T) { testMany(t, h) })
	t.Run("PeriodicRuns", func(t *testing.T) { testPeriodic(t, h) })
	t.Run("RunStopsWithItsContext", func(t *testing.T) { testRunStops(t, h) })
	t.Run("RunTwiceIsAnError", func(t *testing.T) { testRunTwice(t, h) })
}

// run is one job run the worker saw.
type run struct {
	job queue.Job
	at  time.Time // the queue's clock when it ran
}

// worker claims each job's record as the Notifier does, then settles it
// sent, and tells the test of every run. Its plan, when set, answers a
// message's runs instead (a retry, an error) before any claim.
type worker struct {
	s    Setup
	runs chan run

	mu     sync.Mutex
	claims map[string]int // successful claims by message
	plan   map[string][]func() (time.Time, error)
}

func newWorker(s Setup) *worker {
	return &worker{s: s, runs: make(chan run, 1024), claims: make(map[string]int),
		plan: make(map[string][]func() (time.Time, error))}
}

func (w *worker) Work(ctx context.Context, job queue.Job) (time.Time, error) {
	defer func() { w.runs <- run{job: job, at: w.s.Now()} }()
	w.mu.Lock()
	if steps := w.plan[job.Message]; len(steps) > 0 {
		w.plan[job.Message] = steps[1:]
		w.mu.Unlock()
		return steps[0]()
	}
	w.mu.Unlock()
	_, err := w.s.Ledger.Move(ctx, job.Account, job.Message, store.Update{State: record.StateAttempting, At: w.s.Now()})
	switch {
	case errors.Is(err, store.ErrConflict):
		return time.Time{}, nil // taken already: nothing left to do
	case err != nil:
		return time.Time{}, err
	}
	w.mu.Lock()
	w.claims[job.Message]++
	w.mu.Unlock()
	_, err = w.s.Ledger.Move(ctx, job.Account, job.Message, store.Update{State: record.StateSent, At: w.s.Now(),
		ProviderMessageID: "p-" + job.Message})
	return time.Time{}, err
}

func (w *worker) claimsOf(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.claims[id]
}

// next waits for the worker's next run.
func (w *worker) next(t *testing.T) run {
	t.Helper()
	select {
	case r := <-w.runs:
		return r
	case <-time.After(wait):
		t.Fatalf("no job ran within %v", wait)
	}
	return run{}
}

// none checks that no further run is reported right now.
func (w *worker) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-w.runs:
		t.Fatalf("job %s ran again (at %v)", r.job.Message, r.at)
	default:
	}
}

// start runs the queue with w until the test ends, and returns a function
// that stops it and waits.
func start(t *testing.T, s Setup, w queue.Worker, periodic ...queue.Periodic) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Queue.Run(ctx, w, periodic...) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(wait):
				t.Errorf("Run did not return within %v of its context's end", wait)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

var seq struct {
	sync.Mutex
	n int
}

// record returns a new record of s's account in state st, charging
// charge minor units.
func newRecord(s Setup, st record.State, charge int64, sendAt time.Time) *record.Message {
	seq.Lock()
	seq.n++
	n := seq.n
	seq.Unlock()
	now := s.Now()
	return &record.Message{ID: fmt.Sprintf("%s-q%d-%d", s.Account, n, now.UnixNano()), Account: s.Account,
		Kind: "sms", Request: "sms", To: "+919876543210", Provider: "memprovider", Units: 1, Metered: true,
		Charge: record.Money{Minor: charge, Currency: inr}, State: st, SendAt: sendAt,
		Payload: []byte(`{"to":"9876543210","message":"hello"}`), CreatedAt: now, UpdatedAt: now}
}

// open opens m through the queue, or fails the test.
func open(t *testing.T, s Setup, m *record.Message) (id string, b record.Balance) {
	t.Helper()
	id = m.ID
	b, err := s.Queue.Open(context.Background(), m)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	return id, b
}

// balance returns the account's available minor units.
func balance(t *testing.T, s Setup) int64 {
	t.Helper()
	b, err := s.Ledger.Balance(context.Background(), s.Account)
	if err != nil {
		t.Fatalf("Balance: %v", err)
	}
	return b.Available.Minor
}

// state returns the record's state, or "" when there is none.
func state(t *testing.T, s Setup, id string) record.State {
	t.Helper()
	m, err := s.Ledger.Message(context.Background(), s.Account, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ""
	case err != nil:
		t.Fatalf("Message %s: %v", id, err)
	}
	return m.State
}

// advance moves the clock by d when the harness controls it; on the real
// clock the suite waits for the job instead, which runs once d has passed.
func advance(s Setup, d time.Duration) {
	if s.Advance != nil {
		s.Advance(d)
	}
}

// ahead is how far ahead the suite schedules a job: an hour on a clock
// the harness moves, a second and a half on the real one.
func ahead(s Setup) time.Duration {
	if s.Advance != nil {
		return time.Hour
	}
	return 1500 * time.Millisecond
}
