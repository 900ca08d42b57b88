package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
	notifystore "github.com/notifykit/notify/store"
)

// process is the built gateway binary running as a process of its own.
type process struct {
	cmd  *exec.Cmd
	out  *lines
	base string        // http://host:port
	done chan struct{} // closed when the process has exited
	err  error         // how it exited, once done is closed
}

// gatewayBinary is the gateway binary the tests run as a process, built
// once for them all (TestMain removes it).
var gatewayBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildGateway returns the gateway binary, building it on the first call.
func buildGateway(t testing.TB) string {
	t.Helper()
	b := &gatewayBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "notify-gateway-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "gateway")
		if out, err := exec.Command("go", "build", "-o", b.path, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// parallelTests is -test.parallel unless the command line sets it: how
// many of the parallel tests (those on PostgreSQL, those of the built
// binary, the long ones in memory) run at once. They spend their time
// waiting (on River's polls and scheduler, send_at, the settle threshold
// after a kill), not computing, so that the default, GOMAXPROCS, would
// leave the machine idle: two cores ran them one after another for most
// of the package's four minutes.
const parallelTests = 16

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(parallelTests)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	code := m.Run()
	if gatewayBinary.dir != "" {
		_ = os.RemoveAll(gatewayBinary.dir)
	}
	os.Exit(code)
}

// startProcess runs bin on a free loopback port with env added to the
// test's environment, and returns once it listens. The process is killed
// at the end of the test if it still runs.
func startProcess(t testing.TB, bin string, env ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin), out: newLines(), done: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), "NOTIFY_ADDR=127.0.0.1:0"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	line := p.out.waitFor(t, "listening on ")
	p.base = strings.TrimSuffix(line[strings.Index(line, "http://"):], "/api/v1")
	return p
}

// loadTurns is held by the test that puts a burst of load on its gateway
// (the crash tests' 40 clients, the SIGTERM test's 500 sends): the
// parallel tests overlap their waits (for the settle threshold, River's
// polls, send_at), but their bursts take turns, so that none starves
// another's gateway or vendor past NOTIFY_ATTEMPT_TIMEOUT, which would
// make a send unknown that the test knows the vendor answered.
var loadTurns = make(chan struct{}, 1)

// loadTurn waits for t's turn to load its gateway and returns the
// release, which may be called more than once; the end of t releases the
// turn too, should t fail while it holds it.
func loadTurn(t *testing.T) (release func()) {
	t.Helper()
	loadTurns <- struct{}{}
	var once sync.Once
	release = func() { once.Do(func() { <-loadTurns }) }
	t.Cleanup(release)
	return release
}

// pgUnits and crashSlots bound the PostgreSQL connections of the
// parallel tests: each gateway holds a pool and River's beside it, and
// the tests all at once took up to 99 connections, PostgreSQL's default
// max_connections being 100 (which the server shares with the tests of
// the other packages, pgstore's, run beside these). A test takes a unit
// of pgUnits with its schema (schemaURL); the tests whose built gateways
// take load (TestKill9UnderLoad's two, TestKill9WithBusyVendor,
// TestKill9Queue, TestSIGTERMWith500InFlight) each hold some 25, and
// take a crash slot first: two of them at a time, as the crash tests ran
// before they ran beside the rest.
var (
	pgUnits    = make(chan struct{}, 5)
	crashSlots = make(chan struct{}, 2)
)

// takePGUnit waits for a unit of pgUnits, which the end of t gives back,
// after its gateways have stopped and its schema is dropped.
func takePGUnit(t testing.TB) {
	t.Helper()
	pgUnits <- struct{}{}
	t.Cleanup(func() { <-pgUnits })
}

// takeCrashSlot waits for a crash slot, which the end of t gives back. A
// test takes it before its pgUnits unit (schemaURL), never after.
func takeCrashSlot(t *testing.T) {
	t.Helper()
	crashSlots <- struct{}{}
	t.Cleanup(func() { <-crashSlots })
}

// kill kills the process with SIGKILL, as a crash would, and waits for it.
func (p *process) kill(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	if !p.wait(10 * time.Second) {
		t.Error("the gateway did not die")
	}
}

