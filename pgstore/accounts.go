package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// PutAccount creates the account, or replaces every field of an existing
// one, and attaches apiKeys to it, in one transaction. Keys are stored as
// their SHA-256 only. A key that belongs to another account is
// store.ErrConflict (and nothing is written); a key already attached to
// this account is accepted. An empty ID or key is store.ErrInvalid, and so
// are settings that are not JSON objects jsonb can hold (field
// "settings.<kind>") or that take more than 16 MiB together ("settings"):
// record.FieldErrors naming them. Settings are stored as the JSON they are,
// and read back as PostgreSQL renders it. PutAccount does not retain acct.
func (s *Store) PutAccount(ctx context.Context, acct *record.Account, apiKeys ...string) error {
	var fe record.FieldErrors
	if acct == nil || acct.ID == "" {
		fe.Add("id", "is required")
	}
	for i, k := range apiKeys {
		if k == "" {
			fe.Add(fmt.Sprintf("api_keys[%d]", i), "must not be empty")
		}
	}
	var settings []byte
	if acct != nil {
		settings = settingsColumn(acct, &fe)
	}
	if err := store.InvalidFields(fe); err != nil {
		return err
	}
	// The transaction is an upsert plus key inserts that accept their own
	// keys, so running it again after a lost connection is harmless.
	return s.do(ctx, repeatable, func() error { return s.putAccount(ctx, acct, settings, apiKeys) })
}

// maxSettingsBytes bounds an account's settings, all kinds together, as
// stored (compact JSON): they are read with the account on every send.
// The admin API lets an account register 1,000 DLT templates of 2,000
// characters, which the SMS settings hold: some 6 MB of text, up to 12 MB
// once JSON escapes HTML's characters.
const maxSettingsBytes = 16 << 20

// settingsColumn is the stored form of the account's settings: one JSON
// object, each kind's settings under its name ("{}" for none). Settings
// that cannot be stored are added to fe (field "settings.<kind>", or
// "settings" for the whole) and give nil. PostgreSQL's jsonb holds
// neither invalid UTF-8 nor a NUL character in a string, so those are
// refused here rather than by the server.
// countriesColumn is the countries column of acct: an empty array for
// none, since the column is NOT NULL.
func countriesColumn(acct *record.Account) []string {
	if acct.Countries == nil {
		return []string{}
	}
	return acct.Countries
}

func settingsColumn(acct *record.Account, fe *record.FieldErrors) []byte {
	kinds := slices.Sorted(maps.Keys(acct.Settings))
	bad := len(*fe)
	for _, k := range kinds {
		field := "settings." + string(k)
		switch v := acct.Settings[k]; {
		case k == "":
			fe.Add("settings", "a kind must not be empty")
		case !isJSONObject(v):
			fe.Add(field, "must be a JSON object")
		case !utf8.Valid(v):
			fe.Add(field, "must be UTF-8")
		case hasNUL(v):
			fe.Add(field, `must not contain the NUL character (\u0000)`)
		}
	}
	if len(*fe) > bad {
		return nil
	}
	if len(kinds) == 0 {
		return []byte("{}")
	}
	// Marshal compacts each object; the map's keys come out sorted.
	body, err := json.Marshal(acct.Settings)
	if err != nil { // each value was checked to be valid JSON
		fe.Add("settings", "must be JSON objects")
		return nil
	}
	if len(body) > maxSettingsBytes {
		fe.Add("settings", fmt.Sprintf("must be at most %d KiB in total (all kinds, as compact JSON), not %d bytes",
			maxSettingsBytes>>10, len(body)))
		return nil
	}
	return body
}

// isJSONObject reports whether v is valid JSON whose value is an object.
func isJSONObject(v []byte) bool {
	if !json.Valid(v) {
		return false
	}
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == '{'
}

// hasNUL reports whether the valid JSON v has a string (a key or a
// value) holding U+0000.
func hasNUL(v []byte) bool {
	if !bytes.Contains(v, []byte(`\u0000`)) {
		return false // only the escape can put one in valid JSON
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if str, ok := tok.(string); ok && strings.ContainsRune(str, 0) {
			return true
		}
	}
}

// writeAccountErr answers an error of an account's INSERT or UPDATE: the
// server's refusal of the settings' JSON, which jsonb cannot hold though
// it is valid (an escaped lone UTF-16 surrogate, say), is
// store.ErrInvalid naming the settings; anything else is as fail says.
func (s *Store) writeAccountErr(ctx context.Context, what string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == stateBadText || pe.Code == stateUntranslatable) && ctx.Err() == nil {
		return store.InvalidField("settings", "cannot be stored: "+pe.Message)
	}
	return s.fail(ctx, what, err)
}

