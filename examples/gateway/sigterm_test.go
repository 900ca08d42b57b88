package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// TestSIGTERMWith500InFlight builds the gateway, runs it as its own
// process on PostgreSQL, puts 500 SMS sends in flight (the first hundred
// held at the vendor), sends it a real SIGTERM and then lets the vendor
// answer. Every request must either get its answer or never be charged:
// the charges that stand in the ledger afterwards are exactly the
// messages answered 200, and the vendor accepted exactly those.
// Skipped without PostgreSQL (see pgstoretest) or with -short.
func TestSIGTERMWith500InFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	t.Parallel() // beside the other tests of the built binary
	takeCrashSlot(t)
	dbURL := schemaURL(t)

	const requests, held = 500, 100
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1", Balance: 1 << 40})
	t.Cleanup(vendor.Close)
	target, _ := url.Parse(vendor.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var arrived atomic.Int32
	reached, release := make(chan struct{}), make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == held {
			close(reached)
		}
		<-release
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	const key = "sigterm-test-key-0123456789"
	gw := startProcess(t, buildGateway(t), "NOTIFY_API_KEY="+key, "NOTIFY_BALANCE=1000",
		"NOTIFY_SMS_URL="+gate.URL, "NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_DATABASE_URL="+dbURL,
		"NOTIFY_RATE_LIMIT=1000")
	base := gw.base

	type result struct {
		status int
		id     string
		err    error
	}
	endTurn := loadTurn(t)
	results := make([]result, requests)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: requests}}
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"to":"98%08d","message":"order %d has shipped"}`, i, i)
			req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/sms", strings.NewReader(body))
			req.Header.Set("Authorization", key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			var out struct {
				MessageID string `json:"message_id"`
			}
			results[i].status = resp.StatusCode
			results[i].err = json.NewDecoder(resp.Body).Decode(&out)
			results[i].id = out.MessageID
		}()
	}

	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatalf("only %d sends reached the vendor", arrived.Load())
	}
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	gw.out.waitForWithin(t, "listener closed", 30*time.Second)
	releaseOnce.Do(func() { close(release) })
	wg.Wait()
	endTurn()
	if !gw.wait(60 * time.Second) {
		t.Fatal("the gateway did not exit")
	}
	if gw.err != nil {
		t.Fatalf("the gateway exited with %v", gw.err)
	}

	answered := map[string]bool{}
	statuses := map[int]int{}
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
			continue
		}
		statuses[r.status]++
		if r.status == http.StatusOK {
			answered[r.id] = true
		}
	}
	if len(answered) < held {
		t.Errorf("only %d sends were answered 200; the %d held at the vendor must all finish", len(answered), held)
	}

	ctx := context.Background()
	store, err := pgstore.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	entries, err := store.Ledger(ctx, demoAccount, 0, 10*requests)
	if err != nil {
		t.Fatal(err)
	}
	debits, refunds := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Ref, "refund:"); ok {
			refunds[id] = true
		} else if e.Amount.Minor < 0 {
			debits[e.Ref] = true
		}
	}
	standing := 0
	for id := range debits {
		if refunds[id] {
			continue
		}
		standing++
		if !answered[id] {
			t.Errorf("message %s is charged but its request got no 200 answer", id)
		}
	}
	if standing != len(answered) || vendor.Accepted() != len(answered) {
		t.Errorf("%d answered 200, %d charges stand, the vendor accepted %d", len(answered), standing, vendor.Accepted())
	}
	if err := store.CheckLedger(ctx, demoAccount); err != nil {
		t.Errorf("ledger: %v", err)
	}
	t.Logf("%d requests: %d answered %v, %d refused or cut off; %d charges stand", requests, requests-failed, statuses, failed, standing)
}
