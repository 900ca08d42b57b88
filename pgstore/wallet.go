package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// maxRefLen bounds a ledger ref, well inside what a btree index entry can
// hold; a record's refs are its UUID ("refund:" + UUID for its refund).
const maxRefLen = 200

// raceRetries bounds how often a debit or credit is run again after losing
// a race on its ref (see queries.move); the second run always sees the
// winner, so one retry is enough and more are a safety margin.
const raceRetries = 3

// Balance returns the account's balance. An unknown wallet is
// store.ErrNotFound.
func (s *Store) Balance(ctx context.Context, account string) (record.Balance, error) {
	var cur record.Currency
	var bal int64
	err := s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.balance, account).Scan(&cur.Code, &cur.Symbol, &cur.Exponent, &bal)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return record.Balance{}, fmt.Errorf("pgstore: balance: wallet of account %q: %w", account, store.ErrNotFound)
	}
	if err != nil {
		return record.Balance{}, s.fail(ctx, "balance", err)
	}
	return record.Balance{Account: account, Available: record.Money{Minor: bal, Currency: cur}}, nil
}

// Debit takes amount from the account's wallet under ref: one statement
// moves the money and writes the ledger row together, or does neither.
// It is no method of store.Ledger (a send's charge is debited by Open,
// with its record), but a host may debit with it, and store/storetest's
// RunWallet checks it beside Balance and Credit. store.ErrInsufficientFunds
// when the balance is short; store.ErrNotFound for an unknown wallet;
// store.ErrInvalid (record.FieldErrors naming the field) for a
// non-positive amount, another currency, or an empty or over-long ref (200
// bytes). A ref already recorded for the account with the same amount and
// direction returns the balance recorded with it and moves no money; with
// another amount, or recorded by Credit, it is store.ErrConflict and moves
// nothing.
//
// store.ErrUnavailable, or an error matching context.Canceled or
// context.DeadlineExceeded, means the outcome is unknown (the connection
// was lost, or ctx ended, after the statement was sent): call Debit again
// with the same ref to learn it.
func (s *Store) Debit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return s.move(ctx, "debit", account, amount, ref, -1)
}

// Credit adds amount to the account's wallet under ref, with the rules of
// Debit (no store.ErrInsufficientFunds; a credit that would overflow the
// balance is store.ErrInvalid). Top-ups are credits with a ref of the host's choosing;
// refunds are written by Move, with the record, under "refund:<message ID>".
func (s *Store) Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return s.move(ctx, "credit", account, amount, ref, +1)
}

func (s *Store) move(ctx context.Context, what, account string, amount record.Money, ref string, sign int64) (record.Balance, error) {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if amount.Minor <= 0 {
		fe.Add("amount", "must be positive")
	}
	switch {
	case ref == "":
		fe.Add("ref", "is required")
	case len(ref) > maxRefLen:
		fe.Add("ref", fmt.Sprintf("must be at most %d bytes", maxRefLen))
	}
	if err := store.InvalidFields(fe); err != nil {
		return record.Balance{}, err
	}
	if err := ctx.Err(); err != nil {
		return record.Balance{}, ctxError(what, err)
	}
	var (
		code, symbol *string
		exponent     *int
		before       *int64
		after, prev  *int64
		prevAmount   *int64
	)
	// Repeating the statement is safe even when a lost connection hides
	// whether it committed: the ref makes the repeat answer the first run.
	run := func() error {
		return s.pool.QueryRow(ctx, s.q.move, account, sign*amount.Minor, ref,
			amount.Currency.Code, amount.Currency.Exponent).
			Scan(&code, &symbol, &exponent, &before, &after, &prev, &prevAmount)
	}
	for try := 0; ; try++ {
		err := s.do(ctx, repeatable, run)
		if pgCode(err) == stateUniqueViolation && try < raceRetries && ctx.Err() == nil {
			continue // lost a race on ref: the winner is visible now
		}
		if err != nil {
			if pgCode(err) == stateOutOfRange {
				return record.Balance{}, store.InvalidField("amount", "would overflow the balance")
			}
			return record.Balance{}, s.fail(ctx, what, err)
		}
		if code == nil {
			return record.Balance{}, fmt.Errorf("pgstore: %s: wallet of account %q: %w", what, account, store.ErrNotFound)
		}
		cur := record.Currency{Code: *code, Symbol: *symbol, Exponent: *exponent}
		balance := func(minor int64) record.Balance {
			return record.Balance{Account: account, Available: record.Money{Minor: minor, Currency: cur}}
		}
		switch {
		case after != nil:
			return balance(*after), nil
		case prev != nil && *prevAmount != sign*amount.Minor:
			return record.Balance{}, fmt.Errorf("pgstore: %s: %w: ref %q of %q is recorded for another amount or direction",
				what, store.ErrConflict, ref, account)
		case prev != nil:
			return balance(*prev), nil
		case !cur.Same(amount.Currency):
			return record.Balance{}, fmt.Errorf("pgstore: %s: wallet of %q is in %s, not %q: %w", what, account, cur.Code, amount.Currency.Code,
				store.InvalidField("amount", "must be in the wallet's currency "+cur.Code))
		case sign < 0:
			return record.Balance{}, fmt.Errorf("debit of %s from account %q: %w", amount.Decimal(), account, store.ErrInsufficientFunds)
		default:
			// A credit is refused only for the reasons above.
			return record.Balance{}, fmt.Errorf("pgstore: credit of %q was not applied", account)
		}
	}
}

