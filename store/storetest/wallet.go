package storetest

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"testing"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Wallet is the money of a store.Ledger, as a store keeps it: the
// Ledger's Balance, Credit and Statement (notify.WalletStore), and Debit, the charge its Open makes with a
// record (a store exposes it for RunWallet). Amounts are in the account's
// currency.
type Wallet interface {
	// Balance returns the account's balance; an unknown account is
	// ErrNotFound.
	Balance(ctx context.Context, account string) (record.Balance, error)
	// Debit takes amount (> 0) under ref, atomically, never below zero
	// (ErrInsufficientFunds, moving nothing); a ref already recorded with
	// the same direction and amount returns the balance recorded with it
	// and moves nothing; with another, ErrConflict.
	Debit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)
	// Credit adds amount (> 0) under ref, with Debit's ref rules; a credit
	// that would overflow int64 fails and moves nothing.
	Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)
	// Statement returns up to limit (> 0) of the account's movements
	// after Seq after, in the order the money moved (see
	// notify.WalletStore.Statement).
	Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error)
}

// WalletHarness connects RunWallet to one Wallet implementation. Both
// hooks are required and are called from the test goroutine only.
type WalletHarness struct {
	// New returns a wallet for one subtest, releasing it with t.Cleanup.
	// It may return one shared with other subtests (one database, say):
	// the suite's accounts have random names.
	New func(t *testing.T) Wallet

	// Open creates account in w with the opening balance (zero or more,
	// in the account's currency, which opening.Currency gives), failing t
	// if it cannot.
	Open func(t *testing.T, w Wallet, account string, opening record.Money)
}

// RunWallet checks the money a store.Ledger keeps, through Wallet:
//
//   - Balance returns the opening balance, the account ID and the
//     account's currency;
//   - Debit and Credit move exactly the amount and return the balance
//     after; a debit may empty the wallet to exactly zero;
//   - a ref already recorded, by Debit or by Credit, returns the balance
//     recorded with it (not the current one) and moves no money, also when
//     64 goroutines use the same ref at once;
//   - a ref reused for the other direction or another amount is
//     ErrConflict and moves nothing;
//   - a debit larger than the balance is ErrInsufficientFunds, with a
//     text that names no package, moves nothing and leaves its ref
//     unrecorded, so the same ref may succeed once the wallet is topped
//     up;
//   - a zero or negative amount, an amount in another currency and an
//     empty ref are ErrInvalid and move nothing;
//   - an unknown account is ErrNotFound for Balance, Debit and Credit;
//   - a context that has already ended makes Debit and Credit fail with
//     an error matching context.Canceled, and move nothing, leaving the
//     ref unrecorded;
//   - a credit that would overflow an int64 balance fails and moves
//     nothing;
//   - Statement lists each movement once, debits negative and credits
//     positive, with the balance after it, in increasing Seq, paged by
//     after and limit; a repeat of a ref and a refused debit list
//     nothing; an unknown account, or a limit of 0, lists nothing;
//   - under 64 goroutines mixing debits, credits, repeats and shared refs,
//     no returned balance is negative, every call with one ref returns one
//     balance, and the ledger identity holds exactly: opening - debits +
//     credits = balance, each ref counted once.
func RunWallet(t *testing.T, h WalletHarness) {
	t.Helper()
	needs(t, h.New != nil && h.Open != nil, "WalletHarness needs New and Open")
	runAll(t, []subtest{
		{"Balance", func(t *testing.T) { testWalletBalance(t, h) }},
		{"Debit", func(t *testing.T) { testWalletDebit(t, h) }},
		{"Credit", func(t *testing.T) { testWalletCredit(t, h) }},
		{"DebitToZero", func(t *testing.T) { testWalletDebitToZero(t, h) }},
		{"AccountsAreSeparate", func(t *testing.T) { testWalletAccountsAreSeparate(t, h) }},
		{"DebitRefRepeat", func(t *testing.T) { testWalletRefRepeat(t, h, false) }},
		{"CreditRefRepeat", func(t *testing.T) { testWalletRefRepeat(t, h, true) }},
		{"RefReusedDifferently", func(t *testing.T) { testWalletRefReusedDifferently(t, h) }},
		{"InsufficientFunds", func(t *testing.T) { testWalletInsufficientFunds(t, h) }},
		{"InvalidArguments", func(t *testing.T) { testWalletInvalidArguments(t, h) }},
		{"UnknownAccount", func(t *testing.T) { testWalletUnknownAccount(t, h) }},
		{"CanceledContext", func(t *testing.T) { testWalletCanceledContext(t, h) }},
		{"CreditOverflow", func(t *testing.T) { testWalletCreditOverflow(t, h) }},
		{"Statement", func(t *testing.T) { testWalletStatement(t, h) }},
		{"ConcurrentSameRef", func(t *testing.T) { testWalletConcurrentSameRef(t, h) }},
		{"ConcurrentLedger", func(t *testing.T) { testWalletConcurrentLedger(t, h) }},
	})
}

