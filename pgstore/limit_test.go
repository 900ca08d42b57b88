package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/store"
)

var limitT0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// takeOK reports whether Take allowed, failing t on any error other than
// a refusal.
func takeOK(t testing.TB, l store.Limiter, key string, now time.Time) bool {
	t.Helper()
	err := l.Take(context.Background(), key, now)
	if err == nil {
		return true
	}
	if !isLimit(err) {
		t.Fatalf("Take(%q): %v", key, err)
	}
	return false
}

// isLimit reports whether err is a limiter's refusal: a *store.LimitError
// with a Rule and a positive RetryAfter, matching none of store's
// sentinels.
func isLimit(err error) bool {
	var e *store.LimitError
	if !errors.As(err, &e) || e.Rule == "" || e.RetryAfter <= 0 {
		return false
	}
	for _, kind := range storeKinds {
		if errors.Is(err, kind) {
			return false
		}
	}
	return true
}

// TestLimitsShareABudget runs two Stores over two pools on one database,
// as two instances of a gateway would: Takes of one key through both at
// once are granted exactly the budget, and an Undo through one frees a
// unit for the other.
func TestLimitsShareABudget(t *testing.T) {
	schema := pgstoretest.Schema(t)
	stores := []*pgstore.Store{pgstoretest.Store(t, schema), pgstoretest.Store(t, schema)}
	const budget = 20
	limiters := map[string][2]store.Limiter{}
	// Every Take is at one instant, so every refusal has the same wait:
	// until the first unit is earned back, or leaves the window.
	retryAfter := map[string]time.Duration{"RateLimit": time.Second, "WindowLimit": time.Minute}
	var rate, window [2]store.Limiter
	for i, s := range stores {
		r, err := s.RateLimit("rate", 1, budget)
		must(t, err)
		w, err := s.WindowLimit("otp", budget, time.Minute)
		must(t, err)
		rate[i], window[i] = r, w
	}
	limiters["RateLimit"], limiters["WindowLimit"] = rate, window
	for name, ls := range limiters {
		t.Run(name, func(t *testing.T) {
			key := "acme\x00" + "9876543210"
			const goroutines, takes = 16, 5
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				granted [2]int
				errs    []error
			)
			start := make(chan struct{})
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					l := ls[g%2]
					for range takes {
						err := l.Take(context.Background(), key, limitT0)
						var e *store.LimitError
						mu.Lock()
						switch {
						case err == nil:
							granted[g%2]++
						case isLimit(err) && errors.As(err, &e) && e.RetryAfter == retryAfter[name]:
						default:
							errs = append(errs, fmt.Errorf("take: %w (%+v)", err, e))
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if granted[0]+granted[1] != budget {
				t.Fatalf("two pools granted %d + %d Takes, want %d in all", granted[0], granted[1], budget)
			}
			for i, l := range ls {
				if takeOK(t, l, key, limitT0) {
					t.Fatalf("store %d allowed a Take over the shared budget", i)
				}
			}
			must(t, ls[0].Undo(context.Background(), key, limitT0))
			if !takeOK(t, ls[1], key, limitT0) {
				t.Fatal("a unit given back through one store is not free for the other")
			}
			if takeOK(t, ls[0], key, limitT0) {
				t.Fatal("one Undo freed two units")
			}
		})
	}
}

// TestLimitNamesSeparateBudgets: the name, not the table, makes a budget;
// a RateLimit and a WindowLimit of one name are separate too.
func TestLimitNamesSeparateBudgets(t *testing.T) {
	s, _ := newStore(t, pgstore.WithTablePrefix("nt_"))
	rate, err := s.RateLimit("a", 1, 2)
	must(t, err)
	otherRate, err := s.RateLimit("b", 1, 2)
	must(t, err)
	window, err := s.WindowLimit("a", 2, time.Hour)
	must(t, err)
	otherWindow, err := s.WindowLimit("b", 2, time.Hour)
	must(t, err)
	const key = "acme"
	for _, l := range []store.Limiter{rate, otherRate, window, otherWindow} {
		for i := range 2 {
			if !takeOK(t, l, key, limitT0) {
				t.Fatalf("%T take %d refused: another limiter's Takes counted", l, i+1)
			}
		}
		if takeOK(t, l, key, limitT0) {
			t.Fatalf("%T allowed three of two", l)
		}
	}
	// A new limiter of a name is the same budget: it holds no state.
	again, err := s.RateLimit("a", 1, 2)
	must(t, err)
	if takeOK(t, again, key, limitT0) {
		t.Fatal("a second RateLimit named a has a budget of its own")
	}
}

func TestLimitConstructorsRefuse(t *testing.T) {
	// The constructors check their parameters without the server.
	pool, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable", closedPort(t)))
	must(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool)
	must(t, err)
	for _, tc := range []struct {
		name      string
		perSecond float64
		burst     int
		param     string
	}{
		{"", 1, 1, "name"},
		{strings.Repeat("n", 65), 1, 1, "name"},
		{"a\x00b", 1, 1, "name"},
		{"\xff", 1, 1, "name"},
		{"rate", 0, 1, "perSecond"},
		{"rate", math.NaN(), 1, "perSecond"},
		{"rate", math.Inf(1), 1, "perSecond"},
		{"rate", 2e9, 1, "perSecond"},
		{"rate", 1, 0, "burst"},
		{"rate", 1e-9, 1, "burst"},
	} {
		l, err := s.RateLimit(tc.name, tc.perSecond, tc.burst)
		if l != nil || !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.param) {
			t.Errorf("RateLimit(%q, %g, %d) = %v, %v; want InvalidArgument naming %s", tc.name, tc.perSecond, tc.burst, l, err, tc.param)
		}
	}
	for _, tc := range []struct {
		name   string
		max    int
		window time.Duration
		param  string
	}{
		{"", 5, time.Minute, "name"},
		{"otp", 0, time.Minute, "max"},
		{"otp", pgstore.MaxWindowLimit + 1, time.Minute, "max"},
		{"otp", 5, 0, "window"},
		{"otp", 5, 11 * 365 * 24 * time.Hour, "window"},
	} {
		l, err := s.WindowLimit(tc.name, tc.max, tc.window)
		if l != nil || !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.param) {
			t.Errorf("WindowLimit(%q, %d, %v) = %v, %v; want InvalidArgument naming %s", tc.name, tc.max, tc.window, l, err, tc.param)
		}
	}
	// Good parameters need no server; a Take does, and says so promptly.
	l, err := s.WindowLimit("otp", pgstore.MaxWindowLimit, time.Minute)
	must(t, err)
	start := time.Now()
	wantErr(t, l.Take(context.Background(), "k", limitT0), store.ErrUnavailable)
	wantErr(t, l.Undo(context.Background(), "k", limitT0), store.ErrUnavailable)
	r, err := s.RateLimit("rate", 1e9, 1)
	must(t, err)
	wantErr(t, r.Take(context.Background(), "k", limitT0), store.ErrUnavailable)
	wantErr(t, r.Undo(context.Background(), "k", limitT0), store.ErrUnavailable)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("four calls to a closed port took %v", d)
	}
}

