package storeutil_test

import (
	"fmt"
	"time"

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
