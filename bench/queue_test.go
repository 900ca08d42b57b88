package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store/accountcache"
	"github.com/notifykit/notify/wallet"
)

// The queue rows (bench/cmd/benchtable's "queue:" rows) run notify's
// durable queue, pgqueue (River on PostgreSQL), beside pgstore in a schema
// of their own; without PostgreSQL they skip, as pgstore's rows do.

// queueKit is a Notifier on pgstore with a pgqueue, the SMS channel on a
// memprovider whose handler calls arrived with every message it accepts.
type queueKit struct {
	pool    *pgxpool.Pool
	st      *pgstore.Store
	q       *pgqueue.Queue
	n       *notify.Notifier
	s       *queued.Sender // n's queue side
	p       *memprovider.Provider
	arrived atomic.Pointer[func(id string, at time.Time)]
	settled atomic.Pointer[func(notify.Event)] // the observer of every event
}

// Observe implements notify.Observer: it hands e to k.settled.
func (k *queueKit) Observe(_ context.Context, e notify.Event) {
	if f := k.settled.Load(); f != nil {
		(*f)(e)
	}
}

func must(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// queueAccount is the name of the g-th account of a queueKit.
func queueAccount(g int) string { return fmt.Sprintf("acct-%d", g) }

// newQueueKit builds a queueKit in a fresh schema, on a pool of conns
// connections, with accounts funded accounts (queueAccount) read through
// an accountcache.Cache (one-second TTL), as pgstore's BenchmarkPipelineSend
// does, and a queue of workers workers, migrated but not running.
func newQueueKit(b testing.TB, conns int32, workers, accounts int) *queueKit {
	return newQueueKitWith(b, kitSetup{conns: conns, workers: workers, accounts: accounts, cacheTTL: time.Second})
}

// kitSetup is what newQueueKitWith builds: a pool of conns connections
// (tweak, when set, changes its configuration), a queue of workers
// workers, accounts funded accounts, read through an accountcache.Cache
// that keeps each for cacheTTL.
type kitSetup struct {
	conns             int32
	workers, accounts int
	cacheTTL          time.Duration
	tweak             func(*pgxpool.Config)
}

// newQueueKitWith is newQueueKit of setup k.
func newQueueKitWith(b testing.TB, setup kitSetup) *queueKit {
	conns, workers, accounts := setup.conns, setup.workers, setup.accounts
	var tweak []func(*pgxpool.Config)
	if setup.tweak != nil {
		tweak = append(tweak, setup.tweak)
	}
	b.Helper()
	schema := pgstoretest.Schema(b)
	pool := pgstoretest.Pool(b, schema, conns, tweak...)
	st, err := pgstore.New(pool)
	must(b, err)
	ctx := context.Background()
	must(b, st.Migrate(ctx))
	q, err := pgqueue.New(st, pool, pgqueue.Config{Workers: workers})
	must(b, err)
	must(b, q.Migrate(ctx))
	for g := range accounts {
		acct := &notify.Account{ID: queueAccount(g), Currency: record.INR()}
		must(b, sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN"}))
		must(b, st.PutAccount(ctx, acct))
		must(b, st.OpenWallet(ctx, queueAccount(g), notify.Money{Minor: 1 << 50, Currency: record.INR()}))
	}
	cached, err := accountcache.New(st, accountcache.WithTTL(setup.cacheTTL))
	must(b, err)
	k := &queueKit{pool: pool, st: st, q: q, p: memprovider.New("mem")}
	none := func(string, time.Time) {}
	k.arrived.Store(&none)
	k.p.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		(*k.arrived.Load())(env.ID, time.Now())
		return &notify.Result{}, nil
	})
	ch, err := sms.New(sms.Config{Provider: k.p})
	must(b, err)
	k.n, err = notify.New(cached, st, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()), notify.WithQueue(q), notify.WithObserver(k))
	must(b, err)
	k.s = queued.New(k.n)
	return k
}

// onArrival makes f the provider's callback.
func (k *queueKit) onArrival(f func(id string, at time.Time)) { k.arrived.Store(&f) }

// run starts the queue's workers until b ends, and waits for one queued
// send to go through them, so that the client is up.
func (k *queueKit) run(b testing.TB) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.q.Run(ctx, k.s) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	got := make(chan struct{}, 1)
	k.onArrival(func(string, time.Time) {
		select {
		case got <- struct{}{}:
		default:
		}
	})
	if _, err := k.s.Enqueue(context.Background(), queueRequest(0)); err != nil {
		b.Fatal(err)
	}
	select {
	case <-got:
	case err := <-done:
		b.Fatalf("the queue stopped: %v", err)
	case <-time.After(30 * time.Second):
		b.Fatal("the warm-up send did not arrive in 30 s")
	}
	k.onArrival(func(string, time.Time) {})
	k.p.Reset()
}

