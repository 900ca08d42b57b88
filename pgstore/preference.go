package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Preferences. The Store is a store.Preferences too: each account's
// categories and its recipients' choices of them, in the two tables of
// migration 0020, a choice's row referring to its category's, so that no
// choice outlives its category (RemoveCategory takes them by the foreign
// key's cascade) and none is made of a category not there. The Notifier
// finds them on its ledger and reads them once per send that names a
// category, before charging: LookupChoices, one statement that reads the
// category's row and its recipients' choices by primary key. Every
// method is one statement, safe to repeat after a lost connection (a
// put and a choice are upserts, a removal of a category gone is
// ErrNotFound). Recipients' locales are migration 0023's table, read by
// primary key (Locales) for a templated send that names no locale.

// preferenceQueries are the statements of store.Preferences; see
// buildPreferenceQueries.
type preferenceQueries struct {
	putCategory, categories, removeCategory, setChoice, choices, lookupChoices string
	setLocale, forgetLocale, locales                                           string
}

func buildPreferenceQueries(x func(string) string) preferenceQueries {
	return preferenceQueries{
		// putCategory replaces the whole category but not its key, so
		// its choices, which refer to the key, stay.
		putCategory: x(`INSERT INTO {{s}}{{p}}categories (account, name, description, opt_in, critical)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (account, name) DO UPDATE SET
	description = EXCLUDED.description, opt_in = EXCLUDED.opt_in, critical = EXCLUDED.critical`),

		// name is collation "C": the primary key's order is byte order.
		categories: x(`SELECT name, description, opt_in, critical FROM {{s}}{{p}}categories
WHERE account = $1 ORDER BY name`),

		// The foreign key's ON DELETE CASCADE deletes the choices of the
		// category in the same statement.
		removeCategory: x(`DELETE FROM {{s}}{{p}}categories WHERE account = $1 AND name = $2`),

		// setChoice inserts the choice from the category's row, so that
		// it inserts nothing (zero rows, ErrNotFound) when the account
		// has no category $4; a category removed after the statement's
		// snapshot fails the foreign key instead, which is ErrNotFound
		// too. The casts type the SELECT's parameters, which the
		// INSERT's columns do not.
		setChoice: x(`INSERT INTO {{s}}{{p}}choices (account, kind, recipient, category, allowed, updated_at)
SELECT account, $2::text, $3::text, name, $5::boolean, now() FROM {{s}}{{p}}categories
WHERE account = $1 AND name = $4
ON CONFLICT (account, kind, recipient, category) DO UPDATE SET
	allowed = EXCLUDED.allowed, updated_at = EXCLUDED.updated_at`),

		// choices reads the primary key's prefix (account, kind,
		// recipient); every row's category is there, by the foreign key.
		choices: x(`SELECT category, allowed FROM {{s}}{{p}}choices
WHERE account = $1 AND kind = $2 AND recipient = $3`),

		// lookupChoices answers the category's row, one for each choice
		// of it among the recipients $4, or one with a NULL recipient
		// when they made none; no row when the account has no category
		// $2. One statement, hence one snapshot: the category and the
		// choices are read as they stood at one instant, as
		// store.Preferences requires.
		lookupChoices: x(`SELECT c.description, c.opt_in, c.critical, ch.recipient, ch.allowed
FROM {{s}}{{p}}categories c
LEFT JOIN {{s}}{{p}}choices ch
	ON ch.account = c.account AND ch.kind = $3 AND ch.recipient = ANY($4) AND ch.category = c.name
WHERE c.account = $1 AND c.name = $2`),

		// Migration 0023's table, by its primary key.
		setLocale: x(`INSERT INTO {{s}}{{p}}recipient_locales (account, recipient, locale, updated_at)
VALUES ($1, $2, $3, now())
ON CONFLICT (account, recipient) DO UPDATE SET locale = EXCLUDED.locale, updated_at = EXCLUDED.updated_at`),
		forgetLocale: x(`DELETE FROM {{s}}{{p}}recipient_locales WHERE account = $1 AND recipient = $2`),
		locales: x(`SELECT recipient, locale FROM {{s}}{{p}}recipient_locales
WHERE account = $1 AND recipient = ANY($2)`),
	}
}

