// Package storetest holds the conformance suites of notify's store
// interfaces other than the wallet (whose suite is wallet/wallettest):
// RunAccounts for notify.AccountStore, RunIdempotency for
// notify.IdempotencyStore, RunLedger for notify.Ledger (balances and
// credits, records, their state machine, their charges and refunds,
// delivery reports), RunTemplates for
// notify.TemplateStore, RunAdmin for adminstore.Store, and RunRateLimit
// (a token bucket) and RunWindowLimit (a sliding window) for
// notify.Limiter. They
// are written in the manner of gocloud.dev's drivertest packages: an
// implementation wires itself into a small harness of functions and calls
// the suite from a test, usually conformance_test.go:
//
//	func TestTemplatesConformance(t *testing.T) {
//		storetest.RunTemplates(t, storetest.TemplatesHarness{
//			New: func(t *testing.T) notify.TemplateStore { return memstore.NewTemplates() },
//		})
//	}
//
// The suites go through the interfaces only and use random account IDs,
// keys and message IDs, so a harness may hand every subtest the same
// database. Receipts and times round-trip at microsecond precision in UTC,
// which a SQL timestamp keeps. The limiter suites pass every time in,
// from a fixed instant on; they never sleep and never read the clock, so a
// limiter must go by the times it is given.
package storetest
