package accountcache_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store/accountcache"
)

// A Cache goes in front of the accounts store a Notifier reads per send:
// notify.New(accounts, ledger, ...).
func ExampleNew() {
	db := memstore.NewAccounts() // pgstore's Store in a deployment
	if err := db.Add(&record.Account{ID: "acme", Name: "Acme"}); err != nil {
		panic(err)
	}
	accounts, err := accountcache.New(db, accountcache.WithTTL(time.Second))
	if err != nil {
		panic(err)
	}
	a, err := accounts.Account(context.Background(), "acme")
	fmt.Println(a.Name, err)
	// Output: Acme <nil>
}
