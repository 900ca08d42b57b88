package httpapitest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// TestTwoGatewaysOnePostgres runs two HTTP gateways (two Notifiers, two
// pgstore pools: two processes, as far as the database can tell) on one
// PostgreSQL schema, and fires concurrent sends at both that together ask
// for four times the balance. The wallet must pay for exactly what it
// holds, never more, and the ledger must add up, with no ref charged twice.
// Skipped without a PostgreSQL server (see pgstoretest); CI requires one.
func TestTwoGatewaysOnePostgres(t *testing.T) {
	schema := pgstoretest.Schema(t)
	const (
		key     = "shared-key-0123456789"
		price   = 25 // wallet.DefaultINR, one plain SMS segment
		opening = 40 * price
		perSide = 80 // 160 sends for 40 paid slots
	)
	servers := make([]*httptest.Server, 2)
	providers := make([]*memprovider.Provider, 2)
	for i := range servers {
		store := pgstoretest.Store(t, schema)
		ctx := context.Background()
		if i == 0 {
			if err := store.PutAccount(ctx, &notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, key); err != nil {
				t.Fatal(err)
			}
			if err := store.OpenWallet(ctx, "acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
				t.Fatal(err)
			}
		}
		providers[i] = memprovider.New(fmt.Sprintf("gw%d", i))
		ch, err := sms.New(sms.Config{Provider: providers[i]})
		if err != nil {
			t.Fatal(err)
		}
		n, err := notify.New(store, store, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
			notify.WithIdempotency(store))
		if err != nil {
			t.Fatal(err)
		}
		h, err := httpapi.New(n, store)
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = httptest.NewServer(h) // a real http.Server on 127.0.0.1
		t.Cleanup(servers[i].Close)
	}

	type answer struct {
		status int
		id     string
		cost   int64
	}
	answers := make(chan answer, 2*perSide)
	var wg sync.WaitGroup
	for i := range 2 * perSide {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"to":"98765%05d","message":"order %d has shipped"}`, i, i)
			idemKey := ""
			if i%10 == 0 { // pairs of requests with one key, one to each gateway
				idemKey = fmt.Sprintf("k%d", i/20)
				body = fmt.Sprintf(`{"to":"9876500000","message":"key %s"}`, idemKey)
			}
			req, _ := http.NewRequest(http.MethodPost, servers[i%2].URL+"/api/v1/sms", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			if idemKey != "" {
				req.Header.Set("Idempotency-Key", idemKey)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out struct {
				MessageID string `json:"message_id"`
				CostMinor int64  `json:"cost_minor"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			answers <- answer{resp.StatusCode, out.MessageID, out.CostMinor}
		}()
	}
	wg.Wait()
	close(answers)

	paid := map[string]int64{}
	statuses := map[int]int{}
	for a := range answers {
		statuses[a.status]++
		if a.status == http.StatusOK {
			paid[a.id] = a.cost // an idempotent repeat answers the same ID
		}
	}
	var charged int64
	for _, c := range paid {
		charged += c
	}
	if charged > opening || charged != int64(len(paid))*price {
		t.Errorf("charged %d for %d messages out of an opening balance of %d", charged, len(paid), opening)
	}
	if statuses[http.StatusOK]+statuses[http.StatusPaymentRequired]+statuses[http.StatusConflict] != 2*perSide {
		t.Errorf("statuses %v: only 200, 402 and 409 (a key still in flight) are expected", statuses)
	}
	if sent := providers[0].Len() + providers[1].Len(); sent != len(paid) {
		t.Errorf("providers accepted %d messages, %d were paid for", sent, len(paid))
	}

	store := pgstoretest.Store(t, schema)
	ctx := context.Background()
	if err := store.CheckLedger(ctx, "acme"); err != nil {
		t.Errorf("ledger: %v", err)
	}
	b, err := store.Balance(ctx, "acme")
	if err != nil || b.Available.Minor != opening-charged || b.Available.Minor < 0 {
		t.Errorf("balance %v, %v; want %d", b.Available, err, opening-charged)
	}
	entries, err := store.Ledger(ctx, "acme", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{}
	for _, e := range entries {
		if refs[e.Ref] {
			t.Errorf("ref %s is in the ledger twice", e.Ref)
		}
		refs[e.Ref] = true
	}
	t.Logf("statuses %v; %d messages paid, %d paise of %d", statuses, len(paid), charged, opening)
}