// vacuum vacuums tables, as pgstore's benchmarks do after each round: the
// test server runs without autovacuum.
func (k *queueKit) vacuum(b *testing.B, tables ...string) {
	b.Helper()
	for _, t := range tables {
		if _, err := k.pool.Exec(context.Background(), "VACUUM "+t); err != nil {
			b.Fatal(err)
		}
	}
}

// inTx runs f in one pgx transaction and commits it, and returns how
// long that took; the wallets' table is vacuumed after, outside the
// benchmark's timer.
func (k *queueKit) inTx(b *testing.B, f func(tx pgx.Tx) error) time.Duration {
	b.Helper()
	start := time.Now()
	must(b, pgx.BeginFunc(context.Background(), k.pool, f))
	d := time.Since(start)
	b.StopTimer()
	k.vacuum(b, "notify_wallets")
	b.StartTimer()
	return d
}

// queueRequest is the SMS the queue rows send, from account g.
func queueRequest(g int) *sms.Request {
	return &sms.Request{Account: queueAccount(g), To: "9876543210", Message: "Your order has shipped."}
}

// enqueueBatch is how many sends BenchmarkQueueEnqueueTx enqueues in one
// transaction.
const enqueueBatch = 10_000

// BenchmarkQueueEnqueueTx enqueues 10,000 SMS in one pgx transaction of
// the caller's and commits it, and reports the time of the whole batch in
// ms (issue 47's target: 700 ms): with queued.Sender.EnqueueTxMany
// (validation and pricing of each, the suppression list read once, then
// the debits in one statement and the ledger rows, the records and the
// River jobs each in one COPY), and with one queued.Sender.EnqueueTx
// each (two statements a send).
// Beside it, in the same run, the least such a batch can cost with
// records: 10,000 pgstore OpenTx of the same queued records (a record and
// its debit each, no pipeline, no job) in one transaction.
func BenchmarkQueueEnqueueTx(b *testing.B) {
	k := newQueueKit(b, 4, 1, 2)
	ctx := context.Background()
	payload, err := (&sms.Channel{}).EncodeRequest(queueRequest(1)) // what the queued records keep
	must(b, err)
	var many, ours, bare time.Duration
	reqs := make([]notify.Request, enqueueBatch)
	b.ResetTimer()
	for range b.N {
		many += k.inTx(b, func(tx pgx.Tx) error {
			for i := range reqs {
				reqs[i] = queueRequest(0)
			}
			_, err := k.s.EnqueueTxMany(ctx, tx, reqs)
			return err
		})
		ours += k.inTx(b, func(tx pgx.Tx) error {
			for range enqueueBatch {
				if _, err := k.s.EnqueueTx(ctx, tx, queueRequest(0)); err != nil {
					return err
				}
			}
			return nil
		})
		run := pgstoretest.RandomName("r")
		bare += k.inTx(b, func(tx pgx.Tx) error {
			for i := range enqueueBatch {
				now := time.Now().UTC()
				m := &record.Message{ID: fmt.Sprintf("%s-%d", run, i), Account: queueAccount(1), Kind: sms.Kind, Request: sms.Kind,
					To: "+919876543210", Country: "IN", Provider: "mem", Units: 1, Metered: true,
					Charge: notify.Money{Minor: 25, Currency: record.INR()}, State: record.StateQueued,
					Payload: payload, CreatedAt: now, UpdatedAt: now}
				if _, err := k.st.OpenTx(ctx, tx, m); err != nil {
					return err
				}
			}
			return nil
		})
	}
	b.StopTimer()
	var jobs int
	must(b, k.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, pgqueue.SendKind).Scan(&jobs))
	if jobs != 2*b.N*enqueueBatch {
		b.Fatalf("%d jobs after %d pairs of batches of %d", jobs, b.N, enqueueBatch)
	}
	b.ReportMetric(float64(many.Milliseconds())/float64(b.N), "many-ms/batch")
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "ms/batch")
	b.ReportMetric(float64(bare.Milliseconds())/float64(b.N), "store-ms/batch")
	b.ReportMetric(0, "ns/op") // two kinds of batch: the metrics say it
}

