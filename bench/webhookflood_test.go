package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/record"
)

// The forged-report flood of BenchmarkWebhookFlood: cloud-chat status
// notifications of 900 KiB (the size measured in the field), sent at
// what a 1 Gbit/s uplink carries, ~135 a second, from up to 16
// connections at once.
const (
	floodBody    = 900 << 10
	floodRate    = 1_000_000_000 / 8 / floodBody
	floodWorkers = 16
	// sendRate is the sends a second, a steady load well short of what
	// the machine can do; sendsInFlight bounds those awaiting answers.
	sendRate      = 1000
	sendsInFlight = 64
	floodKey      = "bench-key-0123456789abcdef"
	// The flooder's process reads these: the server's address, and the
	// X-Hub-Signature-256 its reports carry ("" for none).
	flooderAddrEnv = "NOTIFY_BENCH_FLOOD_ADDR"
	flooderSignEnv = "NOTIFY_BENCH_FLOOD_SIGN"
	// flooderLoopEnv, when set, makes the flood a closed loop: floodWorkers
	// connections, each posting a forged report of loopBody bytes as soon
	// as the last one was answered, as fast as the server answers, as the
	// field attack did.
	flooderLoopEnv = "NOTIFY_BENCH_FLOOD_LOOP"
	loopBody       = 1 << 10
)

// TestMain runs the flooder instead of the tests in the process that
// BenchmarkWebhookFlood starts for it.
func TestMain(m *testing.M) {
	if addr := os.Getenv(flooderAddrEnv); addr != "" {
		os.Exit(runFlooder(addr, os.Getenv(flooderSignEnv), os.Getenv(flooderLoopEnv) != "", os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// floodEnv is one http.Server carrying both the API (POST /api/v1/sms,
// the whole send pipeline onto memprovider) and the cloud-chat
// delivery-report receiver at /webhooks/cloudchat, as the example
// gateway mounts them.
type floodEnv struct {
	url, addr string
	sms       *http.Client
	mem       interface{ Reset() }
}

func newFloodEnv(b *testing.B) *floodEnv {
	b.Helper()
	n, p := newPipeline(b)
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, floodKey); err != nil {
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
	tr := &http.Transport{MaxIdleConnsPerHost: sendsInFlight}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return &floodEnv{url: "http://" + ln.Addr().String(), addr: ln.Addr().String(),
		sms: &http.Client{Transport: tr, Timeout: 30 * time.Second}, mem: p}
}

var floodSMS = []byte(`{"to":"9876543210","message":"Your order 4711 has shipped and will arrive tomorrow.","sender_id":"ACMEIN","route":"sms","domain":"shop.example"}`)

// sends makes len(lat) sends at sendRate, each started on schedule
// whatever the others do (up to sendsInFlight at once), and stores the
// latency of each.
func (e *floodEnv) sends(b *testing.B, lat []time.Duration) {
	var failed atomic.Int64
	var wg sync.WaitGroup
	slots := make(chan struct{}, sendsInFlight)
	start := time.Now()
	for i := range lat {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / sendRate))) // pacing
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			took, ok := httpapienv.PostTimed(e.sms, e.url+"/api/v1/sms", floodKey, floodSMS)
			if !ok {
				failed.Add(1) // which fails the benchmark
				return
			}
			lat[i] = took
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d sends failed", f, len(lat))
	}
}

// flooder is the attacker: a process of its own at the lowest CPU
// priority (nice 19), so that what the flood costs the attacker, which
// on loopback includes the kernel's work of moving its bytes, weighs on
// the sends as little as the machine allows: they share two cores.
type flooder struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startFlooder(b *testing.B, addr, sign string, loop bool) *flooder {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	if nice, err := exec.LookPath("nice"); err == nil {
		cmd = exec.Command(nice, "-n", "19", self)
	} else {
		b.Logf("no nice(1): the flooder runs at the benchmark's priority")
	}
	cmd.Env = append(os.Environ(), flooderAddrEnv+"="+addr, flooderSignEnv+"="+sign)
	if loop {
		cmd.Env = append(cmd.Env, flooderLoopEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	f := &flooder{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	b.Cleanup(func() {
		in.Close() // the flooder ends at the end of its input
		_ = cmd.Wait()
	})
	return f
}

// on starts the flood.
func (f *flooder) on(b *testing.B) {
	if _, err := io.WriteString(f.in, "on\n"); err != nil {
		b.Fatal(err)
	}
}

// off stops the flood and returns, once every forged report is
// answered, how many were sent, answered 503, and answered neither that
// nor 401 since it was turned on.
func (f *flooder) off(b *testing.B) (sent, busy, wrong int64) {
	if _, err := io.WriteString(f.in, "off\n"); err != nil {
		b.Fatal(err)
	}
	if !f.out.Scan() {
		b.Fatalf("the flooder ended: %v", f.out.Err())
	}
	if _, err := fmt.Sscan(f.out.Text(), &sent, &busy, &wrong); err != nil {
		b.Fatalf("the flooder said %q: %v", f.out.Text(), err)
	}
	return sent, busy, wrong
}

// runFlooder is the flooder's process: on "on" it posts forged reports
// to addr at floodRate (loop: floodWorkers closed loops, as fast as
// answered), on "off" it stops, waits for their answers and writes its
// counts; it ends with its input.
func runFlooder(addr, sign string, loop bool, in io.Reader, out io.Writer) int {
	// A status notification as the vendor shapes it, padded to size.
	pre := `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"statuses":[{"id":"wamid.forged","status":"failed","recipient_id":"919876543210","biz_opaque_callback_data":"`
	post := `"}]}}]}]}`
	size := floodBody
	if loop {
		size = loopBody
	}
	body := pre + strings.Repeat("x", size-len(pre)-len(post)) + post
	head := "POST /webhooks/cloudchat HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n"
	if sign != "" {
		head += "X-Hub-Signature-256: " + sign + "\r\n"
	}
	req := []byte(head + "\r\n" + body)

	var (
		stop              chan struct{}
		tick              *time.Ticker
		wg                sync.WaitGroup
		sent, busy, wrong atomic.Int64
	)
	halt := func() {
		if stop != nil {
			close(stop)
			wg.Wait()
			tick.Stop()
			stop = nil
		}
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		switch lines.Text() {
		case "on":
			halt()
			stop, tick = make(chan struct{}), time.NewTicker(time.Second/floodRate)
			if loop {
				tick.Stop()
				for range floodWorkers {
					wg.Go(func() { forgeLoop(addr, req, stop, &sent, &busy, &wrong) })
				}
				continue
			}
			for range floodWorkers {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						sent.Add(1)
						switch code, err := forge(addr, req); {
						case err != nil, code == http.StatusUnauthorized:
						case code == http.StatusServiceUnavailable:
							busy.Add(1)
						default:
							wrong.Add(1)
						}
					}
				})
			}
		case "off":
			halt()
			fmt.Fprintln(out, sent.Swap(0), busy.Swap(0), wrong.Swap(0))
		}
	}
	halt()
	return 0
}

// forgeLoop posts req on one kept-alive connection, the next as soon as
// the last is answered, until stop; a connection the server closes is
// dialled again. It counts what forge's caller counts.
func forgeLoop(addr string, req []byte, stop <-chan struct{}, sent, busy, wrong *atomic.Int64) {
	var conn net.Conn
	var rd *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if conn == nil {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				continue // the listener's backlog is full: try again
			}
			conn, rd = c, bufio.NewReader(c)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		sent.Add(1)
		_, werr := conn.Write(req)
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			conn.Close()
			conn = nil
			if werr == nil {
				wrong.Add(1) // no answer at all
			}
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnauthorized:
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			busy.Add(1)
		default:
			wrong.Add(1)
		}
		if resp.Close {
			conn.Close()
			conn = nil
		}
	}
}