// OpenWallet creates the account's wallet with an opening balance (>= 0)
// in the opening's currency. A wallet that exists already is
// store.ErrConflict and is left as it is, so several instances may each try to open it at
// start-up. The wallet does not need an account row.
func (s *Store) OpenWallet(ctx context.Context, account string, opening record.Money) error {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if opening.Minor < 0 {
		fe.Add("opening", "must not be negative")
	}
	if opening.Currency.Code == "" {
		fe.Add("currency.code", "is required")
	}
	if opening.Currency.Exponent < 0 || opening.Currency.Exponent > 18 {
		fe.Add("currency.exponent", "must be between 0 and 18")
	}
	if err := store.InvalidFields(fe); err != nil {
		return err
	}
	var tag pgconn.CommandTag
	err := s.do(ctx, onceOnly, func() (err error) {
		tag, err = s.pool.Exec(ctx, s.q.openWallet, account, opening.Currency.Code,
			opening.Currency.Symbol, opening.Currency.Exponent, opening.Minor)
		return err
	})
	if err != nil {
		return s.fail(ctx, "open wallet", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: open wallet: %w: account %q has a wallet already", store.ErrConflict, account)
	}
	return nil
}

// CheckLedger proves the ledger identity of the account's wallet: the
// balance equals the opening balance plus the sum of every ledger row
// (debits negative, credits and refunds positive), and each row's recorded
// balance follows from the row before it. It returns nil when both hold,
// store.ErrNotFound for an unknown wallet, and otherwise an error that
// matches no sentinel of package store (the Notifier would call it
// internal) describing the mismatch. It reads a consistent snapshot, so it may run during traffic.
func (s *Store) CheckLedger(ctx context.Context, account string) error {
	var opening, balance, sum, rows, broken int64
	err := s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.checkLedger, account).Scan(&opening, &balance, &sum, &rows, &broken)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgstore: check ledger: wallet of account %q: %w", account, store.ErrNotFound)
	}
	if err != nil {
		return s.fail(ctx, "check ledger", err)
	}
	if balance != opening+sum {
		return fmt.Errorf(
			"pgstore: check ledger: %q: balance %d != opening %d + ledger sum %d over %d rows",
			account, balance, opening, sum, rows)
	}
	if broken != 0 {
		return fmt.Errorf(
			"pgstore: check ledger: %q: %d of %d rows do not follow from the row before", account, broken, rows)
	}
	return nil
}

// LedgerEntry is one movement of a wallet's money.
type LedgerEntry struct {
	// ID orders the entries as the money moved; it increases, with gaps.
	ID int64
	// Ref is the ref the Debit or Credit was called with.
	Ref string
	// Amount is negative for a debit, positive for a credit.
	Amount record.Money
	// BalanceAfter is the balance this movement left, which a repeat of
	// its ref answers.
	BalanceAfter record.Money
	CreatedAt    time.Time
}

// DefaultLedgerPage is the number of entries Ledger returns when limit is
// zero or less.
const DefaultLedgerPage = 1000

// Ledger returns up to limit entries (DefaultLedgerPage when limit <= 0)
// of the account's ledger with an ID greater than after, in the order the
// money moved; pass the last ID returned to read the next page. An unknown
// wallet and a wallet without movements both give an empty list.
func (s *Store) Ledger(ctx context.Context, account string, after int64, limit int) ([]LedgerEntry, error) {
	if limit <= 0 {
		limit = DefaultLedgerPage
	}
	var out []LedgerEntry
	err := s.do(ctx, repeatable, func() error {
		rows, err := s.pool.Query(ctx, s.q.ledger, account, after, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (LedgerEntry, error) {
			var e LedgerEntry
			var cur record.Currency
			err := row.Scan(&e.ID, &e.Ref, &e.Amount.Minor, &e.BalanceAfter.Minor, &e.CreatedAt,
				&cur.Code, &cur.Symbol, &cur.Exponent)
			e.Amount.Currency, e.BalanceAfter.Currency = cur, cur
			return e, err
		})
		return err
	})
	if err != nil {
		return nil, s.fail(ctx, "ledger", err)
	}
	return out, nil
}
