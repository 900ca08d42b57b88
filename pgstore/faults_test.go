package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// blocker holds, from a connection of its own, a lock that makes a debit
// of "acme" with ref "m1" wait inside its statement.
type blocker func(t *testing.T, schema string) (release func())

// blockers are the two places a debit can be stopped: before it moves the
// money (the wallet row is locked) and after (its UPDATE is done and its
// ledger INSERT waits for an uncommitted row with the same ref).
var blockers = map[string]blocker{
	"before-update": func(t *testing.T, schema string) func() {
		return holdTx(t, schema, `SELECT 1 FROM notify_wallets WHERE account = 'acme' FOR UPDATE`)
	},
	"after-update": func(t *testing.T, schema string) func() {
		return holdTx(t, schema, `INSERT INTO notify_ledger (account, ref, amount, balance_after)
			VALUES ('acme', 'm1', -1, 0)`)
	},
}

// holdTx runs sql in a transaction left open until release is called
// (release rolls it back).
func holdTx(t *testing.T, schema, sql string) (release func()) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(pgstoretest.URL(t))
	must(t, err)
	cfg.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	must(t, err)
	tx, err := conn.Begin(ctx)
	must(t, err)
	if _, err := tx.Exec(ctx, sql); err != nil {
		t.Fatalf("blocker: %v", err)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		_ = tx.Rollback(ctx)
		_ = conn.Close(ctx)
	}
	t.Cleanup(release)
	return release
}

// adminExec runs one statement on a fresh connection.
func adminQueryRow(t *testing.T, sql string, args []any, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgstoretest.URL(t))
	must(t, err)
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// waitingBackend waits until a backend of the application is waiting on a
// lock and returns its pid.
func waitingBackend(t *testing.T, app string) int32 {
	t.Helper()
	var pid int32
	waitFor(t, 10*time.Second, "the debit to wait on the lock", func() (bool, error) {
		var pids []int32
		adminQueryRow(t, `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, []any{app}, &pids)
		if len(pids) == 1 {
			pid = pids[0]
		}
		return len(pids) == 1, nil
	})
	return pid
}

// waitIdle waits until no backend of the application runs a statement.
func waitIdle(t *testing.T, app string) {
	t.Helper()
	waitFor(t, 10*time.Second, "the debit's backend to finish", func() (bool, error) {
		var n int
		adminQueryRow(t, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND state <> 'idle'`, []any{app}, &n)
		return n == 0, nil
	})
}

func withApp(app string) func(*pgxpool.Config) {
	return func(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["application_name"] = app }
}

// debitAsync starts a debit of 100 from "acme" under ref "m1".
func debitAsync(ctx context.Context, s *pgstore.Store) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.Debit(ctx, "acme", inr(100), "m1")
		done <- err
	}()
	return done
}

func await(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("the debit hangs")
		return nil
	}
}

// settled checks the aftermath of an interrupted debit of 100 from 1000
// under ref m1: the ledger row and the money moved together or not at
// all, and repeating the debit charges exactly once. It reports whether
// the interrupted debit had taken effect.
func settled(t *testing.T, s *pgstore.Store, pool *pgxpool.Pool) (charged bool) {
	t.Helper()
	rows := ledgerRows(t, pool, "acme", "m1")
	b, err := s.Balance(context.Background(), "acme")
	must(t, err)
	switch {
	case rows == 0 && b.Available.Minor == 1000:
	case rows == 1 && b.Available.Minor == 900:
		charged = true
	default:
		t.Fatalf("half a debit: %d ledger rows, balance %d", rows, b.Available.Minor)
	}
	checkLedger(t, s, "acme")
	b, err = s.Debit(context.Background(), "acme", inr(100), "m1")
	must(t, err)
	if b.Available.Minor != 900 || ledgerRows(t, pool, "acme", "m1") != 1 {
		t.Fatalf("repeat: balance %d, want 900 with one row", b.Available.Minor)
	}
	checkLedger(t, s, "acme")
	return charged
}