// The scheduled-lateness benchmark: lateWorkers workers run the queue
// while lateLoaders goroutines enqueue a steady load of lateLoadRate sends
// a second between them; lateScheduled sends are scheduled, spread evenly
// from 1 to 3 s ahead.
const (
	lateWorkers   = 16
	lateLoaders   = 4
	lateLoadRate  = 40
	lateScheduled = 200
)

// BenchmarkQueueScheduledLateness measures how late scheduled sends
// (queued.Sender.SendAt) reach the vendor when the queue is busy with other
// sends: 200 of them due 1 to 3 s ahead while a steady load of queued
// sends flows through the same workers. Each send's lateness is the time
// the memprovider took it minus its SendAt; the run reports the p50, p99
// and max in ms (the target: p99 <= 1 s).
func BenchmarkQueueScheduledLateness(b *testing.B) {
	k := newQueueKit(b, 32, lateWorkers, lateLoaders+1)
	k.run(b)
	ctx := context.Background()
	var mu sync.Mutex
	arrivals := map[string]time.Time{}
	k.onArrival(func(id string, at time.Time) {
		mu.Lock()
		arrivals[id] = at
		mu.Unlock()
	})
	var late []time.Duration
	b.ResetTimer()
	for range b.N {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var loadErr atomic.Pointer[error]
		for g := range lateLoaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.NewTicker(time.Second * lateLoaders / lateLoadRate)
				defer t.Stop()
				for {
					select {
					case <-stop:
						return
					case <-t.C:
					}
					if _, err := k.s.Enqueue(ctx, queueRequest(g+1)); err != nil {
						loadErr.Store(&err)
						return
					}
				}
			}()
		}
		time.Sleep(500 * time.Millisecond) // the load flows first
		due := map[string]time.Time{}
		base := time.Now().Add(time.Second)
		for i := range lateScheduled {
			at := base.Add(2 * time.Second * time.Duration(i) / lateScheduled)
			r, err := k.s.SendAt(ctx, queueRequest(0), at)
			must(b, err)
			due[r.MessageID] = at
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			n := 0
			for id := range due {
				if _, ok := arrivals[id]; ok {
					n++
				}
			}
			mu.Unlock()
			if n == len(due) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d scheduled sends arrived within a minute", n, len(due))
			}
			time.Sleep(50 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		if err := loadErr.Load(); err != nil {
			b.Fatal(*err)
		}
		mu.Lock()
		for id, at := range due {
			late = append(late, arrivals[id].Sub(at))
		}
		clear(arrivals)
		mu.Unlock()
		k.p.Reset()
	}
	b.StopTimer()
	slices.Sort(late)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(late[len(late)/2]), "p50-late-ms")
	b.ReportMetric(ms(late[min(len(late)*99/100, len(late)-1)]), "p99-late-ms")
	b.ReportMetric(ms(late[len(late)-1]), "max-late-ms")
	b.ReportMetric(ms(late[0]), "min-late-ms")
	b.ReportMetric(0, "ns/op")
}

// The throughput benchmark: throughputClients goroutines send (or
// enqueue) throughputPerRound messages a round, in throughputRounds
// rounds of each kind, alternating; the queue runs throughputClients
// workers, so as many goroutines deliver on both sides.
const (
	throughputClients  = 16
	throughputPerRound = 1000
	throughputRounds   = 2
)

// BenchmarkQueueThroughput measures messages per second delivered through
// the queue (queued.Sender.Enqueue from 16 goroutines, 16 pgqueue workers
// delivering; from the first Enqueue to the last message reaching the
// memprovider) beside the synchronous pipeline (Notifier.Send from 16
// goroutines) on the same database, the same Notifier and the same 16
// accounts (one a goroutine), in alternating rounds of the same run.
// Each round ends with a VACUUM of the tables it updated, in its time, as
// pgstore's benchmarks do. It reports queued-msgs/s, sync-msgs/s and
// their ratio.
func BenchmarkQueueThroughput(b *testing.B) { queueThroughput(b, 0) }

// BenchmarkQueueThroughputVendor50ms is BenchmarkQueueThroughput with a
// vendor that takes 50 ms to answer, on both sides: what a real SMS
// API's latency makes of the comparison, where the zero-latency one
// weighs only the database round trips.
func BenchmarkQueueThroughputVendor50ms(b *testing.B) { queueThroughput(b, 50*time.Millisecond) }

