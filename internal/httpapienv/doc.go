// Package httpapienv is the test environment of package httpapi's tests:
// a Handler over the real channels and in-memory stores, served on
// loopback, and the helpers that send it requests and check its answers.
// It is a package, not a _test.go file, because several test packages use
// it: httpapi's own, bench's, and the pgstore module's
// (pgstore/internal/httpapitest), which runs the tests that need a
// PostgreSQL store and so cannot live in the library's module.
package httpapienv
