package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Defaults of Config.
const (
	// DefaultWorkers is how many sends one Run has in flight to vendors
	// at once.
	DefaultWorkers = 4
	// DefaultQueue is the River queue the jobs go on.
	DefaultQueue = "notify"
)

// The job kinds this package writes in River's tables.
const (
	// SendKind is the kind of a send's job: its args are the record's
	// account and message ID, nothing else.
	SendKind = "notify_send"
	// PeriodicKind is the kind of a run of a queue.Periodic task: its
	// args are the task's name.
	PeriodicKind = "notify_periodic"
)

const (
	// maxAttempts bounds the failed runs of a send's job (an error of
	// Worker.Work; a retry the worker asks for is a snooze, which does
	// not count). A worker errs only when nothing moved and the cause may
	// pass (a store down), so the job keeps trying for as long as a
	// record may reasonably wait: 10,000 runs at most 10 minutes apart
	// span about 69 days. (River keeps max_attempts in a smallint.)
	maxAttempts = 10000
	// softStop is how long Run lets the jobs it started finish once its
	// context ends, before it cancels their contexts and waits for them.
	softStop = 10 * time.Second
	// completedRetention is how long River keeps a finished job's row. A
	// job holds no payload (that lives on the record), so nothing secret
	// stays in River's tables; the record says what happened.
	completedRetention = time.Hour
	// migrateLockClass is the first key of the advisory lock Migrate
	// holds, the second a hash of the schema: "nfyq".
	migrateLockClass = 0x6e667971
)

// Config configures a Queue. The zero value is usable.
type Config struct {
	// Workers is how many sends one Run has in flight to vendors at
	// once, in this process: the send slots (queue.Slots) its jobs share.
	// Run runs up to twice as many jobs, so that a job reads its record
	// while the slots are busy and writes its outcome after it gave its
	// slot back. Default DefaultWorkers (4); at most 5,000 (River runs
	// at most 10,000 jobs of a queue at once).
	Workers int
	// Logger receives River's logs and the errors of periodic tasks.
	// Default: a logger that discards everything.
	Logger *slog.Logger
	// Queue is the name of the River queue the send jobs and the periodic
	// tasks' runs go on; queues of other names in the same tables are
	// left alone. Default DefaultQueue ("notify").
	Queue string
	// RescueAfter is how long a job may stay taken before another process
	// takes it again: a process killed after River took a job but before
	// its worker claimed the record leaves the job taken, and its send
	// waits this long, and up to 30 s more (River's rescuer runs every
	// 30 s, on the elected leader). It is also each run's time limit:
	// a run still going after it has its context canceled. Running a job
	// again is safe (the claim has one winner), so keep it near the
	// Notifier's settle threshold (notify.WithSettleAfter), above its
	// attempt timeout. Default DefaultRescueAfter (2 minutes).
	RescueAfter time.Duration
	// GroupCommit is how many concurrent Opens (one queued or scheduled
	// send each: Notifier.Enqueue and SendAt) one transaction commits
	// together, at most: their records and debits by
	// pgstore.Store.OpenTxMany, their jobs by one insert, one commit.
	// Opens wait for no timer: an Open that finds no commit under way
	// runs at once, in a transaction of its own as before; those that
	// arrive while one is under way go together in the next. Each Open
	// still answers only once its own record is durable, with its own
	// balance; a batch that fails before its commit (an account that
	// cannot pay, a wallet locked elsewhere for longer than 100 ms, any
	// error) is split, each Open run on its own, so one Open cannot fail
	// its neighbours. OpenTx, OpenTxMany and OpenMany are never grouped.
	// Default pgstore.DefaultGroupCommit (64); 1 turns grouping off;
	// below 0 is store.ErrInvalid.
	GroupCommit int
}

// DefaultRescueAfter is Config.RescueAfter's default: the Notifier's
// default settle threshold.
const DefaultRescueAfter = 2 * time.Minute

// Queue is a queue.Queue on PostgreSQL, through River, beside a
// pgstore.Store: Open writes a record, its debit and its River job in
// one transaction, and Run works the jobs. It is safe for concurrent use;
// any number of processes may share its tables, each with its own Queue
// and Run.
type Queue struct {
	st      *pgstore.Store
	pool    *pgxpool.Pool
	cfg     Config
	schema  string
	inserts *river.Client[pgx.Tx] // inserts only: Run starts its own
	running atomic.Bool
	opens   *openBatcher // nil when Config.GroupCommit is 1
}

