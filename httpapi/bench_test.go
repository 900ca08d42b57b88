package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
)

const benchConcurrency = 32

var benchBody = []byte(`{"to":"9876543210","message":"Your order 4711 has shipped and will arrive tomorrow.","sender_id":"ACMEIN","route":"sms","domain":"shop.example"}`)

// bareSMS is the baseline: what any net/http JSON endpoint does at least,
// decoding the same JSON into a struct and answering a small JSON body.
func bareSMS(w http.ResponseWriter, r *http.Request) {
	var req struct {
		To       string `json:"to"`
		Message  string `json:"message"`
		SenderID string `json:"sender_id"`
		Route    string `json:"route"`
		Domain   string `json:"domain"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"success":false}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"success":true,"message_id":"0b6f3bd2-8a4e-4b8e-9a51-6f0a1d2c3e4f"}`))
}

// load sends len(lat) POSTs of benchBody to url from benchConcurrency
// goroutines over one keep-alive client, storing each latency in lat, and
// returns the time it took.
func load(b *testing.B, client *http.Client, url, key string, lat []time.Duration) time.Duration {
	n := len(lat)
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < benchConcurrency; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				took, ok := httpapienv.PostTimed(client, url, key, benchBody)
				if !ok {
					failed.Add(1) // which fails the benchmark
					continue
				}
				lat[i] = took
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed", f, n)
	}
	return elapsed
}

func pct(lat []time.Duration, p float64) float64 {
	return float64(lat[int(float64(len(lat)-1)*p)].Microseconds())
}

// BenchmarkSMSvsBare measures POST /api/v1/sms through the Handler (auth,
// rate limit, decoding, the whole send pipeline with a wallet, capture
// provider) against the bare handler, same client, same run, at 32
// concurrent requests over loopback. Each op is one request to each.
// Report: api-req/s, bare-req/s, ratio (target >= 0.7), p50/p99 in µs.
func BenchmarkSMSvsBare(b *testing.B) {
	e := newBenchEnv(b)
	bareURL, bareClient := httpapienv.Serve(b, http.HandlerFunc(bareSMS))

	bareURL += "/api/v1/sms"
	apiURL := e.URL + "/api/v1/sms"

	// Warm both servers' connections before timing.
	load(b, bareClient, bareURL, httpapienv.TestKey, make([]time.Duration, 2*benchConcurrency))
	load(b, e.Client, apiURL, httpapienv.TestKey, make([]time.Duration, 2*benchConcurrency))

	// The two alternate in rounds, so that load from other processes on a
	// shared machine falls on both alike.
	bareLat := make([]time.Duration, b.N)
	apiLat := make([]time.Duration, b.N)
	round := max(b.N/10, 4*benchConcurrency)
	var bareT, apiT time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i += round {
		j := min(i+round, b.N)
		bareT += load(b, bareClient, bareURL, httpapienv.TestKey, bareLat[i:j])
		apiT += load(b, e.Client, apiURL, httpapienv.TestKey, apiLat[i:j])
	}
	b.StopTimer()
	slices.Sort(bareLat)
	slices.Sort(apiLat)
	bareRate := float64(b.N) / bareT.Seconds()
	apiRate := float64(b.N) / apiT.Seconds()

	b.ReportMetric(apiRate, "api-req/s")
	b.ReportMetric(bareRate, "bare-req/s")
	b.ReportMetric(apiRate/bareRate, "ratio")
	b.ReportMetric(pct(apiLat, 0.50), "api-p50-µs")
	b.ReportMetric(pct(apiLat, 0.99), "api-p99-µs")
	b.ReportMetric(pct(bareLat, 0.50), "bare-p50-µs")
	b.ReportMetric(pct(bareLat, 0.99), "bare-p99-µs")
	if got := e.SMS.Len(); got < b.N {
		b.Fatalf("%d messages captured, want at least %d", got, b.N)
	}
}

// newBenchEnv is httpapienv.New with a wallet that never runs dry.
func newBenchEnv(b *testing.B, opts ...httpapi.Option) *httpapienv.Env {
	// An access log as in production, written where it cannot grow.
	opts = append(opts, httpapi.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))))
	return httpapienv.NewWith(b, 1<<50, opts...)
}

// BenchmarkServeHTTP measures the Handler alone, without the network:
// the cost it adds to each request, and its allocations.
func BenchmarkServeHTTP(b *testing.B) {
	serveParallel(b, newBenchEnv(b).Handler)
}

// BenchmarkServeHTTPBare is BenchmarkServeHTTP's baseline.
func BenchmarkServeHTTPBare(b *testing.B) {
	serveParallel(b, http.HandlerFunc(bareSMS))
}

// serveParallel has h serve POSTs of benchBody from parallel goroutines,
// without the network, each of which must answer 200.
func serveParallel(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/sms", bytes.NewReader(benchBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", httpapienv.TestKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
}