// wait reports whether the process exited within d.
func (p *process) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// crashVendor stands in front of the fake SMS vendor. Every request is
// received (its number counted) as it arrives and handed to the vendor,
// which takes it or, when refusing, answers that its wallet is empty
// (status_code 416, a certain refusal). The vendor's answer is passed on
// after latency, except that from holdAfter arrivals on it is held until
// the caller hangs up: a vendor that has the message while the gateway
// cannot learn its answer.
type crashVendor struct {
	vendor *smsgatewaytest.Server
	proxy  *httputil.ReverseProxy
	// latency and holdAfter change between the crash and the replay,
	// while the gate serves.
	latency   atomic.Int64 // a time.Duration
	holdAfter atomic.Int32

	arrivals atomic.Int32
	holding  atomic.Int32
	held     chan struct{} // one value per held request

	mu       sync.Mutex
	received map[string]int       // number -> requests that carried it
	arrived  map[string]time.Time // number -> when its first request arrived
}

var testNumber = regexp.MustCompile(`98\d{8}`)

func newCrashVendor(t *testing.T, refuse bool, holdAfter int32) (*crashVendor, *httptest.Server) {
	v := &crashVendor{
		vendor:   smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-1", Balance: 1 << 40}),
		held:     make(chan struct{}, 1024),
		received: map[string]int{},
		arrived:  map[string]time.Time{},
	}
	v.latency.Store(int64(200 * time.Millisecond))
	v.holdAfter.Store(holdAfter)
	t.Cleanup(v.vendor.Close)
	if refuse {
		v.vendor.SetBalance(0)
	}
	target, _ := url.Parse(v.vendor.URL)
	v.proxy = httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(srv.Close)
	return v, srv
}

func (v *crashVendor) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	now := time.Now()
	v.mu.Lock()
	for _, n := range testNumber.FindAllString(string(body), -1) {
		v.received[n]++
		if _, ok := v.arrived[n]; !ok {
			v.arrived[n] = now
		}
	}
	v.mu.Unlock()
	hold := v.arrivals.Add(1) > v.holdAfter.Load()

	answer := httptest.NewRecorder()
	r.Body = io.NopCloser(bytes.NewReader(body))
	v.proxy.ServeHTTP(answer, r.Clone(context.WithoutCancel(r.Context())))

	wait := time.NewTimer(time.Duration(v.latency.Load()))
	defer wait.Stop()
	if hold {
		v.holding.Add(1)
		v.held <- struct{}{}
		<-r.Context().Done() // the gateway died
		return
	}
	select {
	case <-wait.C:
	case <-r.Context().Done():
		return
	}
	for k, vs := range answer.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(answer.Code)
	_, _ = w.Write(answer.Body.Bytes())
}

// arrival returns when the first request that carried number arrived,
// and whether one did.
func (v *crashVendor) arrival(number string) (time.Time, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.arrived[number]
	return at, ok
}

// numbers returns how many requests carried each number.
func (v *crashVendor) numbers() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.received)
}

// TestKill9UnderLoad runs the built gateway on PostgreSQL, kills it with
// SIGKILL while 40 clients send, restarts it and lets its reconciler
// settle what the dead process left; then every idempotency key is sent
// again. Money must follow what the vendor got, every charge must have
// its record, and no message may go out twice or answer 409.
func TestKill9UnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	// The crash tests run beside each other: most of each is the wait
	// for the settle threshold.
	t.Parallel()
	bin := buildGateway(t)
	t.Run("accepting vendor", func(t *testing.T) { t.Parallel(); crashUnderLoad(t, bin, false) })
	t.Run("refusing vendor", func(t *testing.T) { t.Parallel(); crashUnderLoad(t, bin, true) })
}

const (
	crashRequests = 400
	crashClients  = 40
	crashKey      = "crash-test-key-0123456789"
)

func crashRequest(base string, i int) *http.Request {
	// A category the account defines (opt-out, declined by nobody): every
	// send reads the recipient's preferences on its way, crash or not.
	body := fmt.Sprintf(`{"to":"98%08d","message":"order %d has shipped","category":"order"}`, i, i)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/sms", strings.NewReader(body))
	req.Header.Set("Authorization", crashKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("crash-%d", i))
	return req
}

type crashAnswer struct {
	status int
	code   string // error.code
	id     string // message_id
}