// forge sends one forged request on a connection of its own, written
// whole in one call, and returns the status of the answer; it closes the
// connection once answered, which ends the write if the receiver
// answered before it read the body.
func forge(addr string, req []byte) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = conn.Write(req) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// BenchmarkWebhookFlood measures the latency of sends (POST /api/v1/sms
// through httpapi and the whole pipeline, sendRate a second) with and
// without a flood of forged 900 KiB cloud-chat reports reaching the
// webhook receiver on the same server, from another process (see
// flooder), alternating in 30 rounds so that other load on the machine
// falls on both alike. Each op is one send in each. The floods:
// unsigned, no X-Hub-Signature-256 at all; bad-signature, a header of
// the right shape whose MAC is wrong, which cannot be told from the
// vendor's without reading the body; and 16-connections, reports of 1
// KiB with a wrong MAC from 16 kept-alive connections, each posting the
// next as soon as the last was answered (the field attack). Report: quiet-p95-µs,
// flood-p95-µs, their ratio (target <= 1.2), the forged reports a second
// that reached the server and those of them answered 503 unread (503/s).
func BenchmarkWebhookFlood(b *testing.B) {
	for _, c := range []struct {
		name, sign string
		loop       bool
	}{
		{"unsigned", "", false},
		{"bad-signature", "sha256=" + strings.Repeat("0f", 32), false},
		{"16-connections", "sha256=" + strings.Repeat("0f", 32), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newFloodEnv(b)
			f := startFlooder(b, e.addr, c.sign, c.loop)
			e.sends(b, make([]time.Duration, sendsInFlight)) // warm the connections

			quiet := make([]time.Duration, b.N)
			flooded := make([]time.Duration, b.N)
			round := max(b.N/30, 50)
			var sent, busy int64
			var floodTime time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i += round {
				j := min(i+round, b.N)
				e.sends(b, quiet[i:j])
				f.on(b)
				t0 := time.Now()
				e.sends(b, flooded[i:j])
				floodTime += time.Since(t0)
				s, bz, wrong := f.off(b)
				if wrong > 0 {
					b.Fatalf("%d of %d forged reports were not refused", wrong, s)
				}
				sent, busy = sent+s, busy+bz
				e.mem.Reset() // the capture buffer is for tests; keep memory flat
			}
			b.StopTimer()
			slices.Sort(quiet)
			slices.Sort(flooded)
			q, fl := p95(quiet), p95(flooded)
			b.ReportMetric(q, "quiet-p95-µs")
			b.ReportMetric(fl, "flood-p95-µs")
			b.ReportMetric(fl/q, "ratio")
			b.ReportMetric(float64(sent)/floodTime.Seconds(), "forged/s")
			b.ReportMetric(float64(busy)/floodTime.Seconds(), "503/s")
		})
	}
}

func p95(sorted []time.Duration) float64 {
	return float64(sorted[(len(sorted)-1)*95/100]) / float64(time.Microsecond)
}
