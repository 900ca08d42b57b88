package vendorhttptest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Exchange sends req with client (http.DefaultClient when nil), as a test
// sends a fake vendor or a receiver a raw request, and returns the answer's
// status and body. It fails t (t.Fatal) when no whole answer comes.
func Exchange(t testing.TB, client *http.Client, req *http.Request) (status int, body string) {
	t.Helper()
	resp, data := exchange(t, client, req)
	return resp.StatusCode, string(data)
}

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
	resp, _ := exchange(t, client, req)
	return resp
}

// exchange sends req and reads the whole answer, failing t when it cannot.
func exchange(t testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("vendorhttptest: %s: %v", req.Method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("vendorhttptest: reading the answer: %v", err)
	}
	return resp, data
}
