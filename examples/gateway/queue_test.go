package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/record"
)

// TestWorkersSetting: NOTIFY_WORKERS is 4 by default, any count from 0
// to 1000, and 0 only with a database; anything else is an error naming
// the variable.
func TestWorkersSetting(t *testing.T) {
	for _, c := range []struct {
		in, db string
		want   int
	}{{"", "", 4}, {"1", "", 1}, {" 16 ", "", 16}, {"0", "postgres://db", 0}, {"1000", "", 1000}} {
		cfg, err := loadConfig(envOf(map[string]string{"NOTIFY_WORKERS": c.in, "NOTIFY_DATABASE_URL": c.db}))
		if err != nil {
			t.Errorf("NOTIFY_WORKERS=%q: %v", c.in, err)
			continue
		}
		if cfg.workers != c.want {
			t.Errorf("NOTIFY_WORKERS=%q: %d workers, want %d", c.in, cfg.workers, c.want)
		}
	}
	for _, bad := range []string{"-1", "x", "1.5", "1001", "0"} {
		_, err := loadConfig(envOf(map[string]string{"NOTIFY_WORKERS": bad}))
		if err == nil || !strings.HasPrefix(err.Error(), "NOTIFY_WORKERS: ") {
			t.Errorf("NOTIFY_WORKERS=%q (in memory): %v, want an error naming the variable", bad, err)
		}
	}
}

// TestGatewayScheduledSend: a send with a send_at two seconds ahead is
// answered 202 scheduled at once, reaches the vendor at its time and not
// before, and its record moves from scheduled to sent. In memory, and on
// PostgreSQL (where River's scheduler makes the job due, within seconds
// of its time).
func TestGatewayScheduledSend(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) { t.Parallel(); scheduledSend(t, "") })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); scheduledSend(t, schemaURL(t)) })
}

