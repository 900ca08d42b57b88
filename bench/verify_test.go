package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/verify"
	"github.com/notifykit/notify/verify/verifystore"
)

var verifySecret = []byte("bench-secret-bench-secret-bench-secret!!")

// The pumping simulator's traces. The attack: 10,000 requests in one hour
// for 1,000 numbers in 10 ranges of 100 (an attacker paid per message by
// the operators of those ranges), each from one of 5,000 addresses, none
// ever entering a code. The legitimate trace: 10,000 requests over a day
// for numbers spread over the whole Indian mobile space, of which 75%
// enter the right code 20 to 90 seconds later and 5% ask for a second
// code a minute after the first.
const (
	attackRequests = 10_000
	attackNumbers  = 1_000
	attackRanges   = 10
	legitRequests  = 10_000
	legitConverts  = 75 // percent
	// simSpendCap is the guard's cap per account and hour, in paise: well
	// above the legitimate trace's hourly spend (about 420 dual sends).
	simSpendCap = 100_000
)

// simEvent is one request of a trace, at its time.
type simEvent struct {
	at        time.Duration // since the start of the day
	to        string
	requester string
	attack    bool
	converts  bool // a legitimate user who enters the code
}

// simTraces returns both traces, merged in time order.
func simTraces(r *rand.Rand) []simEvent {
	var evs []simEvent
	ranges := make([]string, attackRanges)
	for i := range ranges {
		ranges[i] = fmt.Sprintf("9%06d", 100_000+r.IntN(800_000)) // 7 digits: 1,000 numbers each
	}
	numbers := make([]string, attackNumbers)
	for i := range numbers {
		numbers[i] = ranges[i%attackRanges] + fmt.Sprintf("%03d", r.IntN(100)*10+i/100%10)
	}
	attackStart := 6 * time.Hour
	for i := range attackRequests {
		evs = append(evs, simEvent{at: attackStart + time.Duration(i)*time.Hour/attackRequests,
			to: numbers[r.IntN(len(numbers))], requester: fmt.Sprintf("bot-%d", r.IntN(5_000)), attack: true})
	}
	for i := range legitRequests {
		at := time.Duration(r.Int64N(int64(24 * time.Hour)))
		to := fmt.Sprintf("%d%09d", 6+r.IntN(4), r.IntN(1_000_000_000))
		who := fmt.Sprintf("user-%d", i)
		evs = append(evs, simEvent{at: at, to: to, requester: who, converts: r.IntN(100) < legitConverts})
		if r.IntN(100) < 5 { // asked again: a second code a minute later
			evs = append(evs, simEvent{at: at + time.Minute, to: to, requester: who, converts: r.IntN(100) < legitConverts})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	return evs
}

// simResult is what a replay measured.
type simResult struct {
	attackSent, attackBlocked, legitSent, legitBlocked int
	attackSpend                                        int64
	maxPerRange                                        int
	byRule                                             map[verify.Rule]int
	unnamed                                            int
}

// replay runs the traces through a Service with guard cfg, on a clock of
// its own: each request at its time, each code entered when its user
// enters it.
func replay(b *testing.B, cfg verify.GuardConfig) simResult {
	b.Helper()
	kit := notifytest.New(b, notifytest.WithBalance(1<<50))
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	cfg.Counters = memstore.NewCounters()
	guard, err := verify.NewGuard(cfg)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := verify.New(verify.Config{Notifier: kit.Notifier, Accounts: kit.Accounts, Store: memstore.NewVerifications(),
		Secret: verifySecret, Guard: guard, Now: func() time.Time { return clock }})
	if err != nil {
		b.Fatal(err)
	}
	type pending struct {
		at       time.Duration
		id, code string
	}
	var checks []pending // in time order of entry
	res := simResult{byRule: map[verify.Rule]int{}}
	perRange := map[string]int{}
	ctx := context.Background()
	day := clock
	for _, ev := range simTraces(rand.New(rand.NewPCG(1, 2))) {
		for len(checks) > 0 && checks[0].at <= ev.at { // the codes entered by now
			c := checks[0]
			checks = checks[1:]
			clock = day.Add(c.at)
			if r, err := svc.Check(ctx, notifytest.AccountID, c.id, c.code); err != nil || !r.Approved() {
				b.Fatalf("a legitimate check: %+v, %v", r, err)
			}
		}
		clock = day.Add(ev.at)
		v, err := svc.Start(ctx, notifytest.AccountID, ev.to, verify.StartOptions{Requester: ev.requester})
		var refusal *verify.Refusal
		switch {
		case err != nil && errors.As(err, &refusal):
			res.byRule[refusal.Rule]++
			if ev.attack {
				res.attackBlocked++
			} else {
				res.legitBlocked++
			}
			continue
		case err != nil:
			res.unnamed++
			continue
		}
		var cost int64
		for _, l := range v.Legs {
			cost += l.Cost.Minor
		}
		if ev.attack {
			res.attackSent++
			res.attackSpend += cost
			perRange[v.To[:len(v.To)-3]]++
		} else {
			res.legitSent++
			if ev.converts {
				code := kit.LastSMS(b).Content.(*sms.Message).OTP
				at := ev.at + 20*time.Second + time.Duration(rand.N(70))*time.Second
				i, _ := slices.BinarySearchFunc(checks, at, func(p pending, t time.Duration) int { return int(p.at - t) })
				checks = slices.Insert(checks, i, pending{at: at, id: v.ID, code: code})
			}
		}
		kit.SMS.Reset()
		kit.Cloud.Reset()
	}
	for _, n := range perRange {
		res.maxPerRange = max(res.maxPerRange, n)
	}
	return res
}

// BenchmarkVerifyPumping replays the pumping simulator's traces through
// the fraud guard with its defaults and the spend cap, and reports what
// share of each trace it blocked, the most sends any attacked range got,
// and the attack's spend against the cap. A second replay turns every
// rule but the cap off, to show the cap alone bounds the spend. Any
// refusal that names no rule fails the benchmark.
func BenchmarkVerifyPumping(b *testing.B) {
	for range b.N {
		res := replay(b, verify.GuardConfig{SpendCap: simSpendCap})
		capped := replay(b, verify.GuardConfig{SpendCap: simSpendCap,
			Requester: verify.Limit{Max: -1}, Recipient: verify.Limit{Max: -1}, Prefix: verify.Limit{Max: -1},
			Conversion: verify.Conversion{Off: true}})
		if res.unnamed+capped.unnamed > 0 {
			b.Fatalf("%d refusals named no rule", res.unnamed+capped.unnamed)
		}
		b.ReportMetric(100*float64(res.attackBlocked)/attackRequests, "pump-blocked-%")
		b.ReportMetric(100*float64(res.legitBlocked)/float64(res.legitBlocked+res.legitSent), "legit-blocked-%")
		b.ReportMetric(float64(res.maxPerRange), "max-sends/range")
		b.ReportMetric(float64(res.attackSpend), "attack-spend-paise")
		b.ReportMetric(float64(capped.attackSpend), "cap-only-attack-spend-paise/h")
		b.ReportMetric(simSpendCap, "spend-cap-paise/h")
		if testing.Verbose() {
			b.Logf("defaults: %+v; cap only: %+v", res, capped)
		}
	}
}

// checkLatency measures Check on verifications kept in vs, one check per
// op (a wrong code, so each verification takes many), and reports p50
// and p99 in microseconds.
func checkLatency(b *testing.B, vs verifystore.Verifications) {
	kit := notifytest.New(b, notifytest.WithBalance(1<<50))
	svc, err := verify.New(verify.Config{Notifier: kit.Notifier, Accounts: kit.Accounts, Store: vs, Secret: verifySecret,
		MaxChecks: 100})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for i := range 64 {
		v, err := svc.Start(ctx, notifytest.AccountID, fmt.Sprintf("98765%05d", i), verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		id := ids[i%len(ids)]
		if i > 0 && i%(len(ids)*90) == 0 { // before they run out of checks
			b.StopTimer()
			for j := range ids {
				v, err := svc.Start(ctx, notifytest.AccountID, fmt.Sprintf("98766%05d", (i+j)%100_000), verify.StartOptions{Channels: []verify.Channel{verify.SMS}})
				if err != nil {
					b.Fatal(err)
				}
				ids[j] = v.ID
			}
			kit.SMS.Reset()
			b.StartTimer()
			id = ids[0]
		}
		t0 := time.Now()
		r, err := svc.Check(ctx, notifytest.AccountID, id, "000000") // right one time in a million
		lat = append(lat, time.Since(t0))
		if err != nil || r.Status != verify.StatusPending && !r.Approved() {
			b.Fatalf("check: %+v, %v", r, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkVerifyCheck measures a check's latency on memstore, and on
// pgstore when PostgreSQL is at hand (verify_pg_test.go).
func BenchmarkVerifyCheck(b *testing.B) {
	b.Run("memstore", func(b *testing.B) { checkLatency(b, memstore.NewVerifications()) })
	b.Run("pgstore", func(b *testing.B) { checkLatency(b, pgVerifications(b)) })
}

// pgVerifications returns pgstore's verifications in a fresh schema, or
// skips b without PostgreSQL.
func pgVerifications(b *testing.B) verifystore.Verifications {
	return pgstoretest.Store(b, pgstoretest.Schema(b))
}
