package wallettest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/errtext"
)

// Wallet is the money of a notify.Ledger, as a store keeps it: the
// Ledger's Balance and Credit, and Debit, the charge its Open makes with a
// record (a store exposes it for this suite). Amounts are in the
// account's currency.
type Wallet interface {
	// Balance returns the account's balance; an unknown account is
	// NotFound.
	Balance(ctx context.Context, account string) (notify.Balance, error)
	// Debit takes amount (> 0) under ref, atomically, never below zero
	// (InsufficientFunds, moving nothing); a ref already recorded with
	// the same direction and amount returns the balance recorded with it
	// and moves nothing; with another, Conflict.
	Debit(ctx context.Context, account string, amount notify.Money, ref string) (notify.Balance, error)
	// Credit adds amount (> 0) under ref, with Debit's ref rules; a credit
	// that would overflow int64 fails and moves nothing.
	Credit(ctx context.Context, account string, amount notify.Money, ref string) (notify.Balance, error)
}

// Harness connects the suite to one Wallet implementation. Both hooks
// are required and are called from the test goroutine only.
type Harness struct {
	// NewStore returns a store for one subtest, releasing it with
	// t.Cleanup. It may return a store shared with other subtests (one
	// database, say): the suite's accounts have random names.
	NewStore func(t *testing.T) Wallet

	// Open creates account in store with the opening balance (zero or
	// more, in the account's currency, which opening.Currency gives),
	// failing t if it cannot.
	Open func(t *testing.T, store Wallet, account string, opening notify.Money)
}

// Goroutines is how many goroutines the concurrent subtests run.
const Goroutines = 64

// Run runs the whole suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.NewStore == nil || h.Open == nil {
		t.Fatal("wallettest: Harness needs NewStore and Open")
	}
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Balance", testBalance},
		{"Debit", testDebit},
		{"Credit", testCredit},
		{"DebitToZero", testDebitToZero},
		{"AccountsAreSeparate", testAccountsAreSeparate},
		{"DebitRefRepeat", testDebitRefRepeat},
		{"CreditRefRepeat", testCreditRefRepeat},
		{"RefReusedDifferently", testRefReusedDifferently},
		{"InsufficientFunds", testInsufficientFunds},
		{"InvalidArguments", testInvalidArguments},
		{"UnknownAccount", testUnknownAccount},
		{"CanceledContext", testCanceledContext},
		{"CreditOverflow", testCreditOverflow},
		{"ConcurrentSameRef", testConcurrentSameRef},
		{"ConcurrentLedger", testConcurrentLedger},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

func inr(minor int64) notify.Money { return notify.Money{Minor: minor, Currency: notify.INR()} }

// newName returns a random account or ref name with the given prefix.
func newName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + "-" + hex.EncodeToString(b[:])
}

// open makes a store and one account in it.
func open(t *testing.T, h Harness, opening int64) (Wallet, string) {
	t.Helper()
	s := h.NewStore(t)
	if s == nil {
		t.Fatal("Harness.NewStore returned nil")
	}
	acct := newName("wt")
	h.Open(t, s, acct, inr(opening))
	return s, acct
}

// wantBalance fails t unless the account's balance is want.
func wantBalance(t *testing.T, s Wallet, acct string, want int64) {
	t.Helper()
	b, err := s.Balance(context.Background(), acct)
	if err != nil {
		t.Fatalf("Balance(%s): %v", acct, err)
	}
	if b.Available.Minor != want {
		t.Fatalf("Balance(%s) = %d, want %d", acct, b.Available.Minor, want)
	}
}

// wantCode fails t unless err has the code.
// wantShownToSender fails t when err's text names a package: a sender
// sees this error, through the HTTP API too.
func wantShownToSender(t *testing.T, what string, err error) {
	t.Helper()
	if msg, bad := errtext.NamesPackage(err); bad {
		t.Errorf("%s: error %q names a package; a sender sees it", what, msg)
	}
}

func wantCode(t *testing.T, what string, err error, code notify.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if got := notify.CodeOf(err); got != code {
		t.Fatalf("%s: code %q (%v), want %q", what, got, err, code)
	}
}

func testBalance(t *testing.T, h Harness) {
	ctx := context.Background()
	for _, opening := range []int64{0, 1, 123450, math.MaxInt64} {
		s, acct := open(t, h, opening)
		b, err := s.Balance(ctx, acct)
		if err != nil {
			t.Fatalf("Balance: %v", err)
		}
		if b.Account != acct {
			t.Errorf("Balance.Account = %q, want %q", b.Account, acct)
		}
		if b.Available.Minor != opening {
			t.Errorf("Balance = %d, want the opening %d", b.Available.Minor, opening)
		}
		if c := b.Available.Currency; c.Code != "INR" || c.Exponent != 2 {
			t.Errorf("Balance currency = %+v, want INR with exponent 2", c)
		}
	}
}

