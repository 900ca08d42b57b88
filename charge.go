package notify

import (
	"context"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// WalletStore is an account's prepaid wallet as a host app sees it: its
// balance, its top-ups and the statement of its movements. It is one of
// the card's four contracts, beside Channel, Provider and
// TemplateRenderer.
//
// The Notifier charges and refunds sends through the store.Ledger it is
// given, which keeps the records and the money together (a record and its
// debit are one atomic step); every store.Ledger is a WalletStore, over
// the same wallets, so that what a host app reads and tops up is what
// the sends are charged against. memstore.Ledger, memstore.Wallet and
// pgstore.Store implement it; storetest.RunWallet and RunLedger are its
// conformance suites.
//
// Methods are safe for concurrent use and do not retain their
// arguments. Amounts are in the account's currency (record.Account's
// Currency): another currency is store.ErrInvalid, and nothing moves.
// Errors are package store's sentinels as each method says; any other
// error is the store failing, and a Credit it answers so may or may not
// have happened: retry it with the same ref.
type WalletStore interface {
	// Balance returns the account's balance; an account without a
	// wallet is store.ErrNotFound.
	Balance(ctx context.Context, account string) (record.Balance, error)

	// Credit adds amount (> 0) to the account's wallet under ref
	// (non-empty, else store.ErrInvalid): a top-up. A ref is idempotent:
	// a ref already recorded with the same amount returns the balance
	// recorded with it and moves no money, so a retried call never
	// credits twice; the same ref with another amount is
	// store.ErrConflict. A credit that would overflow int64 fails and
	// moves nothing. An account without a wallet is store.ErrNotFound.
	// The refs the Notifier uses for its own refunds and price cuts
	// (store.RefundRefPrefix, store.AdjustRefPrefix) are the ledger's:
	// a top-up should not start with them.
	Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)

	// Statement returns up to limit (> 0; otherwise an empty list) of
	// the account's movements whose Seq is greater than after (0 for the
	// first), in the order the money moved: each send's debit under its
	// message ID, each refund and price cut, each top-up under its ref,
	// with the balance after it. The last entry's Seq is the next call's
	// after. An account without a wallet or without movements gives an
	// empty list. A store may forget old entries (memstore's wallet
	// beyond its retention does; pgstore keeps them).
	Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error)
}

// Every ledger is the wallet it charges.
var _ WalletStore = store.Ledger(nil)
