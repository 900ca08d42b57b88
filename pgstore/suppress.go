package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Suppressions. The Store is a store.Suppressions too: each account's
// suppression list, in the table of migration 0018, one row per account,
// channel and recipient, kept until removed (a list that forgot an
// opt-out would send to someone who asked for none). The Notifier finds
// it on its ledger and reads it once per message before charging: one
// primary-key lookup. Every method is one statement, safe to repeat after
// a lost connection (an add is idempotent, a removal of a row gone is
// ErrNotFound).

// suppressionQueries are the statements of store.Suppressions; see
// buildSuppressionQueries.
type suppressionQueries struct {
	add, remove, lookup, lookupMany, list, listKind string
}

// suppressionRank is SQL ranking a reason as store.SuppressionReason's
// Outranks does (a higher position outranks a lower one).
const suppressionRank = `ARRAY['manual', 'unsubscribed', 'complaint', 'hard_bounce']`

func buildSuppressionQueries(x func(string) string) suppressionQueries {
	return suppressionQueries{
		// add inserts the entry, or replaces the reason and time of the
		// one there when the new reason outranks it, and answers the row
		// as it then stands. When the row was there and kept, up is
		// empty and the second SELECT reads it; a row inserted by a
		// transaction that committed after this statement began is not
		// in its snapshot, and the statement answers nothing: the caller
		// runs it again.
		add: x(`WITH up AS (
	INSERT INTO {{s}}{{p}}suppressions AS t (account, kind, recipient, reason, at)
	VALUES ($1, $2, $3, $4, $5)
	ON CONFLICT (account, kind, recipient) DO UPDATE SET reason = EXCLUDED.reason, at = EXCLUDED.at
	WHERE array_position(` + suppressionRank + `, EXCLUDED.reason) > array_position(` + suppressionRank + `, t.reason)
	RETURNING reason, at)
SELECT reason, at FROM up
UNION ALL
SELECT reason, at FROM {{s}}{{p}}suppressions
WHERE account = $1 AND kind = $2 AND recipient = $3 AND NOT EXISTS (SELECT 1 FROM up)`),

		remove: x(`DELETE FROM {{s}}{{p}}suppressions WHERE account = $1 AND kind = $2 AND recipient = $3`),

		lookup: x(`SELECT reason, at FROM {{s}}{{p}}suppressions WHERE account = $1 AND kind = $2 AND recipient = $3`),
		lookupMany: x(`SELECT kind, recipient, reason, at FROM {{s}}{{p}}suppressions
WHERE account = $1 AND kind = $2 AND recipient = ANY($3)`),

		// The lists read the primary key in its order; (kind, recipient)
		// > ($2, $3) is the cursor, which the empty strings put before
		// every entry.
		list: x(`SELECT kind, recipient, reason, at FROM {{s}}{{p}}suppressions
WHERE account = $1 AND (kind, recipient) > ($2, $3)
ORDER BY kind, recipient LIMIT $4`),
		listKind: x(`SELECT kind, recipient, reason, at FROM {{s}}{{p}}suppressions
WHERE account = $1 AND kind = $5 AND (kind, recipient) > ($2, $3)
ORDER BY kind, recipient LIMIT $4`),
	}
}

// addRetries bounds the runs of the add statement that find the entry
// neither inserted nor visible (a concurrent add committed meanwhile);
// each such run means another add landed, so a second run sees it.
const addRetries = 3

// AddSuppression puts e on its account's list, as store.Suppressions
// documents: an entry already there keeps its reason and time unless e's
// reason outranks it, decided in one statement under the row's lock, so
// concurrent adds leave the strongest reason.
func (s *Store) AddSuppression(ctx context.Context, e store.Suppression) (store.Suppression, error) {
	e, err := storeutil.CheckSuppression(e)
	if err == nil && !storable(e.Account) {
		err = store.InvalidField("account", "must be UTF-8 without the NUL character")
	}
	if err != nil {
		return store.Suppression{}, fmt.Errorf("pgstore: add suppression: %w", err)
	}
	out := e
	for try := 0; ; try++ {
		err = s.do(ctx, repeatable, func() error {
			return s.pool.QueryRow(ctx, s.q.suppressions.add, e.Account, string(e.Kind), e.To, string(e.Reason), e.At).
				Scan((*string)(&out.Reason), &out.At)
		})
		if !errors.Is(err, pgx.ErrNoRows) || try == addRetries {
			break
		}
	}
	if err != nil {
		return store.Suppression{}, s.fail(ctx, "add suppression", err)
	}
	out.At = out.At.UTC()
	return out, nil
}

