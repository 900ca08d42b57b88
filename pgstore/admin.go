package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The statements of the admin API run seldom, so they are expanded at
// each call rather than built once in New like the frequent ones.

// CreateAccount stores a new account with one API key and opens its
// wallet with the opening balance, in one transaction, as
// store.Admin documents: an ID that has an account or a wallet
// already is store.ErrConflict, as is a key of another account, and
// nothing is then written. Settings that PutAccount refuses are
// store.ErrInvalid here too. Only the key's SHA-256 is stored. It is not
// repeated after a lost connection (a repeat of a run that committed
// would answer store.ErrConflict): store.ErrUnavailable leaves the outcome
// unknown, and Account tells it.
func (s *Store) CreateAccount(ctx context.Context, acct *record.Account, apiKey string, opening record.Money) error {
	var fe record.FieldErrors
	if acct == nil || acct.ID == "" {
		fe.Add("id", "is required")
	}
	if apiKey == "" {
		fe.Add("api_key", "must not be empty")
	}
	if opening.Minor < 0 {
		fe.Add("opening", "must not be negative")
	}
	if opening.Currency.Code == "" {
		fe.Add("currency.code", "is required")
	}
	var settings []byte
	if acct != nil {
		settings = settingsColumn(acct, &fe)
	}
	if err := store.InvalidFields(fe); err != nil {
		return err
	}
	return s.do(ctx, onceOnly, func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return s.fail(ctx, "create account", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		_, err = tx.Exec(ctx, expand(`INSERT INTO {{s}}{{p}}accounts
	(id, name, currency_code, currency_symbol, currency_exponent, price_plan, disabled, settings,
	region, countries, locale)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, s.qualifier(), s.prefix),
			acct.ID, acct.Name, acct.Currency.Code, acct.Currency.Symbol, acct.Currency.Exponent,
			acct.PricePlan, acct.Disabled, settings, acct.Region, countriesColumn(acct), acct.Locale)
		if pgCode(err) == stateUniqueViolation {
			return fmt.Errorf("pgstore: create account: %w: the ID %q is taken", store.ErrConflict, acct.ID)
		}
		if err != nil {
			return s.writeAccountErr(ctx, "create account", err)
		}
		if err := s.addKey(ctx, tx, acct.ID, apiKey); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, s.q.openWallet, acct.ID, opening.Currency.Code,
			opening.Currency.Symbol, opening.Currency.Exponent, opening.Minor)
		if err != nil {
			return s.fail(ctx, "create account", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("pgstore: create account: %w: %q has a wallet already", store.ErrConflict, acct.ID)
		}
		if err := tx.Commit(ctx); err != nil {
			return s.fail(ctx, "create account", err)
		}
		return nil
	})
}

// Accounts returns up to limit accounts whose ID sorts after after in
// byte order, in that order, through an index of the IDs in that order.
func (s *Store) Accounts(ctx context.Context, after string, limit int) ([]*record.Account, error) {
	if limit <= 0 {
		return []*record.Account{}, nil
	}
	q := expand(`SELECT `+accountColumns+`
FROM {{s}}{{p}}accounts WHERE id COLLATE "C" > $1 ORDER BY id COLLATE "C" LIMIT $2`, s.qualifier(), s.prefix)
	out, err := readRows(ctx, s, "accounts", func(row pgx.Row) (*record.Account, error) { return scanAccount(row, nil) }, q, after, limit)
	if out == nil && err == nil {
		out = []*record.Account{} // a page with nothing in it, never nil
	}
	return out, err
}

// UpdateAccount changes the account through update in one transaction
// that holds the account's row, so concurrent updates apply one after the
// other, as store.Admin documents. update may run more than once
// when the connection is lost, each time on a fresh copy; it must not
// change the ID (store.ErrInvalid), and the settings it leaves must be
// storable as PutAccount's are (store.ErrInvalid). An unknown account is
// store.ErrNotFound; an error of update is returned as it is. The
// account returned is a copy of what was stored: its settings' bytes are
// its own.
func (s *Store) UpdateAccount(ctx context.Context, id string, update func(*record.Account) error) (*record.Account, error) {
	var out *record.Account
	err := s.do(ctx, repeatable, func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return s.fail(ctx, "update account", err)
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		a, err := scanAccount(tx.QueryRow(ctx, s.q.account+" FOR UPDATE", id), nil)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("pgstore: update account: account %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return s.fail(ctx, "update account", err)
		}
		if err := update(a); err != nil {
			return err
		}
		if a.ID != id {
			return store.InvalidField("id", "cannot be changed")
		}
		var fe record.FieldErrors
		settings := settingsColumn(a, &fe)
		if err := store.InvalidFields(fe); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.q.putAccount, a.ID, a.Name,
			a.Currency.Code, a.Currency.Symbol, a.Currency.Exponent,
			a.PricePlan, a.Disabled, settings, a.Region, countriesColumn(a), a.Locale); err != nil {
			return s.writeAccountErr(ctx, "update account", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return s.fail(ctx, "update account", err)
		}
		// The stored account, whose settings update may still hold.
		out = storeutil.CloneAccount(a)
		if len(out.Settings) == 0 {
			out.Settings = nil // as a read gives it
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Statement returns up to limit entries of the account's ledger after
// Seq after, as Ledger does, for the admin API.
func (s *Store) Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error) {
	if limit <= 0 {
		return []record.LedgerEntry{}, nil
	}
	entries, err := s.Ledger(ctx, account, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]record.LedgerEntry, len(entries))
	for i, e := range entries {
		out[i] = record.LedgerEntry{Seq: e.ID, Ref: e.Ref, Amount: e.Amount, Balance: e.BalanceAfter, At: e.CreatedAt.UTC()}
	}
	return out, nil
}

// AccountMessages returns up to limit of the account's records older
// than before, newest first (by created_at, then ID in byte order), as
// store.Admin documents, through an index in that order.
func (s *Store) AccountMessages(ctx context.Context, account string, before store.MessageCursor, limit int) ([]*record.Message, error) {
	if limit <= 0 {
		return []*record.Message{}, nil
	}
	const order = ` ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT `
	if before == (store.MessageCursor{}) { // the start
		q := expand(`SELECT `+messageColumns+` FROM {{s}}{{p}}messages WHERE account = $1`+order+`$2`,
			s.qualifier(), s.prefix)
		return s.accountMessages(ctx, q, account, limit)
	}
	q := expand(`SELECT `+messageColumns+` FROM {{s}}{{p}}messages
WHERE account = $1 AND created_at <= $2 AND (created_at < $2 OR id COLLATE "C" < $3)`+order+`$4`,
		s.qualifier(), s.prefix)
	return s.accountMessages(ctx, q, account, before.CreatedAt, before.ID, limit)
}

func (s *Store) accountMessages(ctx context.Context, q string, args ...any) ([]*record.Message, error) {
	out, err := s.messages(ctx, "messages of account", q, args...)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []*record.Message{}
	}
	return out, nil
}

// Interface guard
var _ store.Admin = (*Store)(nil)
