package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgqueue"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/verify"
)

// newQueue returns the queue of the sends the API queues and schedules
// (notify.WithQueue): on PostgreSQL a pgqueue.Queue over the gateway's
// store and pool, whose River tables it migrates first (every instance
// may at once: one migrates, the others wait), so that every instance on
// the database shares the jobs; in memory a memqueue.Queue over the
// memory ledger. cfg.workers is how many jobs this instance runs at once,
// when it runs them (runQueue).
func newQueue(ctx context.Context, cfg *config, st *stores, logger *slog.Logger) (queue.Queue, error) {
	if st.db == nil {
		return memqueue.New(memqueue.Config{Ledger: st.ledger, Workers: cfg.workers})
	}
	// River logs its own start and stop at info: only its warnings and
	// errors (a job that failed, a periodic task's error) reach the log.
	// A job a killed instance had taken waits as long as an abandoned
	// send does before another instance runs it again.
	// While the database is down River logs the same failure several
	// times a second: one line of each a quietInterval, with the count it
	// stands for, says as much.
	q, err := pgqueue.New(st.db, st.pool, pgqueue.Config{Workers: cfg.workers, RescueAfter: cfg.settleAfter,
		Logger: slog.New(newQuiet(minLevel{logger.Handler(), slog.LevelWarn}, quietInterval, time.Now))})
	if err != nil {
		return nil, err
	}
	if err := q.Migrate(ctx); err != nil {
		return nil, storeError("migrating the queue", err)
	}
	return q, nil
}

// periodicTasks are the tasks the queue runs on one of the instances that
// run workers (River's leader among them on PostgreSQL): the reconciler
// (every half NOTIFY_SETTLE_AFTER), the expiry of the database's rows
// (PostgreSQL, every cleanupEvery) and the sweep of expired
// verifications (when they are on, every sweepEvery). Each logs what it
// did and what failed, and leaves the next run to its interval.
func periodicTasks(n *notify.Notifier, st *stores, svc *verify.Service, logger *slog.Logger) []queue.Periodic {
	tasks := []queue.Periodic{reconcileTask(n, logger)}
	if st.db != nil {
		tasks = append(tasks, cleanupTask(st.db, cleanupEvery, logger))
	}
	if svc != nil {
		tasks = append(tasks, sweepTask(svc, logger))
	}
	return tasks
}

// reconcileTask is the queue side's ReconcileTask (queued.Sender), logged.
func reconcileTask(n *notify.Notifier, logger *slog.Logger) queue.Periodic {
	p := queued.New(n).ReconcileTask()
	p.Run = func(ctx context.Context) error {
		reconcile(ctx, n, logger)
		return nil
	}
	return p
}

// reconcile settles the sends a crash left unfinished, once, and logs
// what it settled or why it failed.
func reconcile(ctx context.Context, n *notify.Notifier, logger *slog.Logger) {
	res, err := n.Reconcile(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		logger.Warn("settling abandoned sends failed; will try again", "error", err)
	case res.Refunded+res.Unknown > 0:
		logger.Info("abandoned sends settled", "refunded", res.Refunded, "unknown", res.Unknown)
	}
}

// cleanupTask is db.CleanupTask(every), logged.
func cleanupTask(db *pgstore.Store, every time.Duration, logger *slog.Logger) queue.Periodic {
	p := db.CleanupTask(every)
	p.Run = func(ctx context.Context) error {
		if n, err := db.Cleanup(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("cleaning expired rows failed; will try again", "error", err)
		} else if n > 0 {
			logger.Info("expired rows deleted", "rows", n)
		}
		return nil
	}
	return p
}

// sweepTask is svc.SweepTask(sweepEvery), logged.
func sweepTask(svc *verify.Service, logger *slog.Logger) queue.Periodic {
	p := svc.SweepTask(sweepEvery)
	p.Run = func(ctx context.Context) error {
		if _, err := svc.Sweep(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("marking expired verifications failed; will try again", "error", err)
		}
		return nil
	}
	return p
}

// queueRestart is how long runQueue waits before it starts again a queue
// that could not start.
const queueRestart = 5 * time.Second

// runQueue runs the queue for the gateway's lifetime when cfg.workers > 0:
// q.Run with n as the worker and tasks as its periodic tasks, and, beside
// it, one reconcile at once (the queue's first reconcile comes only after
// its interval), which settles what a crash of this or another instance
// left. The returned function stops both and waits for them: the sends a
// worker holds finish first (pgqueue lets them for up to 10 seconds). It
// may be called more than once. With no workers it does nothing: the
// instance only queues, and the instances that run workers deliver and
// run the periodic tasks.
func runQueue(cfg *config, q queue.Queue, n *notify.Notifier, tasks []queue.Periodic, logger *slog.Logger) (stop func()) {
	if cfg.workers == 0 {
		logger.Info("NOTIFY_WORKERS=0: this instance queues sends; instances with workers deliver them and run the periodic tasks")
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { reconcile(ctx, n, logger) })
	wg.Go(func() {
		// Run returns an error only when the queue could not start (the
		// database did not answer, say): try again until stopped.
		for {
			err := q.Run(ctx, queued.New(n), tasks...)
			if err == nil || ctx.Err() != nil {
				return
			}
			logger.Error("the queue's workers did not start; trying again in 5s", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(queueRestart):
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
}

// minLevel is a handler that drops the records below its level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

// quietInterval is how often River's logger lets one message through
// (newQuiet).
const quietInterval = 30 * time.Second

// quiet is a slog.Handler that lets each message (a record's text) through
// at most once an interval, adding "repeated": the records of that
// message it held back since the last one through. It bounds the lines a
// failure that repeats many times a second (River's, while its database
// is down) writes, and still says how often it happened. It remembers at
// most quietKeys messages; a record of another one passes as it is.
type quiet struct {
	next slog.Handler
	st   *quietState
}

// quietKeys bounds the messages quiet remembers: River's are a few dozen
// constant texts.
const quietKeys = 256

type quietState struct {
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	seen  map[string]*quietEntry
}

type quietEntry struct {
	last time.Time // when a record of it went through
	held int       // records held back since
}

func newQuiet(next slog.Handler, every time.Duration, now func() time.Time) quiet {
	return quiet{next: next, st: &quietState{every: every, now: now, seen: make(map[string]*quietEntry)}}
}

func (h quiet) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h quiet) Handle(ctx context.Context, r slog.Record) error {
	held, pass := h.st.admit(r.Message)
	if !pass {
		return nil
	}
	if held > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("repeated", held))
	}
	return h.next.Handle(ctx, r)
}

// admit says whether a record of msg goes through now, and how many were
// held back before it.
func (s *quietState) admit(msg string) (held int, pass bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.seen[msg]
	switch {
	case !ok && len(s.seen) >= quietKeys:
		return 0, true
	case !ok:
		s.seen[msg] = &quietEntry{last: now}
		return 0, true
	case now.Sub(e.last) < s.every:
		e.held++
		return 0, false
	}
	held, e.held, e.last = e.held, 0, now
	return held, true
}

func (h quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{h.next.WithAttrs(as), h.st} }

func (h quiet) WithGroup(name string) slog.Handler { return quiet{h.next.WithGroup(name), h.st} }