// sendArgs are the args of a send's job: the record, never its payload.
type sendArgs struct {
	Account string `json:"account"`
	Message string `json:"message"`
}

func (sendArgs) Kind() string { return SendKind }

// periodicArgs are the args of a run of a periodic task.
type periodicArgs struct {
	Name string `json:"name"`
}

func (periodicArgs) Kind() string { return PeriodicKind }

// New returns a Queue that opens its records through st and keeps its
// jobs in River's tables on pool, which must reach st's database: the
// schema of pgstore.WithSchema when st has one (st.Schema), else the one
// the connections' search_path finds, so that River's tables live next
// to st's. A nil st or pool, a Workers below 0 or above 5,000, a
// GroupCommit below 0, or a queue name River refuses is
// store.ErrInvalid. New does not migrate: call Migrate, after st.Migrate.
func New(st *pgstore.Store, pool *pgxpool.Pool, cfg Config) (*Queue, error) {
	switch {
	case st == nil:
		return nil, fmt.Errorf("pgqueue: new: %w: nil store", store.ErrInvalid)
	case pool == nil:
		return nil, fmt.Errorf("pgqueue: new: %w: nil pool", store.ErrInvalid)
	case cfg.Workers < 0:
		return nil, fmt.Errorf("pgqueue: new: %w: Workers %d: must not be negative", store.ErrInvalid, cfg.Workers)
	case cfg.RescueAfter < 0:
		return nil, fmt.Errorf("pgqueue: new: %w: RescueAfter %v: must not be negative", store.ErrInvalid, cfg.RescueAfter)
	case cfg.GroupCommit < 0:
		return nil, fmt.Errorf("pgqueue: new: %w: GroupCommit %d: must not be negative", store.ErrInvalid, cfg.GroupCommit)
	}
	if cfg.GroupCommit == 0 {
		cfg.GroupCommit = pgstore.DefaultGroupCommit
	}
	if cfg.RescueAfter == 0 {
		cfg.RescueAfter = DefaultRescueAfter
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Queue == "" {
		cfg.Queue = DefaultQueue
	}
	q := &Queue{st: st, pool: pool, cfg: cfg, schema: st.Schema()}
	if cfg.GroupCommit > 1 {
		q.opens = newOpenBatcher(q, cfg.GroupCommit)
	}
	// Checks the queue name and the worker count as Run's client will.
	rcfg := q.clientConfig()
	rcfg.Queues = q.queues()
	rcfg.Workers = river.NewWorkers()
	river.AddWorker(rcfg.Workers, river.WorkFunc(func(context.Context, *river.Job[sendArgs]) error { return nil }))
	if _, err := river.NewClient(riverpgxv5.New(pool), rcfg); err != nil {
		return nil, fmt.Errorf("pgqueue: new: %w: %w", store.ErrInvalid, err)
	}
	inserts, err := river.NewClient(riverpgxv5.New(pool), q.clientConfig())
	if err != nil {
		return nil, fmt.Errorf("pgqueue: new: %w: %w", store.ErrInvalid, err)
	}
	q.inserts = inserts
	return q, nil
}

// clientConfig is the configuration common to the inserting client and
// Run's.
func (q *Queue) clientConfig() *river.Config {
	return &river.Config{
		Schema:                      q.schema,
		Logger:                      q.cfg.Logger,
		CompletedJobRetentionPeriod: completedRetention,
		MaxAttempts:                 maxAttempts,
		RetryPolicy:                 backoff{},
		// River's rescuer runs again only a job taken longer than its
		// timeout: without one (-1) a job whose process died after the
		// fetch stays taken forever, its record queued and charged. The
		// worker bounds its own calls (a vendor call has its timeout),
		// so this cuts short only a run that outlived the settle
		// threshold, whose record the reconciler settles anyway.
		JobTimeout:           q.cfg.RescueAfter,
		RescueStuckJobsAfter: q.cfg.RescueAfter,
		// A job due later waits as available with its scheduled_at (see
		// dueAvailable), which a fetch takes once due: polling every
		// pollEvery bounds how late a scheduled send fires.
		FetchPollInterval: pollEvery,
		// River fetches at most once per cooldown, as many jobs as it has
		// free workers: its default of 100 ms caps 16 workers at 160
		// sends a second, far below what the database takes.
		FetchCooldown: fetchCooldown,
		Middleware:    []rivertype.Middleware{&dueAvailable{}},
	}
}

// pollEvery is how often a running queue looks for jobs that came due:
// the most a scheduled send fires late when nothing else wakes it.
const pollEvery = 200 * time.Millisecond

// fetchCooldown is the least time between two fetches of a running
// queue: short, so that workers are fed as fast as they free up (an
// idle queue fetches only on a new job's notice or every pollEvery).
const fetchCooldown = 2 * time.Millisecond

// dueAvailable inserts a job due later as available, not scheduled: River
// fetches only available jobs whose scheduled_at has come, so the job is
// taken on the first fetch after its time (every pollEvery at most),
// where a scheduled job would wait for River's scheduler to make it
// available, which runs every 5 seconds. River's retries and snoozes
// still go through its scheduler: they are not held to the second.
type dueAvailable struct{ river.MiddlewareDefaults }

func (*dueAvailable) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams,
	inner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	for _, p := range params {
		if p.State == rivertype.JobStateScheduled && p.ScheduledAt != nil {
			p.State = rivertype.JobStateAvailable
		}
	}
	return inner(ctx)
}

