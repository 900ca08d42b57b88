// Package pgstore keeps notify's stores in PostgreSQL, so that several
// processes (gateway instances, replicas of an app that embeds notify)
// share one wallet, one ledger, one idempotency table, one delivery log,
// one set of accounts and API keys, and one set of custom templates, with
// the guarantees one process has: a balance never negative, no ref charged
// twice, nothing half-done after a crash.
//
// One *Store implements notify.WalletStore, notify.AccountStore,
// notify.IdempotencyStore, notify.DeliveryLog and notify.TemplateStore:
//
//	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"))
//	if err != nil { ... }
//	defer store.Close()
//	if err := store.Migrate(ctx); err != nil { ... }
//	n, err := notify.New(store,
//		notify.WithWallet(store, prices),
//		notify.WithIdempotency(store),
//		notify.WithDeliveryLog(store),
//		notify.WithChannel(smsChannel))
//
// Open makes and owns a pgx pool; New uses a *pgxpool.Pool the host has.
//
// # Setup
//
// Any PostgreSQL from 12 on works. On Debian or Ubuntu:
//
//	apt-get install postgresql
//	pg_ctlcluster 15 main start        # the version apt installed
//	su postgres -c "createdb notify"
//	su postgres -c "psql -c \"ALTER USER postgres PASSWORD 'secret'\""  # TCP logins need one
//	export NOTIFY_DATABASE_URL='postgres://postgres:secret@127.0.0.1:5432/notify?sslmode=disable'
//
// Migrate creates the tables (prefixed "notify_" unless WithTablePrefix
// says otherwise; in the schema of WithSchema, or the search_path's
// first); it is versioned, embedded in the binary and safe to run from
// several processes at once.
//
// # Money
//
// A debit is a single statement, so a single implicit transaction and one
// round trip: a conditional UPDATE of the wallet that refuses to go below
// zero, and the INSERT of its ledger row, whose (account, ref) is unique.
// Either both happen or neither does, whatever fails when: a lost
// connection, a killed backend, a canceled context, a crash. A repeated
// ref returns the balance recorded with it and moves nothing. Credits
// (top-ups, and the Notifier's refunds "refund:<message ID>") are ledger
// rows too, so balance = opening + sum(ledger) always; CheckLedger proves
// it for an account.
//
// # Expiry
//
// Idempotency keys live WithIdempotencyTTL (default 24h) and receipts
// WithDeliveryTTL (default 30 days). Reads ignore expired rows; Cleanup
// deletes them, and should be run periodically (for example hourly) by any
// instance.
//
// # Errors
//
// Every error is a *notify.Error. A server that is down or unreachable is
// Unavailable after at most the connect timeout (default 5s, or the
// connection string's connect_timeout), never a hang or a panic; a
// context that ends is Canceled or DeadlineExceeded with errors.Is seeing
// the context's error.
//
// # Tests
//
// The tests of this package run against the server named by
// NOTIFY_TEST_DATABASE_URL, or a local one on 127.0.0.1:5432 when that is
// unset; each test works in a schema of its own, dropped afterwards. With
// no server they skip, unless NOTIFY_REQUIRE_POSTGRES=1 (as in CI), when
// they fail.
package pgstore
