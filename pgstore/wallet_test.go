package pgstore_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

func TestDebitCredit(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)

	b, err := s.Debit(ctx, "acme", inr(300), "m1")
	must(t, err)
	if b.Available != inr(700) || b.Account != "acme" {
		t.Fatalf("Debit = %+v, want 700 INR for acme", b)
	}
	// A repeated ref answers what it answered first and moves nothing; the
	// same ref for another amount or direction is a Conflict.
	b, err = s.Debit(ctx, "acme", inr(300), "m1")
	must(t, err)
	if b.Available.Minor != 700 {
		t.Fatalf("repeated Debit = %d, want 700", b.Available.Minor)
	}
	_, err = s.Debit(ctx, "acme", inr(5), "m1")
	wantErr(t, err, store.ErrConflict)
	_, err = s.Credit(ctx, "acme", inr(300), "m1")
	wantErr(t, err, store.ErrConflict)
	wantBalance(t, s, "acme", 700)

	_, err = s.Debit(ctx, "acme", inr(701), "m2")
	wantErr(t, err, store.ErrInsufficientFunds)
	if n := ledgerRows(t, pool, "acme", "m2"); n != 0 {
		t.Fatalf("refused debit left %d ledger rows", n)
	}
	// The refused ref is not burnt: it may succeed later.
	b, err = s.Debit(ctx, "acme", inr(700), "m2")
	must(t, err)
	if b.Available.Minor != 0 {
		t.Fatalf("Debit to zero = %d", b.Available.Minor)
	}
	_, err = s.Debit(ctx, "acme", inr(1), "m3")
	wantErr(t, err, store.ErrInsufficientFunds)

	b, err = s.Credit(ctx, "acme", inr(250), "refund:m1")
	must(t, err)
	if b.Available.Minor != 250 {
		t.Fatalf("Credit = %d, want 250", b.Available.Minor)
	}
	b, err = s.Credit(ctx, "acme", inr(250), "refund:m1")
	must(t, err)
	if b.Available.Minor != 250 {
		t.Fatalf("repeated Credit = %d, want 250", b.Available.Minor)
	}
	wantBalance(t, s, "acme", 250)
	checkLedger(t, s, "acme")

	// Refs are per account.
	openWallet(t, s, "other", 100)
	b, err = s.Debit(ctx, "other", inr(10), "m1")
	must(t, err)
	if b.Available.Minor != 90 {
		t.Fatalf("other account's m1 = %d, want 90", b.Available.Minor)
	}
	checkLedger(t, s, "other")
}

func TestWalletBadInput(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	usd := notify.Money{Minor: 10, Currency: record.Currency{Code: "USD", Symbol: "$", Exponent: 2}}

	for _, tc := range []struct {
		name    string
		account string
		amount  notify.Money
		ref     string
		kind    error
		field   string
	}{
		{"zero amount", "acme", inr(0), "r", store.ErrInvalid, "amount"},
		{"negative amount", "acme", inr(-5), "r", store.ErrInvalid, "amount"},
		{"empty ref", "acme", inr(5), "", store.ErrInvalid, "ref"},
		{"long ref", "acme", inr(5), string(make([]byte, 201)), store.ErrInvalid, "ref"},
		{"empty account", "", inr(5), "r", store.ErrInvalid, "account"},
		{"other currency", "acme", usd, "r", store.ErrInvalid, "amount"},
		{"unknown account", "nobody", inr(5), "r", store.ErrNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, op := range map[string]func(context.Context, string, notify.Money, string) (record.Balance, error){
				"Debit": s.Debit, "Credit": s.Credit,
			} {
				_, err := op(ctx, tc.account, tc.amount, tc.ref)
				wantErr(t, err, tc.kind)
				if tc.field != "" && !hasField(err, tc.field) {
					t.Errorf("%s: %v does not name field %q", name, err, tc.field)
				}
			}
		})
	}
	wantBalance(t, s, "acme", 1000)
	checkLedger(t, s, "acme")

	_, err := s.Balance(ctx, "nobody")
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, s.CheckLedger(ctx, "nobody"), store.ErrNotFound)
	wantErr(t, s.OpenWallet(ctx, "acme", inr(5)), store.ErrConflict)
	wantBalance(t, s, "acme", 1000) // the second open changed nothing
	wantErr(t, s.OpenWallet(ctx, "neg", inr(-1)), store.ErrInvalid)
	wantErr(t, s.OpenWallet(ctx, "", inr(1)), store.ErrInvalid)
	wantErr(t, s.OpenWallet(ctx, "nocur", notify.Money{Minor: 1}), store.ErrInvalid)

	// A credit that would overflow int64 is refused, not wrapped around.
	openWallet(t, s, "big", math.MaxInt64-10)
	_, err = s.Credit(ctx, "big", inr(11), "top")
	wantErr(t, err, store.ErrInvalid)
	wantBalance(t, s, "big", math.MaxInt64-10)
	checkLedger(t, s, "big")
}

