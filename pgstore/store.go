package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/store"
)

// Defaults of the options.
const (
	// DefaultTablePrefix is the prefix of every table name.
	DefaultTablePrefix = "notify_"
	// DefaultIdempotencyTTL is how long an idempotency key is remembered.
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultIdempotencyLease is how long a reservation holds its key; it
	// matches the Notifier's default settle threshold
	// (notify.WithSettleAfter, 2 minutes by default).
	DefaultIdempotencyLease = 2 * time.Minute
	// DefaultRecordTTL is how long a settled message record, and a
	// request record, is kept.
	DefaultRecordTTL = 30 * 24 * time.Hour
	// DefaultConnectTimeout bounds each connection attempt of a pool made
	// by Open when the connection string has no connect_timeout.
	DefaultConnectTimeout = 5 * time.Second
)

// identifier is what a prefix or schema may look like: it is spliced into
// SQL, so it must need no quoting and leave room for the longest table name
// within PostgreSQL's 63-byte limit.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// Option configures a Store in Open or New.
type Option func(*Store) error

// WithTablePrefix sets the prefix of every table (and index) name, so that
// several stores, or the host's own tables, can share one schema. It must
// match [a-z_][a-z0-9_]* and be at most 40 bytes; it may be empty.
// Default DefaultTablePrefix ("notify_").
func WithTablePrefix(prefix string) Option {
	return func(s *Store) error {
		if prefix != "" && !identifier.MatchString(prefix) {
			return fmt.Errorf("pgstore: %w: table prefix %q: must match [a-z_][a-z0-9_]* and be at most 40 bytes", store.ErrInvalid, prefix)
		}
		s.prefix = prefix
		return nil
	}
}

// WithSchema qualifies every table with the schema name, which Migrate
// creates if it is missing. The name must match [a-z_][a-z0-9_]* and be at
// most 40 bytes. Default: none, so tables are found through the
// connection's search_path.
func WithSchema(name string) Option {
	return func(s *Store) error {
		if !identifier.MatchString(name) {
			return fmt.Errorf("pgstore: %w: schema %q: must match [a-z_][a-z0-9_]* and be at most 40 bytes", store.ErrInvalid, name)
		}
		s.schema = name
		return nil
	}
}

// WithIdempotencyTTL sets how long an idempotency key, and the receipt
// stored under it, is remembered. Default DefaultIdempotencyTTL (24h).
func WithIdempotencyTTL(d time.Duration) Option {
	return positive("idempotency TTL", d, func(s *Store) *time.Duration { return &s.idemTTL })
}

// WithIdempotencyLease sets how long a reservation holds its key before a
// Reserve may take it over (a bound on one send's duration, so the key of a
// crashed send is free again soon; the taker learns of the abandoned
// reservation through store.Reservation). Set it to the Notifier's settle
// threshold (notify.WithSettleAfter). Default DefaultIdempotencyLease (2m).
func WithIdempotencyLease(d time.Duration) Option {
	return positive("idempotency lease", d, func(s *Store) *time.Duration { return &s.idemLease })
}

// WithRecordTTL sets how long a message record is kept once settled
// (counted from its last move; live records, open or waiting, are kept
// until settled), and
// a request record (counted from when it was opened): Cleanup deletes
// older ones. Default DefaultRecordTTL (30 days).
func WithRecordTTL(d time.Duration) Option {
	return positive("record TTL", d, func(s *Store) *time.Duration { return &s.recordTTL })
}

// positive is an Option that sets the duration of s that field points
// to, refusing one that is not positive; what names it in the error.
func positive(what string, d time.Duration, field func(s *Store) *time.Duration) Option {
	return func(s *Store) error {
		if d <= 0 {
			return fmt.Errorf("pgstore: %w: %s %v: must be positive", store.ErrInvalid, what, d)
		}
		*field(s) = d
		return nil
	}
}

// WithClock sets the clock that stamps and expires idempotency keys, and
// that Cleanup measures the age of records by. Instances sharing a
// database should have synchronised clocks; skew only shifts expiry.
// Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) error {
		if now == nil {
			return fmt.Errorf("pgstore: %w: nil clock", store.ErrInvalid)
		}
		s.now = now
		return nil
	}
}

// Store keeps every store of notify in PostgreSQL, to the contract of
// package store: it is the store.Ledger (the wallets and the message
// records, moved together), and implements store.Accounts, store.Keys,
// store.Templates, verifystore.Verifications and store.Admin, so several
// processes that share the database share one wallet per account, one
// set of message records, one idempotency table and one set of
// verifications, with the same guarantees as one process. Its RateLimit
// and WindowLimit make store.Limiter values whose budgets those processes
// share, its Counters the verifystore.Counters they share, and its
// PushDevices the push channel's device registry (pushstore.Devices).
//
// A Store is safe for concurrent use. Its tables must exist: call Migrate
// once (any number of processes may call it at once). Errors are those of
// package store: one matching store.ErrUnavailable, with pgx's error kept
// as its cause, when the server cannot be reached or the connection was
// lost (for Debit and Credit the outcome is then unknown, and repeating
// the call with the same ref tells it); the context's error, wrapped, when
// ctx ended (errors.Is sees context.Canceled or
// context.DeadlineExceeded); store.ErrNotFound, store.ErrInvalid (a
// record.FieldErrors when it names fields), store.ErrConflict and
// store.ErrInsufficientFunds as each method says; a *store.LimitError
// for a limiter's refusal; and, for anything else, an error that matches
// none of them: the store failing.
type Store struct {
	pool      *pgxpool.Pool
	ownsPool  bool
	prefix    string
	schema    string
	idemTTL   time.Duration
	idemLease time.Duration
	recordTTL time.Duration
	now       func() time.Time
	q         queries

	groupCommit int          // WithGroupCommit
	moves       *moveBatcher // nil when groupCommit is 1
}

