package storeutil_test

import (
	"fmt"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store/storeutil"
)

// Two spellings of one recipient are one entry of a suppression list.
func ExampleNormalizeRecipient() {
	for _, c := range []struct{ kind, to string }{
		{"email", "  Ann@Example.COM "},
		{"sms", "+91 98765-43210"},
		{"sms", "98765 43210"},
	} {
		to, err := storeutil.NormalizeRecipient(record.Kind(c.kind), c.to)
		fmt.Printf("%q %v\n", to, err)
	}
	// Output:
	// "ann@example.com" <nil>
	// "+919876543210" <nil>
	// "" to: must be a phone number in E.164 form, as +919876543210
}
