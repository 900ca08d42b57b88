package vendorhttptest_test

import (
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
