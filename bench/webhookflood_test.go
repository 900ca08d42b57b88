package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/cloudchat"
)

// The forged-report flood of BenchmarkWebhookFlood: cloud-chat status
// notifications of 900 KiB (the size measured in the field), sent at
// what a 1 Gbit/s uplink carries, ~135 a second, from up to 16
// connections at once.
const (
	floodBody    = 900 << 10
	floodRate    = 1_000_000_000 / 8 / floodBody
	floodWorkers = 16
	// sendWorkers send SMS concurrently, each waiting for its answer.
	sendWorkers = 4
	floodKey    = "bench-key-0123456789abcdef"
)

// floodEnv is one http.Server carrying both the API (POST /api/v1/sms,
// the whole send pipeline onto memprovider) and the cloud-chat
// delivery-report receiver at /webhooks/cloudchat, as the example
// gateway mounts them.
type floodEnv struct {
	url  string
	sms  *http.Client
	mem  interface{ Reset() }
	body []byte // a forged report
}

func newFloodEnv(b *testing.B) *floodEnv {
	b.Helper()
	n, p := newPipeline(b)
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", VendorID: "ACMEIN", Currency: notify.INR()}, floodKey); err != nil {
		b.Fatal(err)
	}
	api, err := httpapi.New(n, accounts, httpapi.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	hook, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{Reporter: n, AppSecret: hex.EncodeToString(secret)})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/cloudchat", hook)
	mux.Handle("/", api)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	// A status notification as the vendor shapes it, padded to size.
	head := `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"statuses":[{"id":"wamid.forged","status":"failed","recipient_id":"919876543210","biz_opaque_callback_data":"`
	tail := `"}]}}]}]}`
	body := head + strings.Repeat("x", floodBody-len(head)-len(tail)) + tail
	return &floodEnv{url: "http://" + ln.Addr().String(), sms: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		mem: p, body: []byte(body)}
}

var floodSMS = []byte(`{"to":"9876543210","message":"Your order 4711 has shipped and will arrive tomorrow.","sender_id":"ACMEIN","route":"sms","domain":"shop.example"}`)

// sends makes len(lat) sends from sendWorkers goroutines, storing each
// latency.
func (e *floodEnv) sends(b *testing.B, lat []time.Duration) {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range sendWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				t0 := time.Now()
				req, _ := http.NewRequest(http.MethodPost, e.url+"/api/v1/sms", bytes.NewReader(floodSMS))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", floodKey)
				resp, err := e.sms.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d sends failed", f, len(lat))
	}
}

// flood posts forged reports at floodRate until stop is closed, each
// signed as sign says ("" for no signature header), and counts them and
// the answers that are not 401 or 413.
func (e *floodEnv) flood(stop <-chan struct{}, sign string, sent, wrong *atomic.Int64) (wait func()) {
	// Its own transport: the flooder is another client than the app.
	tr := &http.Transport{MaxIdleConnsPerHost: floodWorkers}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	tick := time.NewTicker(time.Second / floodRate)
	var wg sync.WaitGroup
	for range floodWorkers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				req, _ := http.NewRequest(http.MethodPost, e.url+"/webhooks/cloudchat", bytes.NewReader(e.body))
				req.Header.Set("Content-Type", "application/json")
				if sign != "" {
					req.Header.Set("X-Hub-Signature-256", sign)
				}
				sent.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					continue // a receiver that hangs up on a forgery is fine
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusRequestEntityTooLarge {
					wrong.Add(1)
				}
			}
		})
	}
	return func() {
		wg.Wait()
		tick.Stop()
		tr.CloseIdleConnections()
	}
}

// BenchmarkWebhookFlood measures the latency of sends (POST /api/v1/sms
// through httpapi and the whole pipeline, sendWorkers at a time) with and
// without a flood of forged 900 KiB cloud-chat reports reaching the
// webhook receiver on the same server, alternating in rounds so that
// other load on the machine falls on both alike. Each op is one send in
// each. The floods: unsigned, no X-Hub-Signature-256 at all; and
// bad-signature, a header of the right shape whose MAC is wrong, which
// cannot be told from the vendor's without reading the body. Report:
// quiet-p95-µs, flood-p95-µs, their ratio (target <= 1.2) and the forged
// reports a second that reached the server.
func BenchmarkWebhookFlood(b *testing.B) {
	for _, c := range []struct{ name, sign string }{
		{"unsigned", ""},
		{"bad-signature", "sha256=" + strings.Repeat("0f", 32)},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newFloodEnv(b)
			e.sends(b, make([]time.Duration, 4*sendWorkers)) // warm the connections

			quiet := make([]time.Duration, b.N)
			flooded := make([]time.Duration, b.N)
			round := max(b.N/6, 64)
			var sent, wrong atomic.Int64
			var floodTime time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i += round {
				j := min(i+round, b.N)
				e.sends(b, quiet[i:j])
				stop := make(chan struct{})
				wait := e.flood(stop, c.sign, &sent, &wrong)
				t0 := time.Now()
				e.sends(b, flooded[i:j])
				floodTime += time.Since(t0)
				close(stop)
				wait()
				e.mem.Reset() // the capture buffer is for tests; keep memory flat
			}
			b.StopTimer()
			if w := wrong.Load(); w > 0 {
				b.Fatalf("%d of %d forged reports were not refused", w, sent.Load())
			}
			slices.Sort(quiet)
			slices.Sort(flooded)
			q, f := p95(quiet), p95(flooded)
			b.ReportMetric(q, "quiet-p95-µs")
			b.ReportMetric(f, "flood-p95-µs")
			b.ReportMetric(f/q, "ratio")
			b.ReportMetric(float64(sent.Load())/floodTime.Seconds(), "forged/s")
		})
	}
}

func p95(sorted []time.Duration) float64 {
	return float64(sorted[(len(sorted)-1)*95/100]) / float64(time.Microsecond)
}
