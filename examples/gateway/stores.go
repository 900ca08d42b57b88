package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// stores are the stores of the Notifier, in memory or in PostgreSQL. The
// ledger keeps the wallets and the message records, each record written
// with its charge.
type stores struct {
	accounts  store.Accounts
	ledger    store.Ledger
	idem      store.Keys
	templates store.Templates
	// admin is what the admin API (NOTIFY_ADMIN_KEY) manages: the same
	// accounts, wallets, records and templates.
	admin adminapi.Store
	// rate and otp are the per-account rate limit and the per-recipient
	// OTP throttle; otp is nil when NOTIFY_OTP_LIMIT is off.
	rate store.Limiter
	otp  store.Limiter
	// verifications and counters keep the verifications and the fraud
	// guard's counts (verify.go).
	verifications verifystore.Verifications
	counters      verifystore.Counters
	// pushDevices keeps the push devices registered for the recipients
	// (push.Registry).
	pushDevices pushstore.Devices
	close       func()
	// db and pool are the PostgreSQL store and its pool, which the queue
	// shares (queue.go); nil in memory.
	db   *pgstore.Store
	pool *pgxpool.Pool
	// keyKept says the demo account kept the key it had in the database,
	// so cfg.apiKey (a random key) was not stored and must not be shown.
	keyKept bool
	// walletKept says the demo wallet was already in the database, so
	// NOTIFY_BALANCE did not set its balance.
	walletKept bool
}

// cleanupEvery is how often the gateway deletes expired rows from
// PostgreSQL: idempotency keys, settled records past their TTL and the
// limits' dead rows. It is a periodic task of the queue (queue.go), run
// by one of the instances that run workers.
const cleanupEvery = 10 * time.Minute

// openDB connects to the database at connString as pgstore.Open does (a
// connection string it cannot parse is not repeated; connections wait
// pgstore.DefaultConnectTimeout to connect unless the string says
// otherwise, and ask the server to cancel a statement whose context
// ends), but over a pool of its own that the queue (pgqueue) shares with
// the store. Closing the pool closes both.
func openDB(ctx context.Context, connString string, opts ...pgstore.Option) (*pgstore.Store, *pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// The parse error may quote the connection string, password and all.
		return nil, nil, fmt.Errorf("%w: cannot parse the connection string", store.ErrInvalid)
	}
	if pcfg.ConnConfig.ConnectTimeout <= 0 {
		pcfg.ConnConfig.ConnectTimeout = pgstore.DefaultConnectTimeout
	}
	if !strings.Contains(connString, "pool_max_conns") {
		// The workers' sends and the API's requests share it: pgx's
		// default of max(4, CPUs) is small for that. (River's client
		// opens a pool of its own with these settings: pgqueue's Run.)
		pcfg.MaxConns = max(pcfg.MaxConns, 16)
	}
	pcfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	db, err := pgstore.New(pool, opts...)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	if err := db.CheckHealth(ctx); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return db, pool, nil
}

