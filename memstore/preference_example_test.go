package memstore_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/store"
)

// A Ledger keeps each account's categories and its recipients' choices of
// them, which a Notifier over it reads before it charges a send that
// names a category. A recipient who made no choice is absent from the
// answer: the category's default (OptIn) decides for them.
func ExampleLedger_LookupChoices() {
	ctx := context.Background()
	l := memstore.NewLedger(nil)
	if _, err := l.PutCategory(ctx, store.Category{Account: "acme", Name: "marketing", Description: "Offers", OptIn: true}); err != nil {
		fmt.Println(err)
	}
	// Recipients in their channel's form (notify.Notifier.Recipient).
	if err := l.SetChoice(ctx, "acme", "sms", "+919876543210", "marketing", false); err != nil {
		fmt.Println(err)
	}
	c, choices, err := l.LookupChoices(ctx, "acme", "marketing", "sms", []string{"+919876543210", "+919876543211"})
	fmt.Println(c.Name, c.OptIn, choices, err)
	_, _, err = l.LookupChoices(ctx, "acme", "newsletter", "sms", nil)
	fmt.Println(err)
	// Output:
	// marketing true map[+919876543210:false] <nil>
	// memstore: category "newsletter": not found
}
