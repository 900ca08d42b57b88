package store

import (
	"context"
	"time"

	"github.com/notifykit/notify/record"
)

// Admin is what the admin API (package adminapi) needs of a store: accounts with their API
// keys, their wallets, their message records and their custom templates.
// Methods are safe for concurrent use. Errors are the package's: ErrNotFound, ErrConflict and ErrInvalid as
// each method says; anything else is the store failing.
//
// A store keeps only a hash of each API key; no method returns a key.
type Admin interface {
	// Account returns the account with the ID, or ErrNotFound. Callers must
	// not modify it.
	Account(ctx context.Context, id string) (*record.Account, error)
	// CreateAccount stores a new account with one API key and opens its
	// wallet with the opening balance (>= 0, in the account's currency),
	// together: on error neither is stored. An ID in use (by an account
	// or a wallet) is ErrConflict, as is a key of another account; an empty
	// ID or key, or a negative opening, is ErrInvalid. It does not
	// retain acct.
	CreateAccount(ctx context.Context, acct *record.Account, apiKey string, opening record.Money) error
	// Accounts returns up to limit (> 0) accounts whose ID sorts after
	// after in byte order ("" for the first page), in that order.
	Accounts(ctx context.Context, after string, limit int) ([]*record.Account, error)
	// UpdateAccount reads the account, calls update with a copy of it
	// that update may change (all but the ID), and stores the result, as
	// one step: concurrent updates of an account apply one after the
	// other, none lost. An error of update is returned as it is and
	// stores nothing. It returns the stored account. An unknown account
	// is ErrNotFound. The account's API keys stay as they are.
	UpdateAccount(ctx context.Context, id string, update func(*record.Account) error) (*record.Account, error)
	// ReplaceAPIKeys makes apiKeys the account's only keys: every other
	// key stops authenticating when it returns nil. An unknown account is
	// ErrNotFound; an empty key ErrInvalid; a key of another account
	// ErrConflict. On error nothing changes.
	ReplaceAPIKeys(ctx context.Context, account string, apiKeys ...string) error

	// Balance, Credit and Statement are notify.WalletStore's, whose
	// contract is written there: the wallets an admin tops up are the
	// ones the Ledger charges.
	Balance(ctx context.Context, account string) (record.Balance, error)
	Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)
	Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error)

	// AccountMessages returns up to limit (> 0) of the account's message
	// records, newest first: by CreatedAt descending, then by ID
	// descending. With a non-zero before it returns only the records
	// that sort after before in that order (older), so the last record
	// of a page, as a MessageCursor, gives the next page. A store may
	// forget old records (memstore keeps a bounded number).
	AccountMessages(ctx context.Context, account string, before MessageCursor, limit int) ([]*record.Message, error)

	// The account's custom templates.
	Templates
}

// MessageCursor is a place in an account's records, newest first: the
// CreatedAt and ID of the last record of a page. The zero value is the
// start.
type MessageCursor struct {
	CreatedAt time.Time
	ID        string
}
