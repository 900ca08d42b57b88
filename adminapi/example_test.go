package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/memstore"
)

// The admin API over the in-memory stores: create an account, then top
// it up twice with one reference, which credits it once.
func Example() {
	accounts, wallet := memstore.NewAccounts(), memstore.NewWallet()
	store, err := memstore.NewAdmin(accounts, wallet, memstore.NewLedger(wallet), memstore.NewTemplates())
	if err != nil {
		log.Fatal(err)
	}
	const key = "an-admin-key-of-at-least-32-bytes!"
	h, err := adminapi.New(store, key)
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h) // in a program: mux.Handle(adminapi.BasePath+"/", h)
	defer srv.Close()

	call := func(method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, len(b) > 0)
	}
	call("POST", "/admin/v1/accounts", `{"id":"acme","name":"Acme","opening_balance":"10.00"}`)
	call("POST", "/admin/v1/accounts/acme/topups", `{"amount":"5.00","reference":"inv-1"}`)
	call("POST", "/admin/v1/accounts/acme/topups", `{"amount":"5.00","reference":"inv-1"}`)
	b, _ := wallet.Balance(context.Background(), "acme")
	fmt.Println(b.Available.Decimal())
	// Output:
	// 201 true
	// 200 true
	// 200 true
	// 15.00
}

// A server with prices in rupees and dollars creates accounts in either,
// and refuses a currency it could not price.
func ExampleWithCurrencies() {
	accounts, wallet := memstore.NewAccounts(), memstore.NewWallet()
	store, err := memstore.NewAdmin(accounts, wallet, memstore.NewLedger(wallet), memstore.NewTemplates())
	if err != nil {
		log.Fatal(err)
	}
	const key = "an-admin-key-of-at-least-32-bytes!"
	h, err := adminapi.New(store, key, adminapi.WithCurrencies("INR", "USD"))
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{
		`{"id":"us","currency":"USD","opening_balance":"5.00"}`,
		`{"id":"jp","currency":"JPY","opening_balance":"500"}`,
	} {
		req := httptest.NewRequest("POST", adminapi.BasePath+"/accounts", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var answer struct {
			Data struct {
				Currency struct{ Code string }
				Balance  string
			}
			Error struct {
				Fields map[string]string
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
			log.Fatal(err)
		}
		if w.Code != http.StatusCreated {
			fmt.Println(w.Code, answer.Error.Fields)
			continue
		}
		fmt.Println(w.Code, answer.Data.Balance, answer.Data.Currency.Code)
	}
	// Output:
	// 201 5.00 USD
	// 400 map[currency:must be one of INR, USD, the currencies this server has prices in]
}