func (s *Store) putAccount(ctx context.Context, acct *record.Account, settings []byte, apiKeys []string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.fail(ctx, "put account", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, s.q.putAccount, acct.ID, acct.Name,
		acct.Currency.Code, acct.Currency.Symbol, acct.Currency.Exponent,
		acct.PricePlan, acct.Disabled, settings, acct.Region, countriesColumn(acct), acct.Locale); err != nil {
		return s.writeAccountErr(ctx, "put account", err)
	}
	for _, k := range apiKeys {
		if err := s.addKey(ctx, tx, acct.ID, k); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return s.fail(ctx, "put account", err)
	}
	return nil
}

// AddAPIKey attaches apiKey to an existing account (store.ErrNotFound
// otherwise), storing only its SHA-256. Adding a key the account has
// already is a no-op; a key of another account is store.ErrConflict, an
// empty key store.ErrInvalid.
func (s *Store) AddAPIKey(ctx context.Context, account, apiKey string) error {
	if apiKey == "" {
		return store.InvalidField("api_key", "must not be empty")
	}
	return s.do(ctx, repeatable, func() error { return s.addKey(ctx, s.pool, account, apiKey) })
}

// RevokeAPIKey removes apiKey, whichever account has it; an unknown key is
// store.ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, apiKey string) error {
	sum := sha256.Sum256([]byte(apiKey))
	var tag pgconn.CommandTag
	err := s.do(ctx, onceOnly, func() (err error) {
		tag, err = s.pool.Exec(ctx, s.q.revokeKey, sum[:])
		return err
	})
	if err != nil {
		return s.fail(ctx, "revoke API key", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: revoke API key: the key: %w", store.ErrNotFound)
	}
	return nil
}

// ReplaceAPIKeys makes apiKeys the only keys of the account, in one
// transaction: each of them is attached (one the account has already is
// kept, not duplicated) and every other key of the account is revoked, so
// a key that was valid before and is not in apiKeys no longer
// authenticates once ReplaceAPIKeys returns nil. Keys are stored as their
// SHA-256 only.
//
// An account not in the store is store.ErrNotFound; an empty key
// store.ErrInvalid; a key of another account store.ErrConflict. On any error
// nothing changes. No keys at all is allowed and leaves the account with
// none. Calls for the same account are serialised on the account's row,
// and running one again after a lost connection is harmless.
func (s *Store) ReplaceAPIKeys(ctx context.Context, account string, apiKeys ...string) error {
	sums := make([][]byte, len(apiKeys))
	var fe record.FieldErrors
	for i, k := range apiKeys {
		if k == "" {
			fe.Add(fmt.Sprintf("api_keys[%d]", i), "must not be empty")
		}
		sum := sha256.Sum256([]byte(k))
		sums[i] = sum[:]
	}
	if err := store.InvalidFields(fe); err != nil {
		return err
	}
	return s.do(ctx, repeatable, func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return s.fail(ctx, "replace API keys", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := s.lockAccount(ctx, tx, "replace API keys", account); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, expand(`DELETE FROM {{s}}{{p}}api_keys
WHERE account = $1 AND NOT (key_hash = ANY($2::bytea[]))`, s.qualifier(), s.prefix), account, sums); err != nil {
			return s.fail(ctx, "replace API keys", err)
		}
		for _, k := range apiKeys {
			if err := s.addKey(ctx, tx, account, k); err != nil {
				return err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return s.fail(ctx, "replace API keys", err)
		}
		return nil
	})
}

// AddAPIKeyIfNone attaches apiKey to the account only if the account has
// no key yet, in one transaction, and reports whether apiKey is now the
// account's key: true when it was attached, or was attached already (so
// that running it again after a lost connection, whose first run did
// commit, still answers true); false when the account has another key,
// which is kept and apiKey is not stored. Two calls racing on one
// account are serialised on its row, so at most one key is ever attached
// this way.
//
// It is for a process that provisions an account on every start: the
// first start chooses a key, and later ones keep it instead of adding one
// more each time. An account not in the store is store.ErrNotFound; an
// empty key store.ErrInvalid; a key of another account store.ErrConflict.
func (s *Store) AddAPIKeyIfNone(ctx context.Context, account, apiKey string) (bool, error) {
	if apiKey == "" {
		return false, store.InvalidField("api_key", "must not be empty")
	}
	sum := sha256.Sum256([]byte(apiKey))
	var added bool
	err := s.do(ctx, repeatable, func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return s.fail(ctx, "add API key", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := s.lockAccount(ctx, tx, "add API key", account); err != nil {
			return err
		}
		var mine, others bool
		if err := tx.QueryRow(ctx, expand(`SELECT
	EXISTS (SELECT 1 FROM {{s}}{{p}}api_keys WHERE account = $1 AND key_hash = $2),
	EXISTS (SELECT 1 FROM {{s}}{{p}}api_keys WHERE account = $1 AND key_hash <> $2)`,
			s.qualifier(), s.prefix), account, sum[:]).Scan(&mine, &others); err != nil {
			return s.fail(ctx, "add API key", err)
		}
		switch {
		case mine:
			added = true
			return nil
		case others:
			added = false
			return nil
		}
		if err := s.addKey(ctx, tx, account, apiKey); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return s.fail(ctx, "add API key", err)
		}
		added = true
		return nil
	})
	return added, err
}

