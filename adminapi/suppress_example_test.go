package adminapi_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/memstore"
)

// WithSuppressions serves the suppression list of the ledger the Notifier
// uses: an address added here is refused campaign mail from then on.
func ExampleWithSuppressions() {
	accounts, wallet := memstore.NewAccounts(), memstore.NewWallet()
	ledger := memstore.NewLedger(wallet) // also given to notify.New
	store, err := memstore.NewAdmin(accounts, wallet, ledger, memstore.NewTemplates())
	if err != nil {
		log.Fatal(err)
	}
	const key = "an-admin-key-of-at-least-32-bytes!"
	h, err := adminapi.New(store, key, adminapi.WithSuppressions(ledger))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func(path, body string) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	call("/admin/v1/accounts", `{"id":"acme","name":"Acme","opening_balance":"10.00"}`)
	call("/admin/v1/accounts/acme/suppressions", `{"channel":"email","to":"Asha@Example.com","reason":"manual"}`)
	call("/admin/v1/accounts/acme/suppressions", `{"channel":"email","to":"asha@example.com","reason":"bored"}`)
	e, ok, _ := ledger.LookupSuppression(context.Background(), "acme", "email", "asha@example.com")
	fmt.Println(ok, e.Reason)
	// Output:
	// 201
	// 200
	// 400
	// true manual
}
