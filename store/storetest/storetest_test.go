package storetest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
)

// The simple stores below are deliberately plain. With no defect each
// must pass its suite; each defect must make the suite fail.

type simpleAccounts struct {
	defect string
	byID   map[string]*record.Account
	keys   map[string]string // key -> ID
}

func (s *simpleAccounts) Account(ctx context.Context, id string) (*record.Account, error) {
	a, ok := s.byID[id]
	if !ok {
		switch s.defect {
		case "notfound-internal":
			return nil, errors.New("no such account")
		case "notfound-also-unavailable":
			return nil, errors.Join(fmt.Errorf("no account %q: %w", id, store.ErrNotFound), store.ErrUnavailable)
		}
		return nil, fmt.Errorf("simple: no account %q: %w", id, store.ErrNotFound)
	}
	return s.out(a), nil
}

func (s *simpleAccounts) AccountByKey(ctx context.Context, key string) (*record.Account, error) {
	for k, id := range s.keys {
		match := k == key
		if s.defect == "prefix-match" {
			match = key != "" && strings.HasPrefix(k, key)
		}
		if match {
			return s.out(s.byID[id]), nil
		}
	}
	if s.defect == "leaks-key" {
		return nil, fmt.Errorf("simple: unknown key %q: %w", key, store.ErrUnauthenticated)
	}
	return nil, fmt.Errorf("simple: unknown key: %w", store.ErrUnauthenticated)
}

func (s *simpleAccounts) out(a *record.Account) *record.Account {
	if s.defect == "shares" {
		return a
	}
	if s.defect == "shares-settings" { // the map copied, its bytes not
		c := *a
		c.Settings = maps.Clone(a.Settings)
		return &c
	}
	return storeutil.CloneAccount(a)
}

type idemEntry struct {
	fp       string
	r        []byte
	reserved time.Time
	leaseEnd time.Time
	expires  time.Time
}

type simpleIdem struct {
	defect string
	ttl    time.Duration
	lease  time.Duration
	now    func() time.Time
	mu     sync.Mutex
	m      map[string]*idemEntry

	// The racy-reserve defect holds the first caller that found a key
	// free until a second one has found it free too, so that the race it
	// stands for always happens (bounded, should only one caller come).
	racyOnce    sync.Once
	racyGate    chan struct{}
	racyReaders atomic.Int32
}

func (s *simpleIdem) key(account, key string) string {
	if s.defect == "global-keys" {
		return key
	}
	return account + "\x00" + key
}

func (s *simpleIdem) entry(now time.Time, fp string) *idemEntry {
	return &idemEntry{fp: fp, reserved: now, leaseEnd: now.Add(s.lease), expires: now.Add(s.ttl)}
}

