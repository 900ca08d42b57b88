package memstore_test

import (
	"testing"
	"time"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/internal/wrapcheck"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/store/storetest"
)

func walletHarness(opts ...memstore.WalletOption) storetest.WalletHarness {
	return storetest.WalletHarness{
		New: func(t *testing.T) storetest.Wallet { return memstore.NewWallet(opts...) },
		Open: func(t *testing.T, s storetest.Wallet, account string, opening record.Money) {
			t.Helper()
			if err := s.(*memstore.Wallet).Open(account, opening); err != nil {
				t.Fatalf("Open(%q, %v): %v", account, opening, err)
			}
		},
	}
}

func TestWalletConformance(t *testing.T) {
	storetest.RunWallet(t, walletHarness())
}

// With a retention bound far above what the suite uses, the wallet must
// behave exactly the same.
func TestWalletConformanceWithRetention(t *testing.T) {
	storetest.RunWallet(t, walletHarness(memstore.WithRefRetention(1<<16)))
}

func TestAccountsConformance(t *testing.T) {
	storetest.RunAccounts(t, storetest.AccountsHarness{
		New: func(t *testing.T, fixtures []storetest.AccountFixture) store.Accounts {
			t.Helper()
			s := memstore.NewAccounts()
			for _, f := range fixtures {
				if err := s.Add(f.Account, f.Keys...); err != nil {
					t.Fatalf("Add(%s): %v", f.Account.ID, err)
				}
			}
			return s
		},
	})
}

func TestIdempotencyConformance(t *testing.T) {
	storetest.RunIdempotency(t, storetest.IdempotencyHarness{
		New: func(t *testing.T, ttl, lease time.Duration, now func() time.Time) store.Keys {
			return memstore.NewIdempotency(ttl, memstore.WithClock(now), memstore.WithLease(lease))
		},
	})
}

func TestLedgerConformance(t *testing.T) {
	storetest.RunLedger(t, storetest.LedgerHarness{
		New: func(t *testing.T) (store.Ledger, func(*testing.T, string, notify.Money)) {
			w := memstore.NewWallet()
			fund := func(t *testing.T, account string, opening notify.Money) {
				if err := w.Open(account, opening); err != nil {
					t.Fatal(err)
				}
			}
			return memstore.NewLedger(w), fund
		},
	})
}

func TestTemplatesConformance(t *testing.T) {
	storetest.RunTemplates(t, storetest.TemplatesHarness{
		New: func(t *testing.T) store.Templates { return memstore.NewTemplates() },
	})
}

func TestRateLimitConformance(t *testing.T) {
	storetest.RunRateLimit(t, storetest.RateLimitHarness{
		New: func(t *testing.T, perSecond float64, burst int) store.Limiter {
			l, err := memstore.NewRateLimit(perSecond, burst)
			if err != nil {
				t.Fatalf("NewRateLimit(%g, %d): %v", perSecond, burst, err)
			}
			return l
		},
	})
}

func TestWindowLimitConformance(t *testing.T) {
	storetest.RunWindowLimit(t, storetest.WindowLimitHarness{
		New: func(t *testing.T, max int, window time.Duration) store.Limiter {
			l, err := memstore.NewWindowLimit(max, window)
			if err != nil {
				t.Fatalf("NewWindowLimit(%d, %v): %v", max, window, err)
			}
			return l
		},
	})
}

func TestVerificationsConformance(t *testing.T) {
	storetest.RunVerifications(t, storetest.VerificationsHarness{
		New: func(t *testing.T) verifystore.Verifications { return memstore.NewVerifications() },
	})
}

func TestCountersConformance(t *testing.T) {
	storetest.RunCounters(t, storetest.CountersHarness{
		New: func(t *testing.T) verifystore.Counters { return memstore.NewCounters() },
	})
}

func TestSuppressionsConformance(t *testing.T) {
	storetest.RunSuppressions(t, storetest.SuppressionsHarness{
		New: func(t *testing.T) store.Suppressions { return memstore.NewSuppressions() },
	})
}

// The Ledger's list, which the Notifier finds, is the same store.
func TestLedgerSuppressionsConformance(t *testing.T) {
	storetest.RunSuppressions(t, storetest.SuppressionsHarness{
		New: func(t *testing.T) store.Suppressions { return memstore.NewLedger(nil) },
	})
}

func TestPushDevicesConformance(t *testing.T) {
	storetest.RunPushDevices(t, storetest.PushDevicesHarness{
		New: func(t *testing.T) pushstore.Devices { return memstore.NewPushDevices() },
	})
}

// The zero value is a registry too.
func TestPushDevicesZeroConformance(t *testing.T) {
	storetest.RunPushDevices(t, storetest.PushDevicesHarness{
		New: func(t *testing.T) pushstore.Devices { return new(memstore.PushDevices) },
	})
}

func TestPreferencesConformance(t *testing.T) {
	storetest.RunPreferences(t, storetest.PreferencesHarness{
		New: func(t *testing.T) store.Preferences { return memstore.NewPreferences() },
	})
}

// The Ledger's preferences, which the Notifier reads, are the same store.
func TestLedgerPreferencesConformance(t *testing.T) {
	storetest.RunPreferences(t, storetest.PreferencesHarness{
		New: func(t *testing.T) store.Preferences { return memstore.NewLedger(nil) },
	})
}

// A memstore.Ledger wrapped by embedding keeps every guarantee.
func TestWrappedLedger(t *testing.T) {
	wrapcheck.Run(t, func(t *testing.T, account string) store.Ledger {
		w := memstore.NewWallet()
		if err := w.Open(account, record.Money{Minor: wrapcheck.Opening, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
		return memstore.NewLedger(w)
	})
}
