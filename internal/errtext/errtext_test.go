package errtext

import (
	"errors"
	"testing"

	"github.com/notifykit/notify"
)

func TestNamesPackage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{notify.Errorf(notify.CodeConflict, "memstore: idempotency key %q is in flight", "k"), true},
		{errors.New("pgstore: debit: short"), true},
		{notify.Errorf(notify.CodeConflict, "a send with idempotency key %q is in flight", "k"), false},
		{notify.Errorf(notify.CodeInsufficientFunds, "debit of ₹1.00: account %q has ₹0.00", "a"), false},
	} {
		if msg, got := NamesPackage(tc.err); got != tc.want {
			t.Errorf("NamesPackage(%q) = %v, want %v", msg, got, tc.want)
		}
	}
}