// TestTerminatedDuringDebit kills the debit's backend with
// pg_terminate_backend while its statement is open. Debit runs the
// statement again on a fresh connection (safe: the ref makes a repeat
// answer the first run), so it returns Unavailable only when every attempt
// was killed; a statement killed after its UPDATE must leave no trace.
func TestTerminatedDuringDebit(t *testing.T) {
	for name, block := range blockers {
		t.Run(name+"/always", func(t *testing.T) {
			s, pool, app, schema := killableStore(t)
			release := block(t, schema)
			done := debitAsync(context.Background(), s)
			killed := map[int32]bool{}
			var err error
			for finished := false; !finished; {
				var pid int32
				pid, err, finished = waitingBackendOr(t, app, done, killed)
				if !finished {
					terminate(t, pid)
					killed[pid] = true
				}
			}
			wantErr(t, err, store.ErrUnavailable)
			t.Logf("Debit gave up after %d terminated attempts: %v", len(killed), err)
			release()
			if settled(t, s, pool) {
				t.Fatal("a terminated debit took effect")
			}
		})
		t.Run(name+"/once", func(t *testing.T) {
			s, pool, app, schema := killableStore(t)
			release := block(t, schema)
			done := debitAsync(context.Background(), s)
			pid, err, finished := waitingBackendOr(t, app, done, nil)
			if finished {
				t.Fatalf("Debit returned before it was blocked: %v", err)
			}
			terminate(t, pid)
			// The repeat waits on the blocker like the first attempt did.
			if _, err, finished := waitingBackendOr(t, app, done, map[int32]bool{pid: true}); finished {
				t.Fatalf("Debit returned after one lost connection: %v", err)
			}
			release()
			if err := await(t, done); err != nil {
				t.Fatalf("Debit after one lost connection: %v", err)
			}
			if !settled(t, s, pool) {
				t.Fatal("the repeated debit did not take effect")
			}
		})
	}
}

func killableStore(t *testing.T) (s *pgstore.Store, pool *pgxpool.Pool, app, schema string) {
	t.Helper()
	schema = pgstoretest.Schema(t)
	app = pgstoretest.RandomName("pgstore_kill_")
	pool = pgstoretest.Pool(t, schema, 4, withApp(app))
	s, err := pgstore.New(pool)
	must(t, err)
	must(t, s.Migrate(context.Background()))
	openWallet(t, s, "acme", 1000)
	return s, pool, app, schema
}

func terminate(t *testing.T, pid int32) {
	t.Helper()
	var ok bool
	adminQueryRow(t, `SELECT pg_terminate_backend($1)`, []any{pid}, &ok)
	if !ok {
		t.Fatalf("pg_terminate_backend(%d) failed", pid)
	}
}

