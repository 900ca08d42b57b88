package storetest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/storetest"
)

// The simple stores below are deliberately plain. With no defect each
// must pass its suite; each defect must make the suite fail.

type simpleAccounts struct {
	defect string
	byID   map[string]*notify.Account
	keys   map[string]string // key -> ID
}

func (s *simpleAccounts) Account(ctx context.Context, id string) (*notify.Account, error) {
	a, ok := s.byID[id]
	if !ok {
		if s.defect == "notfound-internal" {
			return nil, errors.New("no such account")
		}
		return nil, notify.Errorf(notify.CodeNotFound, "simple: no account %q", id)
	}
	return s.out(a), nil
}

func (s *simpleAccounts) AccountByKey(ctx context.Context, key string) (*notify.Account, error) {
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
		return nil, notify.Errorf(notify.CodeUnauthenticated, "simple: unknown key %q", key)
	}
	return nil, notify.Errorf(notify.CodeUnauthenticated, "simple: unknown key")
}

func (s *simpleAccounts) out(a *notify.Account) *notify.Account {
	if s.defect == "shares" {
		return a
	}
	c := *a
	c.DLTTemplates = slices.Clone(a.DLTTemplates)
	c.SenderIDs = slices.Clone(a.SenderIDs)
	return &c
}

type idemEntry struct {
	fp       string
	r        *notify.Receipt
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

func (s *simpleIdem) Reserve(ctx context.Context, account, key, fp string) (notify.Reservation, error) {
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
			return notify.Reservation{Receipt: e.r}, notify.Errorf(notify.CodeConflict, "simple: taken")
		}
		s.mu.Lock()
		s.m[s.key(account, key)] = s.entry(s.now(), fp)
		s.mu.Unlock()
		return notify.Reservation{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var res notify.Reservation
	if e, ok := s.m[s.key(account, key)]; ok && (s.defect == "no-expiry" || e.expires.After(now)) {
		switch {
		case e.fp != fp && s.defect != "no-fingerprint":
			return res, notify.Errorf(notify.CodeConflict, "other request")
		case e.r == nil && !e.leaseEnd.After(now) && s.defect != "no-lease":
			if s.defect != "silent-takeover" {
				res.Abandoned = e.reserved
			}
		case e.r == nil:
			return res, notify.Errorf(notify.CodeConflict, "in flight")
		default:
			res.Receipt = e.r
			return res, nil
		}
	}
	s.m[s.key(account, key)] = s.entry(now, fp)
	return res, nil
}

func (s *simpleIdem) Complete(ctx context.Context, account, key string, r *notify.Receipt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[s.key(account, key)]
	if !ok {
		return notify.Errorf(notify.CodeNotFound, "simple: not reserved")
	}
	e.r, e.expires = r, s.now().Add(s.ttl)
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
// "moved-lies", answers that a refund was not made.
type flawedLedger struct {
	*memstore.Ledger
	defect string
}

func (l flawedLedger) Move(ctx context.Context, account, id string, u notify.MessageUpdate) (notify.Moved, error) {
	m, err := l.Ledger.Move(ctx, account, id, u)
	if l.defect == "moved-lies" {
		m.Refunded = false
	}
	return m, err
}

type simpleTemplates struct {
	defect string
	mu     sync.Mutex
	m      map[string]map[string]*notify.Template
}

func (s *simpleTemplates) copyOf(t *notify.Template) *notify.Template {
	if s.defect == "shares" {
		return t
	}
	c := *t
	c.Variables = slices.Clone(t.Variables)
	return &c
}

func (s *simpleTemplates) Template(ctx context.Context, account, slug string) (*notify.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[account][slug]
	if !ok {
		return nil, notify.Errorf(notify.CodeNotFound, "simple: no template")
	}
	return s.copyOf(t), nil
}

func (s *simpleTemplates) PutTemplate(ctx context.Context, account string, t *notify.Template) error {
	if t == nil || t.Slug == "" {
		return notify.Errorf(notify.CodeInvalidArgument, "simple: bad template")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[account] == nil {
		s.m[account] = map[string]*notify.Template{}
	}
	s.m[account][t.Slug] = s.copyOf(t)
	return nil
}

func (s *simpleTemplates) DeleteTemplate(ctx context.Context, account, slug string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[account][slug]; !ok && s.defect != "delete-missing-ok" {
		return notify.Errorf(notify.CodeNotFound, "simple: no template")
	}
	delete(s.m[account], slug)
	return nil
}

func (s *simpleTemplates) Templates(ctx context.Context, account string) ([]*notify.Template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*notify.Template
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

// runSuites runs every suite against the simple stores with defect.
func runSuites(t *testing.T, defect string) {
	t.Run("Accounts", func(t *testing.T) { runAccounts(t, defect) })
	t.Run("Idempotency", func(t *testing.T) { runIdempotency(t, defect) })
	t.Run("Ledger", func(t *testing.T) { runLedger(t, defect) })
	t.Run("Templates", func(t *testing.T) { runTemplates(t, defect) })
}

func runAccounts(t *testing.T, defect string) {
	storetest.RunAccounts(t, storetest.AccountsHarness{
		New: func(t *testing.T, fixtures []storetest.AccountFixture) notify.AccountStore {
			s := &simpleAccounts{defect: defect, byID: map[string]*notify.Account{}, keys: map[string]string{}}
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
		New: func(t *testing.T, ttl, lease time.Duration, now func() time.Time) notify.IdempotencyStore {
			return &simpleIdem{defect: defect, ttl: ttl, lease: lease, now: now, m: map[string]*idemEntry{}}
		},
	})
}

func runLedger(t *testing.T, defect string) {
	storetest.RunLedger(t, storetest.LedgerHarness{
		New: func(t *testing.T) (notify.Ledger, func(*testing.T, string, notify.Money)) {
			w := memstore.NewWallet()
			fund := func(t *testing.T, account string, opening notify.Money) {
				if err := w.Open(account, opening); err != nil {
					t.Fatal(err)
				}
			}
			return flawedLedger{Ledger: memstore.NewLedger(w), defect: defect}, fund
		},
	})
}

func runTemplates(t *testing.T, defect string) {
	storetest.RunTemplates(t, storetest.TemplatesHarness{
		New: func(t *testing.T) notify.TemplateStore {
			return &simpleTemplates{defect: defect, m: map[string]map[string]*notify.Template{}}
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
		New: func(t *testing.T, ttl, lease time.Duration, _ func() time.Time) notify.IdempotencyStore {
			return &simpleIdem{ttl: ttl, lease: lease, now: time.Now, m: map[string]*idemEntry{}}
		},
		IgnoresClock: true,
	})
}

// TestFlawedHelper runs the suites against flawed stores when started by
// TestSuitesCatchDefects in a child process; its failure is expected.
func TestFlawedHelper(t *testing.T) {
	defect := os.Getenv("STORETEST_DEFECT")
	if defect == "" {
		t.Skip("run by TestSuitesCatchDefects")
	}
	runSuites(t, defect)
}

func TestSuitesCatchDefects(t *testing.T) {
	if os.Getenv("STORETEST_DEFECT") != "" {
		t.Skip("child process")
	}
	tests := []struct {
		defect string
		want   string // a failing subtest
	}{
		{"notfound-internal", "--- FAIL: TestFlawedHelper/Accounts/UnknownAccount"},
		{"prefix-match", "--- FAIL: TestFlawedHelper/Accounts/WrongKeys"},
		{"leaks-key", "--- FAIL: TestFlawedHelper/Accounts/WrongKeys"},
		{"shares", "--- FAIL: TestFlawedHelper/Accounts/CallersCannotChangeStore"},
		{"shares", "--- FAIL: TestFlawedHelper/Templates/CallersCannotChangeStore"},
		{"global-keys", "--- FAIL: TestFlawedHelper/Idempotency/KeysPerAccount"},
		{"no-fingerprint", "--- FAIL: TestFlawedHelper/Idempotency/OtherFingerprint"},
		{"release-drops-receipt", "--- FAIL: TestFlawedHelper/Idempotency/Release"},
		{"no-expiry", "--- FAIL: TestFlawedHelper/Idempotency/ReceiptExpires"},
		{"racy-reserve", "--- FAIL: TestFlawedHelper/Idempotency/ConcurrentReserve"},
		{"no-lease", "--- FAIL: TestFlawedHelper/Idempotency/LeaseExpires"},
		{"silent-takeover", "--- FAIL: TestFlawedHelper/Idempotency/LeaseExpires"},
		{"moved-lies", "--- FAIL: TestFlawedHelper/Ledger/FailRefundsOnce"},
		{"unsorted", "--- FAIL: TestFlawedHelper/Templates/List"},
		{"delete-missing-ok", "--- FAIL: TestFlawedHelper/Templates/NotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.defect+"/"+tt.want[len("--- FAIL: TestFlawedHelper/"):], func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFlawedHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "STORETEST_DEFECT="+tt.defect)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("suites passed or did not run (err %v); output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