func sendCrashRequest(client *http.Client, base string, i int) (crashAnswer, error) {
	resp, err := client.Do(crashRequest(base, i))
	if err != nil {
		return crashAnswer{}, err
	}
	defer resp.Body.Close()
	var out struct {
		MessageID string `json:"message_id"`
		Error     struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	return crashAnswer{status: resp.StatusCode, code: out.Error.Code, id: out.MessageID}, err
}

// killUnderLoad has crashClients clients send crashRequests requests to
// first through client, and kills it with SIGKILL once every client holds
// a send at vendor (which holds answers from its holdAfter-th request on),
// so that exactly those are in flight; it returns when the clients have
// stopped. answer, unless nil, sees each answer that came back before.
func killUnderLoad(t *testing.T, client *http.Client, first *process, vendor *crashVendor, answer func(crashAnswer)) {
	t.Helper()
	defer loadTurn(t)()
	var next atomic.Int32
	var wg sync.WaitGroup
	for range crashClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < crashRequests; i = int(next.Add(1)) - 1 {
				a, err := sendCrashRequest(client, first.base, i)
				if err != nil {
					return // the gateway died
				}
				if answer != nil {
					answer(a)
				}
			}
		}()
	}
	deadline := time.After(2 * time.Minute)
	for range crashClients {
		select {
		case <-vendor.held:
		case <-deadline:
			t.Fatalf("only %d sends reached the holding vendor", vendor.holding.Load())
		}
	}
	first.kill(t)
	wg.Wait()
	client.CloseIdleConnections()
}

// restartSettled starts bin again with env, and returns it and a store on
// dbURL (closed when the test ends) once its reconciler has settled every
// send the dead process left open: those older than NOTIFY_SETTLE_AFTER.
// defineCategory defines the demo account's category name (opt-out) in
// the database at dbURL, which a started gateway has migrated.
func defineCategory(t *testing.T, dbURL, name string) {
	t.Helper()
	store, err := pgstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.PutCategory(context.Background(), notifystore.Category{Account: demoAccount, Name: name}); err != nil {
		t.Fatal(err)
	}
}

func restartSettled(t *testing.T, bin string, env []string, dbURL string) (*process, *pgstore.Store) {
	t.Helper()
	second := startProcess(t, bin, env...)
	ctx := context.Background()
	store, err := pgstore.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	for settled := false; !settled; {
		second.out.waitForWithin(t, "abandoned sends settled", time.Minute)
		open, err := store.Stale(ctx, time.Now().Add(time.Hour), crashRequests)
		if err != nil {
			t.Fatal(err)
		}
		settled = len(open) == 0
	}
	return second, store
}

func crashUnderLoad(t *testing.T, bin string, refuse bool) {
	takeCrashSlot(t)
	dbURL := schemaURL(t)
	// The vendor holds every answer from the 150th request on. Once the
	// 40 clients all wait on held answers, no send is anywhere but at the
	// vendor: the kill is then sure to leave exactly those 40 in flight.
	vendor, gate := newCrashVendor(t, refuse, 150)
	env := []string{"NOTIFY_API_KEY=" + crashKey, "NOTIFY_BALANCE=1000", "NOTIFY_SMS_URL=" + gate.URL,
		"NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_DATABASE_URL=" + dbURL, "NOTIFY_RATE_LIMIT=100000",
		"NOTIFY_ATTEMPT_TIMEOUT=5s", "NOTIFY_SETTLE_AFTER=20s"}
	if refuse {
		// Every send must reach the refusing vendor, as the test counts
		// them there: a circuit breaker would rest it after 5 refusals.
		env = append(env, "NOTIFY_BREAKER=off")
	}
	first := startProcess(t, bin, env...)
	defineCategory(t, dbURL, "order")

	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: crashClients}}
	killUnderLoad(t, client, first, vendor, nil)
	got := vendor.numbers()
	second, store := restartSettled(t, bin, env, dbURL)

	records, price := auditCrash(t, store, got)
	unknown := 0
	for _, m := range records {
		if m.State == record.StateUnknown {
			unknown++
		}
	}
	if unknown != crashClients {
		t.Errorf("%d messages are unknown, want the %d held at the vendor", unknown, crashClients)
	}

	// Every key again, the vendor answering at once: nothing goes out
	// twice and nothing answers 409.
	vendor.holdAfter.Store(1 << 30)
	vendor.latency.Store(0)
	replays := make([]crashAnswer, crashRequests)
	endTurn := loadTurn(t)
	var replay sync.WaitGroup
	var failed atomic.Int32
	for c := range crashClients {
		replay.Add(1)
		go func() {
			defer replay.Done()
			for i := c; i < crashRequests; i += crashClients {
				a, err := sendCrashRequest(client, second.base, i)
				if err != nil {
					failed.Add(1)
					t.Errorf("replay %d: %v", i, err)
				}
				replays[i] = a
			}
		}()
	}
	replay.Wait()
	endTurn()
	after := vendor.numbers()
	for i, a := range replays {
		number := fmt.Sprintf("98%08d", i)
		if a.status == http.StatusConflict {
			t.Errorf("replay %d answered 409 %s", i, a.code)
		}
		if m := records[number]; m != nil && m.State != record.StateFailed {
			if after[number] != got[number] {
				t.Errorf("%s (%s before the replay) went to the vendor again", number, m.State)
			}
			if a.id != "" && a.id != m.ID {
				t.Errorf("replay %d answered message %s, not its record %s", i, a.id, m.ID)
			}
		}
		if !refuse && after[number] != 1 {
			t.Errorf("%s reached the vendor %d times", number, after[number])
		}
	}
	final, _ := auditCrash(t, store, after)
	standing := int64(0)
	for _, m := range final {
		standing += m.Cost().Minor
	}
	want := int64(crashRequests) * price
	if refuse {
		want = int64(crashClients) * price
	}
	if standing != want {
		t.Errorf("%d paise stay charged, want %d", standing, want)
	}
	t.Logf("killed with %d held; %d records, %d unknown; vendor got %d numbers, then %d", vendor.holding.Load(), len(records), unknown, len(got), len(after))
}