func testDebit(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 1000)
	b, err := s.Debit(ctx, acct, inr(250), newName("ref"))
	if err != nil {
		t.Fatalf("Debit: %v", err)
	}
	if b.Available.Minor != 750 || b.Account != acct {
		t.Errorf("Debit returned %+v, want account %q with 750", b, acct)
	}
	if c := b.Available.Currency; c.Code != "INR" || c.Exponent != 2 {
		t.Errorf("Debit currency = %+v, want INR", c)
	}
	b, err = s.Debit(ctx, acct, inr(1), newName("ref"))
	if err != nil || b.Available.Minor != 749 {
		t.Fatalf("second Debit = %+v, %v; want 749", b, err)
	}
	wantBalance(t, s, acct, 749)
}

func testCredit(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 0)
	b, err := s.Credit(ctx, acct, inr(500), newName("topup"))
	if err != nil {
		t.Fatalf("Credit: %v", err)
	}
	if b.Available.Minor != 500 || b.Account != acct {
		t.Errorf("Credit returned %+v, want account %q with 500", b, acct)
	}
	if _, err := s.Credit(ctx, acct, inr(25), "refund:"+newName("msg")); err != nil {
		t.Fatalf("refund Credit: %v", err)
	}
	wantBalance(t, s, acct, 525)
}

func testDebitToZero(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 300)
	b, err := s.Debit(ctx, acct, inr(300), newName("ref"))
	if err != nil {
		t.Fatalf("Debit of the whole balance: %v", err)
	}
	if b.Available.Minor != 0 {
		t.Errorf("balance after debiting everything = %d, want 0", b.Available.Minor)
	}
	_, err = s.Debit(ctx, acct, inr(1), newName("ref"))
	wantCode(t, "Debit from an empty wallet", err, notify.CodeInsufficientFunds)
	wantBalance(t, s, acct, 0)
}

func testAccountsAreSeparate(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.NewStore(t)
	a, b := newName("wt"), newName("wt")
	h.Open(t, s, a, inr(100))
	h.Open(t, s, b, inr(100))
	if _, err := s.Debit(ctx, a, inr(40), newName("ref")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Credit(ctx, b, inr(7), newName("ref")); err != nil {
		t.Fatal(err)
	}
	wantBalance(t, s, a, 60)
	wantBalance(t, s, b, 107)
}

// testRefRepeat checks that a repeated ref returns the first result, even
// after other operations moved the balance, and moves nothing.
func testRefRepeat(t *testing.T, h Harness, credit bool) {
	ctx := context.Background()
	s, acct := open(t, h, 1000)
	op := s.Debit
	if credit {
		op = s.Credit
	}
	ref := newName("ref")
	first, err := op(ctx, acct, inr(100), ref)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	after := first.Available.Minor
	if _, err := s.Debit(ctx, acct, inr(10), newName("other")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		again, err := op(ctx, acct, inr(100), ref)
		if err != nil {
			t.Fatalf("repeat %d: %v", i, err)
		}
		if again.Available.Minor != after {
			t.Fatalf("repeat %d returned balance %d, want the first call's %d", i, again.Available.Minor, after)
		}
	}
	wantBalance(t, s, acct, after-10)
}

func testDebitRefRepeat(t *testing.T, h Harness)  { testRefRepeat(t, h, false) }
func testCreditRefRepeat(t *testing.T, h Harness) { testRefRepeat(t, h, true) }

func testRefReusedDifferently(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 1000)
	ref := newName("ref")
	if _, err := s.Debit(ctx, acct, inr(100), ref); err != nil {
		t.Fatal(err)
	}
	_, err := s.Credit(ctx, acct, inr(100), ref)
	wantCode(t, "Credit with a debit's ref", err, notify.CodeConflict)
	_, err = s.Debit(ctx, acct, inr(99), ref)
	wantCode(t, "Debit with a ref recorded for another amount", err, notify.CodeConflict)

	cref := newName("ref")
	if _, err := s.Credit(ctx, acct, inr(5), cref); err != nil {
		t.Fatal(err)
	}
	_, err = s.Debit(ctx, acct, inr(5), cref)
	wantCode(t, "Debit with a credit's ref", err, notify.CodeConflict)
	_, err = s.Credit(ctx, acct, inr(6), cref)
	wantCode(t, "Credit with a ref recorded for another amount", err, notify.CodeConflict)
	wantBalance(t, s, acct, 905)
}