func scheduledSend(t *testing.T, dbURL string) {
	vendor, gate := newCrashVendor(t, false, 1<<30)
	vendor.latency.Store(0)
	env := map[string]string{"NOTIFY_API_KEY": crashKey, "NOTIFY_SMS_URL": gate.URL, "NOTIFY_SMS_KEY": "vendor-key-1"}
	if dbURL != "" {
		env["NOTIFY_DATABASE_URL"] = dbURL
	}
	g := start(t, env)
	const number = "9876500001"
	at := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
	body := fmt.Sprintf(`{"to":%q,"message":"your table is ready","send_at":%q}`, number, at.Format(time.RFC3339Nano))
	a := g.post(t, "/sms", crashKey, body)
	if a.status != http.StatusAccepted || a.body["status"] != "scheduled" {
		t.Fatalf("a send_at two seconds ahead: %d %s, want 202 scheduled", a.status, a.raw)
	}
	id, _ := a.body["message_id"].(string)
	if id == "" {
		t.Fatalf("no message_id: %s", a.raw)
	}
	// A campaign for the same time: every recipient scheduled.
	campaign := []string{"9876500011", "9876500012"}
	bulk := g.post(t, "/sms/bulk", crashKey, fmt.Sprintf(`{"to":[%q,%q],"message":"doors open at 7","send_at":%q}`,
		campaign[0], campaign[1], at.Format(time.RFC3339Nano)))
	if bulk.status != http.StatusAccepted || bulk.body["status"] != "scheduled" || bulk.body["queued"] != 2.0 {
		t.Fatalf("a bulk send_at two seconds ahead: %d %s, want 202 scheduled", bulk.status, bulk.raw)
	}
	status := func() string {
		t.Helper()
		m := g.curl(t, http.MethodGet, "/messages/"+id, map[string]string{"Authorization": crashKey}, "")
		if m.status != 200 {
			t.Fatalf("GET /messages/%s: %d %s", id, m.status, m.raw)
		}
		d, _ := m.body["data"].(map[string]any)
		s, _ := d["status"].(string)
		return s
	}
	if s := status(); s != "scheduled" {
		t.Errorf("before its time the record is %q, want scheduled", s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for status() != "sent" {
		if time.Now().After(deadline) {
			t.Fatalf("30 s on, the scheduled send is %q, not sent", status())
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, ok := vendor.arrival(number)
	switch {
	case !ok:
		t.Fatal("the record is sent but the vendor never got it")
	case got.Before(at):
		t.Errorf("the vendor got it %v before its send_at", at.Sub(got))
	}
	if n := vendor.numbers()[number]; n != 1 {
		t.Errorf("the vendor got it %d times", n)
	}
	for _, to := range campaign {
		for {
			if got, ok := vendor.arrival(to); ok {
				if got.Before(at) {
					t.Errorf("the vendor got %s %v before its send_at", to, at.Sub(got))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("30 s on, the vendor has not got the campaign's %s", to)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := vendor.numbers()[to]; n != 1 {
			t.Errorf("the vendor got %s %d times", to, n)
		}
	}
}

// TestGatewayWorkersZeroOnlyQueues: on PostgreSQL an instance with
// NOTIFY_WORKERS=0 queues a send and delivers nothing; an instance with
// workers on the same database delivers it.
func TestGatewayWorkersZeroOnlyQueues(t *testing.T) {
	t.Parallel()
	dbURL := schemaURL(t)
	vendor, gate := newCrashVendor(t, false, 1<<30)
	vendor.latency.Store(0)
	env := func(workers string) map[string]string {
		return map[string]string{"NOTIFY_API_KEY": crashKey, "NOTIFY_SMS_URL": gate.URL, "NOTIFY_SMS_KEY": "vendor-key-1",
			"NOTIFY_DATABASE_URL": dbURL, "NOTIFY_WORKERS": workers}
	}
	queuing := start(t, env("0"))
	hdr := map[string]string{"Authorization": crashKey, "Content-Type": "application/json", "Prefer": "respond-async"}
	a := queuing.curl(t, http.MethodPost, "/sms", hdr, `{"to":"9876500002","message":"queued by one, sent by another"}`)
	if a.status != http.StatusAccepted || a.body["status"] != "queued" || a.header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("Prefer: respond-async: %d %s, want 202 queued", a.status, a.raw)
	}
	id, _ := a.body["message_id"].(string)
	status := func(g *gateway) string {
		t.Helper()
		m := g.curl(t, http.MethodGet, "/messages/"+id, map[string]string{"Authorization": crashKey}, "")
		d, _ := m.body["data"].(map[string]any)
		s, _ := d["status"].(string)
		return s
	}
	// The instance ran runQueue before it listened: its line says it took
	// the branch that never starts the queue's Run, so nothing of it
	// fetches a job, however long one waits (a wait would prove no more,
	// and slowly).
	if out := queuing.out.text(); !strings.Contains(out, "NOTIFY_WORKERS=0: this instance queues sends") {
		t.Fatalf("the instance with NOTIFY_WORKERS=0 did not say it only queues sends:\n%s", out)
	}
	if s := status(queuing); s != "queued" || vendor.arrivals.Load() != 0 {
		t.Fatalf("with no workers anywhere the send is %q and the vendor got %d requests", s, vendor.arrivals.Load())
	}
	working := start(t, env("1"))
	for deadline := time.Now().Add(30 * time.Second); status(working) != "sent"; {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after an instance with a worker started, the send is %q", status(working))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := vendor.numbers()["9876500002"]; n != 1 {
		t.Errorf("the vendor got it %d times", n)
	}
}

// Sizes of the queue's crash test.
const (
	queueCrashRequests = 300
	queueCrashGateways = 3
	queueCrashKills    = 4
)

// TestKill9Queue runs three gateways (the built binary) on one PostgreSQL
// database, each with workers; 40 clients queue sends (Prefer:
// respond-async) against random instances while instances are killed
// with SIGKILL and restarted mid-queue. With all three up, the queue must
// drain: every record settles (a worker killed after its claim leaves an
// attempting record that the reconciler, a periodic task of the queue,
// makes unknown). Then the audit: every charge has its settled record,
// money follows the records (sent and unknown charged, failed refunded,
// the balance the opening less what stands), every accepted (202) message
// is one of them, and no message reached the vendor twice.
func TestKill9Queue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	t.Parallel() // beside the other crash tests (TestKill9UnderLoad)
	takeCrashSlot(t)
	bin := buildGateway(t)
	dbURL := schemaURL(t)
	vendor, gate := newCrashVendor(t, false, 1<<30)
	vendor.latency.Store(int64(200 * time.Millisecond)) // 300 sends on 12 workers: about 5 s of queue
	env := []string{"NOTIFY_API_KEY=" + crashKey, "NOTIFY_BALANCE=1000", "NOTIFY_SMS_URL=" + gate.URL,
		"NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_DATABASE_URL=" + dbURL, "NOTIFY_RATE_LIMIT=100000",
		"NOTIFY_WORKERS=4", "NOTIFY_ATTEMPT_TIMEOUT=1s", "NOTIFY_SETTLE_AFTER=8s"}
	const opening = 100_000 // NOTIFY_BALANCE in paise

	var mu sync.Mutex
	procs := make([]*process, queueCrashGateways)
	for i := range procs {
		procs[i] = startProcess(t, bin, env...)
	}
	defineCategory(t, dbURL, "order") // crashRequest's: the workers read the preferences too
	base := func() string {
		mu.Lock()
		defer mu.Unlock()
		return procs[rand.IntN(len(procs))].base
	}

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashClients}}
	accepted := make([]string, queueCrashRequests) // message ID of each 202 queued
	endTurn := loadTurn(t)
	var next atomic.Int32
	var wg sync.WaitGroup
	for range crashClients {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < queueCrashRequests; i = int(next.Add(1)) - 1 {
				accepted[i] = enqueueUntilAnswered(t, client, base, i)
			}
		})
	}
	// Kill and restart instances while the workers deliver (and the
	// clients may still queue): from the first send at the vendor, one
	// every 0.3 to 0.7 s.
	for deadline := time.Now().Add(30 * time.Second); vendor.arrivals.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no queued send reached the vendor within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var kills []string // the vendor's arrivals at each kill
	for k := range queueCrashKills {
		time.Sleep(time.Duration(300+rand.IntN(400)) * time.Millisecond)
		i := k % len(procs)
		mu.Lock()
		p := procs[i]
		mu.Unlock()
		p.kill(t)
		kills = append(kills, fmt.Sprint(vendor.arrivals.Load()))
		restarted := startProcess(t, bin, env...)
		mu.Lock()
		procs[i] = restarted
		mu.Unlock()
	}
	if kills[0] == fmt.Sprint(queueCrashRequests) {
		t.Errorf("the first kill came after the queue was drained")
	}
	wg.Wait()
	endTurn()
	client.CloseIdleConnections()

	ctx := context.Background()
	store, err := pgstore.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	// All three up: the queue drains and the reconciler settles what the
	// kills left attempting (NOTIFY_SETTLE_AFTER on, every 4 s).
	// A job a killed instance had taken runs again once River's rescuer
	// finds it taken past NOTIFY_SETTLE_AFTER: a new leader within 21 s
	// of the old one's death, a rescuer run every 30 s, the retry's
	// backoff and River's 5-second scheduler.
	deadline := time.Now().Add(100 * time.Second)
	for {
		live := liveRecords(t, store)
		if len(live) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records never settled (a River job left running by a killed instance waits for River's rescuer):%s",
				len(live), describeLive(t, dbURL, live))
		}
		time.Sleep(250 * time.Millisecond)
	}

	received := vendor.numbers()
	records, _ := auditSettled(t, store, received, false)
	standing, states := int64(0), map[record.State]int{}
	for _, m := range records {
		standing += m.Cost().Minor
		states[m.State]++
	}
	bal, err := store.Balance(ctx, demoAccount)
	if err != nil {
		t.Fatal(err)
	}
	if got := bal.Available.Minor; got != opening-standing {
		t.Errorf("balance %d paise, want the opening %d less the %d that stand charged", got, opening, standing)
	}
	for number, n := range received {
		if n > 1 {
			t.Errorf("%s reached the vendor %d times", number, n)
		}
	}
	for i, id := range accepted {
		if id == "" {
			continue
		}
		number := fmt.Sprintf("98%08d", i)
		m := records[number]
		switch {
		case m == nil:
			t.Errorf("request %d was accepted (message %s) but has no charged record", i, id)
		case m.ID != id:
			t.Errorf("request %d was accepted as message %s, but its record is %s", i, id, m.ID)
		case m.State == record.StateSent && received[number] != 1:
			t.Errorf("message %s is sent, but the vendor got %s %d times", id, number, received[number])
		}
	}
	n := 0
	for _, id := range accepted {
		if id != "" {
			n++
		}
	}
	if n < queueCrashRequests*9/10 {
		t.Errorf("only %d of %d requests were accepted", n, queueCrashRequests)
	}
	t.Logf("%d accepted of %d; records %v; the vendor got %d numbers; kills after %s arrivals",
		n, queueCrashRequests, states, len(received), strings.Join(kills, ", "))
}

