// Package memstore keeps every store of notify in memory: a WalletStore,
// an AccountStore, an IdempotencyStore, a DeliveryLog and a TemplateStore.
// It is for development and tests: nothing survives the process, and
// several processes cannot share one wallet (use pgstore for that).
//
// Every type is safe for concurrent use and passes the conformance suites
// of wallet/wallettest and storetest. Constructors take no hidden global
// state; create one value per Notifier (or per test):
//
//	w := memstore.NewWallet()
//	_ = w.Open("acme", notify.Money{Minor: 100000, Currency: notify.INR()})
//	accounts := memstore.NewAccounts()
//	_ = accounts.Add(&notify.Account{ID: "acme", Currency: notify.INR()}, "secret-key")
//	n, _ := notify.New(accounts,
//		notify.WithWallet(w, wallet.DefaultINR()),
//		notify.WithIdempotency(memstore.NewIdempotency(24*time.Hour)),
//		notify.WithDeliveryLog(memstore.NewDeliveryLog(10000)),
//	)
//
// Memory: the Wallet remembers every debit and credit ref it has seen,
// because a ref must deduplicate retries for as long as one can arrive
// (bound it with WithRefRetention); the IdempotencyStore forgets entries
// after its TTL; the DeliveryLog keeps a fixed number of receipts.
package memstore
