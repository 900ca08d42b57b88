package verifystore_test

import (
	"fmt"
	"time"

	"github.com/notifykit/notify/verify/verifystore"
)

// A pending verification ends on time whether or not a sweep marked it:
// its status is read off its expiry and its checks.
func ExampleVerification_StatusAt() {
	start := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	v := &verifystore.Verification{Status: verifystore.VerificationPending, MaxChecks: 5,
		ExpiresAt: start.Add(10 * time.Minute)}
	fmt.Println(v.StatusAt(start.Add(time.Minute)))
	fmt.Println(v.StatusAt(start.Add(10 * time.Minute)))
	v.Checks = 5
	fmt.Println(v.StatusAt(start.Add(time.Minute)))
	// Output:
	// pending
	// expired
	// max_attempts_reached
}

// Every store cuts a counter's window into the same buckets, so that a
// sum over the window reads the same buckets on memstore and pgstore.
func ExampleCounterSince() {
	now := time.Date(2026, 12, 7, 9, 7, 30, 0, time.UTC)
	fmt.Println(verifystore.CounterBucket(now, time.Hour).Format("15:04:05"))
	fmt.Println(verifystore.CounterSince(now, time.Hour).Format("15:04:05"))
	// Output:
	// 09:07:30
	// 08:11:15
}
