// Package wallettest is the conformance suite of the money a notify.Ledger
// keeps: every store's Wallet (its Balance, Credit and the Debit its Open
// makes) runs it, in the manner of gocloud.dev's drivertest packages. A store wires
// itself in a Harness and calls Run from a test, usually
// conformance_test.go:
//
//	func TestWalletConformance(t *testing.T) {
//		wallettest.Run(t, wallettest.Harness{
//			NewStore: func(t *testing.T) wallettest.Wallet { return memstore.NewWallet() },
//			Open: func(t *testing.T, s wallettest.Wallet, account string, opening notify.Money) {
//				if err := s.(*memstore.Wallet).Open(account, opening); err != nil {
//					t.Fatal(err)
//				}
//			},
//		})
//	}
//
// The suite checks, through the Wallet interface only:
//
//   - Balance returns the opening balance, the account ID and the
//     account's currency;
//   - Debit and Credit move exactly the amount and return the balance
//     after; a debit may empty the wallet to exactly zero;
//   - a ref already recorded, by Debit or by Credit, returns the balance
//     recorded with it (not the current one) and moves no money, also when
//     64 goroutines use the same ref at once;
//   - a ref reused for the other direction or another amount is
//     CodeConflict and moves nothing;
//   - a debit larger than the balance is CodeInsufficientFunds, moves
//     nothing and leaves its ref unrecorded, so the same ref may succeed
//     once the wallet is topped up;
//   - a zero or negative amount, an amount in another currency and an
//     empty ref are CodeInvalidArgument and move nothing;
//   - an unknown account is CodeNotFound for Balance, Debit and Credit;
//   - a context that has already ended makes Debit and Credit fail with
//     CodeCanceled (errors.Is context.Canceled) and move nothing, leaving
//     the ref unrecorded;
//   - a credit that would overflow an int64 balance fails and moves
//     nothing;
//   - under 64 goroutines mixing debits, credits, repeats and shared refs,
//     no returned balance is negative, every call with one ref returns one
//     balance, and the ledger identity holds exactly: opening - debits +
//     credits = balance, each ref counted once.
//
// Every test uses accounts with random names, so a harness may hand out
// one shared database to all of them.
package wallettest
