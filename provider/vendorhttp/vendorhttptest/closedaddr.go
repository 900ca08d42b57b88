package vendorhttptest

import (
	"net"
	"testing"
)

// ClosedAddr returns a loopback address ("127.0.0.1:port") that nothing
// listens on, for a test of a request that never leaves: its dial is
// refused before a byte is sent.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
