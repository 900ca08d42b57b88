package main

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// TestKill9WithBusyVendor runs the built gateway on PostgreSQL against an
// SMS vendor that refuses every message with its own answer on an HTTP
// 503, {"return": false, "status_code": 503, "message": "busy"}, kills it
// with SIGKILL while 40 clients send, restarts it and lets its reconciler
// settle what the dead process left. The vendor took nothing, so every
// send whose refusal reached the gateway must end failed and refunded;
// the only charges left are of sends whose answer the crash cut (held at
// the vendor when the gateway died), which the reconciler makes unknown.
func TestKill9WithBusyVendor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	t.Parallel() // beside the other crash tests (TestKill9UnderLoad)
	takeCrashSlot(t)
	bin := buildGateway(t)
	dbURL := schemaURL(t)
	// As in crashUnderLoad: the vendor holds every answer from the 150th
	// request on, so that the kill leaves exactly the 40 held in flight.
	vendor, _ := newCrashVendor(t, false, 150)
	vendor.vendor.RefuseNext(-1, http.StatusServiceUnavailable, 503, "busy")
	cut := &cutAnswers{v: vendor, unanswered: map[string]int{}}
	gate := httptest.NewServer(http.HandlerFunc(cut.serve))
	t.Cleanup(gate.Close)
	env := []string{"NOTIFY_API_KEY=" + crashKey, "NOTIFY_BALANCE=1000", "NOTIFY_SMS_URL=" + gate.URL,
		"NOTIFY_SMS_KEY=vendor-key-1", "NOTIFY_DATABASE_URL=" + dbURL, "NOTIFY_RATE_LIMIT=100000",
		"NOTIFY_ATTEMPT_TIMEOUT=5s", "NOTIFY_SETTLE_AFTER=20s",
		// Every send must reach the busy vendor, which holds the 40 the
		// kill cuts: a circuit breaker would rest it after 5 refusals.
		"NOTIFY_BREAKER=off"}
	first := startProcess(t, bin, env...)
	defineCategory(t, dbURL, "order") // crashRequest's

	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: crashClients}}
	var refused atomic.Int32 // answers of 503 unavailable before the kill
	killUnderLoad(t, client, first, vendor, func(a crashAnswer) {
		if a.status == http.StatusServiceUnavailable && a.code == string(notify.CodeUnavailable) {
			refused.Add(1)
		}
	})
	got := vendor.numbers()
	// The held requests end when the server sees the dead gateway's
	// connections close, after the kill: wait for them to be noted.
	cut.serving.Wait()
	unanswered := cut.numbers()
	_, store := restartSettled(t, bin, env, dbURL)

	records, price := auditCrash(t, store, got)
	unknown, standing := 0, int64(0)
	for number, m := range records {
		standing += m.Cost().Minor
		switch {
		case m.State == record.StateUnknown && unanswered[number] == 0:
			t.Errorf("%s (message %s) is unknown and charged, though the vendor's refusal of every request for it reached the gateway", number, m.ID)
		case m.State != record.StateUnknown && unanswered[number] > 0:
			t.Errorf("%s (message %s) is %s, though the crash cut the vendor's answer to it", number, m.ID, m.State)
		}
		if m.State == record.StateUnknown {
			unknown++
		}
	}
	if unknown < crashClients {
		t.Errorf("%d messages are unknown, want at least the %d held at the vendor", unknown, crashClients)
	}
	if want := int64(unknown) * price; standing != want {
		t.Errorf("%d paise stay charged, want %d: the %d sends whose answer the crash cut", standing, want, unknown)
	}
	if refused.Load() == 0 {
		t.Error("no send was answered 503 unavailable before the kill: the vendor's refusals were not exercised")
	}
	if n := vendor.vendor.Accepted(); n != 0 {
		t.Fatalf("the vendor accepted %d messages", n)
	}
	t.Logf("killed with %d held; %d records, %d unknown; %d sends answered 503 before the kill", vendor.holding.Load(), len(records), unknown, refused.Load())
}

// cutAnswers stands in front of a crashVendor and notes, by number, the
// requests it passed on whose answer never went back to the gateway: held
// until the gateway died, or abandoned by the gateway before the answer.
type cutAnswers struct {
	v *crashVendor
	// serving counts the requests being served. No request arrives
	// after the kill, so waiting for it then is sound.
	serving sync.WaitGroup

	mu         sync.Mutex
	unanswered map[string]int // number -> requests left without an answer
}

func (c *cutAnswers) serve(w http.ResponseWriter, r *http.Request) {
	c.serving.Add(1)
	defer c.serving.Done()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	aw := &answerWriter{ResponseWriter: w}
	c.v.serve(aw, r)
	if aw.answered {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range testNumber.FindAllString(string(body), -1) {
		c.unanswered[n]++
	}
}

// numbers returns how many requests of each number went unanswered.
func (c *cutAnswers) numbers() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.unanswered)
}

// answerWriter notes whether an answer was written.
type answerWriter struct {
	http.ResponseWriter
	answered bool
}

func (a *answerWriter) WriteHeader(status int) {
	a.answered = true
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerWriter) Write(p []byte) (int, error) {
	a.answered = true
	return a.ResponseWriter.Write(p)
}