// openWallet makes a wallet and one account in it.
func openWallet(t *testing.T, h WalletHarness, opening int64) (Wallet, string) {
	t.Helper()
	s := h.New(t)
	if s == nil {
		t.Fatal("WalletHarness.New returned nil")
	}
	acct := newName("wt")
	h.Open(t, s, acct, rupees(opening))
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

func testWalletBalance(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	for _, opening := range []int64{0, 1, 123450, math.MaxInt64} {
		s, acct := openWallet(t, h, opening)
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

func testWalletDebit(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 1000)
	b, err := s.Debit(ctx, acct, rupees(250), newName("ref"))
	if err != nil {
		t.Fatalf("Debit: %v", err)
	}
	if b.Available.Minor != 750 || b.Account != acct {
		t.Errorf("Debit returned %+v, want account %q with 750", b, acct)
	}
	if c := b.Available.Currency; c.Code != "INR" || c.Exponent != 2 {
		t.Errorf("Debit currency = %+v, want INR", c)
	}
	b, err = s.Debit(ctx, acct, rupees(1), newName("ref"))
	if err != nil || b.Available.Minor != 749 {
		t.Fatalf("second Debit = %+v, %v; want 749", b, err)
	}
	wantBalance(t, s, acct, 749)
}

func testWalletCredit(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 0)
	b, err := s.Credit(ctx, acct, rupees(500), newName("topup"))
	if err != nil {
		t.Fatalf("Credit: %v", err)
	}
	if b.Available.Minor != 500 || b.Account != acct {
		t.Errorf("Credit returned %+v, want account %q with 500", b, acct)
	}
	if _, err := s.Credit(ctx, acct, rupees(25), store.RefundRefPrefix+newName("msg")); err != nil {
		t.Fatalf("refund Credit: %v", err)
	}
	wantBalance(t, s, acct, 525)
}

func testWalletDebitToZero(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 300)
	b, err := s.Debit(ctx, acct, rupees(300), newName("ref"))
	if err != nil {
		t.Fatalf("Debit of the whole balance: %v", err)
	}
	if b.Available.Minor != 0 {
		t.Errorf("balance after debiting everything = %d, want 0", b.Available.Minor)
	}
	_, err = s.Debit(ctx, acct, rupees(1), newName("ref"))
	wantErr(t, "Debit from an empty wallet", err, store.ErrInsufficientFunds)
	wantBalance(t, s, acct, 0)
}

func testWalletAccountsAreSeparate(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s := h.New(t)
	a, b := newName("wt"), newName("wt")
	h.Open(t, s, a, rupees(100))
	h.Open(t, s, b, rupees(100))
	if _, err := s.Debit(ctx, a, rupees(40), newName("ref")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Credit(ctx, b, rupees(7), newName("ref")); err != nil {
		t.Fatal(err)
	}
	wantBalance(t, s, a, 60)
	wantBalance(t, s, b, 107)
}

// testWalletRefRepeat checks that a repeated ref returns the first result, even
// after other operations moved the balance, and moves nothing.
func testWalletRefRepeat(t *testing.T, h WalletHarness, credit bool) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 1000)
	op := s.Debit
	if credit {
		op = s.Credit
	}
	ref := newName("ref")
	first, err := op(ctx, acct, rupees(100), ref)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	after := first.Available.Minor
	if _, err := s.Debit(ctx, acct, rupees(10), newName("other")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		again, err := op(ctx, acct, rupees(100), ref)
		if err != nil {
			t.Fatalf("repeat %d: %v", i, err)
		}
		if again.Available.Minor != after {
			t.Fatalf("repeat %d returned balance %d, want the first call's %d", i, again.Available.Minor, after)
		}
	}
	wantBalance(t, s, acct, after-10)
}

func testWalletRefReusedDifferently(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 1000)
	ref := newName("ref")
	if _, err := s.Debit(ctx, acct, rupees(100), ref); err != nil {
		t.Fatal(err)
	}
	_, err := s.Credit(ctx, acct, rupees(100), ref)
	wantErr(t, "Credit with a debit's ref", err, store.ErrConflict)
	_, err = s.Debit(ctx, acct, rupees(99), ref)
	wantErr(t, "Debit with a ref recorded for another amount", err, store.ErrConflict)

	cref := newName("ref")
	if _, err := s.Credit(ctx, acct, rupees(5), cref); err != nil {
		t.Fatal(err)
	}
	_, err = s.Debit(ctx, acct, rupees(5), cref)
	wantErr(t, "Debit with a credit's ref", err, store.ErrConflict)
	_, err = s.Credit(ctx, acct, rupees(6), cref)
	wantErr(t, "Credit with a ref recorded for another amount", err, store.ErrConflict)
	wantBalance(t, s, acct, 905)
}

