package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/metrics"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// An application registers the Observer on a registry of its own, hands
// it to the Notifier, and serves the registry with promhttp.
func Example() {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}

	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()),
		notify.WithObserver(obs))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Your order has shipped."})

	// What GET /metrics would answer (http.Handle("/metrics", h) in an
	// application).
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "notify_sends_total") || strings.HasPrefix(line, "notify_charged") {
			fmt.Println(line)
		}
	}
	// Output:
	// notify_charged_minor_total{currency="INR"} 25
	// notify_sends_total{kind="sms",outcome="sent",provider="mem"} 1
}
