package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// TestSoak drives the HTTP gateway with mixed load (SMS, chat, e-mail,
// dual OTP, balance reads, repeated idempotency keys and bad requests)
// while providers fail at random, then checks that nothing leaks: the
// goroutines return to their starting count and the heap to within 10% of
// where it stood once the bounded stores had filled and turned over.
//
// It runs for NOTIFY_SOAK (CI: 40s) after a warm-up of a third of that.
// Without NOTIFY_SOAK it runs 2s, to keep a plain go test quick, and checks
// the goroutines only: so short a run, slower still under the race
// detector, may not fill the bounded stores, whose filling is no leak.
func TestSoak(t *testing.T) {
	duration := 2 * time.Second
	s, soak := os.LookupEnv("NOTIFY_SOAK")
	if soak {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NOTIFY_SOAK: %v", err)
		}
		duration = d
	}
	goroutinesBefore := runtime.NumGoroutine()

	// The gateway's time windows (the idempotency TTL, the OTP throttle)
	// run on this clock, so that a heap sample can be taken once every
	// window has closed (see quiesce below).
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

	accounts := memstore.NewAccounts()
	const key = "soak-key-0123456789"
	if err := accounts.Add(&notify.Account{ID: "soak", Name: "Soak", Settings: sms.Settings{SenderID: "SOAKIN"}.Map(), Currency: record.INR()}, key); err != nil {
		t.Fatal(err)
	}
	// Bounded stores: refs, settled records and idempotency keys are
	// forgotten at a steady rate, as a long-running process needs.
	const refRetention = 1 << 12
	w := memstore.NewWallet(memstore.WithRefRetention(refRetention))
	if err := w.Open("soak", notify.Money{Minor: 1 << 50, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	providers := []*memprovider.Provider{memprovider.New("sms"), memprovider.New("cloud"), memprovider.New("qr"), memprovider.New("mail")}
	for i, p := range providers {
		var mu sync.Mutex
		r := rand.New(rand.NewPCG(uint64(i), 42))
		p.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
			mu.Lock()
			x := r.IntN(10)
			mu.Unlock()
			switch x {
			case 0:
				return nil, notify.Errorf(notify.CodeUnavailable, "vendor down")
			case 1:
				return nil, notify.Errorf(notify.CodeRejected, "number blocked")
			}
			return &notify.Result{}, nil
		})
	}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	smsCh, _ := sms.New(sms.Config{Provider: providers[0], Renderer: renderer})
	chatCh, _ := chat.New(chat.Config{Cloud: providers[1], QR: providers[2], Renderer: renderer, Resolver: httpapienv.PublicDNS{}, CloudOTPTemplate: "otp_code"})
	mailCh, _ := email.New(email.Config{Provider: providers[3], Renderer: renderer})
	// The OTP throttle's window keeps per-recipient state: it is in the
	// soak so that its memory is measured too, on the test's clock.
	otp, err := memstore.NewWindowLimit(1<<30, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(w, memstore.WithMessageCapacity(2000)),
		notify.WithChannel(smsCh), notify.WithChannel(chatCh), notify.WithChannel(mailCh),
		notify.WithOTPThrottle(otp), notify.WithClock(clock),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(time.Second, memstore.WithClock(clock))),
		notify.WithRetry(notify.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}),
	)
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(n, accounts)
	if err != nil {
		t.Fatal(err)
	}

	// The server and client are made and closed inside the measured span:
	// their goroutines must be gone at the end too.
	base, client, stop := httpapienv.ServeUntil(t, h)

	bodies := []struct{ path, body string }{
		{"/sms", `{"to":"98765%05d","message":"Your order has shipped."}`},
		{"/sms", `{"numbers":"98765%05d","variables_values":"482913","route":"otp"}`},
		{"/messenger/send", `{"to":"98765%05d","otp":"482913","action":"login","brand":"Soak"}`},
		{"/messenger/send", `{"to":"98765%05d","template_slug":"order-delivered","variables":{"NAME":"Asha","ORDER_ID":"4411"}}`},
		{"/send-messenger", `{"to":"98765%05d","message":"Invoice","media_url":"https://files.example.com/i.pdf"}`},
		{"/email/send", `{"to":"user%05d@example.com","subject":"Receipt","message":"<p>Thanks</p>","purpose":"invoice"}`},
		{"/send-otp", `{"to":"98765%05d","otp":"482913","brand_name":"Soak"}`},
		{"/sms", `{"to":"12%05d","message":""}`}, // bad input
	}
	var sent, failures atomic.Int64
	load := func(until time.Time, worker int) {
		r := rand.New(rand.NewPCG(uint64(worker), 7))
		for i := 0; time.Now().Before(until); i++ {
			var req *http.Request
			if r.IntN(20) == 0 {
				req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/balance", nil)
			} else {
				b := bodies[r.IntN(len(bodies))]
				req, _ = http.NewRequest(http.MethodPost, base+"/api/v1"+b.path, strings.NewReader(fmt.Sprintf(b.body, r.IntN(100000))))
				req.Header.Set("Content-Type", "application/json")
				if r.IntN(10) == 0 {
					req.Header.Set("Idempotency-Key", fmt.Sprintf("w%d-%d", worker, r.IntN(50)))
				}
			}
			req.Header.Set("Authorization", key)
			resp, err := client.Do(req)
			if err != nil {
				failures.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sent.Add(1)
		}
	}
	run := func(d time.Duration) {
		var wg sync.WaitGroup
		until := time.Now().Add(d)
		for g := range 16 {
			wg.Add(1)
			go func() { defer wg.Done(); load(until, g) }()
		}
		wg.Wait()
		for _, p := range providers {
			p.Reset() // the capture buffers are the test's, not the gateway's
		}
	}

	// What the time-windowed state holds at a given moment follows the
	// request rate of the last window, which moves with the machine's
	// load, so the heap is compared with every window closed: the clock
	// jumps an hour ahead and one OTP request lets the throttle drop the
	// numbers gone quiet, as it does for a real gateway whose traffic
	// stops. What is left is what must stay flat: the bounded stores
	// (wallet refs, settled records), connections and caches.
	otpBody := `{"to":"9000000000","otp":"482913","brand":"Soak"}`
	quiesce := func() {
		skew.Add(int64(time.Hour))
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/messenger/send", strings.NewReader(otpBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("quiesce: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// Warm up until the bounded stores are full and the caches warm; then
	// each end of the comparison is the largest of fifteen samples taken
	// between slices of load. The bounded stores forget a generation at a
	// time (memstore's Ledger keeps between half its capacity and all of
	// it), so what they hold rises and drops like a saw, a sixth of this
	// heap from trough to peak: a leak shows as peaks that rise, and a
	// sample anywhere on the saw would judge the phase, not the leak.
	sample := func(d time.Duration) uint64 {
		var hs [15]uint64
		for i := range hs {
			run(d / time.Duration(len(hs)))
			quiesce()
			hs[i] = heapInUse()
		}
		return slices.Max(hs[:])
	}
	// A warm-up by the clock alone left the stores short of full on a
	// busy machine now and then, and the start sample low: first the
	// load runs until the stores have turned over (four times the refs
	// the wallet keeps, which is more sends than the ledger keeps
	// records), in bounded slices.
	const fill = 4 * refRetention
	for i := 0; sent.Load() < fill; i++ {
		if i == 60 {
			t.Fatalf("warm-up: %d requests in a minute, short of the %d that fill the stores", sent.Load(), fill)
		}
		run(time.Second)
	}
	// Then a third of the soak runs unsampled, so that what grows to a
	// level set by the busiest moment so far (a map at its largest, a
	// buffer pool) has grown before the start sample; a leak grows with
	// every request, and shows between the two samples all the same.
	warmup := max(duration/3, 2*time.Second)
	run(warmup)
	heapStart := sample(duration / 3)
	run(duration / 3)
	heapEnd := sample(duration / 3)
	stop()

	if failures.Load() > 0 {
		t.Errorf("%d requests failed at the transport", failures.Load())
	}
	// A couple of seconds may not fill the bounded stores, so the heap is
	// judged on real soaks (NOTIFY_SOAK) only.
	if growth := float64(heapEnd)/float64(heapStart) - 1; soak && growth > 0.10 {
		t.Errorf("heap grew %.1f%%: %d -> %d bytes over %v", 100*growth, heapStart, heapEnd, duration)
	}
	// Goroutines of closed connections end asynchronously; give them a
	// bounded moment.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutinesBefore && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > goroutinesBefore {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", goroutinesBefore, after, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d requests in %v; heap %d -> %d bytes", sent.Load(), warmup+duration, heapStart, heapEnd)
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
