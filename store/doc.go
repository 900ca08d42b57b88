// Package store is the contract between the Notifier and the stores
// behind it, as database/sql/driver is between database/sql and a
// driver: the interfaces a store implements (Ledger, Accounts, Keys,
// Templates, Limiter, Admin, ...), the update and answer types of their
// methods, and the errors they answer with.
//
// It imports only the standard library and package record, the leaf of
// shared values (record.Message, record.Money, record.Account, ...), so
// that a store depends on nothing but these two: memstore and pgstore
// import store and record, never the notify package that calls them.
//
// # Errors
//
// A store answers a failure the caller caused, or a state it must know
// of, with an error that matches (errors.Is) one of the sentinels:
// ErrNotFound, ErrConflict, ErrInsufficientFunds, ErrInvalid,
// ErrUnauthenticated; a refusal by a Limiter is a *LimitError; a bad
// argument may name its fields with InvalidFields or InvalidField (which
// match ErrInvalid). ErrUnavailable marks a store that cannot answer for the
// moment (a database restarting). Any other error is the store failing:
// the Notifier reports it as internal, keeps its text out of answers to
// clients, and keeps it as the cause. Errors carry no secret (API keys,
// codes, connection strings); the Notifier adds which store failed.
//
// Every method's contract (concurrency, what it retains, which error
// when) is written beside it. storetest is the conformance kit every
// store runs.
package store
