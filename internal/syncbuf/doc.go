// Package syncbuf is a bytes.Buffer that goroutines may share: what the
// test kits give a handler's logger, whose lines a server's goroutines
// write while the test reads them.
package syncbuf
