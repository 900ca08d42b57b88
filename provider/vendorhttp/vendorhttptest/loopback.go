package vendorhttptest

import (
	"net/http"
	"net/http/httptest"
)

// Loopback is the loopback HTTP server a fake vendor answers on, in the
// style of httptest.Server. Embed it in the fake's Server, next to the
// fake's URL field, for its Close and Client; the fake's constructor
// starts it with Serve.
type Loopback struct {
	srv *httptest.Server
}

// Serve starts h on a loopback port, as httptest.NewServer does, and
// returns its base URL, such as http://127.0.0.1:40231.
func (l *Loopback) Serve(h http.Handler) string {
	l.srv = httptest.NewServer(h)
	return l.srv.URL
}

// Close stops the server, as httptest.Server.Close does.
func (l *Loopback) Close() { l.srv.Close() }

// Client returns an HTTP client for the server.
func (l *Loopback) Client() *http.Client { return l.srv.Client() }