// Migrate creates or upgrades River's tables (River's own migrations,
// rivermigrate), in st's schema (st.Schema) or, without one, the one the
// search_path finds, creating the schema when it is missing. It holds an
// advisory lock while it runs, so processes that start together may all
// call it: one migrates, the others wait and find nothing left to do.
// River's tables of a newer version are left alone.
func (q *Queue) Migrate(ctx context.Context) error {
	conn, err := q.pool.Acquire(ctx)
	if err != nil {
		return q.st.WrapErr(ctx, "pgqueue: migrate", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, int32(migrateLockClass), q.schema); err != nil {
		return q.st.WrapErr(ctx, "pgqueue: migrate: lock", err)
	}
	defer func() {
		// A connection whose unlock fails is closed, which lets go of the
		// lock too.
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext($2))`,
			int32(migrateLockClass), q.schema); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if q.schema != "" {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+q.schema+`"`); err != nil {
			return q.st.WrapErr(ctx, "pgqueue: migrate: create schema", err)
		}
	}
	m, err := rivermigrate.New(riverpgxv5.New(q.pool), &rivermigrate.Config{Schema: q.schema, Logger: q.cfg.Logger})
	if err != nil {
		return fmt.Errorf("pgqueue: migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return q.st.WrapErr(ctx, "pgqueue: migrate", err)
	}
	return nil
}

// Open writes m, queued or scheduled (due at m.SendAt), with its debit and
// its job, in one transaction, shared with concurrent Opens unless
// Config.GroupCommit is 1 (see the package's Group commit), as
// queue.Queue documents: the store's errors come back as the store
// answered them (store.ErrInsufficientFunds and the rest), with nothing
// written; another state is store.ErrInvalid. An error of the commit
// leaves the outcome unknown, as an error of pgstore.Store.Open does:
// the record, its debit and its job are then all there or all missing.
// A ctx that ends while m waits for its group withdraws it (its error,
// nothing written); once the group is under way, the outcome is unknown
// (store.ErrUnavailable).
func (q *Queue) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if err := waiting(m); err != nil {
		return record.Balance{}, err
	}
	if q.opens != nil {
		return q.opens.open(ctx, m)
	}
	return q.openAlone(ctx, m)
}

