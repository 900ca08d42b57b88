// Package pgstore keeps notify's stores in PostgreSQL, so that several
// processes (gateway instances, replicas of an app that embeds notify)
// share one ledger (every account's wallet and every message's record),
// one idempotency table, one set of accounts and API keys, one set of
// custom templates, each account's suppression list and its categories
// with its recipients' choices of them (store.Preferences), the devices
// each account registered for its recipients' push notifications
// (pushstore.Devices), and the
// budgets of the rate limit and the OTP throttle, with the guarantees one
// process has: a balance never negative, no ref charged twice, no record
// without its charge, no budget overspent, nothing half-done after a
// crash.
//
// pgstore implements the store contract (package store, which it imports
// instead of notify): one *Store is the store.Ledger, and also the
// store.Accounts, the store.Keys, the store.Templates and the
// verifystore.Verifications (package verify's), and makes store.Limiter values
// (Store.RateLimit, Store.WindowLimit), the verifystore.Counters of verify's
// fraud guard (Store.Counters) and the pushstore.Devices of the push
// channel's device registry (Store.PushDevices); it is the store.Admin of
// the admin API too:
//
//	store, err := pgstore.Open(ctx, os.Getenv("NOTIFY_DATABASE_URL"))
//	if err != nil { ... }
//	defer store.Close()
//	if err := store.Migrate(ctx); err != nil { ... }
//	rate, err := store.RateLimit("rate", 10, 20) // optional; see Limits
//	otp, err := store.WindowLimit("otp", 5, 15*time.Minute)
//	n, err := notify.New(store, store, // the accounts, the ledger
//		notify.WithPrices(prices), // metered; leave out for free sends
//		notify.WithIdempotency(store),
//		notify.WithRateLimit(rate), notify.WithOTPThrottle(otp),
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
// # Accounts
//
// An account's fields are columns of the accounts table, except its
// settings (record.Account.Settings), which are one jsonb column: an
// object holding each kind's settings under the kind's name (since
// migration 0011, which moved the SMS and chat columns of earlier
// versions there: the vendor ID, sender IDs and DLT templates under
// "sms", the primary gateway under "chat"). pgstore keeps them opaque: it
// checks only that each kind's is a JSON object that jsonb can hold, and
// that together they take at most 16 MiB, and gives them back as
// PostgreSQL renders jsonb (the same JSON, with its own spacing and key
// order). API keys are kept as their SHA-256 only.
//
// Every send reads its account: one round trip of a send's three. An
// application that can let a change to an account (disabled, new
// settings) reach its sends up to a second late puts an
// accountcache.Cache in front of the Store as the Notifier's
// store.Accounts, and saves that read.
//
// # Templates
//
// A custom template's slug, variables and price class are columns of the
// templates table; its bodies (store.Template.Bodies) are one jsonb
// column: an object holding each kind's body under the kind's name, as
// an object of the parts "subject", "text" and "html", an empty part left
// out (since migration 0012, which moved the chat, SMS and email columns
// of earlier versions there: chat and sms as the text of "chat" and
// "sms", the three email columns as the parts of "email", a kind whose
// columns were all empty left out). pgstore keeps the bodies opaque, of
// any kind, each part exactly as given; it refuses only what jsonb cannot
// hold unchanged (invalid UTF-8, the NUL character). A template's
// variants (store.Template.Locales) are another jsonb column (migration
// 0021): an object holding, under each tag as given, that variant's
// bodies in the same form, kept as opaque and refused on the same
// grounds; a template written before it has none.
//
// # Money
//
// A debit is a single statement, so a single implicit transaction and one
// round trip: a conditional UPDATE of the wallet that refuses to go below
// zero, and the INSERT of its ledger row, whose (account, ref) is unique.
// Either both happen or neither does, whatever fails when: a lost
// connection, a killed backend, a canceled context, a crash. A repeated
// ref returns the balance recorded with it and moves nothing. Credits
// (top-ups, and the refunds Move writes, "refund:<message ID>") are ledger
// rows too, so balance = opening + sum(ledger) always; CheckLedger proves
// it for an account. Debit is a method of the Store but not of
// store.Ledger: a send's charge is debited by Open, with its record.
//
// # Message records
//
// As the store.Ledger, the Store writes each message's record in the
// statement that debits its charge (Open): the record's INSERT runs from
// the ledger row's RETURNING, so a record exists if and only if its money
// moved, whatever fails when; an unmetered send's record, with no charge,
// is the INSERT alone. Each move is one conditional UPDATE whose WHERE
// holds the states record.CanMove allows, so the state machine is checked
// under the row's lock, and two instances that settle one record at once
// (two reconcilers, a reconciler and a late holder) apply one move and the
// other gets store.ErrConflict; a move into failed credits the refund in
// the same statement (unless the move keeps the charge), and a move into
// sent after a chat failover to a cheaper gateway lowers the charge and
// credits the difference in the same statement. Delivery reports find records through
// an index of provider message IDs; a report that arrives out of order
// adds its step to the history in one conditional UPDATE, which a repeat
// finds done. A move returns only where the record stands (store.Moved:
// its state, charge and currency, refund and time), never the record with
// its history. A send costs two committed statements (the record opened
// attempting with its debit, and its outcome), the Notifier's whole
// durable trail: there is no separate delivery log (migration 0009 drops
// the table of the earlier one). Records still pending or attempting are
// indexed apart, by provider and time (migration 0013), so the
// reconciler's scan reads only them, and a report that outran the move to
// sent asks whether its provider has a send in flight with one index
// probe (Store.Attempting).
//
// The opening of a message with one recipient reads the account's
// suppression list in the same statement (OpenUnlisted: the entry is read
// in a CTE, and the debit, the ledger row and the record are written only
// without one), so that an immediate send is two round trips with a
// cached account. Concurrent moves that lock no wallet (a move to sent,
// a report's step; not a queued send's claim, whose vendor call waits for
// it) are committed together: a move that finds
// another's commit under way waits for it, and those gathered meanwhile
// go as one batch, one round trip and one commit (WithGroupCommit; a
// batch the server refuses is split, each move run alone). A refund's or
// a price cut's move answers the wallet's balance after it
// (store.Moved.Balance). OpenTxMany debits the batch's accounts in one
// statement, locking their wallets in the order of the accounts, writes
// its ledger rows and records each by one COPY, and answers each
// record's balance after its debit; pgqueue commits concurrent queued
// openings together through it. docs/performance.md counts each path's
// statements.
//
// A send that names a category reads the category and its recipients'
// choices of it in one statement before its opening (LookupChoices: the
// category's row left-joined with the choices, both by primary key). A
// choice refers to its category by a foreign key (migration 0020), so
// that SetChoice of a category not there is store.ErrNotFound even
// against a concurrent removal, and RemoveCategory takes the choices
// with it.
//
// # Queued and scheduled records
//
// A record a queue opens (record.StateQueued, or record.StateScheduled
// with its send_at) is written by the same statement as any other, with
// its debit, and Store.OpenTx runs that statement on a transaction of the
// caller's, so that pgstore/pgqueue writes the record, its debit and its
// job in one transaction (which may be the host's own). The record keeps
// the encoded request (record.Message.Payload, a bytea column) while it is
// live (pending, attempting, queued, scheduled); the move out of those
// states sets it NULL in the same UPDATE, so a settled record never keeps
// a one-time code. Waiting records are in neither the reconciler's index
// nor Cleanup's (migration 0017): a job settles them, however long they
// wait, and Cleanup deletes only settled records.
//
// # Limits
//
// Store.RateLimit makes a token bucket (burst units at once, one more
// every 1/perSecond seconds) and Store.WindowLimit a sliding window (at
// most max units within any window); both answer exactly as their
// memstore counterparts do and pass the same store/storetest suites. The name
// separates budgets in one table: every instance that uses a name shares
// each key's budget, and must give it the same parameters. A Take is one
// round trip: a batch of a conditional UPSERT of the key's row (INSERT ...
// ON CONFLICT DO UPDATE ... WHERE there is room), which serialises the
// Takes of a key on its row lock from any number of processes, and a read
// of that locked row for the RetryAfter of a refusal. Times are the
// nanoseconds the callers pass in (the Notifier's clock), never the
// database's, so instances should keep their clocks in sync.
//
// # Verifications
//
// As the verifystore.Verifications, the Store keeps each verification (package
// verify) as a row, without its code: only the HMAC of it, as its bytes
// (migration 0016). Each counting call is one conditional UPDATE:
// TakeCheck counts a check only WHERE the verification is pending, not
// expired at the caller's now and has checks left; TakeSend a send only
// WHERE it also has sends left and its last send is a cooldown old;
// FinishVerification moves it only WHERE it is pending. Concurrent calls
// on one verification, from any number of instances, queue for its row
// lock and each re-checks the WHERE on the row the one before left, so no
// more checks are evaluated and no more sends made than it allows. A call
// that counted nothing reads the row again to answer it as it is. A
// check or a send changes no indexed column, so the row is updated in
// place. PendingVerification reads an index of the pending verifications
// by account, recipient and purpose. ExpireVerifications marks the
// pending ones past their expiry, a batch at a time, skipping rows
// another call holds, and in the same statement deletes a batch of those
// that ended a week before. Times are the caller's, at the microsecond.
//
// # Counters
//
// Store.Counters makes the verifystore.Counters of verify's fraud guard:
// windowed sums per key, one row per key and bucket of the window
// (verifystore.CounterBucket), the key kept as its SHA-256. An Add with a limit
// is one round trip: a batch that takes a transaction-scoped advisory
// lock of the key and then, in a statement of its own (whose snapshot
// sees every Add before it), sums the window, upserts the amount into
// the bucket of now when the limit allows, and answers; limited Adds of
// one key are so serialised across instances, and never exceed the limit
// together. An Add without a limit is the upsert alone. Sums is one query
// for any number of keys. An Add deletes a few of its key's buckets that
// left the window; Cleanup deletes those of idle keys.
//
// # Push devices
//
// Store.PushDevices makes the pushstore.Devices of the push channel: the
// Web Push subscriptions and FCM tokens each account registered for its
// recipients, one row per account and device (migration 0024), keyed by
// the SHA-256 of the device's address (an FCM token may be longer than
// an index entry holds), with an index of each recipient's devices by
// time. A registration is one round trip: a batch that takes a
// transaction-scoped advisory lock of the account's recipient and then,
// in a statement of its own (whose snapshot sees every registration of
// the recipient before it), upserts the device and deletes the
// recipient's devices beyond pushstore.MaxDevices, the least recently
// registered; registrations of one recipient are so serialised across
// instances, and a recipient never keeps more than MaxDevices. A
// registration the server chose as a deadlock's victim (two that each
// move a device out of the other's full recipient) is repeated. Devices
// is one query of the index, UnregisterDevice one DELETE by primary key.
// Devices are kept until unregistered or replaced by newer ones: nothing
// deletes them on a timer.
//
// # Expiry
//
// The idempotency table keeps each key as its SHA-256, and the receipt
// of its send as the bytes the Notifier encoded, unchanged (store.Keys;
// a bytea column since migration 0010, which turned the jsonb receipts
// stored before into their JSON text, rewriting that table once).
// Idempotency keys live WithIdempotencyTTL (default 24h), and a
// reservation holds its key for WithIdempotencyLease (default 2m);
// message records live WithRecordTTL (default 30 days) once settled (by
// the time of their last move; live records, open or waiting, are never
// deleted), and so do request records (by the time they were opened).
// Reads ignore expired idempotency keys; Cleanup deletes them, settled
// records and request records past the TTL, the limiters' rows that
// count nothing any more (a full bucket, a window whose units have all
// left it) and the Counters' buckets that have left their window, and
// should be run periodically (for example hourly) by any instance. Verifications are
// deleted by ExpireVerifications instead, a week after they ended.
//
// # Errors
//
// Errors are those of package store, which the Notifier reads into its
// codes. A server that is down or unreachable gives an error matching
// store.ErrUnavailable, with pgx's error as its cause, after at most the
// connect timeout (default 5s, or the connection string's
// connect_timeout), never a hang or a panic; a context that ends gives its
// error, wrapped, so that errors.Is sees context.Canceled or
// context.DeadlineExceeded. Refusals match store.ErrNotFound,
// store.ErrConflict, store.ErrInsufficientFunds, store.ErrInvalid (a
// record.FieldErrors when it names fields) or store.ErrUnauthenticated, as
// each method says, and a limiter's refusal is a *store.LimitError.
// Anything else (a table missing before Migrate, a broken row) matches
// none of them: the store failing. No error text holds an API key or a
// password.
//
// # Tests
//
// The tests of this package run against the server named by
// NOTIFY_TEST_DATABASE_URL, or a local one on 127.0.0.1:5432 when that is
// unset; each test works in a schema of its own, dropped afterwards. With
// no server they skip, unless NOTIFY_REQUIRE_POSTGRES=1 (as in CI), when
// they fail.
package pgstore
