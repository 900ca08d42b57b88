package chaos

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestChaosMemstore runs the chaos on memstore and memqueue. The pgstore
// module runs it on PostgreSQL (pgstore/pgqueue's TestChaosPostgres).
func TestChaosMemstore(t *testing.T) {
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "chaos", Name: "Chaos", Settings: sms.Settings{SenderID: "CHAOS"}.Map(), Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	sends := Sizes(5000)
	// Enough money for about 60% of the sends, so funds run out midway
	// and InsufficientFunds races with refunds.
	opening := notify.Money{Minor: int64(sends) * 20, Currency: record.INR()}
	w := memstore.NewWallet()
	if err := w.Open("chaos", opening); err != nil {
		t.Fatal(err)
	}
	Run(t, Stores{
		Ledger: memstore.NewLedger(w), Accounts: accounts, Idempotency: memstore.NewIdempotency(0),
		Account: "chaos", Opening: opening,
		// The queue opens its records through the run's Ledger, which
		// sees their debits.
		NewQueue: func(ledger store.Ledger) (queue.Queue, error) {
			return memqueue.New(memqueue.Config{Ledger: ledger, Workers: 8})
		},
	}, Config{Sends: sends})
}