// openAlone is Open in a transaction of m's own.
func (q *Queue) openAlone(ctx context.Context, m *record.Message) (record.Balance, error) {
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return record.Balance{}, q.st.WrapErr(ctx, "pgqueue: open: begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op once committed
	b, err := q.openTx(ctx, tx, m)
	if err != nil {
		return record.Balance{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return record.Balance{}, q.commitError(ctx, err)
	}
	return b, nil
}

// OpenTx is Open inside tx, which must be a pgx.Tx on the queue's
// database (queue.ErrUnsupportedTx otherwise): the record, its debit
// (pgstore.Store.OpenTx) and its job take effect when, and only if, the
// caller commits tx. The debit holds the wallet's row lock until then.
// After an error the caller should roll tx back: a refusal of the store
// may leave it usable, but a failed statement aborts it.
func (q *Queue) OpenTx(ctx context.Context, tx any, m *record.Message) (record.Balance, error) {
	ptx, ok := tx.(pgx.Tx)
	if !ok || ptx == nil {
		return record.Balance{}, fmt.Errorf("pgqueue: open: %T: %w", tx, queue.ErrUnsupportedTx)
	}
	if err := waiting(m); err != nil {
		return record.Balance{}, err
	}
	return q.openTx(ctx, ptx, m)
}

// OpenTxMany opens every record of ms in tx, with their jobs, in a few
// statements however many they are: the records and debits, all or
// nothing (pgstore.Store.OpenTxMany: the debits, then a COPY of the
// ledger rows and one of the records), and the jobs in one COPY
// (River's InsertManyFastTx). On an error
// roll tx back: a refusal of the records writes nothing, but a failed
// job insert follows written records.
// Another tx is queue.ErrUnsupportedTx.
func (q *Queue) OpenTxMany(ctx context.Context, tx any, ms []*record.Message) error {
	ptx, ok := tx.(pgx.Tx)
	if !ok || ptx == nil {
		return fmt.Errorf("pgqueue: open: %T: %w", tx, queue.ErrUnsupportedTx)
	}
	_, err := q.openTxMany(ctx, ptx, ms)
	return err
}

// openTxMany is OpenTxMany on a pgx.Tx, answering each record's balance
// after its debit (pgstore.Store.OpenTxMany).
func (q *Queue) openTxMany(ctx context.Context, tx pgx.Tx, ms []*record.Message) ([]record.Balance, error) {
	jobs := make([]river.InsertManyParams, len(ms))
	for i, m := range ms {
		if err := waiting(m); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		jobs[i] = river.InsertManyParams{Args: sendArgs{Account: m.Account, Message: m.ID}, InsertOpts: q.insertOpts(m)}
	}
	balances, err := q.st.OpenTxMany(ctx, tx, ms)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	if _, err := q.inserts.InsertManyFastTx(ctx, tx, jobs); err != nil {
		return nil, q.st.WrapErr(ctx, "pgqueue: open: insert jobs", err)
	}
	return balances, nil
}

// OpenMany opens every record of ms with its job in one transaction of
// its own, all or none, as queue.Queue.OpenMany documents: the records and
// their debits in one statement (pgstore.Store.OpenTxMany), the jobs in
// another. A refusal of the store writes nothing; an error of the commit
// leaves the outcome unknown, every record and job written or none.
func (q *Queue) OpenMany(ctx context.Context, ms []*record.Message) error {
	tx, err := q.pool.Begin(ctx)
	if err != nil {
		return q.st.WrapErr(ctx, "pgqueue: open: begin", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op once committed
	if err := q.OpenTxMany(ctx, tx, ms); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return q.commitError(ctx, err)
	}
	return nil
}

// commitError is the error of a commit that failed. Only one that sent
// nothing to the server (pgconn.SafeToRetry: the context ended before,
// the connection could not be had) certainly left nothing written. Any
// other, a context that ended while the server committed included, may
// follow a commit that took effect: it is store.ErrUnavailable, never a
// context error, which the Notifier would read as "nothing written" and
// let the caller send again while the job sends it too.
func (q *Queue) commitError(ctx context.Context, err error) error {
	if pgconn.SafeToRetry(err) {
		return q.st.WrapErr(ctx, "pgqueue: open: commit", err)
	}
	return fmt.Errorf("pgqueue: open: commit: %w: its answer was lost, so the records and jobs may stand (%v)", store.ErrUnavailable, err)
}

// waiting refuses a record a queue may not open: nil, or in another state
// than queued or scheduled.
func waiting(m *record.Message) error {
	switch {
	case m == nil:
		return fmt.Errorf("pgqueue: open: %w: nil record", store.ErrInvalid)
	case !m.State.Waiting():
		return fmt.Errorf("pgqueue: open message %q: %w", m.ID,
			store.InvalidField("state", "must be queued or scheduled, not "+string(m.State)))
	case m.State == record.StateScheduled && m.SendAt.IsZero():
		return fmt.Errorf("pgqueue: open message %q: %w", m.ID, store.InvalidField("send_at", "is required when scheduled"))
	}
	return nil
}

// openTx opens m on tx and inserts its job there.
func (q *Queue) openTx(ctx context.Context, tx pgx.Tx, m *record.Message) (record.Balance, error) {
	// Read before OpenTx, which takes m.
	args := sendArgs{Account: m.Account, Message: m.ID}
	opts := q.insertOpts(m)
	b, err := q.st.OpenTx(ctx, tx, m)
	if err != nil {
		return record.Balance{}, err
	}
	if _, err := q.inserts.InsertTx(ctx, tx, args, opts); err != nil {
		return record.Balance{}, q.st.WrapErr(ctx, "pgqueue: open: insert job", err)
	}
	return b, nil
}

// insertOpts are the options of the job of m.
func (q *Queue) insertOpts(m *record.Message) *river.InsertOpts {
	opts := &river.InsertOpts{
		Queue:       q.cfg.Queue,
		MaxAttempts: maxAttempts,
		// Not a River unique job: a job is inserted only in the
		// transaction that writes its record, which the record's primary
		// key makes the only one, so one record has one job without the
		// unique key's hash and index (a fifth of a 10,000 batch's time,
		// measured).
	}
	if m.State == record.StateScheduled && !m.SendAt.IsZero() {
		opts.ScheduledAt = m.SendAt
	}
	return opts
}

// Run works the queue's due jobs with w, and runs the periodic tasks,
// until ctx ends, as queue.Queue documents. It starts a River client with
// twice Config.Workers workers on Config.Queue: a send's job calls w.Work
// with the record's account and ID, the job's due time and the Run's
// queue.Slots, Config.Workers of them, one of which the worker holds from
// its claim to the vendor's answer; a retry w asks for
// snoozes the job until then, and an error runs it again after
// queue.Backoff of its failed runs so far, up to 10,000 runs (about 69
// days), after which River discards it (the record stays queued, charged,
// for an operator).
// Each periodic task is a River periodic job, which only River's elected
// leader among the processes sharing the tables enqueues, every p.Every,
// and one of them runs; a task's error is logged. When ctx ends, Run
// stops fetching, lets the running jobs finish for up to 10 seconds,
// then cancels their contexts, waits for them and returns nil. River's
// client runs on a pool of Run's own, closed when Run returns (see the
// package's Connections). A second
// Run while one runs, an invalid periodic task, or a client River cannot
// start is an error.
func (q *Queue) Run(ctx context.Context, w queue.Worker, periodic ...queue.Periodic) error {
	if w == nil {
		return fmt.Errorf("pgqueue: run: %w: nil worker", store.ErrInvalid)
	}
	if !q.running.CompareAndSwap(false, true) {
		return errors.New("pgqueue: run: the queue is running already")
	}
	defer q.running.Store(false)
	tasks := make(map[string]queue.Periodic, len(periodic))
	cfg := q.clientConfig()
	for _, p := range periodic {
		switch {
		case p.Name == "":
			return fmt.Errorf("pgqueue: run: %w: a periodic task without a name", store.ErrInvalid)
		case p.Every <= 0 || p.Run == nil:
			return fmt.Errorf("pgqueue: run: %w: periodic task %q needs Every > 0 and Run", store.ErrInvalid, p.Name)
		case tasks[p.Name].Name != "":
			return fmt.Errorf("pgqueue: run: %w: two periodic tasks named %q", store.ErrInvalid, p.Name)
		}
		tasks[p.Name] = p
		args := periodicArgs{Name: p.Name}
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(p.Every),
			func() (river.JobArgs, *river.InsertOpts) {
				return args, &river.InsertOpts{
					Queue:       q.cfg.Queue,
					MaxAttempts: 1, // the next interval runs it again
					// One run of a task at a time, however long it takes.
					UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
						rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
						rivertype.JobStateRetryable, rivertype.JobStateScheduled}},
				}
			}, &river.PeriodicJobOpts{ID: p.Name}))
	}
	cfg.Queues = q.queues()
	cfg.Workers = river.NewWorkers()
	river.AddWorker(cfg.Workers, &sendWorker{w: w, slots: queue.NewSlots(q.cfg.Workers)})
	river.AddWorker(cfg.Workers, &periodicWorker{tasks: tasks, log: q.cfg.Logger})
	pool, err := q.riverPool(ctx)
	if err != nil {
		return q.st.WrapErr(ctx, "pgqueue: run: pool", err)
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return fmt.Errorf("pgqueue: run: %w", err)
	}
	// The client stops when Run says, not when ctx ends mid-start.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return q.st.WrapErr(ctx, "pgqueue: run: start", err)
	}
	<-ctx.Done()
	soft, cancel := context.WithTimeout(context.WithoutCancel(ctx), softStop)
	defer cancel()
	if err := client.Stop(soft); err != nil {
		// The jobs did not finish in time: cancel them, and wait.
		_ = client.StopAndCancel(context.WithoutCancel(ctx))
	}
	return nil
}