// openStores opens the stores and provisions the demo account and its
// wallet: PostgreSQL when NOTIFY_DATABASE_URL is set, else memory.
func openStores(ctx context.Context, cfg *config, acct *notify.Account, logger *slog.Logger) (*stores, error) {
	if cfg.database == "" {
		accounts := memstore.NewAccounts()
		if err := accounts.Add(acct, cfg.apiKey); err != nil {
			return nil, err
		}
		// A gateway runs for long: bound the refs the wallet remembers. A
		// charge's ref only needs remembering while the Notifier may still
		// retry it, seconds at most.
		w := memstore.NewWallet(memstore.WithRefRetention(1 << 16))
		if err := w.Open(acct.ID, cfg.balance); err != nil {
			return nil, err
		}
		ledger, templates := memstore.NewLedger(w), memstore.NewTemplates()
		admin, err := memstore.NewAdmin(accounts, w, ledger, templates)
		if err != nil {
			return nil, err
		}
		st := &stores{
			accounts:  accounts,
			ledger:    ledger,
			idem:      memstore.NewIdempotency(24*time.Hour, memstore.WithLease(cfg.settleAfter)),
			templates: templates,
			admin:     admin,

			verifications: memstore.NewVerifications(),
			counters:      memstore.NewCounters(),
			pushDevices:   memstore.NewPushDevices(),
			close:         func() {},
		}
		// Bursts of twice the rate.
		if st.rate, err = memstore.NewRateLimit(float64(cfg.rate), 2*cfg.rate); err != nil {
			return nil, fmt.Errorf("NOTIFY_RATE_LIMIT: %w", err)
		}
		if cfg.otpMax > 0 {
			if st.otp, err = memstore.NewWindowLimit(cfg.otpMax, cfg.otpWindow); err != nil {
				return nil, fmt.Errorf("NOTIFY_OTP_LIMIT: %w", err)
			}
		}
		return st, nil
	}
	// Several instances may share one database: each provisions the demo
	// account, and the wallet is opened only once (Conflict afterwards).
	db, pool, err := openDB(ctx, cfg.database, pgstore.WithIdempotencyLease(cfg.settleAfter))
	if err != nil {
		return nil, storeError("connecting", err)
	}
	// The pool is the gateway's (db.Close would leave it open): a failed
	// step below closes it.
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	if err := db.Migrate(ctx); err != nil {
		return nil, storeError("migrate", err)
	}
	// The demo account is made on the first start only: later starts keep
	// it as it is, so that what an operator changed through the admin API
	// (disabled it, registered templates) outlives a restart.
	if stored, err := db.Account(ctx, acct.ID); notify.CodeOf(err) == notify.CodeNotFound {
		err = db.PutAccount(ctx, acct)
		if err != nil {
			return nil, storeError("provisioning the demo account", err)
		}
	} else if err != nil {
		return nil, storeError("reading the demo account", err)
	} else if cfg.countriesSet && !slices.Equal(stored.Countries, acct.Countries) || cfg.regionSet && stored.Region != acct.Region {
		// NOTIFY_REGION and NOTIFY_COUNTRIES, when set, are the region and
		// the allow list at every start, as NOTIFY_API_KEY is the key;
		// unset, they stay as the admin API left them.
		_, err := db.UpdateAccount(ctx, acct.ID, func(a *notify.Account) error {
			if cfg.regionSet {
				a.Region = acct.Region
			}
			if cfg.countriesSet {
				a.Countries = acct.Countries
			}
			return nil
		})
		if err != nil {
			return nil, storeError("setting the demo account's region and countries (NOTIFY_REGION, NOTIFY_COUNTRIES)", err)
		}
	}
	st := &stores{accounts: db, ledger: db, idem: db, templates: db, admin: db,
		verifications: db, counters: db.Counters(), pushDevices: db.PushDevices()}
	// The account outlives this process, and so would every key it was
	// given: a chosen key replaces the others, and a random one is
	// stored only when the account has none, or each start would leave
	// one more valid key behind.
	if cfg.keyChosen {
		err = db.ReplaceAPIKeys(ctx, acct.ID, cfg.apiKey)
	} else {
		var added bool
		added, err = db.AddAPIKeyIfNone(ctx, acct.ID, cfg.apiKey)
		st.keyKept = !added
	}
	if err != nil {
		return nil, storeError("setting the demo account's API key", err)
	}
	if err := db.OpenWallet(ctx, acct.ID, cfg.balance); err != nil {
		if notify.CodeOf(err) != notify.CodeConflict {
			return nil, storeError("opening the demo wallet", err)
		}
		st.walletKept = true
	}
	// The limits live in the database too, so instances share one budget.
	if st.rate, err = db.RateLimit("rate", float64(cfg.rate), 2*cfg.rate); err != nil {
		return nil, fmt.Errorf("NOTIFY_RATE_LIMIT: %s", withoutPackage(err))
	}
	if cfg.otpMax > 0 {
		if st.otp, err = db.WindowLimit("otp", cfg.otpMax, cfg.otpWindow); err != nil {
			return nil, fmt.Errorf("NOTIFY_OTP_LIMIT: %s", withoutPackage(err))
		}
	}
	st.db, st.pool = db, pool
	st.close = pool.Close
	pool = nil // st.close owns it now
	return st, nil
}

// storeError is a failed step of setting up the stores, as the person
// starting the gateway should read it: the variable to look at, the step
// and the store's own words without the package prefixes, which name code
// they never see. The cause stays in the chain, for errors.Is and
// notify.CodeOf.
func storeError(step string, err error) error {
	v := "NOTIFY_DATABASE_URL: "
	if notify.CodeOf(err) == notify.CodeCanceled {
		v = "" // a signal during the start, not the database's fault
	}
	return &userError{text: v + step + ": " + withoutPackage(err), err: err}
}

// withoutPackage returns err's text without the "pgstore: " prefixes that
// the store puts before its own words.
func withoutPackage(err error) string {
	return strings.ReplaceAll(err.Error(), "pgstore: ", "")
}

// userError is an error whose text was reworded for the gateway's user; it
// unwraps to the original.
type userError struct {
	text string
	err  error
}

func (e *userError) Error() string { return e.text }
func (e *userError) Unwrap() error { return e.err }
