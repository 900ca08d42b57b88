package vendorhttptest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Paths starts a server, closed when t ends, for a test of the paths a
// provider calls, such as one of the forms its base URL may take: it puts
// the path of each request on the channel it returns (which holds n of
// them) and answers with h.
func Paths(t testing.TB, n int, h http.HandlerFunc) (*httptest.Server, <-chan string) {
	paths := make(chan string, n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, paths
}
