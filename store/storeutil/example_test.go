package storeutil_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// A store checks an entry first: its time in UTC to the microsecond, every
// bad field named. The recipient is kept as given, in its channel's form.
func ExampleCheckSuppression() {
	at := time.Date(2026, 12, 7, 9, 0, 0, 123456789, time.FixedZone("IST", 5*3600+1800))
	e, err := storeutil.CheckSuppression(store.Suppression{Account: "acme", Kind: "email",
		To: "asha@example.com", Reason: store.SuppressUnsubscribed, At: at})
	fmt.Println(e.To, e.At.Format(time.RFC3339Nano), err)
	_, err = storeutil.CheckSuppression(store.Suppression{Kind: "email", To: "asha @example.com",
		Reason: "bored", At: at})
	fmt.Println(err)
	// Output:
	// asha@example.com 2026-12-07T03:30:00.123456Z <nil>
	// account: is required; to: must be 1 to 254 bytes without spaces or control characters; reason: must be unsubscribed, hard_bounce, complaint or manual
}

// countingLedger is a wrapper a host app writes to count openings: it
// overrides Open, and OpenUnlisted through it, since the Notifier opens a
// message with one recipient by OpenUnlisted.
type countingLedger struct {
	store.Ledger
	opened int
}

func (l *countingLedger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	l.opened++
	return l.Ledger.Open(ctx, m)
}

func (l *countingLedger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	return storeutil.OpenUnlisted(ctx, l, m, to, stopping) // the list, then l.Open
}

// OpenUnlisted makes store.Ledger.OpenUnlisted of a ledger's
// LookupSuppressions and Open: a wrapper that watches Open routes it
// there, and a recipient the list stops is never opened.
func ExampleOpenUnlisted() {
	ctx := context.Background()
	wallet := memstore.NewWallet()
	_ = wallet.Open("acme", record.Money{Minor: 1000, Currency: record.INR()})
	l := &countingLedger{Ledger: memstore.NewLedger(wallet)}
	_, _ = l.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: "sms", To: "+919876543210",
		Reason: store.SuppressHardBounce, At: time.Now()})
	stopping := []store.SuppressionReason{store.SuppressHardBounce}
	for i, to := range []string{"+919876543210", "+919876543211"} {
		m := &record.Message{ID: fmt.Sprint("m", i), Account: "acme", Kind: "sms", To: to, Metered: true,
			Charge: record.Money{Minor: 100, Currency: record.INR()}, CreatedAt: time.Now()}
		b, e, err := l.OpenUnlisted(ctx, m, to, stopping)
		fmt.Println(to, e.Reason, b.Available, err)
	}
	fmt.Println("opened:", l.opened)
	// Output:
	// +919876543210 hard_bounce 0 <nil>
	// +919876543211  9.00 INR <nil>
	// opened: 1
}
