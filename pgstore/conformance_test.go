package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/internal/wrapcheck"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
	"github.com/notifykit/notify/verify/verifystore"
)

// TestWalletConformance runs the wallet suite (Balance, Debit, Credit),
// each subtest in a schema of its own.
func TestWalletConformance(t *testing.T) {
	pgstoretest.URL(t) // skip the whole suite, not each subtest, without a server
	storetest.RunWallet(t, storetest.WalletHarness{
		New: func(t *testing.T) storetest.Wallet {
			s, _ := newStore(t)
			return s
		},
		Open: func(t *testing.T, w storetest.Wallet, account string, opening record.Money) {
			if err := w.(*pgstore.Store).OpenWallet(context.Background(), account, opening); err != nil {
				t.Fatalf("OpenWallet: %v", err)
			}
		},
	})
}

func TestAccountsConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunAccounts(t, storetest.AccountsHarness{
		New: func(t *testing.T, fixtures []storetest.AccountFixture) store.Accounts {
			s, _ := newStore(t)
			for _, f := range fixtures {
				if err := s.PutAccount(context.Background(), f.Account, f.Keys...); err != nil {
					t.Fatalf("PutAccount(%s): %v", f.Account.ID, err)
				}
			}
			return s
		},
	})
}

func TestIdempotencyConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunIdempotency(t, storetest.IdempotencyHarness{
		New: func(t *testing.T, ttl, lease time.Duration, now func() time.Time) store.Keys {
			s, _ := newStore(t, pgstore.WithIdempotencyTTL(ttl), pgstore.WithIdempotencyLease(lease), pgstore.WithClock(now))
			return s
		},
	})
}

func TestTemplatesConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunTemplates(t, storetest.TemplatesHarness{
		New: func(t *testing.T) store.Templates {
			s, _ := newStore(t)
			return s
		},
	})
}

// The limiter suites run each subtest on a store of its own, as separate
// processes sharing a database would not: TestLimitsShareABudget covers
// that.
func TestRateLimitConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunRateLimit(t, storetest.RateLimitHarness{
		New: func(t *testing.T, perSecond float64, burst int) store.Limiter {
			s, _ := newStore(t)
			l, err := s.RateLimit("rate", perSecond, burst)
			if err != nil {
				t.Fatalf("RateLimit(%g, %d): %v", perSecond, burst, err)
			}
			return l
		},
	})
}

func TestWindowLimitConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunWindowLimit(t, storetest.WindowLimitHarness{
		New: func(t *testing.T, max int, window time.Duration) store.Limiter {
			s, _ := newStore(t)
			l, err := s.WindowLimit("otp", max, window)
			if err != nil {
				t.Fatalf("WindowLimit(%d, %v): %v", max, window, err)
			}
			return l
		},
	})
}

func TestLedgerConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunLedger(t, storetest.LedgerHarness{
		New: func(t *testing.T) (store.Ledger, func(*testing.T, string, record.Money)) {
			s, _ := newStore(t)
			fund := func(t *testing.T, account string, opening record.Money) {
				if err := s.OpenWallet(context.Background(), account, opening); err != nil {
					t.Fatalf("OpenWallet: %v", err)
				}
			}
			return s, fund
		},
	})
}

func TestVerificationsConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunVerifications(t, storetest.VerificationsHarness{
		New: func(t *testing.T) verifystore.Verifications {
			s, _ := newStore(t)
			return s
		},
	})
}

func TestCountersConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunCounters(t, storetest.CountersHarness{
		New: func(t *testing.T) verifystore.Counters {
			s, _ := newStore(t)
			return s.Counters()
		},
	})
}

func TestSuppressionsConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunSuppressions(t, storetest.SuppressionsHarness{
		New: func(t *testing.T) store.Suppressions {
			s, _ := newStore(t)
			return s
		},
	})
}

func TestPreferencesConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunPreferences(t, storetest.PreferencesHarness{
		New: func(t *testing.T) store.Preferences {
			s, _ := newStore(t)
			return s
		},
	})
}

func TestPushDevicesConformance(t *testing.T) {
	pgstoretest.URL(t)
	storetest.RunPushDevices(t, storetest.PushDevicesHarness{
		New: func(t *testing.T) pushstore.Devices {
			s, _ := newStore(t)
			return s.PushDevices()
		},
	})
}

// A pgstore.Store wrapped by embedding keeps every guarantee.
func TestWrappedLedger(t *testing.T) {
	pgstoretest.URL(t)
	wrapcheck.Run(t, func(t *testing.T, account string) store.Ledger {
		s, _ := newStore(t)
		if err := s.OpenWallet(context.Background(), account, record.Money{Minor: wrapcheck.Opening, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
		return s
	})
}