// queueThroughput runs the throughput comparison with a vendor that takes
// latency to answer.
func queueThroughput(b *testing.B, latency time.Duration) {
	k := newQueueKit(b, 2*throughputClients+8, throughputClients, throughputClients)
	k.p.SetLatency(latency)
	k.run(b)
	ctx := context.Background()
	var arrived atomic.Int64
	var want atomic.Int64
	done := make(chan struct{}, 1)
	k.onArrival(func(string, time.Time) {
		if arrived.Add(1) == want.Load() {
			done <- struct{}{}
		}
	})
	clients := func(op func(g int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for g := range throughputClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= throughputPerRound {
					if err := op(g); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	syncRound := func() time.Duration {
		arrived.Store(0)
		want.Store(-1)
		start := time.Now()
		clients(func(g int) error {
			_, err := k.n.Send(ctx, queueRequest(g))
			return err
		})
		k.vacuum(b, "notify_wallets", "notify_messages")
		d := time.Since(start)
		if n := arrived.Load(); n != throughputPerRound {
			b.Fatalf("%d of %d sends arrived", n, throughputPerRound)
		}
		return d
	}
	queuedRound := func() time.Duration {
		arrived.Store(0)
		want.Store(throughputPerRound)
		start := time.Now()
		clients(func(g int) error {
			_, err := k.s.Enqueue(ctx, queueRequest(g))
			return err
		})
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			b.Fatalf("%d of %d queued sends arrived in 2 minutes", arrived.Load(), throughputPerRound)
		}
		k.vacuum(b, "notify_wallets", "notify_messages", "river_job")
		return time.Since(start)
	}
	// One round of each, untimed, first: it opens the pool's connections
	// and prepares each statement on them, which would otherwise weigh
	// on whichever kind of round came first (the first queued round
	// delivered nothing for its first 0.5 to 0.75 s).
	queuedRound()
	syncRound()
	k.p.Reset()
	var queuedTime, syncTime time.Duration
	b.ResetTimer()
	for range b.N {
		for r := range throughputRounds {
			if r%2 == 0 {
				queuedTime += queuedRound()
				syncTime += syncRound()
			} else {
				syncTime += syncRound()
				queuedTime += queuedRound()
			}
			k.p.Reset()
		}
	}
	b.StopTimer()
	n := float64(b.N * throughputRounds * throughputPerRound)
	queued, synced := n/queuedTime.Seconds(), n/syncTime.Seconds()
	b.ReportMetric(queued, "queued-msgs/s")
	b.ReportMetric(synced, "sync-msgs/s")
	b.ReportMetric(queued/synced, "ratio")
	b.ReportMetric(0, "ns/op")
}

// queueBulkSize is how many recipients BenchmarkQueueBulk's bulk SMS has.
const queueBulkSize = 1000

// BenchmarkQueueBulk queues a bulk SMS of 1,000 recipients with
// queued.Sender.Enqueue (each recipient opened on its own, record, debit and
// job in a transaction of the queue's) and reports its time in ms,
// beside the same 1,000 as single requests in one EnqueueTxMany (the
// records in one statement, the jobs in another) in the same run.
func BenchmarkQueueBulk(b *testing.B) {
	k := newQueueKit(b, 8, 1, 1)
	ctx := context.Background()
	to := make([]string, queueBulkSize)
	reqs := make([]notify.Request, queueBulkSize)
	for i := range to {
		to[i] = fmt.Sprintf("98%08d", i)
	}
	var bulk, many time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := k.s.Enqueue(ctx, &sms.BulkRequest{Message: sms.Request{Account: queueAccount(0), Message: "Sale starts at 10."}, To: to})
		must(b, err)
		if len(r.Legs) != queueBulkSize || r.Status != record.StateQueued {
			b.Fatalf("queued %d legs, status %s", len(r.Legs), r.Status)
		}
		bulk += time.Since(start)
		b.StopTimer()
		k.vacuum(b, "notify_wallets")
		b.StartTimer()

		many += k.inTx(b, func(tx pgx.Tx) error {
			for i := range reqs {
				reqs[i] = &sms.Request{Account: queueAccount(0), To: to[i], Message: "Sale starts at 10."}
			}
			_, err := k.s.EnqueueTxMany(ctx, tx, reqs)
			return err
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(bulk.Milliseconds())/float64(b.N), "bulk-ms")
	b.ReportMetric(float64(many.Milliseconds())/float64(b.N), "many-ms")
	b.ReportMetric(0, "ns/op")
}
