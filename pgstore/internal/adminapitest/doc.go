// Package adminapitest holds no code: its tests run package adminapi's
// store tests on pgstore, in the pgstore module (the library's module,
// where they run on memstore, does not depend on pgx).
package adminapitest
