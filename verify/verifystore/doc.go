// Package verifystore is the storage contract of package verify, beside
// it as store is beside the notify package: the Verification a store
// keeps (never the code, only an HMAC of it) with its statuses, the
// Verifications a store implements (start, check, resend and cancel, each
// counted exactly in one atomic step), and the Counters the fraud guard
// counts by (velocity, conversion), with their time buckets.
//
// It imports only the standard library, so that a store implements it
// without importing verify or the notify package: memstore and pgstore
// do. Errors are package store's sentinels (store.ErrNotFound,
// store.ErrConflict, store.ErrInvalid, ...), as each method says.
// storetest.RunVerifications and storetest.RunCounters are its
// conformance suites.
package verifystore