// enqueueUntilAnswered queues request i (crashRequest, with Prefer:
// respond-async) on a random instance until one answers it: a dead
// instance, or a key still held by a send that a killed instance left
// (409), is tried again, on another. It returns the message ID of a 202
// queued answer, or "" for any other answer, which it reports when it is
// not what a crash may cause.
func enqueueUntilAnswered(t *testing.T, client *http.Client, base func() string, i int) string {
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		req := crashRequest(base(), i)
		req.Header.Set("Prefer", "respond-async")
		resp, err := client.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // the instance died: another
			continue
		}
		var out struct {
			MessageID string `json:"message_id"`
			Status    string `json:"status"`
			Error     struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		switch {
		case err != nil:
			time.Sleep(50 * time.Millisecond) // cut mid-answer
			continue
		case resp.StatusCode == http.StatusConflict:
			time.Sleep(250 * time.Millisecond) // until the dead holder's lease runs out
			continue
		case resp.StatusCode/100 == 2 && out.Error.Code == "" && out.MessageID != "":
			// 202 queued, or the repeat of a key whose send a killed
			// instance queued (its record as it is now)
			return out.MessageID
		case out.Error.Code == string(notify.CodeOutcomeUnknown):
			return "" // the queue's answer was lost: its record settles anyway
		default:
			t.Errorf("request %d: %d %s %s", i, resp.StatusCode, out.Status, out.Error.Code)
			return ""
		}
	}
	t.Errorf("request %d was never answered", i)
	return ""
}

