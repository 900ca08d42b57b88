package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrateLockClass is the first key of the advisory lock Migrate holds; the
// second is a hash of the schema and prefix, so stores with other prefixes
// migrate independently.
const migrateLockClass = 0x6e746679 // "ntfy"

// migration is one numbered SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded files in version order. File names are
// NNNN_name.sql; a malformed or duplicate number is a bug of this package.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	seen := map[int]bool{}
	for _, path := range names {
		base := strings.TrimPrefix(path, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || seen[v] {
			return nil, fmt.Errorf("pgstore: bad migration file name %q", base)
		}
		seen[v] = true
		body, err := migrationFiles.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate creates or upgrades the store's tables (and the schema of
// WithSchema) to the version this package embeds, recording each applied
// migration in the schema_migrations table (with the prefix). All pending
// migrations run in one transaction under an advisory lock, so processes
// that start together may all call Migrate: one applies, the others wait
// and find nothing left to do. Tables of a newer version are left alone.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	// A migration that committed before its connection died is found
	// recorded on the second run, so repeating is safe.
	return s.do(ctx, repeatable, func() error { return s.migrate(ctx, ms) })
}

func (s *Store) migrate(ctx context.Context, ms []migration) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.fail(ctx, "migrate", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()

	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`,
		int32(migrateLockClass), s.schema+"."+s.prefix); err != nil {
		return s.fail(ctx, "migrate: lock", err)
	}
	if s.schema != "" {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "`+s.schema+`"`); err != nil {
			return s.fail(ctx, "migrate: create schema", err)
		}
	}
	if _, err := tx.Exec(ctx, s.q.migrationsTable); err != nil {
		return s.fail(ctx, "migrate: create schema_migrations", err)
	}
	rows, err := tx.Query(ctx, s.q.migrationVersions)
	if err != nil {
		return s.fail(ctx, "migrate: read versions", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return s.fail(ctx, "migrate: read versions", err)
	}
	done := make(map[int]bool, len(applied))
	for _, v := range applied {
		done[int(v)] = true
	}
	for _, m := range ms {
		if done[m.version] {
			continue
		}
		// No arguments: pgx sends the file with the simple protocol, which
		// runs several statements in one call.
		if _, err := tx.Exec(ctx, expand(m.sql, s.qualifier(), s.prefix)); err != nil {
			return s.fail(ctx, "migrate: "+m.name, err)
		}
		if step := codeSteps[m.version]; step != nil {
			if err := step(ctx, tx, s); err != nil {
				return s.fail(ctx, "migrate: "+m.name, err)
			}
		}
		if _, err := tx.Exec(ctx, s.q.migrationInsert, m.version, m.name); err != nil {
			return s.fail(ctx, "migrate: record "+m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return s.fail(ctx, "migrate: commit", err)
	}
	return nil
}

// SchemaVersion returns the highest migration applied to the database, or
// 0 when Migrate has never run, and the highest this package embeds.
func (s *Store) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, err
	}
	latest = ms[len(ms)-1].version
	var exists bool
	name := s.prefix + "schema_migrations"
	schemaCond := "table_schema = current_schema()"
	args := []any{name}
	if s.schema != "" {
		schemaCond = "table_schema = $2"
		args = append(args, s.schema)
	}
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables
		WHERE table_name = $1 AND `+schemaCond+`)`, args...).Scan(&exists); err != nil {
		return 0, latest, s.fail(ctx, "schema version", err)
	}
	if !exists {
		return 0, latest, nil
	}
	var v int32
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM `+s.qualifier()+s.prefix+`schema_migrations`).Scan(&v); err != nil {
		return 0, latest, s.fail(ctx, "schema version", err)
	}
	return int(v), latest, nil
}