func TestLimitRefusalsStateTheLimit(t *testing.T) {
	s, _ := newStore(t)
	w, err := s.WindowLimit("otp", 5, 15*time.Minute)
	must(t, err)
	r, err := s.RateLimit("rate", 10, 20)
	must(t, err)
	for range 20 {
		_ = w.Take(context.Background(), "k", limitT0)
		must(t, r.Take(context.Background(), "k", limitT0))
	}
	for _, tc := range []struct {
		l    store.Limiter
		want string
	}{
		{w, "at most 5 per 15m0s"},
		{r, "at most 20 at once, then 1 per 100ms"},
	} {
		err := tc.l.Take(context.Background(), "k", limitT0)
		var e *store.LimitError
		if !isLimit(err) || !errors.As(err, &e) || e.Rule != tc.want {
			t.Errorf("refusal %v, want the rule %q", err, tc.want)
		}
	}
}

// TestLimitRowsStayBounded: a key keeps one row, whose window holds at
// most max times; Cleanup deletes the rows that count nothing any more,
// and only those.
func TestLimitRowsStayBounded(t *testing.T) {
	now := limitT0
	s, pool := newStore(t, pgstore.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	w, err := s.WindowLimit("otp", 3, time.Minute)
	must(t, err)
	r, err := s.RateLimit("rate", 1, 3) // a burst lasts 3s
	must(t, err)
	for i := range 50 {
		at := limitT0.Add(time.Duration(i) * 10 * time.Second)
		takeOK(t, w, "busy", at)
		takeOK(t, r, "busy", at)
	}
	var rows, most int
	must(t, pool.QueryRow(ctx, `SELECT count(*), max(cardinality(hits)) FROM notify_window_limits`).Scan(&rows, &most))
	if rows != 1 || most > 3 {
		t.Fatalf("50 Takes of one key left %d window rows holding up to %d times, want 1 row of at most 3", rows, most)
	}

	for i := range 10 {
		takeOK(t, w, fmt.Sprint("quiet-", i), limitT0)
		takeOK(t, r, fmt.Sprint("quiet-", i), limitT0)
	}
	countRows := func() (rate, window int) {
		t.Helper()
		must(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM notify_rate_limits),
			(SELECT count(*) FROM notify_window_limits)`).Scan(&rate, &window))
		return rate, window
	}
	if rr, wr := countRows(); rr != 11 || wr != 11 {
		t.Fatalf("%d rate rows and %d window rows, want 11 each", rr, wr)
	}
	// Half a second on, every bucket still lacks units and every window
	// counts its units: Cleanup keeps them all.
	now = limitT0.Add(500 * time.Millisecond)
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("Cleanup removed %d live rows", n)
	}
	// Two minutes on, the quiet keys count nothing; "busy" took units
	// until 490s.
	now = limitT0.Add(2 * time.Minute)
	n, err = s.Cleanup(ctx)
	must(t, err)
	if n != 20 {
		t.Fatalf("Cleanup removed %d rows, want the 20 of the quiet keys", n)
	}
	if rr, wr := countRows(); rr != 1 || wr != 1 {
		t.Fatalf("after Cleanup: %d rate rows and %d window rows, want 1 each", rr, wr)
	}
	// A key whose row was deleted has its whole budget.
	for i := range 3 {
		if !takeOK(t, w, "quiet-0", now) || !takeOK(t, r, "quiet-0", now) {
			t.Fatalf("take %d of a cleaned-up key refused", i+1)
		}
	}
	// An hour on, "busy" goes too.
	now = limitT0.Add(time.Hour)
	n, err = s.Cleanup(ctx)
	must(t, err)
	if n != 4 {
		t.Fatalf("Cleanup removed %d rows, want 4", n)
	}
}

// TestLimitsBeforeMigrate: without the tables, Take says what is missing.
func TestLimitsBeforeMigrate(t *testing.T) {
	s, err := pgstore.New(pgstoretest.Pool(t, pgstoretest.Schema(t), 2))
	must(t, err)
	r, err := s.RateLimit("rate", 1, 1)
	must(t, err)
	w, err := s.WindowLimit("otp", 1, time.Minute)
	must(t, err)
	for _, l := range []store.Limiter{r, w} {
		err := l.Take(context.Background(), "k", limitT0)
		wantErr(t, err, nil)
		if !strings.Contains(err.Error(), "Migrate") {
			t.Errorf("%T.Take before Migrate: %v, want a hint at Migrate", l, err)
		}
	}
}

// TestLimitsHonourContext: a canceled Take is Canceled and spends nothing.
func TestLimitsHonourContext(t *testing.T) {
	s, _ := newStore(t)
	r, err := s.RateLimit("rate", 1, 1)
	must(t, err)
	w, err := s.WindowLimit("otp", 1, time.Minute)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, l := range []store.Limiter{r, w} {
		err := l.Take(ctx, "k", limitT0)
		wantErr(t, err, context.Canceled)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%T.Take: %v does not wrap context.Canceled", l, err)
		}
		wantErr(t, l.Undo(ctx, "k", limitT0), context.Canceled)
		if !takeOK(t, l, "k", limitT0) {
			t.Errorf("%T: a canceled Take spent the unit", l)
		}
	}
}
