package adminapi_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
)

// WithSuppressions serves the suppression list of the ledger the Notifier
// uses, each recipient in its channel's canonical form: an address added
// here is refused campaign mail from then on.
func ExampleWithSuppressions() {
	accounts, wallet := memstore.NewAccounts(), memstore.NewWallet()
	ledger := memstore.NewLedger(wallet)
	emailCh, err := email.New(email.Config{Provider: memprovider.New("mem")})
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, notify.WithChannel(emailCh))
	if err != nil {
		log.Fatal(err)
	}
	store, err := memstore.NewAdmin(accounts, wallet, ledger, memstore.NewTemplates())
	if err != nil {
		log.Fatal(err)
	}
	const key = "an-admin-key-of-at-least-32-bytes!"
	h, err := adminapi.New(store, key, adminapi.WithSuppressions(ledger, n))
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