// PutCategory defines c, or replaces the account's category of its name,
// as store.Preferences documents, and answers c. An account that is not
// UTF-8 or holds the NUL character, which the table cannot keep, is
// store.ErrInvalid too.
func (s *Store) PutCategory(ctx context.Context, c store.Category) (store.Category, error) {
	err := storeutil.CheckCategory(c)
	if err == nil && !storable(c.Account) {
		err = store.InvalidField("account", "must be UTF-8 without the NUL character")
	}
	if err != nil {
		return store.Category{}, fmt.Errorf("pgstore: put category: %w", err)
	}
	err = s.do(ctx, repeatable, func() error {
		_, err := s.pool.Exec(ctx, s.q.preferences.putCategory, c.Account, c.Name, c.Description, c.OptIn, c.Critical)
		return err
	})
	if err != nil {
		return store.Category{}, s.fail(ctx, "put category", err)
	}
	return c, nil
}

// Categories answers the account's categories in byte order of name, as
// store.Preferences documents; none (nil) for an account with none.
func (s *Store) Categories(ctx context.Context, account string) ([]store.Category, error) {
	if account == "" {
		return nil, fmt.Errorf("pgstore: categories: %w", store.InvalidField("account", "is required"))
	}
	if !storable(account) {
		return nil, nil // PutCategory refuses such an account: it has none
	}
	cs, err := readRows(ctx, s, "categories", func(row pgx.Row) (store.Category, error) {
		c := store.Category{Account: account}
		err := row.Scan(&c.Name, &c.Description, &c.OptIn, &c.Critical)
		return c, err
	}, s.q.preferences.categories, account)
	if len(cs) == 0 {
		cs = nil
	}
	return cs, err
}

// RemoveCategory deletes the account's category and, in the same
// statement, every choice of it, as store.Preferences documents.
func (s *Store) RemoveCategory(ctx context.Context, account, name string) error {
	if err := storeutil.CheckCategoryKey(account, name); err != nil {
		return fmt.Errorf("pgstore: remove category: %w", err)
	}
	if !storable(account) {
		return noCategory(name)
	}
	var n int64
	err := s.do(ctx, repeatable, func() error {
		tag, err := s.pool.Exec(ctx, s.q.preferences.removeCategory, account, name)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return s.fail(ctx, "remove category", err)
	}
	if n == 0 {
		return noCategory(name)
	}
	return nil
}

// SetChoice records the recipient's choice of the account's category, as
// store.Preferences documents, in one statement that finds the category
// and upserts the choice: ErrNotFound when the category is not there,
// even when a concurrent RemoveCategory takes it. A recipient that is not
// UTF-8, which the table cannot keep, is store.ErrInvalid.
func (s *Store) SetChoice(ctx context.Context, account string, kind record.Kind, to, category string, allowed bool) error {
	err := storeutil.CheckChoice(account, kind, to, category)
	if err == nil && category == "" {
		err = store.InvalidField("category", "is required")
	}
	if err == nil && !storable(to) {
		err = store.InvalidField("to", "must be UTF-8 without the NUL character")
	}
	if err != nil {
		return fmt.Errorf("pgstore: set choice: %w", err)
	}
	if !storable(account) {
		return noCategory(category)
	}
	var n int64
	err = s.do(ctx, repeatable, func() error {
		tag, err := s.pool.Exec(ctx, s.q.preferences.setChoice, account, string(kind), to, category, allowed)
		n = tag.RowsAffected()
		return err
	})
	switch {
	case pgCode(err) == stateForeignKeyViolation:
		return noCategory(category)
	case err != nil:
		return s.fail(ctx, "set choice", err)
	case n == 0:
		return noCategory(category)
	}
	return nil
}

// Choices answers the recipient's choices on channel kind by category, as
// store.Preferences documents: an empty map, never nil, when there are
// none.
func (s *Store) Choices(ctx context.Context, account string, kind record.Kind, to string) (map[string]bool, error) {
	if err := storeutil.CheckChoice(account, kind, to, ""); err != nil {
		return nil, fmt.Errorf("pgstore: choices: %w", err)
	}
	out := make(map[string]bool)
	if !storable(account) || !storable(to) {
		return out, nil // neither PutCategory nor SetChoice keeps them
	}
	type choice struct {
		category string
		allowed  bool
	}
	rows, err := readRows(ctx, s, "choices", func(row pgx.Row) (choice, error) {
		var c choice
		err := row.Scan(&c.category, &c.allowed)
		return c, err
	}, s.q.preferences.choices, account, string(kind), to)
	if err != nil {
		return nil, err
	}
	for _, c := range rows {
		out[c.category] = c.allowed
	}
	return out, nil
}

// LookupChoices answers the account's category and the recipients'
// choices of it on channel kind, as store.Preferences documents, in one
// statement (one round trip, one snapshot): the category's row joined
// with the choices of the recipients tos. A recipient the rules refuse,
// or the table could not keep, is not asked about: it has no choice.
func (s *Store) LookupChoices(ctx context.Context, account, category string, kind record.Kind, tos []string) (store.Category, map[string]bool, error) {
	keys, err := storeutil.CheckLookupChoices(account, category, kind, tos)
	if err != nil {
		return store.Category{}, nil, fmt.Errorf("pgstore: lookup choices: %w", err)
	}
	if !storable(account) {
		return store.Category{}, nil, noCategory(category)
	}
	// Non-nil, so that no recipients is an empty array, not NULL.
	asked := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" && storable(k) {
			asked = append(asked, k)
		}
	}
	type row struct {
		c       store.Category
		to      *string
		allowed *bool
	}
	rows, err := readRows(ctx, s, "lookup choices", func(r pgx.Row) (row, error) {
		v := row{c: store.Category{Account: account, Name: category}}
		err := r.Scan(&v.c.Description, &v.c.OptIn, &v.c.Critical, &v.to, &v.allowed)
		return v, err
	}, s.q.preferences.lookupChoices, account, category, string(kind), asked)
	if err != nil {
		return store.Category{}, nil, err
	}
	if len(rows) == 0 {
		return store.Category{}, nil, noCategory(category)
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		if r.to != nil && r.allowed != nil {
			out[*r.to] = *r.allowed
		}
	}
	return rows[0].c, out, nil
}

