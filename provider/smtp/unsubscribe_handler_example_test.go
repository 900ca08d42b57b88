package smtp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
)

// UnsubscribeHandler answers the unsubscribe URL of campaign mail: a
// mailbox provider's one-click POST records the address on the account's
// suppression list; a GET would only show the confirmation page.
func ExampleUnsubscribeHandler() {
	secret := []byte("use 32 or more random bytes here, from a secret store")
	list := memstore.NewLedger(nil) // the ledger the Notifier uses: it enforces this list
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: secret, Suppressions: list})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/unsubscribe/{token}", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// The token names the account and the address, without showing them.
	token, err := smtp.AccountUnsubscribeToken(secret, "acme", "asha@example.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := http.Post(srv.URL+"/unsubscribe/"+token, "application/x-www-form-urlencoded",
		strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	e, ok, err := list.LookupSuppression(context.Background(), "acme", "email", "asha@example.com")
	fmt.Println(resp.StatusCode, ok, e.Reason, err)
	// Output: 200 true unsubscribed <nil>
}