func testWalletInsufficientFunds(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 100)
	ref := newName("ref")
	_, err := s.Debit(ctx, acct, rupees(101), ref)
	wantErr(t, "Debit beyond the balance", err, store.ErrInsufficientFunds)
	wantShownToSender(t, "Debit beyond the balance", err)
	wantBalance(t, s, acct, 100)
	_, err = s.Debit(ctx, acct, rupees(math.MaxInt64), newName("ref"))
	wantErr(t, "Debit of MaxInt64", err, store.ErrInsufficientFunds)
	wantBalance(t, s, acct, 100)

	// The failed debit recorded nothing: after a top-up its ref succeeds.
	if _, err := s.Credit(ctx, acct, rupees(1), newName("topup")); err != nil {
		t.Fatal(err)
	}
	b, err := s.Debit(ctx, acct, rupees(101), ref)
	if err != nil {
		t.Fatalf("Debit with the ref of a refused debit, after a top-up: %v", err)
	}
	if b.Available.Minor != 0 {
		t.Errorf("balance = %d, want 0", b.Available.Minor)
	}
	wantBalance(t, s, acct, 0)
}

func testWalletInvalidArguments(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, 1000)
	usd := record.Money{Minor: 10, Currency: record.Currency{Code: "USD", Symbol: "$", Exponent: 2}}
	tests := []struct {
		name   string
		amount record.Money
		ref    string
	}{
		{"zero", rupees(0), newName("ref")},
		{"negative", rupees(-5), newName("ref")},
		{"MinInt64", rupees(math.MinInt64), newName("ref")},
		{"other currency", usd, newName("ref")},
		{"no currency", record.Money{Minor: 10}, newName("ref")},
		{"empty ref", rupees(10), ""},
	}
	for _, tt := range tests {
		_, err := s.Debit(ctx, acct, tt.amount, tt.ref)
		wantErr(t, "Debit "+tt.name, err, store.ErrInvalid)
		_, err = s.Credit(ctx, acct, tt.amount, tt.ref)
		wantErr(t, "Credit "+tt.name, err, store.ErrInvalid)
	}
	wantBalance(t, s, acct, 1000)
}

func testWalletUnknownAccount(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, _ := openWallet(t, h, 1000)
	ghost := newName("ghost")
	_, err := s.Balance(ctx, ghost)
	wantErr(t, "Balance of an unknown account", err, store.ErrNotFound)
	_, err = s.Debit(ctx, ghost, rupees(1), newName("ref"))
	wantErr(t, "Debit of an unknown account", err, store.ErrNotFound)
	_, err = s.Credit(ctx, ghost, rupees(1), newName("ref"))
	wantErr(t, "Credit of an unknown account", err, store.ErrNotFound)
	_, err = s.Balance(ctx, "")
	wantErr(t, "Balance of the empty account", err, store.ErrNotFound)
}