// hasField reports whether err names field in its record.FieldErrors.
func hasField(err error, field string) bool {
	var fe record.FieldErrors
	if !errors.As(err, &fe) {
		return false
	}
	for _, f := range fe {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TestConcurrentDebits fires more debits at one wallet than it can pay:
// exactly as many succeed as the opening balance covers.
func TestConcurrentDebits(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	const opening, price, workers, each = 1000, 7, 16, 12 // 192 debits, 142 fit
	openWallet(t, s, "acme", opening)

	var ok, short atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.Debit(ctx, "acme", inr(price), ref(w*each+i))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, store.ErrInsufficientFunds):
					short.Add(1)
				default:
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Debit: %v", err)
	}
	if want := int64(opening / price); ok.Load() != want {
		t.Fatalf("%d debits succeeded, want %d (short: %d)", ok.Load(), want, short.Load())
	}
	wantBalance(t, s, "acme", opening-opening/price*price)
	checkLedger(t, s, "acme")
}

// TestConcurrentSameRef races many calls with one ref: one charge, and
// every caller is told the balance after it.
func TestConcurrentSameRef(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)

	const callers = 16
	var wg sync.WaitGroup
	results := make([]int64, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := s.Debit(ctx, "acme", inr(100), "same")
			results[i], errs[i] = b.Available.Minor, err
		}()
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i] != 900 {
			t.Fatalf("caller %d saw balance %d, want 900", i, results[i])
		}
	}
	if n := ledgerRows(t, pool, "acme", "same"); n != 1 {
		t.Fatalf("%d ledger rows for the ref, want 1", n)
	}
	wantBalance(t, s, "acme", 900)
	checkLedger(t, s, "acme")
}

// TestCheckLedgerDetects proves the check can fail: a balance changed
// behind the ledger's back, or a ledger row rewritten, is reported.
func TestCheckLedgerDetects(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	for i := range 3 {
		_, err := s.Debit(ctx, "acme", inr(10), ref(i))
		must(t, err)
	}
	checkLedger(t, s, "acme")

	_, err := pool.Exec(ctx, `UPDATE notify_wallets SET balance = balance + 1 WHERE account = 'acme'`)
	must(t, err)
	wantErr(t, s.CheckLedger(ctx, "acme"), nil)
	_, err = pool.Exec(ctx, `UPDATE notify_wallets SET balance = balance - 1 WHERE account = 'acme'`)
	must(t, err)
	checkLedger(t, s, "acme")

	// Same sum, wrong history: two rows swap amounts.
	_, err = pool.Exec(ctx, `UPDATE notify_ledger SET amount = CASE ref WHEN 'ref-0' THEN -5 ELSE -15 END
		WHERE account = 'acme' AND ref IN ('ref-0', 'ref-1')`)
	must(t, err)
	wantErr(t, s.CheckLedger(ctx, "acme"), nil)
}

func TestLedgerPages(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	openWallet(t, s, "acme", 1000)
	for i := range 5 {
		_, err := s.Debit(ctx, "acme", inr(int64(10+i)), ref(i))
		must(t, err)
	}
	_, err := s.Credit(ctx, "acme", inr(7), "top")
	must(t, err)

	var all []string
	var after int64
	for pages := 0; ; pages++ {
		if pages > 6 {
			t.Fatal("Ledger pages never end")
		}
		page, err := s.Ledger(ctx, "acme", after, 2)
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			all = append(all, e.Ref)
			after = e.ID
		}
	}
	if want := "ref-0 ref-1 ref-2 ref-3 ref-4 top"; strings.Join(all, " ") != want {
		t.Fatalf("ledger refs %q, want %q", all, want)
	}
	page, err := s.Ledger(ctx, "acme", 0, 0)
	must(t, err)
	last := page[len(page)-1]
	if last.Amount != inr(7) || last.BalanceAfter != inr(1000-60+7) || last.CreatedAt.IsZero() {
		t.Fatalf("last entry %+v", last)
	}
	if page[0].Amount != inr(-10) || page[0].BalanceAfter != inr(990) {
		t.Fatalf("first entry %+v", page[0])
	}
	page, err = s.Ledger(ctx, "nobody", 0, 0)
	must(t, err)
	if len(page) != 0 {
		t.Fatalf("unknown wallet has %d entries", len(page))
	}
}
