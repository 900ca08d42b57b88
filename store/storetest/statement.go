package storetest

import (
	"context"
	"testing"

	"github.com/notifykit/notify/record"
)

// testWalletStatement moves money under five refs, repeats one and has
// one debit refused, then reads the statement in pages of two: each
// movement once, signed, with the balance after it, in increasing Seq.
func testWalletStatement(t *testing.T, h WalletHarness) {
	ctx := context.Background()
	w, acct := openWallet(t, h, 1000)
	type move struct {
		ref    string
		amount int64 // negative: a debit
	}
	moves := []move{{"m1", -300}, {"topup:1", 500}, {"m2", -200}, {"refund:m2", 200}, {"m3", -1000}}
	for _, m := range moves {
		if err := walletMove(ctx, w, acct, m.ref, m.amount); err != nil {
			t.Fatalf("%s %d: %v", m.ref, m.amount, err)
		}
	}
	// A repeat moves nothing and a refused debit moves nothing: neither
	// is a movement.
	if err := walletMove(ctx, w, acct, "m1", -300); err != nil {
		t.Fatalf("repeat of m1: %v", err)
	}
	if err := walletMove(ctx, w, acct, "m4", -10_000); err == nil {
		t.Fatal("a debit beyond the balance was taken")
	}
	got := readStatement(t, w, acct, 2)
	if len(got) != len(moves) {
		t.Fatalf("statement lists %d movements, want %d: %+v", len(got), len(moves), got)
	}
	bal := int64(1000)
	for i, e := range got {
		bal += moves[i].amount
		if e.Ref != moves[i].ref || e.Amount.Minor != moves[i].amount || e.Balance.Minor != bal ||
			!e.Amount.Currency.Same(inr) || (i > 0 && e.Seq <= got[i-1].Seq) {
			t.Errorf("entry %d = %+v; want ref %s, amount %d, balance %d, Seq above the last",
				i, e, moves[i].ref, moves[i].amount, bal)
		}
	}
	if page, err := w.Statement(ctx, acct, 0, 0); err != nil || len(page) != 0 {
		t.Errorf("Statement with limit 0 = %+v, %v; want empty", page, err)
	}
	if page, err := w.Statement(ctx, newName("missing"), 0, 10); err != nil || len(page) != 0 {
		t.Errorf("Statement of an unknown account = %+v, %v; want empty", page, err)
	}
}

// walletMove debits (amount < 0) or credits amount under ref.
func walletMove(ctx context.Context, w Wallet, acct, ref string, amount int64) error {
	var err error
	if amount < 0 {
		_, err = w.Debit(ctx, acct, rupees(-amount), ref)
	} else {
		_, err = w.Credit(ctx, acct, rupees(amount), ref)
	}
	return err
}

// readStatement reads the whole statement of acct in pages of size.
func readStatement(t *testing.T, w Wallet, acct string, size int) []record.LedgerEntry {
	t.Helper()
	var all []record.LedgerEntry
	after := int64(0)
	for range 100 {
		page, err := w.Statement(context.Background(), acct, after, size)
		if err != nil {
			t.Fatalf("Statement(after %d): %v", after, err)
		}
		if len(page) > size {
			t.Fatalf("Statement(limit %d) returned %d entries", size, len(page))
		}
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = page[len(page)-1].Seq
	}
	t.Fatal("Statement never ended")
	return nil
}
