package vendorhttptest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// TestTakeProxyError: the fault FailNextHTTP asked for is taken once, by
// TakeProxyError or Proxied, whichever comes first.
func TestTakeProxyError(t *testing.T) {
	var f vendorhttptest.Faults
	if got := f.TakeProxyError(); got != 0 {
		t.Fatalf("no fault: %d", got)
	}
	f.FailNextHTTP(502)
	if got := f.TakeProxyError(); got != 502 {
		t.Fatalf("took %d, want 502", got)
	}
	if got := f.TakeProxyError(); got != 0 {
		t.Fatalf("taken twice: %d", got)
	}
	if w := httptest.NewRecorder(); f.Proxied(w) {
		t.Fatalf("Proxied after the take answered %d", w.Code)
	}
}
