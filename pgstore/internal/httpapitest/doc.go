// Package httpapitest holds no code: its tests are package httpapi's
// tests that need pgstore (an unreachable database, two gateways on one
// PostgreSQL), in the pgstore module, since the library's module does not
// depend on pgx. They run on httpapi's test environment, which is shared
// with httpapi's own tests (internal/httpapienv).
package httpapitest
