package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/store"
)

// A Ledger keeps each account's suppression list, which a Notifier over
// it enforces. Adding a recipient again keeps the stronger reason.
func ExampleLedger_AddSuppression() {
	ctx := context.Background()
	l := memstore.NewLedger(nil)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, r := range []store.SuppressionReason{store.SuppressUnsubscribed, store.SuppressHardBounce, store.SuppressManual} {
		// The address in the e-mail channel's form (email.Recipient,
		// notify.Notifier.Recipient), the one sends are looked up by.
		e, err := l.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: "email", To: "asha@example.com", Reason: r, At: at})
		fmt.Println(e.To, e.Reason, err)
	}
	// Output:
	// asha@example.com unsubscribed <nil>
	// asha@example.com hard_bounce <nil>
	// asha@example.com hard_bounce <nil>
}
