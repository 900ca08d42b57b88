package vendorhttptest

import (
	"io"
	"net/http"
	"testing"
)

// Exchange sends req with client, as a test of a fake vendor sends the
// fake a raw request, and returns the answer's status and body. It fails
// t (t.Fatal) when no answer comes.
func Exchange(t testing.TB, client *http.Client, req *http.Request) (status int, body string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, string(data)
}
