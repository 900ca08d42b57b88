package vendorhttptest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Do sends a receiver a request as a test does rather than a vendor: a
// forgery, an oversized or malformed body, a method it does not take.
// The request has method, url, body (none when nil) and header as they
// are (no Content-Type unless header has one), and goes with client
// (http.DefaultClient when nil). Do fails t when the request cannot be
// made or sent, and returns the answer, its body read and closed, for its
// status and headers.
func Do(t testing.TB, client *http.Client, method, url string, body []byte, header http.Header) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatalf("vendorhttptest: %s request: %v", method, err)
	}
	if header != nil {
		req.Header = header.Clone()
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("vendorhttptest: %s: %v", method, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
