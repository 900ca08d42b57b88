package wallettest_test

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/wallet/wallettest"
)

// simpleWallet is a deliberately plain Wallet: one mutex, maps. With
// no defect it must pass the suite; each defect must make the suite fail.
type simpleWallet struct {
	defect string
	mu     sync.Mutex
	bal    map[string]int64
	cur    map[string]notify.Currency
	refs   map[string]ledgerRef // account + "\x00" + ref
}

type ledgerRef struct {
	delta, after int64
}

func newSimple(defect string) *simpleWallet {
	return &simpleWallet{defect: defect, bal: map[string]int64{}, cur: map[string]notify.Currency{}, refs: map[string]ledgerRef{}}
}

func (w *simpleWallet) Balance(ctx context.Context, account string) (notify.Balance, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bal[account]
	if !ok {
		if w.defect == "unknown-is-internal" {
			return notify.Balance{}, errors.New("no such account")
		}
		return notify.Balance{}, notify.Errorf(notify.CodeNotFound, "simple: no account %q", account)
	}
	return notify.Balance{Account: account, Available: notify.Money{Minor: b, Currency: w.cur[account]}}, nil
}

func (w *simpleWallet) Debit(ctx context.Context, account string, amount notify.Money, ref string) (notify.Balance, error) {
	return w.apply(ctx, account, amount, ref, -1)
}

func (w *simpleWallet) Credit(ctx context.Context, account string, amount notify.Money, ref string) (notify.Balance, error) {
	return w.apply(ctx, account, amount, ref, 1)
}

func (w *simpleWallet) apply(ctx context.Context, account string, amount notify.Money, ref string, sign int64) (notify.Balance, error) {
	if w.defect != "ignores-ctx" {
		if err := ctx.Err(); err != nil {
			return notify.Balance{}, notify.WithCode(notify.CodeOf(err), err)
		}
	}
	if (amount.Minor <= 0 && w.defect != "accepts-zero") || ref == "" {
		return notify.Balance{}, notify.Errorf(notify.CodeInvalidArgument, "simple: bad amount or ref")
	}
	if w.defect == "racy" {
		// Check, then act in a second critical section: the gap lets
		// concurrent debits overdraw and repeated refs move money twice.
		w.mu.Lock()
		b, ok := w.bal[account]
		_, seen := w.refs[account+"\x00"+ref]
		w.mu.Unlock()
		if !ok {
			return notify.Balance{}, notify.Errorf(notify.CodeNotFound, "simple: no account")
		}
		if seen {
			return notify.Balance{Account: account, Available: notify.Money{Minor: b, Currency: w.cur[account]}}, nil
		}
		if sign < 0 && b < amount.Minor {
			return notify.Balance{}, notify.Errorf(notify.CodeInsufficientFunds, "short")
		}
		runtime.Gosched()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.bal[account] += sign * amount.Minor
		w.refs[account+"\x00"+ref] = ledgerRef{sign * amount.Minor, w.bal[account]}
		return notify.Balance{Account: account, Available: notify.Money{Minor: w.bal[account], Currency: w.cur[account]}}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bal[account]
	if !ok {
		return notify.Balance{}, notify.Errorf(notify.CodeNotFound, "simple: no account %q", account)
	}
	c := w.cur[account]
	if amount.Currency.Code != c.Code && w.defect != "ignores-currency" {
		return notify.Balance{}, notify.Errorf(notify.CodeInvalidArgument, "simple: currency")
	}
	key := account + "\x00" + ref
	if w.defect == "no-idempotency" {
		key = ref + "\x00" + string(rune(len(w.refs)))
	}
	delta := sign * amount.Minor
	if r, seen := w.refs[key]; seen {
		if r.delta != delta && w.defect != "no-conflict" {
			return notify.Balance{}, notify.Errorf(notify.CodeConflict, "simple: ref reused")
		}
		after := r.after
		if w.defect == "repeat-current" {
			after = b
		}
		return notify.Balance{Account: account, Available: notify.Money{Minor: after, Currency: c}}, nil
	}
	if sign < 0 && b < amount.Minor && w.defect != "overdraft" {
		if w.defect == "records-refused" {
			w.refs[key] = ledgerRef{delta, b}
		}
		return notify.Balance{}, notify.Errorf(notify.CodeInsufficientFunds, "short")
	}
	if sign > 0 && b > math.MaxInt64-amount.Minor {
		return notify.Balance{}, notify.Errorf(notify.CodeInvalidArgument, "simple: overflow")
	}
	b += delta
	w.bal[account] = b
	w.refs[key] = ledgerRef{delta, b}
	return notify.Balance{Account: account, Available: notify.Money{Minor: b, Currency: c}}, nil
}

func harness(defect string) wallettest.Harness {
	return wallettest.Harness{
		NewStore: func(t *testing.T) wallettest.Wallet { return newSimple(defect) },
		Open: func(t *testing.T, s wallettest.Wallet, account string, opening notify.Money) {
			w := s.(*simpleWallet)
			w.mu.Lock()
			defer w.mu.Unlock()
			w.bal[account], w.cur[account] = opening.Minor, opening.Currency
		},
	}
}

// TestSimpleWallet shows that a plain, correct store passes the suite.
func TestSimpleWallet(t *testing.T) {
	wallettest.Run(t, harness(""))
}

// TestFlawedHelper runs the suite against a flawed store when started by
// TestSuiteCatchesDefects in a child process; its failure is expected.
func TestFlawedHelper(t *testing.T) {
	defect := os.Getenv("WALLETTEST_DEFECT")
	if defect == "" {
		t.Skip("run by TestSuiteCatchesDefects")
	}
	wallettest.Run(t, harness(defect))
}

func TestSuiteCatchesDefects(t *testing.T) {
	if os.Getenv("WALLETTEST_DEFECT") != "" {
		t.Skip("child process")
	}
	tests := []struct {
		defect string
		want   string // a failing subtest
	}{
		{"ignores-ctx", "--- FAIL: TestFlawedHelper/CanceledContext"},
		{"accepts-zero", "--- FAIL: TestFlawedHelper/InvalidArguments"},
		{"ignores-currency", "--- FAIL: TestFlawedHelper/InvalidArguments"},
		{"unknown-is-internal", "--- FAIL: TestFlawedHelper/UnknownAccount"},
		{"no-idempotency", "--- FAIL: TestFlawedHelper/DebitRefRepeat"},
		{"no-conflict", "--- FAIL: TestFlawedHelper/RefReusedDifferently"},
		{"repeat-current", "--- FAIL: TestFlawedHelper/DebitRefRepeat"},
		{"overdraft", "--- FAIL: TestFlawedHelper/InsufficientFunds"},
		{"records-refused", "--- FAIL: TestFlawedHelper/InsufficientFunds"},
		{"racy", "--- FAIL: TestFlawedHelper/ConcurrentSameRef"},
	}
	for _, tt := range tests {
		t.Run(tt.defect, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestFlawedHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "WALLETTEST_DEFECT="+tt.defect)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("suite passed or did not run (err %v); output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
