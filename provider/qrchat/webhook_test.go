package qrchat_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// hookKey is the hmac.key of the fake gateway's webhook.
const hookKey = "waha-hmac-key-5d1f0c8e2b7a4e96"

// ackLoop is the whole loop over real HTTP: a Notifier (a notifytest
// Kit, for the account "acme") sends chat through a qrchat Provider to
// the fake gateway, whose message.ack events reach a Webhook on its own
// server.
type ackLoop struct {
	*notifytest.Kit
	gw       *fakeWAHA
	receiver *httptest.Server
	hook     *qrchat.Webhook
}

// newAckLoop builds the loop; the gateway signs its events with secret
// and the receiver requires it (neither when it is empty).
func newAckLoop(t *testing.T, secret string) *ackLoop {
	t.Helper()
	l := &ackLoop{gw: newFakeWAHA(t)}
	ch, err := chat.New(chat.Config{QR: newProvider(t, l.gw, qrchat.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	l.Kit = notifytest.New(t, notifytest.WithBalance(10_000), notifytest.WithNotifierOptions(notify.WithChannel(ch)),
		notifytest.WithAccount(notify.Account{ID: "acme", Currency: record.INR(), Settings: chat.Settings{PrimaryGateway: chat.GatewayQR}.Map()}))
	if l.hook, err = qrchat.NewWebhook(qrchat.WebhookConfig{Reporter: l.Notifier, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/waha", l.hook)
	l.receiver = httptest.NewServer(mux)
	t.Cleanup(l.receiver.Close)
	l.gw.setWebhook(l.receiver.URL+"/webhooks/waha", secret)
	return l
}

func (l *ackLoop) send(t *testing.T) *notify.Receipt {
	t.Helper()
	r, err := l.Notifier.Send(context.Background(), &chat.Request{Account: "acme", To: "9876543210",
		Message: "Your order shipped", Gateway: chat.GatewayQR})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if r.Status != record.StateSent || r.ProviderMessageID == "" || r.Cost.Minor <= 0 {
		t.Fatalf("send: %+v, want sent, charged, with the gateway's ID", r)
	}
	return r
}

// historyOf lists the states m went through, oldest first.
func historyOf(m *record.Message) string {
	s := make([]string, len(m.History))
	for i, c := range m.History {
		s[i] = string(c.State)
	}
	return strings.Join(s, ",")
}

// stepAt returns when m entered state, from its history.
func stepAt(t *testing.T, m *record.Message, state record.State) time.Time {
	t.Helper()
	for _, c := range m.History {
		if c.State == state {
			return c.At
		}
	}
	t.Fatalf("the history %s has no %s", historyOf(m), state)
	return time.Time{}
}

// eventAt reads an event's timestamp (Unix milliseconds).
func eventAt(t *testing.T, body []byte) time.Time {
	t.Helper()
	var e struct {
		Timestamp int64 `json:"timestamp"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Timestamp == 0 {
		t.Fatalf("event without a timestamp: %s", body)
	}
	return time.UnixMilli(e.Timestamp)
}

// TestWebhookWholeLoop: a message sent through the gateway with each
// engine is reported sent, delivered, read and played; the record moves
// to delivered, then read, at the events' times, keeping the ID the send
// answered. NOWEB and GOWS answer a send with the bare ID but report the
// serialized one, which the receiver matches too.
func TestWebhookWholeLoop(t *testing.T) {
	for _, engine := range []string{"WEBJS", "NOWEB", "GOWS"} {
		t.Run(engine, func(t *testing.T) {
			l := newAckLoop(t, hookKey)
			l.gw.setEngine(engine)
			rc := l.send(t)
			bare := engine != "WEBJS"
			if strings.HasPrefix(rc.ProviderMessageID, "true_") == bare {
				t.Fatalf("%s answered the send with %q", engine, rc.ProviderMessageID)
			}
			opening := l.Balance(t)

			if code := l.gw.ack(t, rc.ProviderMessageID, 1); code != http.StatusOK {
				t.Fatalf("SERVER ack: %d", code)
			}
			if m := l.Message(t, rc.MessageID); m.State != record.StateSent {
				t.Fatalf("after SERVER: %s", m.State)
			}
			delivered := l.gw.ackEvent(t, rc.ProviderMessageID, 2)
			if code := l.gw.deliver(t, delivered); code != http.StatusOK {
				t.Fatalf("DEVICE ack: %d", code)
			}
			m := l.Message(t, rc.MessageID)
			if m.State != record.StateDelivered || !stepAt(t, m, record.StateDelivered).Equal(eventAt(t, delivered)) {
				t.Fatalf("after DEVICE: %s (%s), delivered at %v, want %v", m.State, historyOf(m),
					stepAt(t, m, record.StateDelivered), eventAt(t, delivered))
			}
			read := l.gw.ackEvent(t, rc.ProviderMessageID, 3)
			if code := l.gw.deliver(t, read); code != http.StatusOK {
				t.Fatalf("READ ack: %d", code)
			}
			if code := l.gw.ack(t, rc.ProviderMessageID, 4); code != http.StatusOK {
				t.Fatalf("PLAYED ack: %d", code)
			}
			m = l.Message(t, rc.MessageID)
			if m.State != record.StateRead || historyOf(m) != "pending,attempting,sent,delivered,read" {
				t.Fatalf("after READ and PLAYED: %s (%s)", m.State, historyOf(m))
			}
			if !stepAt(t, m, record.StateRead).Equal(eventAt(t, read)) {
				t.Fatalf("read at %v, want the event's time %v", stepAt(t, m, record.StateRead), eventAt(t, read))
			}
			if m.ProviderMessageID != rc.ProviderMessageID || m.Refunded || l.Balance(t) != opening {
				t.Fatalf("record %+v, balance %d (was %d): a read message keeps its ID and its charge", m, l.Balance(t), opening)
			}
			if s := l.hook.Stats(); s.Reports != 4 || s.Unmatched != 0 || s.Ignored != 0 || s.Refused != 0 {
				t.Fatalf("stats = %+v", s)
			}
		})
	}
}

// TestWebhookErrorAckFailsAndRefundsOnce: an ERROR ack fails the message
// and refunds it (the chat channel refunds chat failures);
// the gateway's retries of the same event change nothing, nor does a
// later ack.
func TestWebhookErrorAckFailsAndRefundsOnce(t *testing.T) {
	l := newAckLoop(t, hookKey)
	opening := l.Balance(t)
	rc := l.send(t)
	if got := l.Balance(t); got != opening-rc.Cost.Minor {
		t.Fatalf("balance after the send = %d, want %d", got, opening-rc.Cost.Minor)
	}
	failed := l.gw.ackEvent(t, rc.ProviderMessageID, -1)
	for i := range 3 {
		if code := l.gw.deliver(t, failed); code != http.StatusOK {
			t.Fatalf("ERROR ack #%d: %d", i+1, code)
		}
	}
	m := l.Message(t, rc.MessageID)
	if m.State != record.StateFailed || !m.Refunded || m.VendorCode != "ack:-1" || notify.Code(m.ErrorCode) != notify.CodeRejected ||
		!strings.Contains(m.Error, "the gateway reported an error delivering the message") {
		t.Fatalf("after ERROR: %+v", m)
	}
	if got := l.Balance(t); got != opening {
		t.Fatalf("balance = %d, want %d: refunded once", got, opening)
	}
	if code := l.gw.ack(t, rc.ProviderMessageID, 3); code != http.StatusOK {
		t.Fatalf("READ after ERROR: %d", code)
	}
	if m := l.Message(t, rc.MessageID); m.State != record.StateFailed || l.Balance(t) != opening {
		t.Fatalf("READ after ERROR moved the record to %s, balance %d", m.State, l.Balance(t))
	}
	if s := l.hook.Stats(); s.Reports != 4 || s.Unmatched != 0 || s.Failed != 0 {
		t.Fatalf("stats = %+v", s)
	}

	// Newer gateways say why: {"error": {"code": "463", "reason": ...}}.
	rc = l.send(t)
	body := l.gw.ackEvent(t, rc.ProviderMessageID, -1, func(p map[string]any) {
		p["error"] = map[string]any{"code": "463", "blocked": true, "reason": "account_restricted"}
	})
	if code := l.gw.deliver(t, body); code != http.StatusOK {
		t.Fatalf("ERROR ack with a reason: %d", code)
	}
	m = l.Message(t, rc.MessageID)
	if m.State != record.StateFailed || !strings.Contains(m.Error, "account_restricted (code 463)") || m.VendorCode != "ack:-1" {
		t.Fatalf("after ERROR with a reason: %+v", m)
	}
	if got := l.Balance(t); got != opening {
		t.Fatalf("balance = %d, want %d", got, opening)
	}
}

// TestWebhookRefusesForgeries: with a secret, an event without the
// gateway's signature of its very body is refused with 401 and changes
// nothing, however it is forged.
func TestWebhookRefusesForgeries(t *testing.T) {
	l := newAckLoop(t, hookKey)
	rc := l.send(t)
	charged := l.Balance(t)
	body := l.gw.ackEvent(t, rc.ProviderMessageID, -1) // a refund, if taken
	other := l.gw.ackEvent(t, rc.ProviderMessageID, 2)
	sig := wahaHMAC(hookKey, body)
	mac256 := hmac.New(sha256.New, []byte(hookKey))
	mac256.Write(body)
	sha256Sig := hex.EncodeToString(mac256.Sum(nil))
	tampered := bytes.Replace(other, []byte(`"ack":2`), []byte(`"ack":-1`), 1)
	if bytes.Equal(tampered, other) {
		t.Fatal("the test could not tamper with the event")
	}
	cases := []struct {
		name      string
		body      []byte
		sig, algo string
	}{
		{"no signature", body, "", ""},
		{"no signature, algorithm only", body, "", "sha512"},
		{"another key's", body, wahaHMAC("not-the-key", body), "sha512"},
		{"an empty key's", body, wahaHMAC("", body), "sha512"},
		{"another event's", body, wahaHMAC(hookKey, other), "sha512"},
		{"a tampered body", tampered, wahaHMAC(hookKey, other), "sha512"},
		{"truncated", body, sig[:64], "sha512"},
		{"not hex", body, "zz" + sig[2:], "sha512"},
		{"HMAC-SHA256", body, sha256Sig, "sha256"},
		{"SHA512 labelled sha1", body, sig, "sha1"},
	}
	for _, c := range cases {
		hdr := http.Header{"Content-Type": {"application/json"}}
		if c.sig != "" {
			hdr.Set("X-Webhook-Hmac", c.sig)
		}
		if c.algo != "" {
			hdr.Set("X-Webhook-Hmac-Algorithm", c.algo)
		}
		if code := l.gw.post(t, c.body, hdr); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", c.name, code)
		}
	}
	if m := l.Message(t, rc.MessageID); m.State != record.StateSent || m.Refunded {
		t.Fatalf("a forged event moved the record to %s (refunded %v)", m.State, m.Refunded)
	}
	if got := l.Balance(t); got != charged {
		t.Fatalf("balance = %d, want %d: a forged event moved money", got, charged)
	}
	if s := l.hook.Stats(); s.Refused != uint64(len(cases)) || s.Reports != 0 || s.Malformed != 0 {
		t.Fatalf("stats = %+v", s)
	}
	// The genuine event, signed as the gateway signs it, is taken.
	if code := l.gw.deliver(t, body); code != http.StatusOK {
		t.Fatalf("genuine: %d", code)
	}
	if m := l.Message(t, rc.MessageID); m.State != record.StateFailed {
		t.Fatalf("genuine ERROR: %s", m.State)
	}
}

// TestWebhookOutOfOrderAndReplayed: READ arrives before DEVICE, then
// both again: the record is read, with delivered in its history at the
// DEVICE event's time, and the repeats change nothing.
func TestWebhookOutOfOrderAndReplayed(t *testing.T) {
	l := newAckLoop(t, hookKey)
	rc := l.send(t)
	delivered := l.gw.ackEvent(t, rc.ProviderMessageID, 2)
	read := l.gw.ackEvent(t, rc.ProviderMessageID, 3)
	for _, body := range [][]byte{read, delivered, read, delivered} {
		if code := l.gw.deliver(t, body); code != http.StatusOK {
			t.Fatalf("%d", code)
		}
	}
	m := l.Message(t, rc.MessageID)
	if m.State != record.StateRead || historyOf(m) != "pending,attempting,sent,delivered,read" {
		t.Fatalf("read before delivered: %s (%s)", m.State, historyOf(m))
	}
	if !stepAt(t, m, record.StateDelivered).Equal(eventAt(t, delivered)) {
		t.Fatalf("delivered at %v, want the event's time %v", stepAt(t, m, record.StateDelivered), eventAt(t, delivered))
	}
	if s := l.hook.Stats(); s.Reports != 4 || s.Unmatched != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookUnknownAndIgnoredEvents: an ack of a message no record has
// is acknowledged and counted unmatched; PENDING acks, acks of messages
// the session received, unknown levels and other events are acknowledged
// and ignored. None changes the record.
func TestWebhookUnknownAndIgnoredEvents(t *testing.T) {
	l := newAckLoop(t, hookKey)
	rc := l.send(t)
	id := rc.ProviderMessageID
	if code := l.gw.deliver(t, l.gw.ackEventFor("919876543210@c.us", "3EB0FFFFFFFFFFFFFFFF", 2)); code != http.StatusOK {
		t.Fatalf("unknown ID: %d", code)
	}
	if s := l.hook.Stats(); s.Unmatched != 1 || s.Reports != 0 {
		t.Fatalf("after an unknown ID: %+v", s)
	}
	ignored := map[string][]byte{
		"PENDING":          l.gw.ackEvent(t, id, 0),
		"received message": l.gw.ackEvent(t, id, 3, func(p map[string]any) { p["fromMe"] = false }),
		"unknown level":    l.gw.ackEvent(t, id, 7),
		"message event":    l.gw.envelope("message", map[string]any{"id": "false_919876543210@c.us_AAAA", "fromMe": false, "body": "hi"}),
		"group read":       l.gw.envelope("message.ack.group", map[string]any{"id": id, "fromMe": true, "ack": 3, "ackName": "READ"}),
		"session status":   l.gw.envelope("session.status", map[string]any{"name": "default", "status": "WORKING"}),
	}
	for name, body := range ignored {
		if code := l.gw.deliver(t, body); code != http.StatusOK {
			t.Errorf("%s: %d, want 200", name, code)
		}
	}
	if m := l.Message(t, rc.MessageID); m.State != record.StateSent || historyOf(m) != "pending,attempting,sent" {
		t.Fatalf("record moved to %s (%s)", m.State, historyOf(m))
	}
	if s := l.hook.Stats(); s.Unmatched != 1 || s.Ignored != uint64(len(ignored)) || s.Reports != 0 || s.Malformed != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookBadRequests: bodies that are not events are 400, bodies
// over MaxBody 413, other methods 405; none reaches the Reporter.
func TestWebhookBadRequests(t *testing.T) {
	l := newAckLoop(t, hookKey)
	for name, body := range map[string]string{
		"cut short":         `{"event":"message.ack","payload":`,
		"not an object":     `[{"event":"message.ack"}]`,
		"ack not a number":  `{"event":"message.ack","session":"default","payload":{"id":"3EB0","fromMe":true,"ack":"READ"}}`,
		"payload not an ob": `{"event":"message.ack","session":"default","payload":"3EB0"}`,
	} {
		if code := l.gw.deliver(t, []byte(body)); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, code)
		}
	}
	huge := append([]byte(`{"event":"message.ack","pad":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	huge = append(huge, `"}`...)
	if code := l.gw.deliver(t, huge); code != http.StatusRequestEntityTooLarge {
		t.Errorf("over 1 MiB: %d, want 413", code)
	}
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		resp := vendorhttptest.Do(t, l.receiver.Client(), method, l.receiver.URL+"/webhooks/waha", nil, nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: %d, Allow %q", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if s := l.hook.Stats(); s.Malformed != 5 || s.Reports != 0 || s.Refused != 0 {
		t.Fatalf("stats = %+v", s)
	}

	// A smaller bound.
	rep := &recorder{}
	h, err := qrchat.NewWebhook(qrchat.WebhookConfig{Reporter: rep, Secret: hookKey, MaxBody: 256})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	small := []byte(`{"event":"message.ack","session":"default","payload":{"id":"3EB0A","fromMe":true,"ack":2}}`)
	if code := postSigned(t, srv.URL, small, hookKey); code != http.StatusOK {
		t.Errorf("under the bound: %d", code)
	}
	big := append(append([]byte{}, small[:len(small)-1]...), `,"pad":"`+strings.Repeat("x", 256)+`"}`...)
	if code := postSigned(t, srv.URL, big, hookKey); code != http.StatusRequestEntityTooLarge {
		t.Errorf("over MaxBody: %d, want 413", code)
	}
	if len(rep.calls()) != 1 {
		t.Errorf("the Reporter got %d reports, want 1", len(rep.calls()))
	}

	for _, bad := range []struct {
		field string
		cfg   qrchat.WebhookConfig
	}{
		{"Reporter", qrchat.WebhookConfig{Secret: hookKey}},
		{"Session", qrchat.WebhookConfig{Reporter: rep, Secret: hookKey, Session: "no spaces allowed"}},
		{"Secret", qrchat.WebhookConfig{Reporter: rep, Secret: hookKey + "\n"}},
		{"Secret", qrchat.WebhookConfig{Reporter: rep}}, // none: a receiver anyone could use to refund messages
	} {
		if _, err := qrchat.NewWebhook(bad.cfg); err == nil || !strings.Contains(err.Error(), bad.field) || strings.Contains(err.Error(), hookKey) {
			t.Errorf("NewWebhook without a good %s: %v", bad.field, err)
		}
	}
}

// recorder is a Reporter that keeps the reports it gets and knows the
// messages in known (by provider ID): others are NotFound, or, with
// inFlight, not recorded yet (Unavailable, notify.ErrNotRecordedYet), as
// notify.Notifier.Report answers while the provider has a send in flight.
type recorder struct {
	mu       sync.Mutex
	known    map[string]bool
	inFlight bool
	err      error
	got      []notify.DeliveryReport
}

func (r *recorder) Report(_ context.Context, d *notify.DeliveryReport) (*notify.ReportResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, *d)
	if r.err != nil {
		return nil, r.err
	}
	if r.known != nil && !r.known[d.ProviderMessageID] {
		if r.inFlight {
			return nil, &notify.Error{Code: notify.CodeUnavailable, Op: "test", Err: notify.ErrNotRecordedYet}
		}
		return nil, &notify.Error{Code: notify.CodeNotFound, Op: "test"}
	}
	return &notify.ReportResult{Moved: 1}, nil
}

func (r *recorder) calls() []notify.DeliveryReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.DeliveryReport(nil), r.got...)
}

func (r *recorder) ids() string {
	var ids []string
	for _, d := range r.calls() {
		ids = append(ids, d.ProviderMessageID)
	}
	return strings.Join(ids, " ")
}

// postSigned posts body to url signed as the gateway signs it with key.
func postSigned(t *testing.T, url string, body []byte, key string) int {
	t.Helper()
	hdr := http.Header{"Content-Type": {"application/json"}, "X-Webhook-Hmac": {wahaHMAC(key, body)},
		"X-Webhook-Hmac-Algorithm": {"sha512"}}
	return vendorhttptest.Do(t, nil, http.MethodPost, url, body, hdr).StatusCode
}

// newRecordedHook serves a Webhook for cfg (Secret hookKey unless set)
// with rep as its Reporter.
func newRecordedHook(t *testing.T, rep *recorder, cfg qrchat.WebhookConfig) (*qrchat.Webhook, string) {
	t.Helper()
	cfg.Reporter = rep
	if cfg.Secret == "" {
		cfg.Secret = hookKey
	}
	h, err := qrchat.NewWebhook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL
}

// TestWebhookMatchesSerializedAndBareIDs: the report names the message
// by the serialized ID the gateway sends; a record that keeps the bare
// ID (the NOWEB and GOWS send answers) is found by a second report with
// it; a bare ID in the event is tried alone.
func TestWebhookMatchesSerializedAndBareIDs(t *testing.T) {
	const ser, bare = "true_919876543210@c.us_3EB0C431C26A1916", "3EB0C431C26A1916"
	event := func(id string) []byte {
		return []byte(`{"id":"evt_01k6abc","timestamp":1760022600123,"event":"message.ack","session":"default",` +
			`"payload":{"id":"` + id + `","from":"919876543210@c.us","to":null,"participant":null,"fromMe":true,"ack":2,"ackName":"DEVICE"},"engine":"NOWEB"}`)
	}
	for _, c := range []struct {
		name      string
		id        string
		known     []string
		tried     string
		unmatched uint64
	}{
		{"record keeps the serialized ID", ser, []string{ser}, ser, 0},
		{"record keeps the bare ID", ser, []string{bare}, ser + " " + bare, 0},
		{"no record", ser, nil, ser + " " + bare, 1},
		{"bare ID in the event", bare, []string{bare}, bare, 0},
		{"bare ID, no record", bare, []string{ser}, bare, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &recorder{known: map[string]bool{}}
			for _, k := range c.known {
				rep.known[k] = true
			}
			h, url := newRecordedHook(t, rep, qrchat.WebhookConfig{})
			if code := postSigned(t, url, event(c.id), hookKey); code != http.StatusOK {
				t.Fatalf("%d", code)
			}
			if got := rep.ids(); got != c.tried {
				t.Fatalf("tried %q, want %q", got, c.tried)
			}
			// The recipient is the chat of a serialized ID; "from" is not
			// read: WEBJS puts the session's own number there.
			to := ""
			if c.id == ser {
				to = "919876543210"
			}
			for _, d := range rep.calls() {
				if d.State != record.StateDelivered || d.Provider != "qrchat" || d.To != to ||
					!d.At.Equal(time.UnixMilli(1760022600123)) {
					t.Fatalf("report %+v", d)
				}
			}
			if s := h.Stats(); s.Unmatched != c.unmatched || s.Reports != 1-c.unmatched {
				t.Fatalf("stats = %+v", s)
			}
		})
	}
}

// TestWebhookTriesEveryIDWhileSendsAreInFlight: while the session has a
// send in flight, Report answers an ID no record has with "not recorded
// yet" (Unavailable) rather than NotFound. The receiver still tries the
// bare ID, which a record may keep (NOWEB, GOWS), and the report applies
// there; only when no ID is recorded is the answer 503, so that the
// gateway sends the event again. A store failure stops at the first ID
// (TestWebhookStoreTroubleAsksForARetry).
func TestWebhookTriesEveryIDWhileSendsAreInFlight(t *testing.T) {
	const ser, bare = "true_919876543210@c.us_3EB0C431C26A1916", "3EB0C431C26A1916"
	body := []byte(`{"event":"message.ack","session":"default","payload":{"id":"` + ser + `","fromMe":true,"ack":3}}`)
	for _, c := range []struct {
		name  string
		known []string
		code  int
		stats notify.WebhookStats
	}{
		{"the record keeps the bare ID", []string{bare}, http.StatusOK, notify.WebhookStats{Reports: 1}},
		{"neither ID recorded yet", []string{}, http.StatusServiceUnavailable, notify.WebhookStats{Failed: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &recorder{known: map[string]bool{}, inFlight: true}
			for _, k := range c.known {
				rep.known[k] = true
			}
			h, url := newRecordedHook(t, rep, qrchat.WebhookConfig{})
			if code := postSigned(t, url, body, hookKey); code != c.code {
				t.Fatalf("answered %d, want %d (tried %q)", code, c.code, rep.ids())
			}
			if got := rep.ids(); got != ser+" "+bare {
				t.Fatalf("tried %q, want both IDs", got)
			}
			if s := h.Stats(); s != c.stats {
				t.Fatalf("stats = %+v, want %+v", s, c.stats)
			}
		})
	}
}

// TestWebhookReports: what each event becomes, with WAHA's documented
// payload among them.
func TestWebhookReports(t *testing.T) {
	type want struct {
		state          record.State
		to, id         string
		at             time.Time
		vendor, errSub string
	}
	for _, c := range []struct {
		name string
		cfg  qrchat.WebhookConfig
		body string
		want want
	}{
		{"the documented payload", qrchat.WebhookConfig{},
			`{"event":"message.ack","session":"default","engine":"WEBJS","payload":{"id":"true_11111111111@c.us_4CC5EDD64BC22EBA6D639F2AF571346C","from":"11111111111@c.us","participant":null,"fromMe":true,"ack":3,"ackName":"READ"}}`,
			want{state: record.StateRead, to: "11111111111", id: "true_11111111111@c.us_4CC5EDD64BC22EBA6D639F2AF571346C"}},
		{"SERVER in seconds", qrchat.WebhookConfig{},
			`{"timestamp":1760022600,"event":"message.ack","session":"default","payload":{"id":"true_919876543210@c.us_3EB0A","fromMe":true,"ack":1}}`,
			want{state: record.StateSent, to: "919876543210", id: "true_919876543210@c.us_3EB0A", at: time.Unix(1760022600, 0)}},
		{"PLAYED by name only", qrchat.WebhookConfig{Provider: "qr-main"},
			`{"event":"message.ack","session":"default","payload":{"id":"3EB0B","to":"919876543210@c.us","fromMe":true,"ackName":"PLAYED"}}`,
			want{state: record.StateRead, to: "919876543210", id: "3EB0B"}},
		{"a @lid chat names no number", qrchat.WebhookConfig{},
			`{"event":"message.ack","session":"default","payload":{"id":"true_143256789012345@lid_3EB0C","fromMe":true,"ack":2}}`,
			want{state: record.StateDelivered, id: "true_143256789012345@lid_3EB0C"}},
		{"ERROR with a text", qrchat.WebhookConfig{},
			`{"timestamp":1760022600500,"event":"message.ack","session":"default","payload":{"id":"true_919876543210@c.us_3EB0D","fromMe":true,"ack":-1,"ackName":"ERROR","error":"number\nnot on the network"}}`,
			want{state: record.StateFailed, to: "919876543210", id: "true_919876543210@c.us_3EB0D", at: time.UnixMilli(1760022600500),
				vendor: "ack:-1", errSub: "qrchat: number not on the network"}},
		{"ERROR without one", qrchat.WebhookConfig{},
			`{"event":"message.ack","session":"default","payload":{"id":"true_919876543210@c.us_3EB0E","fromMe":true,"ack":-1}}`,
			want{state: record.StateFailed, to: "919876543210", id: "true_919876543210@c.us_3EB0E",
				vendor: "ack:-1", errSub: "qrchat: the gateway reported an error delivering the message"}},
		{"the configured session", qrchat.WebhookConfig{Session: "sales"},
			`{"event":"message.ack","session":"sales","payload":{"id":"3EB0F","fromMe":true,"ack":2}}`,
			want{state: record.StateDelivered, id: "3EB0F"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &recorder{}
			_, url := newRecordedHook(t, rep, c.cfg)
			if code := postSigned(t, url, []byte(c.body), hookKey); code != http.StatusOK {
				t.Fatalf("%d", code)
			}
			got := rep.calls()
			if len(got) != 1 {
				t.Fatalf("%d reports", len(got))
			}
			d, w := got[0], c.want
			provider := c.cfg.Provider
			if provider == "" {
				provider = "qrchat"
			}
			if d.State != w.state || d.To != w.to || d.ProviderMessageID != w.id || d.Provider != provider ||
				!d.At.Equal(w.at) || d.VendorCode != w.vendor || !strings.Contains(d.Error, w.errSub) || (w.errSub == "" && d.Error != "") {
				t.Fatalf("report %+v, want %+v", d, w)
			}
		})
	}

	// Events of another session are acknowledged and ignored.
	rep := &recorder{}
	h, url := newRecordedHook(t, rep, qrchat.WebhookConfig{Session: "sales"})
	if code := postSigned(t, url, []byte(`{"event":"message.ack","session":"default","payload":{"id":"3EB0F","fromMe":true,"ack":2}}`), hookKey); code != http.StatusOK {
		t.Fatalf("another session: %d", code)
	}
	if len(rep.calls()) != 0 || h.Stats().Ignored != 1 {
		t.Fatalf("another session: %d reports, stats %+v", len(rep.calls()), h.Stats())
	}
}

// TestWebhookVerifiesWAHAsExample: the signature example of WAHA's
// webhook documentation verifies.
func TestWebhookVerifiesWAHAsExample(t *testing.T) {
	const (
		body = `{"event":"message","session":"default","engine":"WEBJS"}`
		key  = "my-secret-key"
		sig  = "208f8a55dde9e05519e898b10b89bf0d0b3b0fdf11fdbf09b6b90476301b98d8097c462b2b17a6ce93b6b47a136cf2e78a33a63f6752c2c1631777076153fa89"
	)
	rep := &recorder{}
	h, url := newRecordedHook(t, rep, qrchat.WebhookConfig{Secret: key})
	post := func(sig string) int {
		hdr := http.Header{"X-Webhook-Hmac": {sig}, "X-Webhook-Hmac-Algorithm": {"sha512"}}
		return vendorhttptest.Do(t, nil, http.MethodPost, url, []byte(body), hdr).StatusCode
	}
	if code := post(sig); code != http.StatusOK {
		t.Fatalf("WAHA's example: %d", code)
	}
	if code := post(strings.ToUpper(sig)); code != http.StatusOK {
		t.Fatalf("upper-case hex: %d", code)
	}
	if code := post("308f8a" + sig[6:]); code != http.StatusUnauthorized {
		t.Fatalf("one digit changed: %d", code)
	}
	if s := h.Stats(); s.Ignored != 2 || s.Refused != 1 || len(rep.calls()) != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookStoreTroubleAsksForARetry: a report that cannot be applied
// now is answered 503, so that the gateway sends the event again.
func TestWebhookStoreTroubleAsksForARetry(t *testing.T) {
	rep := &recorder{err: notify.Errorf(notify.CodeUnavailable, "database down")}
	h, url := newRecordedHook(t, rep, qrchat.WebhookConfig{})
	body := []byte(`{"event":"message.ack","session":"default","payload":{"id":"true_919876543210@c.us_3EB0A","fromMe":true,"ack":2}}`)
	if code := postSigned(t, url, body, hookKey); code != http.StatusServiceUnavailable {
		t.Fatalf("store down: %d, want 503", code)
	}
	if s := h.Stats(); s.Failed != 1 || s.Reports != 0 || rep.ids() != "true_919876543210@c.us_3EB0A" {
		t.Fatalf("stats %+v, tried %q: an Unavailable answer is not NotFound, so no other ID is tried", s, rep.ids())
	}
}

// TestWebhookRefusesForgeriesUnread: a forged event of 900 KiB whose
// X-Webhook-Hmac is missing or not 128 hex digits, or whose
// X-Webhook-Hmac-Algorithm is not sha512, is 401 before a byte of its
// body is read; one that is not JSON is 415 and one declaring more than
// MaxBody 413, however signed, unread too. None reports anything.
func TestWebhookRefusesForgeriesUnread(t *testing.T) {
	rep := &recorder{}
	h, _ := newRecordedHook(t, rep, qrchat.WebhookConfig{})
	const size = 900 << 10
	wellFormed := wahaHMAC(hookKey, []byte("another body"))
	for _, c := range []struct {
		name, sig, algo, ct string
		length              int64
		want                int
	}{
		{"no signature", "", "sha512", "application/json", size, http.StatusUnauthorized},
		{"garbage", "garbage", "sha512", "application/json", size, http.StatusUnauthorized},
		{"truncated", wellFormed[:64], "sha512", "application/json", size, http.StatusUnauthorized},
		{"not hex", strings.Repeat("zz", 64), "sha512", "application/json", size, http.StatusUnauthorized},
		{"sha256", wellFormed, "sha256", "application/json", size, http.StatusUnauthorized},
		{"not JSON", wellFormed, "sha512", "text/plain", size, http.StatusUnsupportedMediaType},
		{"over MaxBody", wellFormed, "sha512", "application/json", qrchat.DefaultMaxBody + 1, http.StatusRequestEntityTooLarge},
	} {
		body := vendorhttptest.NewBody(int(c.length))
		req := httptest.NewRequest(http.MethodPost, "/webhooks/waha", nil)
		req.Body, req.ContentLength = body, c.length
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("X-Webhook-Hmac-Algorithm", c.algo)
		if c.sig != "" {
			req.Header.Set("X-Webhook-Hmac", c.sig)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || body.BytesRead() != 0 {
			t.Errorf("%s: %d with %d bytes of the body read; want %d with none", c.name, rec.Code, body.BytesRead(), c.want)
		}
	}
	if s := h.Stats(); len(rep.calls()) != 0 || s.Refused != 5 || s.Malformed != 2 || s.Reports != 0 {
		t.Fatalf("%d reported, stats %+v", len(rep.calls()), s)
	}
}
