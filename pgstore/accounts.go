package pgstore

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/store"
)

// dltJSON is the stored form of a store.DLTTemplate; its own tags keep
// the column's format independent of Go field names.
type dltJSON struct {
	ID        string `json:"id"`
	EntityID  string `json:"entity_id"`
	Content   string `json:"content"`
	MessageID string `json:"message_id,omitempty"`
}

// PutAccount creates the account, or replaces every field of an existing
// one, and attaches apiKeys to it, in one transaction. Keys are stored as
// their SHA-256 only. A key that belongs to another account is
// store.ErrConflict (and nothing is written); a key already attached to
// this account is accepted. An empty ID or key is store.ErrInvalid
// (store.FieldErrors naming them). PutAccount does not
// retain acct.
func (s *Store) PutAccount(ctx context.Context, acct *store.Account, apiKeys ...string) error {
	var fe store.FieldErrors
	if acct == nil || acct.ID == "" {
		fe.Add("id", "is required")
	}
	for i, k := range apiKeys {
		if k == "" {
			fe.Add(fmt.Sprintf("api_keys[%d]", i), "must not be empty")
		}
	}
	if err := fe.Err(); err != nil {
		return err
	}
	dlt, err := dltColumn("put account", acct)
	if err != nil {
		return err
	}
	// The transaction is an upsert plus key inserts that accept their own
	// keys, so running it again after a lost connection is harmless.
	return s.do(ctx, repeatable, func() error { return s.putAccount(ctx, acct, dlt, apiKeys) })
}

// dltColumn is the stored form of the account's DLT templates: JSON, or
// NULL for none.
func dltColumn(what string, acct *store.Account) ([]byte, error) {
	if acct.DLTTemplates == nil {
		return nil, nil
	}
	ts := make([]dltJSON, len(acct.DLTTemplates))
	for i, t := range acct.DLTTemplates {
		ts[i] = dltJSON{ID: t.ID, EntityID: t.EntityID, Content: t.Content, MessageID: t.MessageID}
	}
	dlt, err := json.Marshal(ts)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: DLT templates: %w", what, err)
	}
	return dlt, nil
}

func (s *Store) putAccount(ctx context.Context, acct *store.Account, dlt []byte, apiKeys []string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.fail(ctx, "put account", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, s.q.putAccount, acct.ID, acct.Name, acct.VendorID,
		acct.Currency.Code, acct.Currency.Symbol, acct.Currency.Exponent,
		acct.PrimaryGateway, dlt, acct.PricePlan, acct.Disabled, acct.SenderIDs); err != nil {
		return s.fail(ctx, "put account", err)
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
		return store.Invalid("api_key", "must not be empty")
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
		return store.Errorf(store.ErrNotFound, "pgstore: revoke API key: the key")
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
	var fe store.FieldErrors
	for i, k := range apiKeys {
		if k == "" {
			fe.Add(fmt.Sprintf("api_keys[%d]", i), "must not be empty")
		}
		sum := sha256.Sum256([]byte(k))
		sums[i] = sum[:]
	}
	if err := fe.Err(); err != nil {
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
		return false, store.Invalid("api_key", "must not be empty")
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
		return store.Errorf(store.ErrNotFound, "pgstore: %s: account %q", what, account)
	}
	if err != nil {
		return s.fail(ctx, what, err)
	}
	return nil
}

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
		return store.Errorf(store.ErrNotFound, "pgstore: add API key: account %q", account)
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
// returns a fresh *store.Account.
func (s *Store) Account(ctx context.Context, id string) (*store.Account, error) {
	var a *store.Account
	err := s.do(ctx, repeatable, func() (err error) {
		a, err = scanAccount(s.pool.QueryRow(ctx, s.q.account, id), nil)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.ErrNotFound, "pgstore: account %q", id)
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
func (s *Store) AccountByKey(ctx context.Context, apiKey string) (*store.Account, error) {
	if apiKey == "" {
		return nil, fmt.Errorf("pgstore: account by key: %w: the key is empty", store.ErrUnauthenticated)
	}
	sum := sha256.Sum256([]byte(apiKey))
	var stored []byte
	var a *store.Account
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

// scanAccount reads an account row; keyHash, when not nil, receives the
// leading key_hash column of accountByKey.
func scanAccount(row pgx.Row, keyHash *[]byte) (*store.Account, error) {
	var a store.Account
	var gateway string
	var dlt []byte
	dest := []any{&a.ID, &a.Name, &a.VendorID, &a.Currency.Code, &a.Currency.Symbol,
		&a.Currency.Exponent, &gateway, &dlt, &a.PricePlan, &a.Disabled, &a.SenderIDs}
	if keyHash != nil {
		dest = append([]any{keyHash}, dest...)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	a.PrimaryGateway = gateway
	if dlt != nil {
		var ts []dltJSON
		if err := json.Unmarshal(dlt, &ts); err != nil {
			return nil, fmt.Errorf("account %q: bad dlt_templates: %w", a.ID, err)
		}
		a.DLTTemplates = make([]store.DLTTemplate, len(ts))
		for i, t := range ts {
			a.DLTTemplates[i] = store.DLTTemplate{ID: t.ID, EntityID: t.EntityID, Content: t.Content, MessageID: t.MessageID}
		}
	}
	return &a, nil
}
