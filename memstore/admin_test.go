package memstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
)

func TestAdminConformance(t *testing.T) {
	storetest.RunAdmin(t, storetest.AdminHarness{
		New: func(t *testing.T) (store.Admin, store.Accounts, store.Ledger) {
			accounts, w := memstore.NewAccounts(), memstore.NewWallet()
			msgs := memstore.NewLedger(w)
			a, err := memstore.NewAdmin(accounts, w, msgs, memstore.NewTemplates())
			if err != nil {
				t.Fatal(err)
			}
			return a, accounts, msgs
		},
	})
}

func TestNewAdminNeedsEveryStore(t *testing.T) {
	if _, err := memstore.NewAdmin(memstore.NewAccounts(), nil, nil, nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("NewAdmin with nil stores: %v, want InvalidArgument", err)
	}
}

// A top-up reference holds for the life of the Admin, even after the
// wallet forgot it among many later refs.
func TestAdminCreditOutlivesWalletRetention(t *testing.T) {
	ctx := context.Background()
	accounts, w := memstore.NewAccounts(), memstore.NewWallet(memstore.WithRefRetention(4))
	a, err := memstore.NewAdmin(accounts, w, memstore.NewLedger(w), memstore.NewTemplates())
	if err != nil {
		t.Fatal(err)
	}
	inr := func(minor int64) notify.Money { return notify.Money{Minor: minor, Currency: record.INR()} }
	if err := a.CreateAccount(ctx, &notify.Account{ID: "acme", Currency: record.INR()}, "acme-key-0123456789", inr(0)); err != nil {
		t.Fatal(err)
	}
	first, err := a.Credit(ctx, "acme", inr(1000), "topup:inv-1")
	if err != nil {
		t.Fatal(err)
	}
	// 400 refs over the wallet's 16 shards of two generations of one ref
	// each: the top-up's ref is long forgotten by the wallet.
	for i := range 400 {
		if _, err := w.Debit(ctx, "acme", inr(1), fmt.Sprint("msg-", i)); err != nil {
			t.Fatal(err)
		}
	}
	again, err := a.Credit(ctx, "acme", inr(1000), "topup:inv-1")
	if err != nil || again != first {
		t.Fatalf("repeat: %+v %v, want %+v", again, err, first)
	}
	if bal, _ := a.Balance(ctx, "acme"); bal.Available.Minor != 600 {
		t.Fatalf("balance %d, want 600: the repeat credited again", bal.Available.Minor)
	}
	if _, err := a.Credit(ctx, "acme", inr(900), "topup:inv-1"); notify.CodeOf(err) != notify.CodeConflict {
		t.Fatalf("another amount: %v, want Conflict", err)
	}
}