// RemoveSuppression takes the recipient off the account's list, as
// store.Suppressions documents.
func (s *Store) RemoveSuppression(ctx context.Context, account string, kind record.Kind, to string) error {
	to, err := storeutil.CheckSuppressionKey(account, kind, to)
	if err != nil {
		return fmt.Errorf("pgstore: remove suppression: %w", err)
	}
	if !storable(account) || !storable(to) {
		return fmt.Errorf("pgstore: suppression of a %s recipient: %w", kind, store.ErrNotFound)
	}
	var n int64
	err = s.do(ctx, repeatable, func() error {
		tag, err := s.pool.Exec(ctx, s.q.suppressions.remove, account, string(kind), to)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return s.fail(ctx, "remove suppression", err)
	}
	if n == 0 {
		return fmt.Errorf("pgstore: suppression of a %s recipient: %w", kind, store.ErrNotFound)
	}
	return nil
}

// LookupSuppression answers the account's entry for the recipient, as
// store.Suppressions documents.
func (s *Store) LookupSuppression(ctx context.Context, account string, kind record.Kind, to string) (store.Suppression, bool, error) {
	to, err := storeutil.CheckSuppressionKey(account, kind, to)
	if err != nil {
		return store.Suppression{}, false, fmt.Errorf("pgstore: lookup suppression: %w", err)
	}
	if !storable(account) || !storable(to) {
		return store.Suppression{}, false, nil
	}
	e := store.Suppression{Account: account, Kind: kind, To: to}
	err = s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.suppressions.lookup, account, string(kind), to).Scan((*string)(&e.Reason), &e.At)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Suppression{}, false, nil
	case err != nil:
		return store.Suppression{}, false, s.fail(ctx, "lookup suppression", err)
	}
	e.At = e.At.UTC()
	return e, true, nil
}

// LookupSuppressions answers the account's entries for many recipients
// in one statement, as store.Suppressions documents.
func (s *Store) LookupSuppressions(ctx context.Context, account string, kind record.Kind, tos []string) ([]store.Suppression, error) {
	keys, err := storeutil.CheckSuppressionKeys(account, kind, tos)
	if err != nil {
		return nil, fmt.Errorf("pgstore: lookup suppressions: %w", err)
	}
	out := make([]store.Suppression, len(keys))
	asked := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" && storable(k) {
			asked = append(asked, k)
		}
	}
	if len(asked) == 0 || !storable(account) {
		return out, nil
	}
	entries, err := s.readSuppressions(ctx, "lookup suppressions", account, s.q.suppressions.lookupMany, account, string(kind), asked)
	if err != nil {
		return nil, err
	}
	found := make(map[string]store.Suppression, len(entries))
	for _, e := range entries {
		found[e.To] = e
	}
	for i, k := range keys {
		if e, ok := found[k]; ok {
			out[i] = e
		}
	}
	return out, nil
}

// ListSuppressions answers a page of the account's list, as
// store.Suppressions documents, read in the order of its primary key.
func (s *Store) ListSuppressions(ctx context.Context, account string, q store.SuppressionQuery) ([]store.Suppression, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("pgstore: list suppressions: %w", err)
	}
	if !storable(account) || !storable(q.AfterTo) {
		return nil, nil
	}
	query, args := s.q.suppressions.list, []any{account, string(q.AfterKind), q.AfterTo, storeutil.PageSize(q)}
	if q.Kind != "" {
		query, args = s.q.suppressions.listKind, append(args, string(q.Kind))
	}
	return s.readSuppressions(ctx, "list suppressions", account, query, args...)
}

// readSuppressions runs query, whose rows are the account's entries
// (kind, recipient, reason, at), and answers them, At in UTC.
func (s *Store) readSuppressions(ctx context.Context, what, account, query string, args ...any) ([]store.Suppression, error) {
	return readRows(ctx, s, what, func(row pgx.Row) (store.Suppression, error) {
		e := store.Suppression{Account: account}
		err := row.Scan((*string)(&e.Kind), &e.To, (*string)(&e.Reason), &e.At)
		e.At = e.At.UTC()
		return e, err
	}, query, args...)
}

var (
	_ store.Suppressions = (*Store)(nil)
	_ store.Suppressions = (*Store)(nil)
)