func testInsufficientFunds(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 100)
	ref := newName("ref")
	_, err := s.Debit(ctx, acct, inr(101), ref)
	wantCode(t, "Debit beyond the balance", err, notify.CodeInsufficientFunds)
	wantShownToSender(t, "Debit beyond the balance", err)
	wantBalance(t, s, acct, 100)
	_, err = s.Debit(ctx, acct, inr(math.MaxInt64), newName("ref"))
	wantCode(t, "Debit of MaxInt64", err, notify.CodeInsufficientFunds)
	wantBalance(t, s, acct, 100)

	// The failed debit recorded nothing: after a top-up its ref succeeds.
	if _, err := s.Credit(ctx, acct, inr(1), newName("topup")); err != nil {
		t.Fatal(err)
	}
	b, err := s.Debit(ctx, acct, inr(101), ref)
	if err != nil {
		t.Fatalf("Debit with the ref of a refused debit, after a top-up: %v", err)
	}
	if b.Available.Minor != 0 {
		t.Errorf("balance = %d, want 0", b.Available.Minor)
	}
	wantBalance(t, s, acct, 0)
}

func testInvalidArguments(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, 1000)
	usd := notify.Money{Minor: 10, Currency: notify.Currency{Code: "USD", Symbol: "$", Exponent: 2}}
	tests := []struct {
		name   string
		amount notify.Money
		ref    string
	}{
		{"zero", inr(0), newName("ref")},
		{"negative", inr(-5), newName("ref")},
		{"MinInt64", inr(math.MinInt64), newName("ref")},
		{"other currency", usd, newName("ref")},
		{"no currency", notify.Money{Minor: 10}, newName("ref")},
		{"empty ref", inr(10), ""},
	}
	for _, tt := range tests {
		_, err := s.Debit(ctx, acct, tt.amount, tt.ref)
		wantCode(t, "Debit "+tt.name, err, notify.CodeInvalidArgument)
		_, err = s.Credit(ctx, acct, tt.amount, tt.ref)
		wantCode(t, "Credit "+tt.name, err, notify.CodeInvalidArgument)
	}
	wantBalance(t, s, acct, 1000)
}

func testUnknownAccount(t *testing.T, h Harness) {
	ctx := context.Background()
	s, _ := open(t, h, 1000)
	ghost := newName("ghost")
	_, err := s.Balance(ctx, ghost)
	wantCode(t, "Balance of an unknown account", err, notify.CodeNotFound)
	_, err = s.Debit(ctx, ghost, inr(1), newName("ref"))
	wantCode(t, "Debit of an unknown account", err, notify.CodeNotFound)
	_, err = s.Credit(ctx, ghost, inr(1), newName("ref"))
	wantCode(t, "Credit of an unknown account", err, notify.CodeNotFound)
	_, err = s.Balance(ctx, "")
	wantCode(t, "Balance of the empty account", err, notify.CodeNotFound)
}

func testCanceledContext(t *testing.T, h Harness) {
	s, acct := open(t, h, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dref, cref := newName("ref"), newName("ref")
	_, err := s.Debit(ctx, acct, inr(100), dref)
	wantCode(t, "Debit with a canceled context", err, notify.CodeCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Debit error %v is not context.Canceled", err)
	}
	_, err = s.Credit(ctx, acct, inr(100), cref)
	wantCode(t, "Credit with a canceled context", err, notify.CodeCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Credit error %v is not context.Canceled", err)
	}
	wantBalance(t, s, acct, 1000)

	// Nothing was recorded under the refs: they move money now.
	live := context.Background()
	if b, err := s.Debit(live, acct, inr(100), dref); err != nil || b.Available.Minor != 900 {
		t.Fatalf("Debit with the canceled call's ref = %+v, %v; want 900", b, err)
	}
	if b, err := s.Credit(live, acct, inr(100), cref); err != nil || b.Available.Minor != 1000 {
		t.Fatalf("Credit with the canceled call's ref = %+v, %v; want 1000", b, err)
	}
}

func testCreditOverflow(t *testing.T, h Harness) {
	ctx := context.Background()
	s, acct := open(t, h, math.MaxInt64-10)
	if _, err := s.Credit(ctx, acct, inr(11), newName("ref")); err == nil {
		t.Fatal("a credit past MaxInt64 succeeded")
	}
	wantBalance(t, s, acct, math.MaxInt64-10)
	if b, err := s.Credit(ctx, acct, inr(10), newName("ref")); err != nil || b.Available.Minor != math.MaxInt64 {
		t.Fatalf("Credit up to MaxInt64 = %+v, %v", b, err)
	}
}

func testConcurrentSameRef(t *testing.T, h Harness) {
	for _, credit := range []bool{false, true} {
		name := "Debit"
		if credit {
			name = "Credit"
		}
		t.Run(name, func(t *testing.T) {
			s, acct := open(t, h, 10000)
			op := s.Debit
			if credit {
				op = s.Credit
			}
			ref := newName("ref")
			balances := make([]int64, Goroutines)
			errs := make([]error, Goroutines)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for g := 0; g < Goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					b, err := op(context.Background(), acct, inr(300), ref)
					balances[g], errs[g] = b.Available.Minor, err
				}()
			}
			close(start)
			wg.Wait()
			want := int64(10000 - 300)
			if credit {
				want = 10000 + 300
			}
			for g := range Goroutines {
				if errs[g] != nil {
					t.Fatalf("goroutine %d: %v", g, errs[g])
				}
				if balances[g] != want {
					t.Fatalf("goroutine %d got balance %d, want %d from the one recorded %s", g, balances[g], want, name)
				}
			}
			wantBalance(t, s, acct, want)
		})
	}
}