// riverPool is the pool of Run's River client: the queue's pool's
// settings, but pgx's own handling of a canceled context (the
// connection's deadline, at once). River holds one connection in LISTEN
// and interrupts its wait, by canceling it, each time it listens to
// another topic: twice as it starts, again as it stops. On a pool whose
// connections ask the server to cancel a statement instead (pgstore.Open
// and the gateway do, so that a canceled debit is rolled back), a LISTEN
// that runs no statement ignores the request, and each interrupt waited
// for the deadline fallback: Run took seconds to start and to stop.
// River's statements are its own bookkeeping, none of them a debit. The
// pool connects lazily, up to the queue's pool's MaxConns.
func (q *Queue) riverPool(ctx context.Context) (*pgxpool.Pool, error) {
	cfg := q.pool.Config()
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	cfg.MinConns, cfg.MinIdleConns = 0, 0
	return pgxpool.NewWithConfig(ctx, cfg)
}

// queues is the River queue Run works: Config.Queue, with prefetch jobs
// at once for each of the Config.Workers send slots. New checks it as
// River will.
func (q *Queue) queues() map[string]river.QueueConfig {
	return map[string]river.QueueConfig{q.cfg.Queue: {MaxWorkers: prefetch * q.cfg.Workers}}
}

// prefetch is how many jobs Run runs at once for each send slot
// (Config.Workers). A job reads its record before it takes a slot and
// writes its outcome after it gave the slot back: a second job per slot
// does that database work while the first is at the vendor, and the
// vendor calls stay Workers deep. Measured with 16 slots and a vendor
// answering in 50 ms (bench's BenchmarkQueueThroughputVendor50ms):
// 213-222 sends/s with one job per slot, 236-250 with two.
const prefetch = 2

