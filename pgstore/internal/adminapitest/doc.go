// Package adminapitest holds no code: its test runs the admin API's suite
// (internal/adminkit) on pgstore, in the pgstore module, since the
// library's module, where adminapi runs the suite on memstore, does not
// depend on pgx.
package adminapitest
