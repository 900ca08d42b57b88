package chaos

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
)

func TestChaosMemstore(t *testing.T) {
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "chaos", Name: "Chaos", Settings: sms.Settings{SenderID: "CHAOS"}.Map(), Currency: notify.INR()}); err != nil {
		t.Fatal(err)
	}
	sends := Sizes(5000)
	// Enough money for about 60% of the sends, so funds run out midway
	// and InsufficientFunds races with refunds.
	opening := notify.Money{Minor: int64(sends) * 20, Currency: notify.INR()}
	w := memstore.NewWallet()
	if err := w.Open("chaos", opening); err != nil {
		t.Fatal(err)
	}
	Run(t, Stores{
		Ledger: memstore.NewLedger(w), Accounts: accounts, Idempotency: memstore.NewIdempotency(0),
		Account: "chaos", Opening: opening,
	}, Config{Sends: sends})
}

func TestChaosPostgres(t *testing.T) {
	schema := pgstoretest.Schema(t) // skips without a server, unless CI requires one
	store := pgstoretest.Store(t, schema)
	ctx := context.Background()
	if err := store.PutAccount(ctx, &notify.Account{ID: "chaos", Name: "Chaos", Settings: sms.Settings{SenderID: "CHAOS"}.Map(), Currency: notify.INR()}); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL round trips make each send slower; a smaller default
	// keeps CI quick, NOTIFY_CHAOS_SENDS still sets the size.
	sends := Sizes(2000)
	opening := notify.Money{Minor: int64(sends) * 20, Currency: notify.INR()}
	if err := store.OpenWallet(ctx, "chaos", opening); err != nil {
		t.Fatal(err)
	}
	Run(t, Stores{
		Ledger: store, Accounts: store, Idempotency: store,
		Account: "chaos", Opening: opening,
	}, Config{Sends: sends})
	if err := store.CheckLedger(ctx, "chaos"); err != nil {
		t.Errorf("ledger check: %v", err)
	}
}