// auditCrash checks the ledger against the records and the vendor: every
// charge has a record; a record is settled (sent, failed or unknown);
// a sent or unknown one stays charged, a failed one is refunded; a sent
// one reached the vendor; a failed one did not (accepting vendor) and
// any that reached the refusing vendor was refused; an unknown one
// reached the vendor. It returns the records by number and the price.
func auditCrash(t *testing.T, store *pgstore.Store, received map[string]int) (map[string]*record.Message, int64) {
	t.Helper()
	return auditSettled(t, store, received, true)
}

// auditSettled is auditCrash; unknownReached says an unknown record must
// have reached the vendor. A queue's worker killed between its claim
// (the record attempting) and the vendor call leaves an unknown record
// the vendor never got: charged, as an unknown outcome is, and
// consistent with the money, so the queue's crash test does not ask it.
func auditSettled(t *testing.T, store *pgstore.Store, received map[string]int, unknownReached bool) (map[string]*record.Message, int64) {
	t.Helper()
	ctx := context.Background()
	if err := store.CheckLedger(ctx, demoAccount); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	entries, err := store.Ledger(ctx, demoAccount, 0, 100*crashRequests)
	if err != nil {
		t.Fatal(err)
	}
	debits, refunds := map[string]int64{}, map[string]int64{}
	price := int64(0)
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Ref, "refund:"); ok {
			refunds[id] += e.Amount.Minor
		} else if e.Amount.Minor < 0 {
			debits[e.Ref] -= e.Amount.Minor
			price = -e.Amount.Minor
		}
	}
	records := map[string]*record.Message{}
	for id, charged := range debits {
		m, err := store.Message(ctx, demoAccount, id)
		if err != nil {
			t.Fatalf("charge %s has no record: %v", id, err)
		}
		if charged != price || m.Charge.Minor != price {
			t.Errorf("message %s: charged %d, record says %d; price %d", id, charged, m.Charge.Minor, price)
		}
		number := strings.TrimPrefix(m.To, "+91") // the vendor's 10-digit form
		if prev := records[number]; prev != nil && prev.State != record.StateFailed && m.State != record.StateFailed {
			t.Errorf("%s has two live records: %s (%s) and %s (%s)", number, prev.ID, prev.State, m.ID, m.State)
		}
		if records[number] == nil || m.State != record.StateFailed {
			records[number] = m
		}
		switch m.State {
		case record.StateSent, record.StateUnknown:
			if refunds[id] != 0 {
				t.Errorf("%s message %s was refunded", m.State, id)
			}
			if received[number] == 0 && (m.State == record.StateSent || unknownReached) {
				t.Errorf("%s message %s (%s) never reached the vendor", m.State, id, number)
			}
		case record.StateFailed:
			if refunds[id] != charged {
				t.Errorf("failed message %s: refunded %d of %d", id, refunds[id], charged)
			}
		default:
			t.Errorf("message %s is still %s", id, m.State)
		}
	}
	return records, price
}
