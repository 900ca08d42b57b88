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
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
)

// WithPreferences serves the categories and recipients' choices of the
// ledger the Notifier reads: a category defined here can be named by a
// send, and a recipient's "no" recorded here refuses it.
func ExampleWithPreferences() {
	accounts, wallet := memstore.NewAccounts(), memstore.NewWallet()
	ledger := memstore.NewLedger(wallet)
	smsCh, err := sms.New(sms.Config{Provider: memprovider.New("mem")})
	if err != nil {
		log.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, notify.WithChannel(smsCh))
	if err != nil {
		log.Fatal(err)
	}
	store, err := memstore.NewAdmin(accounts, wallet, ledger, memstore.NewTemplates())
	if err != nil {
		log.Fatal(err)
	}
	const key = "an-admin-key-of-at-least-32-bytes!"
	h, err := adminapi.New(store, key, adminapi.WithPreferences(ledger, n))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func(method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	call("POST", "/admin/v1/accounts", `{"id":"acme","name":"Acme","opening_balance":"10.00","sender_ids":["ACMEIN"]}`)
	call("PUT", "/admin/v1/accounts/acme/categories/marketing", `{"description":"Offers and sales"}`)
	call("POST", "/admin/v1/accounts/acme/preferences", `{"channel":"sms","to":"+91 98765 43210","choices":{"marketing":false}}`)
	call("POST", "/admin/v1/accounts/acme/preferences", `{"channel":"sms","to":"+919876543210","choices":{"promo":false}}`)

	_, err = n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Half price today", Category: "marketing"})
	fmt.Println(notify.CodeOf(err))
	// Output:
	// 201
	// 201
	// 200
	// 400
	// declined
}
