package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/accountcache"
	"github.com/notifykit/notify/verify/verifystore"
	"github.com/notifykit/notify/wallet"
)

const (
	// benchWorkers is the number of goroutines debiting at once.
	benchWorkers = 16
	// benchRounds is how many alternating rounds of store and baseline
	// debits one benchmark run is cut into, so that load from elsewhere on
	// the machine falls on both alike.
	benchRounds = 10
)

// BenchmarkDebit measures debits per second from 16 goroutines, on one
// account (every debit queues for the same row) and on 16 accounts (one
// per goroutine), beside a baseline measured in the same run: a bare
// "UPDATE wallets SET balance = balance - $1" through the same pool, the
// least any correct store must do. The two alternate in rounds; the run
// reports store-debits/s, bare-debits/s and their ratio.
func BenchmarkDebit(b *testing.B) {
	s, pool := benchStore(b)
	ctx := context.Background()
	const opening = 1_000_000_000_000_000
	// The baseline gets wallets of its own: its updates bypass the ledger.
	for _, prefix := range []string{"store-", "bare-"} {
		openWallet(b, s, prefix+"hot", opening)
		for g := range benchWorkers {
			openWallet(b, s, fmt.Sprintf("%sacct-%d", prefix, g), opening)
		}
	}

	for _, accounts := range []struct {
		name    string
		account func(g int) string
	}{
		{"one-account", func(int) string { return "hot" }},
		{"16-accounts", func(g int) string { return fmt.Sprintf("acct-%d", g) }},
	} {
		b.Run(accounts.name, func(b *testing.B) {
			run := pgstoretest.RandomName("r")
			store := func(g, i int) error {
				_, err := s.Debit(ctx, "store-"+accounts.account(g), inr(1), fmt.Sprintf("%s-%d", run, i))
				return err
			}
			bare := func(g, i int) error { return bareDebit(ctx, pool, "bare-"+accounts.account(g)) }
			compareRates(b, pool, side{store, []string{"notify_wallets"}}, side{bare, []string{"notify_wallets"}},
				"store-debits/s", "bare-debits/s")
		})
	}
	checkLedger(b, s, "store-hot")
	for g := range benchWorkers {
		checkLedger(b, s, fmt.Sprintf("store-acct-%d", g))
	}
}

// side is one side of a comparison: op, made once per operation, and the
// tables whose rows it updates, which are vacuumed after each of its
// rounds, within its time. The test server runs without autovacuum (as
// CI's does), and a server in service vacuums the dead row versions
// updates leave: without this the side that leaves more of them (a
// record's moves) would be measured against ever more, and would not pay
// for removing them. The ledger is only inserted into, by both sides,
// and leaves none.
type side struct {
	op     func(g, i int) error
	tables []string
}

// round makes per operations of s from first on and vacuums its tables,
// and returns how long that took.
func (s side) round(b *testing.B, pool *pgxpool.Pool, first, per int) time.Duration {
	d := runWorkers(b, first, per, s.op)
	start := time.Now()
	for _, table := range s.tables {
		if _, err := pool.Exec(context.Background(), "VACUUM "+table); err != nil {
			b.Fatal(err)
		}
	}
	return d + time.Since(start)
}

// compareRates runs b.N calls of ours and of baseline, in alternating
// rounds (so that load from elsewhere on the machine falls on both alike),
// and reports the rate of each under its unit and their ratio.
func compareRates(b *testing.B, pool *pgxpool.Pool, ours, baseline side, oursUnit, baselineUnit string) {
	per := max(b.N/benchRounds, 1)
	var oursTime, baselineTime time.Duration
	b.ResetTimer()
	for r := range benchRounds {
		if r%2 == 0 {
			oursTime += ours.round(b, pool, r*per, per)
			baselineTime += baseline.round(b, pool, r*per, per)
		} else {
			baselineTime += baseline.round(b, pool, r*per, per)
			oursTime += ours.round(b, pool, r*per, per)
		}
	}
	b.StopTimer()
	n := float64(per * benchRounds)
	oursRate, baselineRate := n/oursTime.Seconds(), n/baselineTime.Seconds()
	b.ReportMetric(oursRate, oursUnit)
	b.ReportMetric(baselineRate, baselineUnit)
	b.ReportMetric(oursRate/baselineRate, "ratio")
	b.ReportMetric(0, "ns/op") // two kinds of op are mixed: the rates say it
}

func bareDebit(ctx context.Context, pool *pgxpool.Pool, account string) error {
	_, err := pool.Exec(ctx, `UPDATE notify_wallets SET balance = balance - $1 WHERE account = $2`, int64(1), account)
	return err
}

// benchStore is a migrated store in a schema of its own, on a pool with
// a connection for each of the benchWorkers goroutines.
func benchStore(b *testing.B) (*pgstore.Store, *pgxpool.Pool) {
	pool := pgstoretest.Pool(b, pgstoretest.Schema(b), benchWorkers)
	s, err := pgstore.New(pool)
	must(b, err)
	must(b, s.Migrate(context.Background()))
	return s, pool
}