// lockAccount locks the account's row until tx ends, so that the key
// changes of concurrent calls for one account happen one after the other;
// an account not in the store is store.ErrNotFound. The statements of these key
// changes run rarely (when a process provisions its account), so they are
// expanded at each call rather than built once in New like the frequent
// ones.
func (s *Store) lockAccount(ctx context.Context, tx pgx.Tx, what, account string) error {
	var id string
	err := tx.QueryRow(ctx, expand(`SELECT id FROM {{s}}{{p}}accounts WHERE id = $1 FOR UPDATE`,
		s.qualifier(), s.prefix), account).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgstore: %s: account %q: %w", what, account, store.ErrNotFound)
	}
	if err != nil {
		return s.fail(ctx, what, err)
	}
	return nil
}

// querier runs one statement: the pool, or a transaction (pgx.Tx), such
// as the caller's of OpenTx.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) addKey(ctx context.Context, q querier, account, apiKey string) error {
	sum := sha256.Sum256([]byte(apiKey))
	var inserted, owner *string
	var exists bool
	if err := q.QueryRow(ctx, s.q.addKey, sum[:], account).Scan(&inserted, &owner, &exists); err != nil {
		return s.fail(ctx, "add API key", err)
	}
	switch {
	case !exists:
		return fmt.Errorf("pgstore: add API key: account %q: %w", account, store.ErrNotFound)
	case inserted != nil:
		return nil
	case owner != nil && *owner == account:
		return nil
	}
	// Never name the other account: that would tell a caller who holds a
	// key whose it is.
	return fmt.Errorf("pgstore: add API key: %w: the key belongs to another account", store.ErrConflict)
}

// Account returns the account with the given ID, or store.ErrNotFound. Each call
// returns a fresh *record.Account.
func (s *Store) Account(ctx context.Context, id string) (*record.Account, error) {
	var a *record.Account
	err := s.do(ctx, repeatable, func() (err error) {
		a, err = scanAccount(s.pool.QueryRow(ctx, s.q.account, id), nil)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: account %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(ctx, "account", err)
	}
	return a, nil
}

// AccountByKey returns the account owning apiKey, or store.ErrUnauthenticated.
//
// The key is looked up by its SHA-256, so the index search compares
// digests, not keys: how long a lookup takes can tell an attacker at most
// how many leading bytes of a digest matched, which gives no hint of any
// key with that digest. The matched digest is compared again in constant
// time before the account is returned.
func (s *Store) AccountByKey(ctx context.Context, apiKey string) (*record.Account, error) {
	if apiKey == "" {
		return nil, fmt.Errorf("pgstore: account by key: %w: the key is empty", store.ErrUnauthenticated)
	}
	sum := sha256.Sum256([]byte(apiKey))
	var stored []byte
	var a *record.Account
	err := s.do(ctx, repeatable, func() (err error) {
		a, err = scanAccount(s.pool.QueryRow(ctx, s.q.accountByKey, sum[:]), &stored)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("pgstore: account by key: %w", store.ErrUnauthenticated)
	}
	if err != nil {
		return nil, s.fail(ctx, "account by key", err)
	}
	if subtle.ConstantTimeCompare(stored, sum[:]) != 1 {
		return nil, fmt.Errorf("pgstore: account by key: %w", store.ErrUnauthenticated)
	}
	return a, nil
}

// scanAccount reads an account row (accountColumns); keyHash, when not
// nil, receives the leading key_hash column of accountByKey. The settings
// column's object becomes Settings, nil when it is empty; each kind's
// bytes are the account's own.
func scanAccount(row pgx.Row, keyHash *[]byte) (*record.Account, error) {
	var a record.Account
	var settings []byte
	dest := []any{&a.ID, &a.Name, &a.Currency.Code, &a.Currency.Symbol,
		&a.Currency.Exponent, &a.PricePlan, &a.Disabled, &settings, &a.Region, &a.Countries, &a.Locale}
	if keyHash != nil {
		dest = append([]any{keyHash}, dest...)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	var m map[record.Kind]json.RawMessage
	if err := json.Unmarshal(settings, &m); err != nil {
		return nil, fmt.Errorf("account %q: bad settings: %w", a.ID, err)
	}
	if len(m) > 0 {
		a.Settings = m
	}
	if len(a.Countries) == 0 {
		a.Countries = nil // an empty array column: no list
	}
	return &a, nil
}
