package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

// The scaling curve: how many sends a second one PostgreSQL carries from
// 1, 2 and 4 gateway processes (the built binary, sharing one schema),
// beside the database's own ceiling at the same concurrency.
const (
	// scalingClients is how many HTTP clients send at once, spread
	// evenly over the gateways, and how many goroutines run the bare
	// transaction of the ceiling.
	scalingClients = 32
	// scalingSends is how many sends each level of the curve makes.
	scalingSends = 3000
	scalingKey   = "scaling-test-key-0123456789"
)

// BenchmarkScaling runs scalingSends SMS sends through the HTTP API of 1,
// 2 and 4 gateway processes on one PostgreSQL schema (the demo account's
// wallet shared, its records in one table), each process with the
// default pool (16 connections) and no queue workers, against a loopback
// vendor (smsgatewaytest) that answers at once, from scalingClients
// clients spread over the processes; and, beside them, PostgreSQL's
// ceiling for a durable charge at that concurrency: scalingSends bare
// transactions (an UPDATE of a wallet and an INSERT of a ledger row, as
// pgstore's BenchmarkPipelineSend's baseline) from scalingClients
// goroutines, one wallet each. It reports sends/s per level
// (1-gateway-sends/s, 2-gateways-sends/s, 4-gateways-sends/s) and
// bare-tx/s. Run it with -benchtime 1x; without PostgreSQL it is
// skipped.
func BenchmarkScaling(b *testing.B) {
	bin := buildGateway(b)
	dbURL := schemaURL(b)
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1", Balance: 1 << 50})
	defer vendor.Close()
	env := []string{"NOTIFY_API_KEY=" + scalingKey, "NOTIFY_BALANCE=10000000", "NOTIFY_SMS_URL=" + vendor.URL,
		"NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_DATABASE_URL=" + dbURL, "NOTIFY_RATE_LIMIT=1000000",
		"NOTIFY_WORKERS=0", "NOTIFY_BREAKER=off"}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: scalingClients}}
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	b.ResetTimer()
	for range b.N {
		for _, n := range []int{1, 2, 4} {
			rate := gatewaysRate(b, bin, env, client, pool, n)
			b.ReportMetric(rate, fmt.Sprintf("%d-gateway%s-sends/s", n, map[bool]string{true: "s"}[n > 1]))
		}
		b.ReportMetric(bareRate(b, pool), "bare-tx/s")
	}
	b.ReportMetric(0, "ns/op") // the rates say it
}

// gatewaysRate starts n gateways on env, sends scalingSends SMS through
// them and returns sends per second, from the first request to the last
// answer; the gateways are killed before it returns.
func gatewaysRate(b *testing.B, bin string, env []string, client *http.Client, pool *pgxpool.Pool, n int) float64 {
	b.Helper()
	gws := make([]*process, n)
	for i := range gws {
		gws[i] = startProcess(b, bin, env...)
	}
	vacuum(b, pool) // the tables exist once a gateway has migrated
	defer func() {
		for _, p := range gws {
			p.kill(b)
		}
	}()
	return scalingRun(b, func(c int, i int64) error { return scalingSend(client, gws[c%n].base, i) })
}

// scalingRun makes scalingSends calls of op shared among scalingClients
// goroutines (op gets its goroutine's number and a call number from 1)
// and returns them per second; a call's error fails b and stops its
// goroutine.
func scalingRun(b *testing.B, op func(c int, i int64) error) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range scalingClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > scalingSends {
					return
				}
				if err := op(c, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return scalingSends / time.Since(start).Seconds()
}

// scalingSend sends the i-th SMS through the gateway at base, and fails
// unless it was sent.
func scalingSend(client *http.Client, base string, i int64) error {
	body := fmt.Sprintf(`{"to":"98%08d","message":"order %d has shipped"}`, i%100_000_000, i)
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/sms", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", scalingKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `"sent"`) {
		return fmt.Errorf("send %d: %d %s", i, resp.StatusCode, out)
	}
	return nil
}

// bareRate runs scalingSends bare transactions from scalingClients
// goroutines, each on a wallet of its own in the gateways' schema, and
// returns them per second.
func bareRate(b *testing.B, pool *pgxpool.Pool) float64 {
	b.Helper()
	ctx := context.Background()
	for c := range scalingClients {
		if _, err := pool.Exec(ctx, `INSERT INTO notify_wallets (account, currency_code, currency_symbol, currency_exponent, balance, opening)
			VALUES ($1, 'INR', '₹', 2, 1000000000, 1000000000) ON CONFLICT DO NOTHING`, fmt.Sprintf("bare-%d", c)); err != nil {
			b.Fatal(err)
		}
	}
	cfg := pool.Config()
	cfg.MaxConns = scalingClients
	bare, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()
	return scalingRun(b, func(c int, i int64) error {
		account := fmt.Sprintf("bare-%d", c)
		return pgx.BeginFunc(ctx, bare, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE notify_wallets SET balance = balance - 1 WHERE account = $1`, account); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO notify_ledger (account, ref, amount, balance_after) VALUES ($1, $2, -1, 0)`,
				account, fmt.Sprintf("bare-%d", i))
			return err
		})
	})
}

// vacuum vacuums and analyzes the tables a level's sends use, before
// it, as autovacuum would in service: the test server runs without it
// (as CI's does), so a level would otherwise pay for the last one's dead
// rows, and the first plan its moves without statistics (PostgreSQL then
// finds a record by the account's index, reading every record of the
// account, where it finds it by its ID once it knows the table).
func vacuum(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	for _, t := range []string{"notify_wallets", "notify_messages", "notify_ledger", "notify_api_keys", "notify_accounts"} {
		if _, err := pool.Exec(context.Background(), "VACUUM ANALYZE "+t); err != nil {
			b.Fatal(err)
		}
	}
}
