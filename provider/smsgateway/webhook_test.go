package smsgateway_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/wallet"
)

const dlrToken = "dlr-token-5c0e9a1f7b"

// dlrLoop is the whole loop over real HTTP: a Notifier sending SMS
// through the provider to the fake vendor, whose delivery reports reach
// a Webhook on its own server.
type dlrLoop struct {
	n        *notify.Notifier
	wallet   *memstore.Wallet
	records  *memstore.Messages
	vendor   *smsgatewaytest.Server
	hook     *smsgateway.Webhook
	callback string // the URL the vendor is given, token included
	base     string // the receiver's root
}

func newDLRLoop(t *testing.T, opts ...notify.Option) *dlrLoop {
	t.Helper()
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key"})
	t.Cleanup(vendor.Close)
	p, err := smsgateway.New(smsgateway.Config{BaseURL: vendor.URL, APIKey: "vendor-key", HTTPClient: vendor.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: notify.INR(), VendorID: "ACMEIN"}); err != nil {
		t.Fatal(err)
	}
	l := &dlrLoop{wallet: memstore.NewWallet(), vendor: vendor}
	if err := l.wallet.Open("acme", notify.Money{Minor: 10_000, Currency: notify.INR()}); err != nil {
		t.Fatal(err)
	}
	l.records = memstore.NewMessages(l.wallet)
	l.n, err = notify.New(accounts, append([]notify.Option{notify.WithChannel(ch),
		notify.WithWallet(l.wallet, wallet.DefaultINR()), notify.WithMessageStore(l.records)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	l.hook, err = smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: l.n, Token: dlrToken})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/smsgateway/{token}", l.hook)
	mux.Handle("GET /webhooks/smsgateway/{token}", l.hook)
	receiver := httptest.NewServer(mux)
	t.Cleanup(receiver.Close)
	l.base = receiver.URL
	l.callback = receiver.URL + "/webhooks/smsgateway/" + dlrToken
	return l
}

func (l *dlrLoop) send(t *testing.T, to string) *notify.Receipt {
	t.Helper()
	r, err := l.n.SendSMS(context.Background(), &notify.SMSRequest{Account: "acme", To: to, Message: "Your order shipped"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (l *dlrLoop) balance(t *testing.T) int64 {
	t.Helper()
	b, err := l.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

func (l *dlrLoop) message(t *testing.T, id string) *notify.Message {
	t.Helper()
	m, err := l.n.Message(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// post sends body with content type ct to url and returns the status.
func post(t *testing.T, url, ct, body string) int {
	t.Helper()
	resp, err := http.Post(url, ct, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestDLRDelivered(t *testing.T) {
	l := newDLRLoop(t)
	r := l.send(t, "9876543210")
	before := l.balance(t)
	if err := l.vendor.Report(context.Background(), l.callback, r.ProviderMessageID, "DELIVERED", "", ""); err != nil {
		t.Fatal(err)
	}
	m := l.message(t, r.MessageID)
	if m.State != notify.StateDelivered || m.Refunded || l.balance(t) != before {
		t.Fatalf("delivered: %+v, balance %d (was %d)", m, l.balance(t), before)
	}
	// The vendor's time, written in IST without a zone, is kept as such.
	at := m.History[len(m.History)-1].At
	if d := time.Since(at); d < -time.Second || d > time.Minute {
		t.Fatalf("delivered at %v, want about now (the vendor's IST time read as IST)", at)
	}
	if s := l.hook.Stats(); s.Reports != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestDLRUndeliveredKeepsTheCharge: SMS vendors bill the submission, so
// by default an undelivered SMS keeps its charge; a policy that refunds
// does so once, however often the report comes.
func TestDLRUndeliveredKeepsTheCharge(t *testing.T) {
	l := newDLRLoop(t)
	r := l.send(t, "9876543210")
	before := l.balance(t)
	if err := l.vendor.Report(context.Background(), l.callback, r.ProviderMessageID, "UNDELIVERED", "DND", "number in the do-not-disturb registry"); err != nil {
		t.Fatal(err)
	}
	m := l.message(t, r.MessageID)
	if m.State != notify.StateFailed || m.Refunded || m.VendorCode != "UNDELIVERED:DND" ||
		!strings.Contains(m.Error, "do-not-disturb") || l.balance(t) != before {
		t.Fatalf("undelivered: %+v, balance %d (was %d)", m, l.balance(t), before)
	}
	// A delivered report after it changes nothing.
	if err := l.vendor.Report(context.Background(), l.callback, r.ProviderMessageID, "DELIVERED", "", ""); err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, r.MessageID); m.State != notify.StateFailed {
		t.Fatalf("a delivered report after the failure moved it to %s", m.State)
	}

	refunding := newDLRLoop(t, notify.WithRefundPolicy(func(*notify.Message, *notify.DeliveryReport) bool { return true }))
	r = refunding.send(t, "9876543210")
	opening := refunding.balance(t) + r.Cost.Minor
	for range 2 {
		if err := refunding.vendor.Report(context.Background(), refunding.callback, r.ProviderMessageID, "FAILED", "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := refunding.balance(t); got != opening {
		t.Fatalf("balance = %d, want %d: refunded once", got, opening)
	}
}

func TestDLRRefusesWrongTokens(t *testing.T) {
	l := newDLRLoop(t)
	r := l.send(t, "9876543210")
	body := `[{"request_id":"` + r.ProviderMessageID + `","number":"9876543210","status":"UNDELIVERED"}]`
	for name, url := range map[string]string{
		"wrong token":     l.base + "/webhooks/smsgateway/dlr-token-5c0e9a1f7c",
		"a prefix of it":  l.base + "/webhooks/smsgateway/dlr-token-5c0e",
		"longer":          l.callback + "x",
		"in the query":    l.base + "/webhooks/smsgateway/x?token=" + dlrToken,
		"case changed":    l.base + "/webhooks/smsgateway/" + strings.ToUpper(dlrToken),
		"empty last part": l.base + "/webhooks/smsgateway/%20",
	} {
		if code := post(t, url, "application/json", body); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if m := l.message(t, r.MessageID); m.State != notify.StateSent {
		t.Fatalf("a report with a wrong token moved the message to %s", m.State)
	}
	// Mounted without a ServeMux wildcard, the token is the path's last
	// segment.
	rec := httptest.NewRecorder()
	l.hook.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/dlr/", strings.NewReader(body)))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", rec.Code)
	}
	if s := l.hook.Stats(); s.Refused != 7 || s.Reports != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestDLRForms(t *testing.T) {
	l := newDLRLoop(t)
	a, b, c := l.send(t, "9876543210"), l.send(t, "9812345678"), l.send(t, "9000000001")
	// A GET with query parameters, a form POST, and an object wrapping a
	// list: what vendors send.
	resp, err := http.Get(l.callback + "?request_id=" + a.ProviderMessageID + "&number=919876543210&status=DELIVRD&delivered_at=1764050000")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	if code := post(t, l.callback, "application/x-www-form-urlencoded", "Request_ID="+b.ProviderMessageID+"&Status=Delivered"); code != 200 {
		t.Fatalf("form: %d", code)
	}
	if code := post(t, l.callback, "application/json", `{"data":[{"request_id":"`+c.ProviderMessageID+`","status":"EXPIRED","error_code":17}]}`); code != 200 {
		t.Fatalf("wrapped: %d", code)
	}
	ma := l.message(t, a.MessageID)
	if ma.State != notify.StateDelivered || !ma.History[len(ma.History)-1].At.Equal(time.Unix(1764050000, 0)) {
		t.Fatalf("GET report: %+v", ma)
	}
	if m := l.message(t, b.MessageID); m.State != notify.StateDelivered {
		t.Fatalf("form report: %s", m.State)
	}
	if m := l.message(t, c.MessageID); m.State != notify.StateFailed || m.VendorCode != "EXPIRED:17" {
		t.Fatalf("wrapped report: %+v", m)
	}
}

func TestDLRUnknownIgnoredAndBad(t *testing.T) {
	l := newDLRLoop(t)
	if code := post(t, l.callback, "application/json", `{"request_id":"never-issued","number":"9876543210","status":"DELIVERED"}`); code != 200 {
		t.Fatalf("unknown request ID: %d", code)
	}
	if code := post(t, l.callback, "application/json", `{"request_id":"x","status":"PENDING"}`); code != 200 {
		t.Fatalf("pending: %d", code)
	}
	for name, body := range map[string]string{
		"not JSON":        `{"request_id":`,
		"no request ID":   `{"status":"DELIVERED"}`,
		"empty list":      `[]`,
		"a list of lists": `[[1]]`,
		"a string":        `"DELIVERED"`,
	} {
		if code := post(t, l.callback, "application/json", body); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, code)
		}
	}
	if code := post(t, l.callback, "application/json", `[`+strings.Repeat(" ", 1<<20)+`]`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d, want 413", code)
	}
	req, _ := http.NewRequest(http.MethodPut, l.callback, nil)
	rec := httptest.NewRecorder()
	l.hook.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
	if s := l.hook.Stats(); s.Unmatched != 1 || s.Ignored != 1 || s.Malformed != 6 {
		t.Fatalf("stats = %+v", s)
	}
	for name, cfg := range map[string]smsgateway.WebhookConfig{
		"Reporter": {Token: dlrToken},
		"Token":    {Reporter: l.n, Token: "short"},
	} {
		if _, err := smsgateway.NewWebhook(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewWebhook without a good %s: %v", name, err)
		}
	}
	if _, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: l.n, Token: "a/b/c/d/e/f/g/h/i/j"}); err == nil || strings.Contains(err.Error(), "a/b") {
		t.Errorf("a token with slashes: %v", err)
	}
}

// TestDLRTellsRecipientsApart: one vendor request to several numbers has
// one request ID; each report names its number, and moves only that
// number's record.
func TestDLRTellsRecipientsApart(t *testing.T) {
	l := newDLRLoop(t)
	ctx := context.Background()
	now := time.Now()
	for _, m := range []*notify.Message{
		{ID: "m-1", Account: "acme", Kind: notify.KindSMS, Request: notify.KindSMS, To: "9876543210", Provider: "smsgateway", CreatedAt: now},
		{ID: "m-2", Account: "acme", Kind: notify.KindSMS, Request: notify.KindSMS, To: "9812345678", Provider: "smsgateway", CreatedAt: now},
	} {
		if _, err := l.records.Open(ctx, m); err != nil {
			t.Fatal(err)
		}
		for _, st := range []notify.MessageState{notify.StateAttempting, notify.StateSent} {
			if _, err := l.records.Move(ctx, "acme", m.ID, notify.MessageUpdate{State: st, At: now, ProviderMessageID: "req-shared"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := smsgatewaytest.PostDLR(ctx, l.callback,
		smsgatewaytest.DLR{RequestID: "req-shared", Number: "919812345678", Status: "UNDELIVERED"},
		smsgatewaytest.DLR{RequestID: "req-shared", Number: "9876543210", Status: "DELIVERED"})
	if err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, "m-1"); m.State != notify.StateDelivered {
		t.Fatalf("m-1 is %s, want delivered", m.State)
	}
	if m := l.message(t, "m-2"); m.State != notify.StateFailed {
		t.Fatalf("m-2 is %s, want failed", m.State)
	}
}

// TestDLRStoreTroubleAsksForARetry: a report that cannot be applied now
// is 503, so that the vendor calls again.
func TestDLRStoreTroubleAsksForARetry(t *testing.T) {
	h, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Token: dlrToken,
		Reporter: reporterFunc(func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error) {
			return nil, notify.Errorf(notify.CodeUnavailable, "database down")
		})})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/dlr/"+dlrToken,
		bytes.NewReader([]byte(`{"request_id":"r","status":"DELIVERED"}`))))
	if rec.Code != http.StatusServiceUnavailable || h.Stats().Failed != 1 {
		t.Fatalf("store down: %d, %+v", rec.Code, h.Stats())
	}
}

type reporterFunc func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error)

func (f reporterFunc) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	return f(ctx, r)
}