// SetLocale records the recipient's locale, or forgets it for "", as
// store.Preferences documents: one upsert or one delete, safe to repeat.
// An account or recipient that is not UTF-8, which the table cannot
// keep, is store.ErrInvalid.
func (s *Store) SetLocale(ctx context.Context, account, to, locale string) error {
	tag, err := storeutil.CheckLocale(account, to, locale)
	switch {
	case err != nil:
	case !storable(account):
		err = store.InvalidField("account", "must be UTF-8 without the NUL character")
	case !storable(to):
		err = store.InvalidField("to", "must be UTF-8 without the NUL character")
	}
	if err != nil {
		return fmt.Errorf("pgstore: set locale: %w", err)
	}
	err = s.do(ctx, repeatable, func() error {
		var err error
		if tag == "" {
			_, err = s.pool.Exec(ctx, s.q.preferences.forgetLocale, account, to)
		} else {
			_, err = s.pool.Exec(ctx, s.q.preferences.setLocale, account, to, tag)
		}
		return err
	})
	if err != nil {
		return s.fail(ctx, "set locale", err)
	}
	return nil
}

// Locales answers the recipients' recorded locales, as store.Preferences
// documents, in one statement by primary key; an empty map, never nil,
// when none has one.
func (s *Store) Locales(ctx context.Context, account string, tos []string) (map[string]string, error) {
	keys, err := storeutil.CheckLocales(account, tos)
	if err != nil {
		return nil, fmt.Errorf("pgstore: locales: %w", err)
	}
	out := make(map[string]string)
	asked := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" && storable(k) {
			asked = append(asked, k)
		}
	}
	if len(asked) == 0 || !storable(account) {
		return out, nil // SetLocale keeps none of them
	}
	type row struct{ to, tag string }
	rows, err := readRows(ctx, s, "locales", func(r pgx.Row) (row, error) {
		var v row
		err := r.Scan(&v.to, &v.tag)
		return v, err
	}, s.q.preferences.locales, account, asked)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.to] = r.tag
	}
	return out, nil
}

// noCategory is the answer for a category the account has not defined.
func noCategory(name string) error {
	return fmt.Errorf("pgstore: category %q: %w", name, store.ErrNotFound)
}

var _ store.Preferences = (*Store)(nil)
