package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// countedAccounts counts the reads of the accounts it wraps.
type countedAccounts struct {
	store.Accounts
	byID, byKey atomic.Int64
}

func (c *countedAccounts) Account(ctx context.Context, id string) (*record.Account, error) {
	c.byID.Add(1)
	return c.Accounts.Account(ctx, id)
}

func (c *countedAccounts) AccountByKey(ctx context.Context, key string) (*record.Account, error) {
	c.byKey.Add(1)
	return c.Accounts.AccountByKey(ctx, key)
}

// TestRequestAccountsReadsTheAccountOnce: a send through a Handler whose
// Notifier reads accounts through RequestAccounts reads its account once,
// by its key; a disabled account is still refused, uncharged; and a read
// outside a request, or of another account, goes to the store.
func TestRequestAccountsReadsTheAccountOnce(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		accounts := memstore.NewAccounts()
		acct := &notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}
		if err := accounts.Add(acct, "nk_test_acme"); err != nil {
			t.Fatal(err)
		}
		if err := accounts.Add(&notify.Account{ID: "gone", Disabled: true, Currency: record.INR()}, "nk_test_gone"); err != nil {
			t.Fatal(err)
		}
		w := memstore.NewWallet()
		for _, id := range []string{"acme", "gone"} {
			if err := w.Open(id, notify.Money{Minor: 1000, Currency: record.INR()}); err != nil {
				t.Fatal(err)
			}
		}
		vendor := memprovider.New("mem")
		ch, err := sms.New(sms.Config{Provider: vendor})
		if err != nil {
			t.Fatal(err)
		}
		counted := &countedAccounts{Accounts: accounts}
		var forNotifier store.Accounts = counted
		if wrapped {
			forNotifier = httpapi.RequestAccounts(counted)
		}
		n, err := notify.New(forNotifier, memstore.NewLedger(w), notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))
		if err != nil {
			t.Fatal(err)
		}
		h, err := httpapi.New(n, counted)
		if err != nil {
			t.Fatal(err)
		}
		url, client := httpapienv.Serve(t, h)
		post := func(key string) int {
			req, err := http.NewRequest(http.MethodPost, url+httpapi.BasePath+"/sms", strings.NewReader(`{"to":"9876543210","message":"Order 4411 shipped"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			return res.StatusCode
		}

		if got := post("nk_test_acme"); got != http.StatusOK || vendor.Len() != 1 {
			t.Fatalf("wrapped %v: a send answered %d, vendor got %d; want 200 and one message", wrapped, got, vendor.Len())
		}
		wantByID := int64(1)
		if wrapped {
			wantByID = 0
		}
		if counted.byKey.Load() != 1 || counted.byID.Load() != wantByID {
			t.Fatalf("wrapped %v: a send read the account %d times by key and %d by ID; want 1 and %d",
				wrapped, counted.byKey.Load(), counted.byID.Load(), wantByID)
		}
		if got := post("nk_test_gone"); got != http.StatusForbidden || vendor.Len() != 1 {
			t.Fatalf("wrapped %v: a disabled account's send answered %d, vendor got %d; want 403 and nothing sent", wrapped, got, vendor.Len())
		}
		if b, err := w.Balance(context.Background(), "gone"); err != nil || b.Available.Minor != 1000 {
			t.Fatalf("wrapped %v: the disabled account's balance %+v, %v; want 1000, uncharged", wrapped, b, err)
		}
		if wrapped {
			before := counted.byID.Load()
			if _, err := forNotifier.Account(context.Background(), "acme"); err != nil || counted.byID.Load() != before+1 {
				t.Fatalf("a read outside a request: %v, %d reads; want it read from the store", err, counted.byID.Load()-before)
			}
		}
	}
}