// runWorkers makes n calls of op shared among benchWorkers goroutines and
// returns how long they took; op gets its goroutine's number and a call
// number, from first on, unique in the round.
func runWorkers(b *testing.B, first, n int, op func(g, i int) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(g, first+i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkPipelineSend measures SMS sends per second through the whole
// Notifier on PostgreSQL (16 goroutines, one account each): the account
// read, the SMS channel, pricing, the money, and the vendor (memprovider),
// with pgstore as its store.Ledger: the record opened attempting with its
// debit, one statement, and moved to sent after the vendor call, another.
// "records" reads accounts through an accountcache.Cache (a one-second
// TTL), as an application sending at this rate would; "records-uncached"
// reads each send's account from PostgreSQL, a third round trip. Each is
// measured beside a baseline, in alternating rounds of the same run: the
// least a durable charge can cost, a bare transaction of one UPDATE of a
// wallet and one INSERT of a ledger row.
func BenchmarkPipelineSend(b *testing.B) {
	s, pool := benchStore(b)
	ctx := context.Background()
	const opening = 1_000_000_000_000_000
	for g := range benchWorkers {
		acct := &notify.Account{ID: fmt.Sprintf("send-%d", g), Currency: record.INR()}
		must(b, sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN"}))
		must(b, s.PutAccount(ctx, acct))
		openWallet(b, s, fmt.Sprintf("send-%d", g), opening)
		openWallet(b, s, fmt.Sprintf("bare-%d", g), opening)
	}
	cached, err := accountcache.New(s, accountcache.WithTTL(time.Second))
	must(b, err)
	for _, bench := range []struct {
		name     string
		accounts store.Accounts
	}{{"records", cached}, {"records-uncached", s}} {
		b.Run(bench.name, func(b *testing.B) {
			p := memprovider.New("mem")
			ch, err := sms.New(sms.Config{Provider: p})
			must(b, err)
			n, err := notify.New(bench.accounts, s, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))
			must(b, err)
			run := pgstoretest.RandomName("r")
			send := func(g, i int) error {
				if i%4096 == 0 {
					p.Reset() // the capture buffer is for tests; keep memory flat
				}
				_, err := n.Send(ctx, &sms.Request{Account: fmt.Sprintf("send-%d", g), To: "9876543210", Message: "Your order has shipped."})
				return err
			}
			bare := func(g, i int) error {
				return bareCharge(ctx, pool, fmt.Sprintf("bare-%d", g), fmt.Sprintf("%s-%d", run, i))
			}
			compareRates(b, pool, side{send, []string{"notify_wallets", "notify_messages"}},
				side{bare, []string{"notify_wallets"}}, "pipeline-sends/s", "bare-tx/s")
		})
	}
	for g := range benchWorkers {
		checkLedger(b, s, fmt.Sprintf("send-%d", g))
	}
}

// bareCharge is the baseline of BenchmarkPipelineSend: one transaction of
// one UPDATE and one INSERT.
func bareCharge(ctx context.Context, pool *pgxpool.Pool, account, ref string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE notify_wallets SET balance = balance - 1 WHERE account = $1`, account); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO notify_ledger (account, ref, amount, balance_after) VALUES ($1, $2, -1, 0)`, account, ref)
		return err
	})
}

// BenchmarkTakeCheck measures the store's side of checking a code, from
// 16 goroutines, each on verifications of its own: one TakeCheck (the
// conditional UPDATE that counts the check) and one FinishVerification
// (the conditional UPDATE that approves it), as verify.Service.Check
// makes for a right code. The verifications are created before the
// timer starts. It reports flows/s and the latency of one flow (both
// calls) at the 50th and 99th percentiles, in milliseconds.
func BenchmarkTakeCheck(b *testing.B) {
	s, pool := benchStore(b)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	run := pgstoretest.RandomName("r")
	_, err := pool.Exec(ctx, `INSERT INTO notify_verifications (id, account, recipient, purpose, channels,
		code_hash, length, status, checks, max_checks, sends, max_sends, prefix, country,
		created_at, expires_at, last_sent_at, updated_at)
		SELECT $1 || '-' || i, 'acme', '+9198765' || lpad(i::text, 5, '0'), 'login', '{sms}',
			sha256(i::text::bytea), 6, 'pending', 0, 5, 1, 3, '+9198765', 'IN', $2, $3, $2, $2
		FROM generate_series(0, $4 - 1) i`, run, now, now.Add(10*time.Minute), b.N)
	must(b, err)
	_, err = pool.Exec(ctx, `VACUUM ANALYZE notify_verifications`)
	must(b, err)
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	d := runWorkers(b, 0, b.N, func(g, i int) error {
		id := fmt.Sprintf("%s-%d", run, i)
		start := time.Now()
		v, ok, err := s.TakeCheck(ctx, "acme", id, now)
		if err != nil {
			return err
		}
		if !ok || v.Checks != 1 {
			return fmt.Errorf("TakeCheck(%s) = %v, checks %d", id, ok, v.Checks)
		}
		if _, ok, err := s.FinishVerification(ctx, "acme", id, verifystore.VerificationApproved, now); err != nil || !ok {
			return fmt.Errorf("FinishVerification(%s) = %v, %v", id, ok, err)
		}
		lat[i] = time.Since(start)
		return nil
	})
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/d.Seconds(), "flows/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
