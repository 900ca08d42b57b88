package wants

import (
	"testing"

	"github.com/notifykit/notify/store"
)

func TestNot(t *testing.T) {
	optOut, optIn := store.Category{Name: "order"}, store.Category{Name: "marketing", OptIn: true}
	critical := store.Category{Name: "otp", OptIn: true, Critical: true}
	for _, tc := range []struct {
		c              store.Category
		allowed, chose bool
		want           string
	}{
		{optOut, false, false, ""},
		{optOut, false, true, Declined},
		{optOut, true, true, ""},
		{optIn, false, false, NotOptedIn},
		{optIn, false, true, Declined},
		{optIn, true, true, ""},
		{critical, false, true, ""},
		{critical, false, false, ""},
	} {
		if got := Not(tc.c, tc.allowed, tc.chose); got != tc.want || Gets(tc.c, tc.allowed, tc.chose) != (tc.want == "") {
			t.Errorf("Not(%+v, allowed %v, chose %v) = %q, want %q", tc.c, tc.allowed, tc.chose, got, tc.want)
		}
	}
}