func (s *simpleIdem) Reserve(ctx context.Context, account, key, fp string) (store.Reservation, error) {
	if s.defect == "racy-reserve" {
		s.mu.Lock()
		e, ok := s.m[s.key(account, key)]
		s.mu.Unlock()
		if !ok {
			s.racyOnce.Do(func() { s.racyGate = make(chan struct{}) })
			if s.racyReaders.Add(1) == 2 {
				close(s.racyGate)
			}
			select {
			case <-s.racyGate:
			case <-time.After(time.Second):
			}
		}
		if ok {
			return store.Reservation{Receipt: e.r}, fmt.Errorf("taken: %w", store.ErrConflict)
		}
		s.mu.Lock()
		s.m[s.key(account, key)] = s.entry(s.now(), fp)
		s.mu.Unlock()
		return store.Reservation{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var res store.Reservation
	if e, ok := s.m[s.key(account, key)]; ok && (s.defect == "no-expiry" || e.expires.After(now)) {
		switch {
		case e.fp != fp && s.defect != "no-fingerprint":
			return res, fmt.Errorf("other request: %w", store.ErrConflict)
		case e.r == nil && !e.leaseEnd.After(now) && s.defect != "no-lease":
			if s.defect != "silent-takeover" {
				res.Abandoned = e.reserved
			}
		case e.r == nil:
			return res, fmt.Errorf("in flight: %w", store.ErrConflict)
		default:
			res.Receipt = e.r
			return res, nil
		}
	}
	s.m[s.key(account, key)] = s.entry(now, fp)
	return res, nil
}

func (s *simpleIdem) Complete(ctx context.Context, account, key string, r []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[s.key(account, key)]
	if !ok {
		return fmt.Errorf("simple: not reserved: %w", store.ErrNotFound)
	}
	if e.r != nil && s.defect != "completes-twice" {
		return fmt.Errorf("simple: completed already: %w", store.ErrConflict)
	}
	switch s.defect {
	case "retains-receipt":
		e.r = r
	case "receipt-as-text":
		// A text column: invalid UTF-8 and NUL bytes do not survive.
		e.r = []byte(strings.ReplaceAll(strings.ToValidUTF8(string(r), "\uFFFD"), "\x00", ""))
	default:
		e.r = bytes.Clone(r)
	}
	e.expires = s.now().Add(s.ttl)
	return nil
}

func (s *simpleIdem) Release(ctx context.Context, account, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[s.key(account, key)]; ok && (e.r == nil || s.defect == "release-drops-receipt") {
		delete(s.m, s.key(account, key))
	}
	return nil
}

// flawedLedger is a memstore.Ledger whose Move, with defect
// "moved-lies", answers that a refund was not made, and whose Open, with
// "opens-pending", opens every record pending.
type flawedLedger struct {
	*memstore.Ledger
	defect string
}

func (l flawedLedger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if l.defect == "opens-pending" && m.State == record.StateAttempting {
		m.State = record.StatePending
	}
	return l.Ledger.Open(ctx, m)
}

// OpenUnlisted goes through Open, as a wrapper's must.
func (l flawedLedger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	return storeutil.OpenUnlisted(ctx, l, m, to, stopping)
}

func (l flawedLedger) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	m, err := l.Ledger.Move(ctx, account, id, u)
	if l.defect == "moved-lies" {
		m.Refunded = false
	}
	return m, err
}

type simpleTemplates struct {
	defect string
	mu     sync.Mutex
	m      map[string]map[string]*store.Template
}

func (s *simpleTemplates) copyOf(t *store.Template) *store.Template {
	if s.defect == "shares" {
		return t
	}
	if s.defect == "shares-bodies" { // the Variables copied, the Bodies map not
		c := *t
		c.Variables = slices.Clone(t.Variables)
		return &c
	}
	c := storeutil.CloneTemplate(t)
	switch s.defect {
	case "shares-locales": // the Locales map copied, each variant's bodies not
		c.Locales = maps.Clone(t.Locales)
	case "drops-locales": // a store written before Locales
		c.Locales = nil
	}
	return c
}

func (s *simpleTemplates) Template(ctx context.Context, account, slug string) (*store.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[account][slug]
	if !ok {
		return nil, fmt.Errorf("simple: no template: %w", store.ErrNotFound)
	}
	return s.copyOf(t), nil
}

func (s *simpleTemplates) PutTemplate(ctx context.Context, account string, t *store.Template) error {
	if t == nil || t.Slug == "" {
		return store.InvalidField("slug", "a template needs a slug")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[account] == nil {
		s.m[account] = map[string]*store.Template{}
	}
	c := s.copyOf(t)
	if old := s.m[account][t.Slug]; s.defect == "keeps-locales" && old != nil && len(c.Locales) == 0 {
		c.Locales = old.Locales // an upsert that leaves out a column it was not given
	}
	s.m[account][t.Slug] = c
	return nil
}

func (s *simpleTemplates) DeleteTemplate(ctx context.Context, account, slug string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[account][slug]; !ok && s.defect != "delete-missing-ok" {
		return fmt.Errorf("simple: no template: %w", store.ErrNotFound)
	}
	delete(s.m[account], slug)
	return nil
}

func (s *simpleTemplates) Templates(ctx context.Context, account string) ([]*store.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Template
	for _, t := range s.m[account] {
		out = append(out, s.copyOf(t))
	}
	if s.defect != "unsorted" {
		sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	} else {
		sort.Slice(out, func(i, j int) bool { return out[i].Slug > out[j].Slug })
	}
	return out, nil
}

// simpleWallet is a deliberately plain storetest.Wallet: one mutex, maps.
type simpleWallet struct {
	defect string
	mu     sync.Mutex
	bal    map[string]int64
	cur    map[string]record.Currency
	refs   map[string]walletRef // account + "\x00" + ref
	moves  map[string][]record.LedgerEntry
}

type walletRef struct {
	delta, after int64
}

func newSimpleWallet(defect string) *simpleWallet {
	return &simpleWallet{defect: defect, bal: map[string]int64{}, cur: map[string]record.Currency{}, refs: map[string]walletRef{},
		moves: map[string][]record.LedgerEntry{}}
}

func (w *simpleWallet) Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []record.LedgerEntry
	for _, e := range w.moves[account] {
		if e.Seq > after && len(out) < limit {
			if w.defect == "statement-unsigned" && e.Amount.Minor < 0 {
				e.Amount.Minor = -e.Amount.Minor
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// moved adds a movement to the account's statement; w.mu is held.
func (w *simpleWallet) moved(account, ref string, delta, after int64) {
	c := w.cur[account]
	w.moves[account] = append(w.moves[account], record.LedgerEntry{Seq: int64(len(w.moves[account]) + 1), Ref: ref,
		Amount: record.Money{Minor: delta, Currency: c}, Balance: record.Money{Minor: after, Currency: c}})
}

func (w *simpleWallet) Balance(ctx context.Context, account string) (record.Balance, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bal[account]
	if !ok {
		if w.defect == "unknown-is-internal" {
			return record.Balance{}, errors.New("no such account")
		}
		return record.Balance{}, fmt.Errorf("no account %q: %w", account, store.ErrNotFound)
	}
	return record.Balance{Account: account, Available: record.Money{Minor: b, Currency: w.cur[account]}}, nil
}

func (w *simpleWallet) Debit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return w.apply(ctx, account, amount, ref, -1)
}

func (w *simpleWallet) Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return w.apply(ctx, account, amount, ref, 1)
}

func (w *simpleWallet) short() error {
	if w.defect == "names-package" {
		return fmt.Errorf("simple: short: %w", store.ErrInsufficientFunds)
	}
	return fmt.Errorf("short: %w", store.ErrInsufficientFunds)
}

func (w *simpleWallet) apply(ctx context.Context, account string, amount record.Money, ref string, sign int64) (record.Balance, error) {
	if w.defect != "ignores-ctx" {
		if err := ctx.Err(); err != nil {
			return record.Balance{}, fmt.Errorf("wallet: %w", err)
		}
	}
	if amount.Minor <= 0 && w.defect != "accepts-zero" {
		return record.Balance{}, store.InvalidField("amount", "must be positive")
	}
	if ref == "" {
		return record.Balance{}, store.InvalidField("ref", "must not be empty")
	}
	if w.defect == "racy" {
		// Check, then act in a second critical section: the gap lets
		// concurrent debits overdraw and repeated refs move money twice.
		w.mu.Lock()
		b, ok := w.bal[account]
		_, seen := w.refs[account+"\x00"+ref]
		w.mu.Unlock()
		if !ok {
			return record.Balance{}, fmt.Errorf("no account: %w", store.ErrNotFound)
		}
		if seen {
			return record.Balance{Account: account, Available: record.Money{Minor: b, Currency: w.cur[account]}}, nil
		}
		if sign < 0 && b < amount.Minor {
			return record.Balance{}, w.short()
		}
		runtime.Gosched()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.bal[account] += sign * amount.Minor
		w.refs[account+"\x00"+ref] = walletRef{sign * amount.Minor, w.bal[account]}
		w.moved(account, ref, sign*amount.Minor, w.bal[account])
		return record.Balance{Account: account, Available: record.Money{Minor: w.bal[account], Currency: w.cur[account]}}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bal[account]
	if !ok {
		return record.Balance{}, fmt.Errorf("no account %q: %w", account, store.ErrNotFound)
	}
	c := w.cur[account]
	if amount.Currency.Code != c.Code && w.defect != "ignores-currency" {
		return record.Balance{}, store.InvalidField("amount", "in another currency")
	}
	key := account + "\x00" + ref
	if w.defect == "no-idempotency" {
		key = ref + "\x00" + string(rune(len(w.refs)))
	}
	delta := sign * amount.Minor
	if r, seen := w.refs[key]; seen {
		if r.delta != delta && w.defect != "no-conflict" {
			return record.Balance{}, fmt.Errorf("ref reused: %w", store.ErrConflict)
		}
		after := r.after
		if w.defect == "repeat-current" {
			after = b
		}
		return record.Balance{Account: account, Available: record.Money{Minor: after, Currency: c}}, nil
	}
	if sign < 0 && b < amount.Minor && w.defect != "overdraft" {
		if w.defect == "records-refused" {
			w.refs[key] = walletRef{delta, b}
		}
		return record.Balance{}, w.short()
	}
	if sign > 0 && b > math.MaxInt64-amount.Minor {
		return record.Balance{}, store.InvalidField("amount", "the balance would overflow")
	}
	b += delta
	w.bal[account] = b
	w.refs[key] = walletRef{delta, b}
	w.moved(account, ref, delta, b)
	return record.Balance{Account: account, Available: record.Money{Minor: b, Currency: c}}, nil
}

// runSuites runs every suite against the simple stores with defect.
func runSuites(t *testing.T, defect string) {
	t.Run("Accounts", func(t *testing.T) { runAccounts(t, defect) })
	t.Run("Idempotency", func(t *testing.T) { runIdempotency(t, defect) })
	t.Run("Ledger", func(t *testing.T) { runLedger(t, defect) })
	t.Run("Templates", func(t *testing.T) { runTemplates(t, defect) })
	t.Run("Wallet", func(t *testing.T) { runWallet(t, defect) })
}

func runAccounts(t *testing.T, defect string) {
	storetest.RunAccounts(t, storetest.AccountsHarness{
		New: func(t *testing.T, fixtures []storetest.AccountFixture) store.Accounts {
			s := &simpleAccounts{defect: defect, byID: map[string]*record.Account{}, keys: map[string]string{}}
			for _, f := range fixtures {
				if s.defect == "shares" {
					s.byID[f.Account.ID] = f.Account
				} else {
					s.byID[f.Account.ID] = s.out(f.Account)
				}
				for _, k := range f.Keys {
					s.keys[k] = f.Account.ID
				}
			}
			return s
		},
	})
}

func runIdempotency(t *testing.T, defect string) {
	storetest.RunIdempotency(t, storetest.IdempotencyHarness{
		New: func(t *testing.T, ttl, lease time.Duration, now func() time.Time) store.Keys {
			return &simpleIdem{defect: defect, ttl: ttl, lease: lease, now: now, m: map[string]*idemEntry{}}
		},
	})
}

func runLedger(t *testing.T, defect string) {
	storetest.RunLedger(t, storetest.LedgerHarness{
		New: func(t *testing.T) (store.Ledger, func(*testing.T, string, record.Money)) {
			w := memstore.NewWallet()
			fund := func(t *testing.T, account string, opening record.Money) {
				if err := w.Open(account, opening); err != nil {
					t.Fatal(err)
				}
			}
			return flawedLedger{Ledger: memstore.NewLedger(w), defect: defect}, fund
		},
	})
}

func runWallet(t *testing.T, defect string) {
	storetest.RunWallet(t, storetest.WalletHarness{
		New: func(t *testing.T) storetest.Wallet { return newSimpleWallet(defect) },
		Open: func(t *testing.T, s storetest.Wallet, account string, opening record.Money) {
			w := s.(*simpleWallet)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.bal[account], w.cur[account] = opening.Minor, opening.Currency
		},
	})
}

func runTemplates(t *testing.T, defect string) {
	storetest.RunTemplates(t, storetest.TemplatesHarness{
		New: func(t *testing.T) store.Templates {
			return &simpleTemplates{defect: defect, m: map[string]map[string]*store.Template{}}
		},
	})
}

// TestSimpleStores shows that plain, correct stores pass every suite.
func TestSimpleStores(t *testing.T) {
	runSuites(t, "")
}

// TestIdempotencyIgnoresClock checks that a store with its own clock can
// skip the expiry subtests.
func TestIdempotencyIgnoresClock(t *testing.T) {
	storetest.RunIdempotency(t, storetest.IdempotencyHarness{
		New: func(t *testing.T, ttl, lease time.Duration, _ func() time.Time) store.Keys {
			return &simpleIdem{ttl: ttl, lease: lease, now: time.Now, m: map[string]*idemEntry{}}
		},
		IgnoresClock: true,
	})
}

// TestFlawedHelper runs the suites against flawed stores when started by
// TestSuitesCatchDefects in a child process; its failure is expected.
func TestFlawedHelper(t *testing.T) {
	runSuites(t, childDefect(t, "STORETEST_DEFECT"))
}

func TestSuitesCatchDefects(t *testing.T) {
	wantDefectsCaught(t, "TestFlawedHelper", "STORETEST_DEFECT", []flaw{
		{"notfound-internal", "Accounts/UnknownAccount"},
		{"notfound-also-unavailable", "Accounts/UnknownAccount"},
		{"prefix-match", "Accounts/WrongKeys"},
		{"leaks-key", "Accounts/WrongKeys"},
		{"shares", "Accounts/CallersCannotChangeStore"},
		{"shares-settings", "Accounts/CallersCannotChangeStore"},
		{"shares", "Templates/CallersCannotChangeStore"},
		{"shares-bodies", "Templates/CallersCannotChangeStore"},
		{"shares-locales", "Templates/CallersCannotChangeStore"},
		{"drops-locales", "Templates/RoundTrip"},
		{"keeps-locales", "Templates/Replace"},
		{"global-keys", "Idempotency/KeysPerAccount"},
		{"no-fingerprint", "Idempotency/OtherFingerprint"},
		{"release-drops-receipt", "Idempotency/Release"},
		{"no-expiry", "Idempotency/ReceiptExpires"},
		{"racy-reserve", "Idempotency/ConcurrentReserve"},
		{"no-lease", "Idempotency/LeaseExpires"},
		{"silent-takeover", "Idempotency/LeaseExpires"},
		{"completes-twice", "Idempotency/CompletedRepeat"},
		{"retains-receipt", "Idempotency/ReceiptNotRetained"},
		{"receipt-as-text", "Idempotency/ReceiptBytes"},
		{"moved-lies", "Ledger/FailRefundsOnce"},
		{"opens-pending", "Ledger/OpenAttempting"},
		{"unsorted", "Templates/List"},
		{"delete-missing-ok", "Templates/NotFound"},
		{"ignores-ctx", "Wallet/CanceledContext"},
		{"accepts-zero", "Wallet/InvalidArguments"},
		{"ignores-currency", "Wallet/InvalidArguments"},
		{"unknown-is-internal", "Wallet/UnknownAccount"},
		{"no-idempotency", "Wallet/DebitRefRepeat"},
		{"no-conflict", "Wallet/RefReusedDifferently"},
		{"repeat-current", "Wallet/DebitRefRepeat"},
		{"overdraft", "Wallet/InsufficientFunds"},
		{"records-refused", "Wallet/InsufficientFunds"},
		{"names-package", "Wallet/InsufficientFunds"},
		{"racy", "Wallet/ConcurrentSameRef"},
		{"statement-unsigned", "Wallet/Statement"},
	})
}

// flaw is a defect of the simple stores and the subtest of the flawed
// helper (a path below it) that the defect must make fail.
type flaw struct{ defect, want string }

// childDefect returns the defect that env names, for a flawed helper run
// by wantDefectsCaught in a child process; with none, the helper was not
// started by it, and is skipped.
func childDefect(t *testing.T, env string) string {
	t.Helper()
	defect := os.Getenv(env)
	if defect == "" {
		t.Skip("run by its SuitesCatchDefects test, with " + env + " set")
	}
	return defect
}

// wantDefectsCaught runs the test helper in a child process once per
// flaw, with env naming the defect, and checks that the child fails and
// that the flaw's subtest is among its failures: each defect must be
// caught, by the subtest meant to catch it.
func wantDefectsCaught(t *testing.T, helper, env string, flaws []flaw) {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Skip("child process")
	}
	for _, tt := range flaws {
		t.Run(tt.defect+"/"+tt.want, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+helper+"$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), env+"="+tt.defect)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("suites passed or did not run (err %v); output:\n%s", err, out)
			}
			if want := "--- FAIL: " + helper + "/" + tt.want; !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}