// waitingBackendOr waits until a backend of the application, other than
// the killed ones (which linger a moment), waits on a lock, returning its
// pid, or until the call behind done returns.
func waitingBackendOr(t *testing.T, app string, done <-chan error, killed map[int32]bool) (pid int32, err error, finished bool) {
	t.Helper()
	waitFor(t, 10*time.Second, "the debit to wait on a lock or return", func() (bool, error) {
		select {
		case err = <-done:
			finished = true
			return true, nil
		default:
		}
		var pids []int32
		adminQueryRow(t, `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, []any{app}, &pids)
		for _, p := range pids {
			if !killed[p] {
				pid = p
				return true, nil
			}
		}
		return false, nil
	})
	return pid, err, finished
}

// TestCanceledDuringDebit cancels the debit's context while its statement
// waits. Open's pool asks the server to cancel the statement, so nothing
// moves; the caller sees Canceled (or DeadlineExceeded) with errors.Is.
func TestCanceledDuringDebit(t *testing.T) {
	for name, block := range blockers {
		for _, deadline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deadline=%v", name, deadline), func(t *testing.T) {
				schema := pgstoretest.Schema(t)
				app := pgstoretest.RandomName("pgstore_cancel_")
				s, err := pgstore.Open(context.Background(),
					withParams(pgstoretest.URL(t), "search_path="+schema, "application_name="+app))
				must(t, err)
				t.Cleanup(s.Close)
				must(t, s.Migrate(context.Background()))
				openWallet(t, s, "acme", 1000)
				pool := pgstoretest.Pool(t, schema, 1)

				release := block(t, schema)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if deadline {
					ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
					defer cancel()
				}
				done := debitAsync(ctx, s)
				waitingBackend(t, app)
				if !deadline {
					cancel()
				}
				err = await(t, done)
				want := context.Canceled
				if deadline {
					want = context.DeadlineExceeded
				}
				wantErr(t, err, want)
				release()
				waitIdle(t, app)
				if settled(t, s, pool) {
					t.Fatal("a canceled debit took effect")
				}
			})
		}
	}
}

// TestCanceledDuringDebitHostPool cancels a debit on a host's pool with
// pgx's default context handling, which drops the connection but leaves
// the statement to the server: the debit may complete after the caller
// was told Canceled. The ledger must still be whole, and a repeat with the
// same ref must tell the truth.
func TestCanceledDuringDebitHostPool(t *testing.T) {
	for name, block := range blockers {
		t.Run(name, func(t *testing.T) {
			schema := pgstoretest.Schema(t)
			app := pgstoretest.RandomName("pgstore_hcancel_")
			pool := pgstoretest.Pool(t, schema, 4, withApp(app))
			s, err := pgstore.New(pool)
			must(t, err)
			must(t, s.Migrate(context.Background()))
			openWallet(t, s, "acme", 1000)

			release := block(t, schema)
			ctx, cancel := context.WithCancel(context.Background())
			done := debitAsync(ctx, s)
			waitingBackend(t, app)
			cancel()
			err = await(t, done)
			wantErr(t, err, context.Canceled)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("errors.Is(%v, context.Canceled) is false", err)
			}
			release()
			waitIdle(t, app)
			t.Logf("the abandoned debit took effect: %v", settled(t, s, pool))
		})
	}
}

func withParams(url string, params ...string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + strings.Join(params, "&")
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must(t, l.Close())
	return port
}

// TestDatabaseDown talks to a port where no server listens: every call is
// Unavailable, promptly.
func TestDatabaseDown(t *testing.T) {
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/notify?sslmode=disable&connect_timeout=2", closedPort(t))
	ctx := context.Background()

	start := time.Now()
	_, err := pgstore.Open(ctx, url)
	wantErr(t, err, store.ErrUnavailable)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Open took %v", d)
	}

	pool, err := pgxpool.New(ctx, url) // connects lazily
	must(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool)
	must(t, err)
	calls := map[string]func() error{
		"Debit":           func() error { _, err := s.Debit(ctx, "a", inr(1), "r"); return err },
		"Credit":          func() error { _, err := s.Credit(ctx, "a", inr(1), "r"); return err },
		"Balance":         func() error { _, err := s.Balance(ctx, "a"); return err },
		"OpenWallet":      func() error { return s.OpenWallet(ctx, "a", inr(1)) },
		"CheckLedger":     func() error { return s.CheckLedger(ctx, "a") },
		"Account":         func() error { _, err := s.Account(ctx, "a"); return err },
		"AccountByKey":    func() error { _, err := s.AccountByKey(ctx, "k"); return err },
		"PutAccount":      func() error { return s.PutAccount(ctx, &notify.Account{ID: "a"}, "k") },
		"ReplaceAPIKeys":  func() error { return s.ReplaceAPIKeys(ctx, "a", "k") },
		"AddAPIKeyIfNone": func() error { _, err := s.AddAPIKeyIfNone(ctx, "a", "k"); return err },
		"Reserve":         func() error { _, err := s.Reserve(ctx, "a", "k", "f"); return err },
		"Complete":        func() error { return s.Complete(ctx, "a", "k", []byte(`{}`)) },
		"Release":         func() error { return s.Release(ctx, "a", "k") },
		"Open":            func() error { _, err := s.Open(ctx, &record.Message{ID: "m", Account: "a"}); return err },
		"Move":            func() error { _, err := s.Move(ctx, "a", "m", store.Update{}); return err },
		"Message":         func() error { _, err := s.Message(ctx, "a", "m"); return err },
		"Template":        func() error { _, err := s.Template(ctx, "a", "s"); return err },
		"Templates":       func() error { _, err := s.Templates(ctx, "a"); return err },
		"PutTemplate":     func() error { return s.PutTemplate(ctx, "a", &store.Template{Slug: "s"}) },
		"PutCategory":     func() error { _, err := s.PutCategory(ctx, store.Category{Account: "a", Name: "order"}); return err },
		"Categories":      func() error { _, err := s.Categories(ctx, "a"); return err },
		"RemoveCategory":  func() error { return s.RemoveCategory(ctx, "a", "order") },
		"SetChoice":       func() error { return s.SetChoice(ctx, "a", "sms", "+919876543210", "order", true) },
		"Choices":         func() error { _, err := s.Choices(ctx, "a", "sms", "+919876543210"); return err },
		"LookupChoices":   func() error { _, _, err := s.LookupChoices(ctx, "a", "order", "sms", nil); return err },
		"Migrate":         func() error { return s.Migrate(ctx) },
		"Cleanup":         func() error { _, err := s.Cleanup(ctx); return err },
		"CheckHealth":     func() error { return s.CheckHealth(ctx) },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: %v, want store.ErrUnavailable", name, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v", name, d)
		}
	}
}

// TestBackendsKilledBetweenCalls terminates every idle connection of the
// pool, as a server restart would: the next calls recover on fresh
// connections.
func TestBackendsKilledBetweenCalls(t *testing.T) {
	schema := pgstoretest.Schema(t)
	app := pgstoretest.RandomName("pgstore_restart_")
	pool := pgstoretest.Pool(t, schema, 4, withApp(app))
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	openWallet(t, s, "acme", 1000)
	wantBalance(t, s, "acme", 1000)

	var killed int
	adminQueryRow(t, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, []any{app}, &killed)
	if killed == 0 {
		t.Fatal("no backend to kill")
	}
	waitFor(t, 10*time.Second, "the backends to exit", func() (bool, error) {
		var n int
		adminQueryRow(t, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, []any{app}, &n)
		return n == 0, nil
	})
	b, err := s.Debit(ctx, "acme", inr(100), "m1")
	if err != nil {
		t.Fatalf("Debit after the restart: %v", err)
	}
	if b.Available.Minor != 900 {
		t.Fatalf("balance %d", b.Available.Minor)
	}
	checkLedger(t, s, "acme")
}