// sendWorker runs a send's job with the queue's Worker, which takes one
// of slots (Config.Workers of them) for its claim and vendor call.
type sendWorker struct {
	river.WorkerDefaults[sendArgs]
	w     queue.Worker
	slots *queue.Slots
}

func (s *sendWorker) Work(ctx context.Context, job *river.Job[sendArgs]) error {
	retry, err := s.w.Work(ctx, queue.Job{Account: job.Args.Account, Message: job.Args.Message, At: job.ScheduledAt, Slots: s.slots})
	switch {
	case err != nil:
		return err // River runs it again after backoff's delay
	case !retry.IsZero():
		return river.JobSnooze(max(time.Until(retry), 0))
	}
	return nil
}

// periodicWorker runs the periodic task a job names.
type periodicWorker struct {
	river.WorkerDefaults[periodicArgs]
	tasks map[string]queue.Periodic
	log   *slog.Logger
}

func (p *periodicWorker) Work(ctx context.Context, job *river.Job[periodicArgs]) error {
	task, ok := p.tasks[job.Args.Name]
	if !ok {
		// Enqueued by a process with other tasks: this one has none of
		// the name, and the next interval comes anyway.
		p.log.WarnContext(ctx, "pgqueue: a periodic task this process does not have", "task", job.Args.Name)
		return nil
	}
	if err := task.Run(ctx); err != nil {
		p.log.ErrorContext(ctx, "pgqueue: periodic task failed", "task", task.Name, "error", err)
	}
	return nil
}

// backoff is River's retry policy for a failed run: queue.Backoff of the
// job's failed runs, this one included.
type backoff struct{}

func (backoff) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(queue.Backoff(len(job.Errors) + 1))
}

// Interface guard.
var _ queue.Queue = (*Queue)(nil)
