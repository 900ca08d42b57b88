// Package unreachable makes, for the tests of what an API answers when
// its database is down, a real pgstore that cannot reach its server: the
// admin API's and the send API's tests in this module share it.
package unreachable