// liveRecords returns the records of the demo account's charges that are
// not settled yet: queued, scheduled, pending or attempting.
func liveRecords(t *testing.T, store *pgstore.Store) []*record.Message {
	t.Helper()
	ctx := context.Background()
	entries, err := store.Ledger(ctx, demoAccount, 0, 100*queueCrashRequests)
	if err != nil {
		t.Fatal(err)
	}
	var live []*record.Message
	for _, e := range entries {
		if e.Amount.Minor >= 0 || strings.HasPrefix(e.Ref, "refund:") {
			continue
		}
		m, err := store.Message(ctx, demoAccount, e.Ref)
		if err != nil {
			t.Fatalf("charge %s has no record: %v", e.Ref, err)
		}
		if m.State.Live() {
			live = append(live, m)
		}
	}
	return live
}

// describeLive says where each live record stands, and its River job:
// a job left running by a killed instance is not run again before River
// rescues it.
func describeLive(t *testing.T, dbURL string, live []*record.Message) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var b strings.Builder
	for i, m := range live {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ...")
			break
		}
		var state string
		var attempt int
		err := conn.QueryRow(context.Background(),
			`SELECT state, attempt FROM river_job WHERE args->>'message' = $1`, m.ID).Scan(&state, &attempt)
		if err != nil {
			state = err.Error()
		}
		fmt.Fprintf(&b, "\n  %s %s since %s; River job %s (attempt %d)", m.ID, m.State, m.UpdatedAt.Format(time.RFC3339Nano), state, attempt)
	}
	return b.String()
}

// TestQuietRiverLogs: a failure River logs many times a second (its
// database down) makes one line an interval, the next one saying how
// many it stands for; other messages pass on their own.
func TestQuietRiverLogs(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	h := newQuiet(slog.NewTextHandler(&buf, nil), quietInterval, func() time.Time { return clock })
	log := slog.New(h).With("component", "river")
	for range 100 { // ten seconds of River's retries
		log.Error("producer: error fetching jobs", "error", "dial tcp 127.0.0.1:5432: connect: connection refused")
		clock = clock.Add(100 * time.Millisecond)
	}
	log.Warn("elector: leadership lost")
	clock = clock.Add(quietInterval)
	log.Error("producer: error fetching jobs", "error", "dial tcp 127.0.0.1:5432: connect: connection refused")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "error fetching jobs") || strings.Contains(lines[0], "repeated") ||
		!strings.Contains(lines[1], "leadership lost") || !strings.Contains(lines[2], "repeated=99") || !strings.Contains(lines[2], "component=river") {
		t.Fatalf("lines:\n%s\nwant the failure once, the other message, then the failure again with repeated=99", buf.String())
	}
}
