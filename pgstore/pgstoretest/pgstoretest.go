// Package pgstoretest gives tests a PostgreSQL schema of their own, for
// pgstore's tests and for any test that runs notify on PostgreSQL (two
// gateway instances sharing one wallet, say).
//
// The server comes from NOTIFY_TEST_DATABASE_URL. When that is unset, a
// local server on 127.0.0.1:5432 is tried briefly (user postgres or root,
// database test, postgres or root, no password). When no server answers
// the test is skipped with a message saying how to run it, so that
// "go test ./..." passes on a machine without PostgreSQL, unless
// NOTIFY_REQUIRE_POSTGRES=1 (as in CI) or NOTIFY_TEST_DATABASE_URL is set:
// then it fails.
package pgstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
)

// The environment variables the package reads.
const (
	// EnvDatabaseURL names the test server: a pgx connection string.
	EnvDatabaseURL = "NOTIFY_TEST_DATABASE_URL"
	// EnvRequire, set to 1, turns a missing server into a failure.
	EnvRequire = "NOTIFY_REQUIRE_POSTGRES"
)

// localCandidates are tried when EnvDatabaseURL is unset.
var localCandidates = []string{
	"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
	"postgres://root@127.0.0.1:5432/test?sslmode=disable",
	"postgres://root@127.0.0.1:5432/root?sslmode=disable",
}

// server finds the test server once per test binary: the answer cannot
// change while tests run, and probing costs up to a second per candidate.
var server = sync.OnceValues(func() (string, error) {
	if u := os.Getenv(EnvDatabaseURL); u != "" {
		return u, probe(u, 5*time.Second)
	}
	var errs []error
	for _, u := range localCandidates {
		err := probe(u, time.Second)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
})

func probe(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// URL returns the test server's connection string. Without a server it
// skips t, or fails it when EnvRequire is 1 or EnvDatabaseURL is set.
func URL(t testing.TB) string {
	t.Helper()
	u, err := server()
	if err == nil {
		return u
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("pgstoretest: %s=1 but no PostgreSQL server answers: %v", EnvRequire, err)
	}
	if os.Getenv(EnvDatabaseURL) != "" {
		t.Fatalf("pgstoretest: the server of %s does not answer: %v", EnvDatabaseURL, err)
	}
	t.Skipf("pgstoretest: no PostgreSQL server, skipping. To run this test set %s, e.g. "+
		"%s='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' "+
		"(on Debian: apt-get install postgresql && pg_ctlcluster 15 main start). Last error: %v",
		EnvDatabaseURL, EnvDatabaseURL, err)
	return ""
}

// RandomName returns prefix followed by 12 random hex digits: a valid
// unquoted identifier when prefix is one.
func RandomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b[:])
}

// Schema creates a schema with a random name on the test server and
// drops it, with everything in it, when t ends. It returns the name.
func Schema(t testing.TB) string {
	t.Helper()
	url := URL(t)
	name := RandomName("notify_t_")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgstoretest: connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("pgstoretest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("pgstoretest: drop schema %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("pgstoretest: drop schema %s: %v", name, err)
		}
	})
	return name
}

// Pool returns a pool of at most maxConns connections to the test server
// whose search_path is schema; tweak, if given, adjusts its configuration
// first. The pool is closed when t ends, before Schema drops the schema
// (cleanups run last-in, first-out).
func Pool(t testing.TB, schema string, maxConns int32, tweak ...func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatalf("pgstoretest: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = maxConns
	for _, f := range tweak {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pgstoretest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Store returns a migrated pgstore.Store over a new pool of 8 connections
// in schema. Calling it twice with one schema gives two stores sharing one
// database, as two processes would.
func Store(t testing.TB, schema string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(Pool(t, schema, 8), opts...)
	if err != nil {
		t.Fatalf("pgstoretest: %v", err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("pgstoretest: Migrate: %v", err)
	}
	return s
}
