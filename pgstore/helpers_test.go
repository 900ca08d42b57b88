package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// newStore returns a migrated Store in a fresh schema, with its pool.
func newStore(t testing.TB, opts ...pgstore.Option) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 8)
	s, err := pgstore.New(pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s, pool
}

// migrateThrough gives pool's schema (tables prefixed "notify_") the
// tables of migration last, as Migrate left them before the next was
// written: the files up to last, applied and recorded as Migrate does.
// Tests of a migration write rows in that schema, then migrate.
func migrateThrough(t testing.TB, pool *pgxpool.Pool, last int) {
	t.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, `CREATE TABLE notify_schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now())`)
	must(t, err)
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	must(t, err)
	slices.Sort(files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		must(t, err)
		if v > last {
			break
		}
		body, err := os.ReadFile(f)
		must(t, err)
		sql := strings.NewReplacer("{{s}}", "", "{{p}}", "notify_").Replace(string(body))
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		_, err = pool.Exec(ctx, `INSERT INTO notify_schema_migrations (version, name) VALUES ($1, $2)`, v, name)
		must(t, err)
	}
}

func inr(minor int64) notify.Money { return notify.Money{Minor: minor, Currency: record.INR()} }

// openWallet opens a wallet or fails the test.
func openWallet(t testing.TB, s *pgstore.Store, account string, opening int64) {
	t.Helper()
	if err := s.OpenWallet(context.Background(), account, inr(opening)); err != nil {
		t.Fatalf("OpenWallet(%s): %v", account, err)
	}
}

// storeKinds are the sentinels a store's errors match.
var storeKinds = []error{store.ErrNotFound, store.ErrConflict, store.ErrInsufficientFunds,
	store.ErrInvalid, store.ErrUnauthenticated, store.ErrUnavailable}

// wantErr fails the test unless err is the store's answer of kind: it
// matches kind (a sentinel of package store, or a context error) and no
// other sentinel, and is no *notify.Error (stores build none). A nil kind
// is the store failing: an error that matches no sentinel, no context
// error and is no *store.LimitError, which the Notifier reports as
// internal.
func wantErr(t testing.TB, err error, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want %v", kind)
	}
	var ne *notify.Error
	if errors.As(err, &ne) {
		t.Fatalf("error %v is a *notify.Error; a store answers with package store's errors", err)
	}
	for _, k := range append(storeKinds, context.Canceled, context.DeadlineExceeded) {
		if is := errors.Is(err, k); is != (k == kind) {
			t.Fatalf("error %v (%T): errors.Is(%v) = %v, want kind %v", err, err, k, is, kind)
		}
	}
	var limit *store.LimitError
	if errors.As(err, &limit) {
		t.Fatalf("error %v is a *store.LimitError, want kind %v", err, kind)
	}
}

func wantBalance(t testing.TB, s *pgstore.Store, account string, want int64) {
	t.Helper()
	b, err := s.Balance(context.Background(), account)
	if err != nil {
		t.Fatalf("Balance(%s): %v", account, err)
	}
	if b.Available.Minor != want {
		t.Fatalf("Balance(%s) = %d, want %d", account, b.Available.Minor, want)
	}
}

func checkLedger(t testing.TB, s *pgstore.Store, account string) {
	t.Helper()
	if err := s.CheckLedger(context.Background(), account); err != nil {
		t.Fatalf("CheckLedger(%s): %v", account, err)
	}
}

// ledgerRows counts the ledger rows of an account with the ref.
func ledgerRows(t testing.TB, pool *pgxpool.Pool, account, ref string) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM notify_ledger WHERE account = $1 AND ref = $2`, account, ref).Scan(&n)
	if err != nil {
		t.Fatalf("count ledger rows: %v", err)
	}
	return n
}

// waitFor polls cond every 10ms until it holds, failing the test after
// timeout. It is for conditions only the server can report (a backend
// waiting on a lock), which no Go channel can signal.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ref(i int) string { return fmt.Sprintf("ref-%d", i) }

// A Store reports its health to the Notifier's readiness checks; the
// guard lives here because package pgstore does not import notify.
var _ interface{ CheckHealth(context.Context) error } = (*pgstore.Store)(nil)
