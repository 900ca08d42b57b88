// Package memstore implements every contract of package store in memory:
// a Ledger (store.Ledger, which keeps message records beside a Wallet and
// charges and refunds it with them), Accounts (store.Accounts),
// Idempotency (store.Keys), Templates (store.Templates), and two
// store.Limiter values: RateLimit, a token bucket for the
// per-account rate limit, and WindowLimit, a sliding window for the
// per-recipient OTP throttle. Verifications (verifystore.Verifications) keeps
// verifications without their codes, and Counters (verifystore.Counters) the
// fraud guard's windowed sums. PushDevices (pushstore.Devices) is the
// push channel's device registry: the Web Push subscriptions and FCM
// tokens each account registered for its recipients. Admin joins them
// into the store.Admin of the admin API (package adminapi). It is for
// development, tests and single-process deployments: nothing survives
// the process, and several processes cannot share one wallet, one budget
// or one device registry (use pgstore for that).
//
// It imports package store and never package notify, as a database/sql
// driver imports database/sql/driver. Every type is safe for concurrent
// use and passes the conformance kit store/storetest; errors match the
// sentinels of package store (store.ErrNotFound, ...). Constructors take no hidden global
// state; create one value per Notifier (or per test):
//
//	w := memstore.NewWallet()
//	_ = w.Open("acme", notify.Money{Minor: 100000, Currency: record.INR()})
//	accounts := memstore.NewAccounts()
//	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()}, "secret-key")
//	n, _ := notify.New(accounts, memstore.NewLedger(w), // records, charged with w
//		notify.WithPrices(wallet.DefaultINR()),
//		notify.WithIdempotency(memstore.NewIdempotency(24*time.Hour)),
//	)
//
// NewLedger(nil) makes a Ledger with a new, empty Wallet of its own, enough
// for a Notifier without WithPrices, whose sends are free.
//
// The limits are optional, and their parameters have no defaults:
//
//	rate, _ := memstore.NewRateLimit(10, 20)             // bursts of 20, then 10 a second
//	otp, _ := memstore.NewWindowLimit(5, 15*time.Minute) // 5 codes per number per 15 minutes
//	// ... with, among the options of notify.New:
//	notify.WithRateLimit(rate), notify.WithOTPThrottle(otp),
//
// Memory: the Wallet remembers every debit and credit ref it has seen,
// because a ref must deduplicate retries for as long as one can arrive
// (bound it with WithRefRetention); the Idempotency store forgets entries
// after its TTL; the Ledger keeps every open record and, of the settled
// ones, the latest 50,000 to 100,000 (WithMessageCapacity); the limiters
// forget a key once its budget is whole again, so they hold the keys
// active within one window (one burst time for RateLimit); Verifications
// drops a verification a day after it ended, and Counters a key once its
// amounts have all left its window; PushDevices keeps a device until it
// is unregistered or a newer one of its recipient's replaces it (at most
// pushstore.MaxDevices a recipient).
package memstore
