// Package store is the contract between the Notifier and the stores
// behind it, as database/sql/driver is between database/sql and a
// driver: the interfaces a store implements (Ledger, Accounts, Keys,
// Templates, Limiter, Admin), the values it keeps (Record, Account,
// Money, Template, ...) and the errors it answers with.
//
// It imports only the standard library, so that a store depends on
// nothing but this package: memstore and pgstore import store, never the
// notify package that calls them. The notify package names the values a
// user meets (notify.Message is a Record, notify.Money a Money, ...) as
// aliases, so nothing is converted on the way in or out.
//
// # Errors
//
// A store answers a failure the caller caused, or a state it must know
// of, with an error that matches (errors.Is) one of the sentinels:
// ErrNotFound, ErrConflict, ErrInsufficientFunds, ErrInvalid,
// ErrUnauthenticated; a refusal by a Limiter is a *LimitError; a bad
// argument may name its fields with FieldErrors (which matches
// ErrInvalid). ErrUnavailable marks a store that cannot answer for the
// moment (a database restarting). Any other error is the store failing:
// the Notifier reports it as internal, keeps its text out of answers to
// clients, and keeps it as the cause. Errors carry no secret (API keys,
// codes, connection strings); the Notifier adds which store failed.
//
// Every method's contract (concurrency, what it retains, which error
// when) is written beside it. storetest is the conformance kit every
// store runs.
package store