func testWalletCanceledContext(t *testing.T, h WalletHarness) {
	s, acct := openWallet(t, h, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dref, cref := newName("ref"), newName("ref")
	_, err := s.Debit(ctx, acct, rupees(100), dref)
	wantErr(t, "Debit with a canceled context", err, context.Canceled)
	_, err = s.Credit(ctx, acct, rupees(100), cref)
	wantErr(t, "Credit with a canceled context", err, context.Canceled)
	wantBalance(t, s, acct, 1000)

	// Nothing was recorded under the refs: they move money now.
	live := context.Background()
	if b, err := s.Debit(live, acct, rupees(100), dref); err != nil || b.Available.Minor != 900 {
		t.Fatalf("Debit with the canceled call's ref = %+v, %v; want 900", b, err)
	}
	if b, err := s.Credit(live, acct, rupees(100), cref); err != nil || b.Available.Minor != 1000 {
		t.Fatalf("Credit with the canceled call's ref = %+v, %v; want 1000", b, err)
	}
}

func testWalletCreditOverflow(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	s, acct := openWallet(t, h, math.MaxInt64-10)
	if _, err := s.Credit(ctx, acct, rupees(11), newName("ref")); err == nil {
		t.Fatal("a credit past MaxInt64 succeeded")
	}
	wantBalance(t, s, acct, math.MaxInt64-10)
	if b, err := s.Credit(ctx, acct, rupees(10), newName("ref")); err != nil || b.Available.Minor != math.MaxInt64 {
		t.Fatalf("Credit up to MaxInt64 = %+v, %v", b, err)
	}
}

func testWalletConcurrentSameRef(t *testing.T, h WalletHarness) {
	for _, credit := range []bool{false, true} {
		name := "Debit"
		if credit {
			name = "Credit"
		}
		t.Run(name, func(t *testing.T) {
			s, acct := openWallet(t, h, 10000)
			op := s.Debit
			if credit {
				op = s.Credit
			}
			ref := newName("ref")
			balances := make([]int64, Goroutines)
			errs := make([]error, Goroutines)
			atOnce(Goroutines, func(g int) {
				b, err := op(context.Background(), acct, rupees(300), ref)
				balances[g], errs[g] = b.Available.Minor, err
			})
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

// walletCall is one Debit or Credit made by the ledger identity test and
// what it returned.
type walletCall struct {
	ref     string
	credit  bool
	amount  int64
	balance int64
	err     error
}

// testWalletConcurrentLedger checks the ledger identity under load: 64
// goroutines mix debits, credits, repeats of their own refs and refs every
// goroutine shares, and then no returned balance may be negative, every
// call with one ref must have returned one balance, and opening - debits +
// credits, each ref counted once, must be the balance exactly.
func testWalletConcurrentLedger(t *testing.T, h WalletHarness) {
	const (
		opening = 10000
		perG    = 100
		shared  = 32 // refs used by every goroutine, each with one fixed amount and direction
	)
	s, acct := openWallet(t, h, opening)
	prefix := newName("ref")

	calls := make([][]walletCall, Goroutines)
	atOnce(Goroutines, func(g int) {
		calls[g] = mixedWalletCalls(s, acct, prefix, g, perG, shared)
	})

	want, refs := walletNet(t, opening, calls)
	b, err := s.Balance(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	if b.Available.Minor != want {
		t.Fatalf("ledger identity broken: opening %d - debits + credits = %d, but the balance is %d (%d refs moved money)",
			opening, want, b.Available.Minor, refs)
	}
	if want < 0 {
		t.Fatalf("balance is negative: %d", want)
	}
}

// sharedWalletRef returns the i-th ref every goroutine of
// testWalletConcurrentLedger may use, with its one direction and amount,
// so that goroutines race to record the same ref the same way.
func sharedWalletRef(prefix string, i int) (ref string, credit bool, amount int64) {
	return fmt.Sprintf("%s-shared-%d", prefix, i), i%2 == 1, int64(1 + 7*i)
}

// mixedWalletCalls makes goroutine g's perG calls of
// testWalletConcurrentLedger and returns them with what each returned. The
// mix, from a stream seeded by g so that a failure repeats, is six in ten
// debits and two in ten credits under fresh refs, one in ten a shared ref
// (of shared), and one in ten a repeat of one of its own earlier calls.
func mixedWalletCalls(s Wallet, acct, prefix string, g, perG, shared int) []walletCall {
	rng := mrand.New(mrand.NewPCG(uint64(g), 42))
	mine := make([]walletCall, 0, perG)
	for i := 0; i < perG; i++ {
		var c walletCall
		switch r := rng.IntN(10); {
		case r < 6:
			c = walletCall{ref: fmt.Sprintf("%s-%d-%d", prefix, g, i), amount: 1 + rng.Int64N(100)}
		case r < 8:
			c = walletCall{ref: fmt.Sprintf("%s-%d-%d", prefix, g, i), credit: true, amount: 1 + rng.Int64N(100)}
		case r < 9 || len(mine) == 0:
			c.ref, c.credit, c.amount = sharedWalletRef(prefix, rng.IntN(shared))
		default:
			prev := mine[rng.IntN(len(mine))]
			c = walletCall{ref: prev.ref, credit: prev.credit, amount: prev.amount}
		}
		op := s.Debit
		if c.credit {
			op = s.Credit
		}
		b, err := op(context.Background(), acct, rupees(c.amount), c.ref)
		c.balance, c.err = b.Available.Minor, err
		mine = append(mine, c)
	}
	return mine
}

// walletNet checks every call of testWalletConcurrentLedger: only a debit
// may fail, and only for want of funds; no balance returned is negative;
// every call with one ref returned the same balance, or the ref moved
// money twice. It returns the balance the ledger identity asks for,
// opening - debits + credits with each ref that moved money counted once,
// and how many refs did.
func walletNet(t *testing.T, opening int64, calls [][]walletCall) (want int64, refs int) {
	t.Helper()
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
				if c.credit || !isKind(c.err, store.ErrInsufficientFunds) {
					t.Fatalf("goroutine %d: %s %d under %s: %v", g, walletOp(c.credit), c.amount, c.ref, c.err)
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
	want = opening
	for _, o := range byRef {
		if o.credit {
			want += o.amount
		} else {
			want -= o.amount
		}
	}
	return want, len(byRef)
}

func walletOp(credit bool) string {
	if credit {
		return "Credit"
	}
	return "Debit"
}