// Open connects to the PostgreSQL server named by connString (a URL or
// key=value string as pgx reads it) and returns a Store over a pool it
// owns; Close closes that pool. Open checks the server answers before it
// returns; it does not migrate (call Migrate). A connection string it
// cannot parse, or an option's bad value, is store.ErrInvalid (the error
// does not repeat the string, which may hold a password); a server that
// cannot be reached is store.ErrUnavailable.
//
// Connections of the pool wait at most connect_timeout (default
// DefaultConnectTimeout, 5s) to connect, and when a ctx ends during a
// statement they ask the server to cancel it, so a canceled debit is
// rolled back by the server instead of being left to complete.
func Open(ctx context.Context, connString string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// The parse error may quote the connection string, password and
		// all; say only what kind of mistake it is.
		return nil, fmt.Errorf("pgstore: open: %w: cannot parse the connection string", store.ErrInvalid)
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		// The deadline is the fallback for a server that ignores the
		// cancel request: the connection is then dropped.
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	s, err := newStore(nil, opts)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.fail(ctx, "open", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, s.fail(ctx, "open", err)
	}
	s.pool, s.ownsPool = pool, true
	return s, nil
}

// New returns a Store over the host's pool. Close leaves the pool open.
// The pool's own settings apply: with pgx's default context handling a
// statement whose ctx ends is abandoned by closing the connection, and a
// debit blocked on a lock may still complete on the server afterwards (the
// ledger stays consistent either way; the caller sees the context's error
// and learns the outcome by repeating the call with the same ref). A nil
// pool, or an option's bad value, is store.ErrInvalid.
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: new: %w: nil pool", store.ErrInvalid)
	}
	return newStore(pool, opts)
}

func newStore(pool *pgxpool.Pool, opts []Option) (*Store, error) {
	s := &Store{
		pool:        pool,
		prefix:      DefaultTablePrefix,
		idemTTL:     DefaultIdempotencyTTL,
		idemLease:   DefaultIdempotencyLease,
		recordTTL:   DefaultRecordTTL,
		now:         time.Now,
		groupCommit: DefaultGroupCommit,
	}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			if !errors.Is(err, store.ErrInvalid) {
				err = fmt.Errorf("pgstore: %w: %w", store.ErrInvalid, err)
			}
			return nil, err
		}
	}
	s.q = buildQueries(s.qualifier(), s.prefix)
	if s.groupCommit > 1 {
		s.moves = newMoveBatcher(s, s.groupCommit)
	}
	return s, nil
}

// Close closes the pool if Open made it; a pool passed to New stays open.
// The Store must not be used after Close.
func (s *Store) Close() {
	if s.ownsPool {
		s.pool.Close()
	}
}

// CheckHealth reports whether the server answers: nil, or an error
// matching store.ErrUnavailable when it cannot be reached (the context's
// error when ctx ends first), for readiness checks (the gateway's
// /readyz asks every store and provider that has a CheckHealth).
func (s *Store) CheckHealth(ctx context.Context) error {
	return s.fail(ctx, "health check", s.do(ctx, repeatable, func() error { return s.pool.Ping(ctx) }))
}

// Pool returns the pool the Store runs on: the one given to New, or the
// one Open made. It is shared, not a copy: the Store goes on using it, so
// do not close it while the Store is in use (a pool Open made is closed
// by Close, and must not be used after it). Its connections reach the
// Store's database, so it is the pool to give pgqueue.New with this Store,
// and the one to begin the caller's own transactions on (pool.Begin) for
// queued.Sender.EnqueueTx and EnqueueTxMany, whose records and charges are
// then written in that transaction beside the caller's own rows.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema of WithSchema, or "" when the Store's tables
// are found through the connection's search_path: where a queue on the
// same database (pgstore/pgqueue) puts its own tables.
func (s *Store) Schema() string { return s.schema }

// WrapErr turns err, an error of pgx from a statement on the Store's
// database that is not the Store's own (a queue's insert in the
// transaction of OpenTx, its commit), into an error of the store contract
// as the Store's methods answer them (see Store): the context's error,
// wrapped, once ctx has ended; store.ErrUnavailable, with err as its
// cause, for a server that cannot be reached or a lost connection; err
// as it is when it is such an answer already; otherwise an error that
// matches none of package store's sentinels. op names the operation in
// the message. Nil stays nil.
func (s *Store) WrapErr(ctx context.Context, op string, err error) error { return s.fail(ctx, op, err) }

// qualifier returns the schema part of a qualified name: `"schema".` or
// nothing.
func (s *Store) qualifier() string {
	if s.schema == "" {
		return ""
	}
	return `"` + s.schema + `".`
}

// table names one of the Store's tables (name without its prefix) for
// pgx's COPY.
func (s *Store) table(name string) pgx.Identifier {
	if s.schema == "" {
		return pgx.Identifier{s.prefix + name}
	}
	return pgx.Identifier{s.schema, s.prefix + name}
}

// expand fills a SQL text's {{s}} (schema qualifier) and {{p}} (prefix).
func expand(sql, qualifier, prefix string) string {
	return strings.NewReplacer("{{s}}", qualifier, "{{p}}", prefix).Replace(sql)
}

// Interface guards
var (
	_ store.Ledger    = (*Store)(nil)
	_ store.Accounts  = (*Store)(nil)
	_ store.Keys      = (*Store)(nil)
	_ store.Templates = (*Store)(nil)
)
