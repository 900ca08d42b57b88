package vendorhttptest_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// TestLog: what is added concurrently is all there, and All is a copy.
func TestLog(t *testing.T) {
	var l vendorhttptest.Log[int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Add(i, i)
		}()
	}
	wg.Wait()
	all := l.All()
	if len(all) != 16 || l.Len() != 16 {
		t.Fatalf("All = %v, Len = %d", all, l.Len())
	}
	all[0] = -1
	if l.All()[0] == -1 {
		t.Fatal("All is not a copy")
	}
}

// TestLogFind: Find returns the latest match.
func TestLogFind(t *testing.T) {
	var l vendorhttptest.Log[string]
	if _, ok := l.Find(func(string) bool { return true }); ok {
		t.Fatal("found in an empty log")
	}
	l.Add("a1", "b1", "a2")
	if got, ok := l.Find(func(s string) bool { return s[0] == 'a' }); !ok || got != "a2" {
		t.Fatalf("Find = %q, %v; want a2", got, ok)
	}
	if _, ok := l.Find(func(s string) bool { return s == "c" }); ok {
		t.Fatal("found c")
	}
}

// TestQueue: Flush posts oldest first and stops at the first failure,
// which stays queued with those after it.
func TestQueue(t *testing.T) {
	var q vendorhttptest.Queue[int]
	q.Add(1, 2, 3)
	var posted []int
	refuse := 2
	post := func(i int) error {
		if i == refuse {
			return errors.New("refused")
		}
		posted = append(posted, i)
		return nil
	}
	if n, err := q.Flush(post); n != 1 || err == nil || q.Len() != 2 {
		t.Fatalf("Flush = %d, %v; %d left", n, err, q.Len())
	}
	refuse = 0
	if n, err := q.Flush(post); n != 2 || err != nil || q.Len() != 0 {
		t.Fatalf("Flush again = %d, %v; %d left", n, err, q.Len())
	}
	if !slices.Equal(posted, []int{1, 2, 3}) {
		t.Fatalf("posted %v", posted)
	}
}

// TestLoopback: Serve starts the handler, Client reaches it, and Close
// stops it.
func TestLoopback(t *testing.T) {
	var l vendorhttptest.Loopback
	url := l.Serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	resp, err := l.Client().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Fatalf("status %d", resp.StatusCode)
	}
	l.Close()
	if _, err := http.Get(url); err == nil {
		t.Fatal("the server still answers after Close")
	}
}

// TestIDs: IDs are the prefix and 2n hex digits, each once, even with
// one byte of randomness.
func TestIDs(t *testing.T) {
	var ids vendorhttptest.IDs
	seen := make(map[string]bool)
	for range 200 {
		id := ids.New("SM", 1)
		if len(id) != 4 || !strings.HasPrefix(id, "SM") || seen[id] {
			t.Fatalf("ID %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestExchange: the answer's status and body.
func TestExchange(t *testing.T) {
	var l vendorhttptest.Loopback
	url := l.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(r.Method))
	}))
	defer l.Close()
	req, err := http.NewRequest(http.MethodPut, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := vendorhttptest.Exchange(t, l.Client(), req); status != http.StatusAccepted || body != "PUT" {
		t.Fatalf("Exchange = %d, %q", status, body)
	}
}
