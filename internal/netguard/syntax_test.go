package netguard_test

import (
	"errors"
	"testing"

	"github.com/notifykit/notify/internal/netguard"
)

// TestCheckSyntax: the rules that need no DNS, with no lookup at all
// (there is no resolver to call).
func TestCheckSyntax(t *testing.T) {
	for _, ok := range []string{"https://files.example.com/a.pdf", "https://files.example.com:8443/a?token=x"} {
		if err := netguard.CheckSyntax(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"https://127.0.0.1/x.pdf", "https://10.0.0.1/x", "https://[::1]/x", "https://2130706433/x", "https://0x7f.1/x",
		"https://localhost/x", "https://printer.local/x", "https://intranet/x", "http://files.example.com/x",
		"https://user:pw@files.example.com/x", "ftp://files.example.com/x", "", "https://files.example.com:0/x",
	} {
		var ge *netguard.Error
		if err := netguard.CheckSyntax(bad); !errors.As(err, &ge) {
			t.Errorf("%q: %v, want a refusal", bad, err)
		}
	}
}
