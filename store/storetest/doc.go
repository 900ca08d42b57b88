// Package storetest is the conformance kit of package store: the suites
// that every store (memstore, pgstore, one of your own) runs to show that
// it keeps the contract written beside each interface of store.
// RunAccounts checks a store.Accounts, RunIdempotency a store.Keys,
// RunLedger a store.Ledger (balances and credits, records, their state
// machine, their charges and refunds, delivery reports), RunWallet the
// money a Ledger keeps (exact amounts, refs that deduplicate, never below
// zero, under 64 goroutines), RunTemplates a store.Templates, RunAdmin a
// store.Admin, RunSuppressions a store.Suppressions, RunPreferences a
// store.Preferences (categories and choices, accounts and channels kept
// apart), RunRateLimit (a token bucket) and RunWindowLimit (a
// sliding window) a store.Limiter, RunVerifications a verifystore.Verifications
// (checks and sends counted once under 64 goroutines, expiry to the
// microsecond, a day's retention), RunCounters a verifystore.Counters
// (windowed sums cut as verifystore.CounterBucket cuts them, limits never
// exceeded) and RunPushDevices a pushstore.Devices (the push channel's
// device registry: at most pushstore.MaxDevices a recipient, its newest,
// under 64 goroutines). They are written in the manner of
// gocloud.dev's drivertest packages: an implementation wires itself into a
// small harness of functions and calls the suite from a test, usually
// conformance_test.go:
//
//	func TestTemplatesConformance(t *testing.T) {
//		storetest.RunTemplates(t, storetest.TemplatesHarness{
//			New: func(t *testing.T) store.Templates { return memstore.NewTemplates() },
//		})
//	}
//
// Like a store, the kit depends on package store and the standard library
// only, and checks the contract itself: each error by the sentinel it must
// match (errors.Is with store.ErrNotFound, store.ErrConflict, ...) and by
// no other sentinel nor context error, so that the Notifier reads it one
// way only; a Limiter's refusal as a *store.LimitError with a Rule and a
// RetryAfter > 0; a record.FieldErrors by the fields it names. The errors a
// sender sees (a key in flight, a wallet too short) must not name a Go
// package.
//
// The suites go through the interfaces only and use random account IDs,
// keys and message IDs, so a harness may hand every subtest the same
// database. Receipts are bytes a store keeps exactly as completed (binary
// ones too); times round-trip at microsecond precision in UTC, which a SQL
// timestamp keeps. The limiter, verification and counter suites pass
// every time in, from a fixed instant on; they never sleep and never read
// the clock, so a store must go by the times it is given. Because
// ExpireVerifications reaches every account, no two runs of
// RunVerifications may share a database at once.
package storetest
