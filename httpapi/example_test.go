package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// The API on top of a Notifier with an SMS channel and a wallet: a
// request with a bad number names the field; a good one is charged.
func ExampleNew() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, "acme-secret-key-1")
	purse := memstore.NewWallet()
	_ = purse.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	ch, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(accounts, memstore.NewLedger(purse), notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))

	h, err := httpapi.New(n, accounts)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, body := range []string{
		`{"to":"12345","message":"hi"}`,
		`{"numbers":9876543210,"message":"hi"}`,
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/sms", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer acme-secret-key-1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s := string(out)
		if i := strings.Index(s, `"message_id"`); i >= 0 { // message IDs are random
			j := strings.Index(s[i:], `,`)
			s = s[:i] + `"message_id":"…"` + s[i+j:]
		}
		if i := strings.Index(s, `"provider_message_id"`); i >= 0 {
			j := strings.Index(s[i:], `,`)
			s = s[:i] + `"provider_message_id":"…"` + s[i+j:]
		}
		fmt.Print(resp.StatusCode, " ", s)
	}
	// Output:
	// 400 {"success":false,"error":{"code":"invalid_argument","message":"invalid request: to must be 10 digits, found 5","fields":{"to":"must be 10 digits, found 5"}}}
	// 200 {"success":true,"message_id":"…","channel":"sms","to":"9876543210","country":"IN","status":"sent","provider":"mem","provider_message_id":"…","units":1,"cost":"0.25","cost_minor":25,"balance":"99.75","balance_minor":9975,"currency":{"code":"INR","symbol":"₹","exponent":2}}
}

// A Notifier serving a Handler reads its accounts through
// RequestAccounts: a send through the API then reads its account once, by
// its key, and the Notifier takes that read from the request.
func ExampleRequestAccounts() {
	kept := memstore.NewAccounts()
	_ = kept.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, "acme-secret-key-1")
	accounts := &countedAccounts{Accounts: kept} // counts the reads
	purse := memstore.NewWallet()
	_ = purse.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	ch, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(httpapi.RequestAccounts(accounts), memstore.NewLedger(purse), notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))
	h, _ := httpapi.New(n, accounts)
	srv := httptest.NewServer(h)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/sms", strings.NewReader(`{"to":"9876543210","message":"hi"}`))
	req.Header.Set("Authorization", "Bearer acme-secret-key-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "read by key:", accounts.byKey.Load(), "by ID:", accounts.byID.Load())
	// Output: 200 read by key: 1 by ID: 0
}
