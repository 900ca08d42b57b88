package pushchannel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/examples/pushchannel"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

const (
	apiKey   = "test-api-key-0123456789"
	pushKey  = "push-service-key"
	token    = "dGVzdC1kZXZpY2UtdG9rZW4tMDEyMzQ1Njc4OWFiY2RlZg"
	opening  = 1000
	perPush  = 5
	provider = "push"
)

// fakePush is the push service as strict as a real one: a Bearer key,
// a JSON body of exactly token, title, body and ref; an error object when
// it refuses.
type fakePush struct {
	mu     sync.Mutex
	calls  int
	refuse string // the next answer: "" accepts, "bad_token" is a 400, "busy" a 503
}

func (f *fakePush) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/send" || r.Header.Get("Authorization") != "Bearer "+pushKey ||
		r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":"unauthenticated","message":"bad key or route"}}`)
		return
	}
	var body map[string]string
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&body); err != nil || len(body) != 4 || body["token"] == "" || body["body"] == "" || body["ref"] == "" {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":"malformed","message":"token, title, body and ref"}}`)
		return
	}
	f.calls++
	switch refuse := f.refuse; refuse {
	case "":
		json.NewEncoder(w).Encode(map[string]string{"id": "push-" + string(rune('0'+f.calls))})
	default:
		f.refuse = ""
		status := http.StatusBadRequest
		if refuse == "busy" {
			status = http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"code":"`+refuse+`","message":"refused"}}`)
	}
}

func (f *fakePush) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type rig struct {
	n      *notify.Notifier
	wal    *memstore.Wallet
	vendor *fakePush
	api    *httptest.Server
}

func newRig(t *testing.T) *rig {
	t.Helper()
	vendor := &fakePush{}
	srv := httptest.NewServer(vendor)
	t.Cleanup(srv.Close)

	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}, apiKey); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(wal),
		notify.WithChannel(pushchannel.New(pushchannel.NewProvider(srv.URL, pushKey, srv.Client()))),
		notify.WithPrices(&pushchannel.Prices{Next: wallet.DefaultINR(), Push: perPush}),
		notify.WithIdempotency(memstore.NewIdempotency(0)),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
	)
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(n, accounts, httpapi.WithRoute("/push/send", pushchannel.Decode))
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(h)
	t.Cleanup(api.Close)
	return &rig{n: n, wal: wal, vendor: vendor, api: api}
}

func (r *rig) balance(t *testing.T) int64 {
	t.Helper()
	b, err := r.n.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// post sends a push through the HTTP API and returns the status and the
// decoded answer.
func (r *rig) post(t *testing.T, body, key string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.api.URL+httpapi.BasePath+"/push/send", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := r.api.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func (r *rig) record(t *testing.T, id string) *record.Message {
	t.Helper()
	m, err := r.n.Message(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFourthChannelThroughThePublicAPI: a channel the module does not
// know is sent over the HTTP API, priced, charged, recorded, reported,
// and refunded when a report fails it, through public API alone.
func TestFourthChannelThroughThePublicAPI(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()

	status, out := r.post(t, `{"token":"`+token+`","title":"Order","body":"Your order has shipped"}`, "push-1")
	if status != http.StatusOK || out["success"] != true {
		t.Fatalf("send: %d %v", status, out)
	}
	id, _ := out["message_id"].(string)
	if id == "" || r.balance(t) != opening-perPush {
		t.Fatalf("answer %v, balance %d, want %d", out, r.balance(t), opening-perPush)
	}
	m := r.record(t, id)
	if m.Kind != pushchannel.Kind || m.State != record.StateSent || m.Provider != provider || m.Charge.Minor != perPush || m.To != token {
		t.Fatalf("record %+v", m)
	}

	// A repeat of the key is answered from the record: no second push.
	if status, again := r.post(t, `{"token":"`+token+`","title":"Order","body":"Your order has shipped"}`, "push-1"); status != http.StatusOK || again["message_id"] != id {
		t.Fatalf("repeat: %d %v", status, again)
	}
	if r.vendor.count() != 1 || r.balance(t) != opening-perPush {
		t.Fatalf("after the repeat the vendor has %d calls, balance %d", r.vendor.count(), r.balance(t))
	}

	// Delivered, then read: the record moves on.
	if _, err := r.n.Report(ctx, &notify.DeliveryReport{Provider: provider, ProviderMessageID: m.ProviderMessageID, State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	if m := r.record(t, id); m.State != record.StateDelivered {
		t.Fatalf("after the delivered report: %s", m.State)
	}

	// A second push the service later reports failed is refunded (the
	// default refund policy refunds every kind but SMS).
	rc, err := r.n.Send(ctx, &pushchannel.Request{Account: "acme", Token: token, Body: "Your parcel is out for delivery"})
	if err != nil || rc.Cost.Minor != perPush {
		t.Fatalf("second push: %+v, %v", rc, err)
	}
	if _, err := r.n.Report(ctx, &notify.DeliveryReport{Provider: provider, ProviderMessageID: rc.ProviderMessageID,
		State: record.StateFailed, VendorCode: "unregistered"}); err != nil {
		t.Fatal(err)
	}
	if m := r.record(t, rc.MessageID); m.State != record.StateFailed || !m.Refunded || m.Cost().Minor != 0 {
		t.Fatalf("after the failed report: %+v", m)
	}
	if got := r.balance(t); got != opening-perPush {
		t.Fatalf("balance %d, want %d: the failed push is refunded", got, opening-perPush)
	}
}

// TestFourthChannelRefusalsAreRefunded: the service's own error answers
// are certain refusals, refunded at once, busy or not.
func TestFourthChannelRefusalsAreRefunded(t *testing.T) {
	for _, refuse := range []string{"bad_token", "busy"} {
		t.Run(refuse, func(t *testing.T) {
			r := newRig(t)
			r.vendor.mu.Lock()
			r.vendor.refuse = refuse
			r.vendor.mu.Unlock()
			rc, err := r.n.Send(context.Background(), &pushchannel.Request{Account: "acme", Token: token, Body: "hi"})
			if err == nil || rc == nil || rc.Status != record.StateFailed || rc.Cost.Minor != 0 {
				t.Fatalf("receipt %+v, err %v", rc, err)
			}
			if m := r.record(t, rc.MessageID); m.State != record.StateFailed || !m.Refunded {
				t.Fatalf("record %+v", m)
			}
			if got := r.balance(t); got != opening {
				t.Fatalf("balance %d, want %d", got, opening)
			}
		})
	}
}

// TestFourthChannelBadInput: the channel's rules name every bad field
// over HTTP, and nothing is charged or sent.
func TestFourthChannelBadInput(t *testing.T) {
	r := newRig(t)
	status, out := r.post(t, `{"token":"short","title":"`+strings.Repeat("t", 66)+`"}`, "")
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if status != http.StatusBadRequest || !strings.Contains(msg, "token") || !strings.Contains(msg, "title") || !strings.Contains(msg, "body") {
		t.Fatalf("answer %d %v", status, out)
	}
	if status, out := r.post(t, `{"token":"`+token+`","body":"x","sound":"ping"}`, ""); status != http.StatusBadRequest {
		t.Fatalf("an unknown field: %d %v", status, out)
	}
	if r.vendor.count() != 0 || r.balance(t) != opening {
		t.Fatalf("vendor calls %d, balance %d", r.vendor.count(), r.balance(t))
	}
}