// call is one Debit or Credit made by the ledger test and what it returned.
type call struct {
	ref     string
	credit  bool
	amount  int64
	balance int64
	err     error
}

func testConcurrentLedger(t *testing.T, h Harness) {
	const (
		opening = 10000
		perG    = 100
		shared  = 32 // refs used by every goroutine, each with one fixed amount and direction
	)
	s, acct := open(t, h, opening)
	prefix := newName("ref")
	sharedRef := func(i int) (ref string, credit bool, amount int64) {
		return fmt.Sprintf("%s-shared-%d", prefix, i), i%2 == 1, int64(1 + 7*i)
	}

	calls := make([][]call, Goroutines)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < Goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(g), 42))
			mine := make([]call, 0, perG)
			<-start
			for i := 0; i < perG; i++ {
				var c call
				switch r := rng.IntN(10); {
				case r < 6:
					c = call{ref: fmt.Sprintf("%s-%d-%d", prefix, g, i), amount: 1 + rng.Int64N(100)}
				case r < 8:
					c = call{ref: fmt.Sprintf("%s-%d-%d", prefix, g, i), credit: true, amount: 1 + rng.Int64N(100)}
				case r < 9 || len(mine) == 0:
					c.ref, c.credit, c.amount = sharedRef(rng.IntN(shared))
				default:
					prev := mine[rng.IntN(len(mine))]
					c = call{ref: prev.ref, credit: prev.credit, amount: prev.amount}
				}
				op := s.Debit
				if c.credit {
					op = s.Credit
				}
				b, err := op(context.Background(), acct, inr(c.amount), c.ref)
				c.balance, c.err = b.Available.Minor, err
				mine = append(mine, c)
			}
			calls[g] = mine
		}()
	}
	close(start)
	wg.Wait()

	type outcome struct {
		credit  bool
		amount  int64
		balance int64
		ok      bool
	}
	byRef := make(map[string]*outcome)
	for g, mine := range calls {
		for _, c := range mine {
			if c.err != nil {
				if c.credit || notify.CodeOf(c.err) != notify.CodeInsufficientFunds {
					t.Fatalf("goroutine %d: %s %d under %s: %v", g, kindName(c.credit), c.amount, c.ref, c.err)
				}
				continue
			}
			if c.balance < 0 {
				t.Fatalf("goroutine %d: %s returned a negative balance %d", g, c.ref, c.balance)
			}
			o := byRef[c.ref]
			if o == nil {
				byRef[c.ref] = &outcome{credit: c.credit, amount: c.amount, balance: c.balance, ok: true}
				continue
			}
			if o.balance != c.balance {
				t.Fatalf("ref %s returned balances %d and %d: moved money twice", c.ref, o.balance, c.balance)
			}
		}
	}
	want := int64(opening)
	for _, o := range byRef {
		if o.credit {
			want += o.amount
		} else {
			want -= o.amount
		}
	}
	b, err := s.Balance(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	if b.Available.Minor != want {
		t.Fatalf("ledger identity broken: opening %d - debits + credits = %d, but the balance is %d (%d refs moved money)",
			opening, want, b.Available.Minor, len(byRef))
	}
	if want < 0 {
		t.Fatalf("balance is negative: %d", want)
	}
}

func kindName(credit bool) string {
	if credit {
		return "Credit"
	}
	return "Debit"
}
