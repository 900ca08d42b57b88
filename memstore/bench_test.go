package memstore

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// benchGoroutines is the number of goroutines every debit benchmark runs
// (at least; RunParallel starts a multiple of GOMAXPROCS).
const benchGoroutines = 8

// refBatch is how many refs a goroutine claims at a time, so that handing
// out refs costs both benchmarks the same and almost nothing.
const refBatch = 256

// debitBench runs debit(ref) b.N times on benchGoroutines goroutines, each
// call with a unique ref built before the timer starts.
func debitBench(b *testing.B, debit func(ref string) error) {
	refs := make([]string, b.N+benchGoroutines*refBatch)
	for i := range refs {
		refs[i] = "msg-" + strconv.Itoa(i)
	}
	var next atomic.Int64
	// RunParallel starts p*GOMAXPROCS goroutines; round up so that there
	// are at least benchGoroutines, whatever the machine.
	b.SetParallelism((benchGoroutines + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	cpu0, cpuOK := cpuTime()
	b.ResetTimer()
	defer func() {
		b.StopTimer()
		// On a shared machine the CPU time the process spent is a steadier
		// measure than the wall time.
		if cpu1, ok := cpuTime(); ok && cpuOK {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}()
	b.RunParallel(func(pb *testing.PB) {
		var i, end int64
		for pb.Next() {
			if i == end {
				end = next.Add(refBatch)
				i = end - refBatch
			}
			if err := debit(refs[i]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// mutexWallet is the baseline: a bare mutex-guarded int64 with the same
// insufficient-funds check as Wallet.Debit.
type mutexWallet struct {
	mu      sync.Mutex
	balance int64
}

var errShort = errors.New("insufficient funds")

func (m *mutexWallet) debit(amount int64, _ string) (int64, error) {
	m.mu.Lock()
	if m.balance < amount {
		m.mu.Unlock()
		return 0, errShort
	}
	m.balance -= amount
	b := m.balance
	m.mu.Unlock()
	return b, nil
}

// BenchmarkDebitParallel debits one account from 8 goroutines, each debit
// with a unique ref, on Wallet (default, and with two ref retentions)
// beside the baseline, a bare mutex-guarded int64 with the same
// insufficient-funds check, in the same run:
//
//	go test -run '^$' -bench DebitParallel -benchtime 200000x -count 6 ./memstore
//
// The baseline ignores the refs; Wallet must hash each one, find it
// absent in its ref table and record it, which is where the difference
// lies (see the Wallet documentation for the memory it costs).
func BenchmarkDebitParallel(b *testing.B) {
	b.Run("baseline=mutex-int64", func(b *testing.B) {
		m := &mutexWallet{balance: math.MaxInt64}
		debitBench(b, func(ref string) error {
			_, err := m.debit(25, ref)
			return err
		})
	})
	for _, v := range []struct {
		name string
		opts []WalletOption
	}{
		{"memstore", nil},
		{"memstore-retain64k", []WalletOption{WithRefRetention(1 << 16)}},
		{"memstore-retain4k", []WalletOption{WithRefRetention(1 << 12)}},
	} {
		b.Run(v.name, func(b *testing.B) {
			w := NewWallet(v.opts...)
			if err := w.Open("acme", notify.Money{Minor: math.MaxInt64, Currency: record.INR()}); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			price := notify.Money{Minor: 25, Currency: record.INR()}
			debitBench(b, func(ref string) error {
				_, err := w.Debit(ctx, "acme", price, ref)
				return err
			})
		})
	}
}
