package cloudchat_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/cloudchat/cloudchattest"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

const (
	verifyToken = "verify-me-3c9a"
	outside     = "9000000001" // never wrote in: outside the window
)

// reportLoop is the whole loop over real HTTP: a Notifier (a notifytest
// Kit, for the account "acme") sending chat through a cloudchat Provider
// to the fake vendor, whose status webhooks reach a Webhook on its own
// server.
type reportLoop struct {
	*notifytest.Kit
	vendor   *cloudchattest.Server
	receiver *httptest.Server
	hook     *cloudchat.Webhook
}

func newReportLoop(t *testing.T) *reportLoop {
	t.Helper()
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	t.Cleanup(receiver.Close)
	l := &reportLoop{receiver: receiver, vendor: newFakeGraph(t, receiver.URL+"/webhooks/cloudchat")}
	ch, err := chat.New(chat.Config{Cloud: newProvider(t, l.vendor, testToken), CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	l.Kit = notifytest.New(t, notifytest.WithBalance(10_000), notifytest.WithNotifierOptions(notify.WithChannel(ch)),
		notifytest.WithAccount(notify.Account{ID: "acme", Currency: record.INR(), Settings: chat.Settings{PrimaryGateway: chat.GatewayCloud}.Map()}))
	l.hook, err = cloudchat.NewWebhook(cloudchat.WebhookConfig{Reporter: l.Notifier, AppSecret: testSecret, VerifyToken: verifyToken})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/webhooks/cloudchat", l.hook)
	return l
}

func (l *reportLoop) send(t *testing.T, to string) *notify.Receipt {
	t.Helper()
	r, err := l.Notifier.Send(context.Background(), &chat.Request{Account: "acme", To: to, Message: "Your order shipped"})
	if err != nil {
		t.Fatalf("send to %s: %v", to, err)
	}
	return r
}

// post sends body to the receiver with the signature header sig (none
// when empty) and returns the status.
func (l *reportLoop) post(t *testing.T, body []byte, sig string) int {
	t.Helper()
	hdr := http.Header{}
	if sig != "" {
		hdr.Set("X-Hub-Signature-256", sig)
	}
	return vendorhttptest.Do(t, l.receiver.Client(), http.MethodPost, l.receiver.URL+"/webhooks/cloudchat", body, hdr).StatusCode
}

func (l *reportLoop) status(t *testing.T, r *notify.Receipt, status string, errs ...cloudchattest.Error) cloudchattest.Status {
	t.Helper()
	st, ok := l.vendor.StatusOf(r.ProviderMessageID, status, errs...)
	if !ok {
		t.Fatalf("the vendor has no message %s", r.ProviderMessageID)
	}
	return st
}

// TestWebhookOutsideWindowFailsAndRefunds is the vendor's own behaviour:
// free text outside the window is accepted with 200, charged, and
// reported failed later; the report refunds it, once.
func TestWebhookOutsideWindowFailsAndRefunds(t *testing.T) {
	l := newReportLoop(t)
	opening := l.Balance(t)
	inside := l.send(t, "9876543210")
	out := l.send(t, outside)
	if out.Status != record.StateSent || l.Balance(t) != opening-2*inside.Cost.Minor {
		t.Fatalf("outside the window: %+v, balance %d; want sent and charged", out, l.Balance(t))
	}
	if err := l.vendor.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := l.Message(t, inside.MessageID); m.State != record.StateDelivered || historyOf(m) != "pending,attempting,sent,delivered" {
		t.Fatalf("inside the window: %s (%s)", m.State, historyOf(m))
	}
	m := l.Message(t, out.MessageID)
	if m.State != record.StateFailed || m.VendorCode != "131047" || !m.Refunded || !strings.Contains(m.Error, "Re-engagement") {
		t.Fatalf("outside the window: %+v", m)
	}
	if got := l.Balance(t); got != opening-inside.Cost.Minor {
		t.Fatalf("balance = %d, want %d: the failed message refunded", got, opening-inside.Cost.Minor)
	}
	// The vendor retries a webhook it thinks went unanswered: the replay
	// changes nothing.
	failed := l.status(t, out, "failed", cloudchattest.ReEngagement)
	body := cloudchattest.Payload(testPhoneID, failed)
	for range 2 {
		if code := l.post(t, body, cloudchattest.Sign(testSecret, body)); code != http.StatusOK {
			t.Fatalf("replay: %d", code)
		}
	}
	if got := l.Balance(t); got != opening-inside.Cost.Minor {
		t.Fatalf("balance after replays = %d: refunded more than once", got)
	}
	if s := l.hook.Stats(); s.Reports != 5 || s.Refused != 0 || s.Unmatched != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestWebhookRefusesForgeries(t *testing.T) {
	l := newReportLoop(t)
	opening := l.Balance(t)
	out := l.send(t, outside)
	body := cloudchattest.Payload(testPhoneID, l.status(t, out, "failed", cloudchattest.ReEngagement))
	other := cloudchattest.Payload(testPhoneID, l.status(t, out, "delivered"))
	for name, sig := range map[string]string{
		"no signature":           "",
		"wrong secret":           cloudchattest.Sign("not-the-secret", body),
		"another body's":         cloudchattest.Sign(testSecret, other),
		"without the prefix":     strings.TrimPrefix(cloudchattest.Sign(testSecret, body), "sha256="),
		"sha1 prefix":            "sha1=" + strings.TrimPrefix(cloudchattest.Sign(testSecret, body), "sha256="),
		"not hex":                "sha256=zz",
		"a truncated signature":  cloudchattest.Sign(testSecret, body)[:40],
		"an empty secret's HMAC": cloudchattest.Sign("", body),
	} {
		if code := l.post(t, body, sig); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if m := l.Message(t, out.MessageID); m.State != record.StateSent {
		t.Fatalf("a forged report moved the message to %s", m.State)
	}
	if got := l.Balance(t); got != opening-out.Cost.Minor {
		t.Fatalf("balance = %d: a forged report moved money", got)
	}
	if s := l.hook.Stats(); s.Refused != 8 || s.Reports != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestWebhookOutOfOrderAndUnknownIDs(t *testing.T) {
	l := newReportLoop(t)
	r := l.send(t, "9876543210")
	ctx := context.Background()
	read := l.status(t, r, "read")
	delivered := l.status(t, r, "delivered")
	delivered.Timestamp = read.Timestamp.Add(-time.Minute)
	stranger := cloudchattest.Status{ID: "wamid.NOT-OURS", Status: "delivered", Timestamp: time.Now(), RecipientID: "919876543210"}
	deleted := l.status(t, r, "deleted")
	if err := l.vendor.Post(ctx, read, stranger, deleted); err != nil {
		t.Fatal(err)
	}
	if err := l.vendor.Post(ctx, delivered); err != nil {
		t.Fatal(err)
	}
	m := l.Message(t, r.MessageID)
	if m.State != record.StateRead || historyOf(m) != "pending,attempting,sent,delivered,read" {
		t.Fatalf("read before delivered: %s (%s)", m.State, historyOf(m))
	}
	if !m.History[3].At.Equal(delivered.Timestamp.Truncate(time.Second)) {
		t.Fatalf("delivered at %v, want the vendor's timestamp %v", m.History[3].At, delivered.Timestamp)
	}
	if s := l.hook.Stats(); s.Unmatched != 1 || s.Ignored != 1 || s.Reports != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookSettlesAnUnknownSend: the vendor took the message and the
// answer was lost, so its wamid was never learned; the status names it
// by the callback data the provider sent.
func TestWebhookSettlesAnUnknownSend(t *testing.T) {
	l := newReportLoop(t)
	opening := l.Balance(t)
	l.vendor.FailNextWithFault(fault{Lose: true})
	r, err := l.Notifier.Send(context.Background(), &chat.Request{Account: "acme", To: "9876543210", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("lost answer: %v", err)
	}
	taken := l.vendor.Accepted()
	if len(taken) != 1 {
		t.Fatalf("the vendor took %d messages", len(taken))
	}
	st, _ := l.vendor.StatusOf(taken[0].ID, "delivered")
	if err := l.vendor.Post(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	m := l.Message(t, r.MessageID)
	if m.State != record.StateDelivered || m.ProviderMessageID != taken[0].ID || historyOf(m) != "pending,attempting,unknown,delivered" {
		t.Fatalf("unknown reported delivered: %+v", m)
	}
	if got := l.Balance(t); got != opening-r.Cost.Minor {
		t.Fatalf("balance = %d: a delivered message keeps its charge", got)
	}
}

func TestWebhookHandshake(t *testing.T) {
	l := newReportLoop(t)
	get := func(q url.Values) (int, string) {
		resp, err := l.receiver.Client().Get(l.receiver.URL + "/webhooks/cloudchat?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := get(url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {verifyToken}, "hub.challenge": {"1158201444"}}); code != 200 || body != "1158201444" {
		t.Fatalf("handshake: %d %q", code, body)
	}
	for name, q := range map[string]url.Values{
		"wrong token": {"hub.mode": {"subscribe"}, "hub.verify_token": {"guess"}, "hub.challenge": {"1"}},
		"no token":    {"hub.mode": {"subscribe"}, "hub.challenge": {"1"}},
		"wrong mode":  {"hub.mode": {"unsubscribe"}, "hub.verify_token": {verifyToken}, "hub.challenge": {"1"}},
	} {
		if code, body := get(q); code != http.StatusUnauthorized || body == "1" {
			t.Errorf("%s: %d %q, want 401 without the challenge", name, code, body)
		}
	}
	// Without a verify token configured, no handshake succeeds.
	h, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{Reporter: l.Notifier, AppSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?hub.mode=subscribe&hub.verify_token=&hub.challenge=1", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("handshake without a configured token: %d", rec.Code)
	}
}

func TestWebhookBadRequests(t *testing.T) {
	l := newReportLoop(t)
	notJSON := []byte(`{"object":`)
	if code := l.post(t, notJSON, cloudchattest.Sign(testSecret, notJSON)); code != http.StatusBadRequest {
		t.Errorf("malformed: %d, want 400", code)
	}
	huge := bytes.Repeat([]byte("x"), cloudchat.DefaultMaxBody+1)
	if code := l.post(t, huge, cloudchattest.Sign(testSecret, huge)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d, want 413", code)
	}
	resp := vendorhttptest.Do(t, l.receiver.Client(), http.MethodPut, l.receiver.URL+"/webhooks/cloudchat", nil, nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if s := l.hook.Stats(); s.Malformed != 2 {
		t.Fatalf("stats = %+v", s)
	}
	for name, cfg := range map[string]cloudchat.WebhookConfig{
		"Reporter":  {AppSecret: testSecret},
		"AppSecret": {Reporter: l.Notifier},
	} {
		if _, err := cloudchat.NewWebhook(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewWebhook without %s: %v", name, err)
		}
	}
}

// TestWebhookStoreTroubleAsksForARetry: a report that cannot be applied
// now is answered 503, so the vendor sends it again.
func TestWebhookStoreTroubleAsksForARetry(t *testing.T) {
	rep := notify.Reporter(reporterFunc(func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error) {
		return nil, notify.Errorf(notify.CodeUnavailable, "database down")
	}))
	h, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{Reporter: rep, AppSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	body := cloudchattest.Payload(testPhoneID, cloudchattest.Status{ID: "wamid.X", Status: "delivered", Timestamp: time.Now(), RecipientID: "919876543210"})
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", cloudchattest.Sign(testSecret, body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || h.Stats().Failed != 1 {
		t.Fatalf("store down: %d, stats %+v", rec.Code, h.Stats())
	}
}

type reporterFunc func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error)

func (f reporterFunc) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	return f(ctx, r)
}

// collectingHook returns a Webhook for testSecret whose Reporter takes
// every report and keeps it.
func collectingHook(t *testing.T) (*cloudchat.Webhook, *providertest.Reports) {
	t.Helper()
	reports := &providertest.Reports{}
	h, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{AppSecret: testSecret, Reporter: reports})
	if err != nil {
		t.Fatal(err)
	}
	return h, reports
}

// historyOf lists the states m went through, oldest first.
func historyOf(m *record.Message) string {
	s := make([]string, len(m.History))
	for i, c := range m.History {
		s[i] = string(c.State)
	}
	return strings.Join(s, ",")
}

// TestWebhookMarksFailover: the report of a failure the QR gateway can
// overcome says so; others do not.
func TestWebhookMarksFailover(t *testing.T) {
	h, reports := collectingHook(t)
	at := time.Unix(1_764_000_000, 0)
	st := func(id string, e cloudchattest.Error) cloudchattest.Status {
		return cloudchattest.Status{ID: id, Status: "failed", Timestamp: at, RecipientID: "919876543210",
			CallbackData: notify.MessageRef("acme", "m-"+id), Errors: []cloudchattest.Error{e}}
	}
	body := cloudchattest.Payload(testPhoneID, st("a", cloudchattest.ReEngagement), st("b", cloudchattest.Undeliverable))
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", cloudchattest.Sign(testSecret, body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := reports.Got()
	if rec.Code != 200 || len(got) != 2 {
		t.Fatalf("%d, %d reports", rec.Code, len(got))
	}
	a, b := got[0], got[1]
	if !a.Failover || a.VendorCode != "131047" || a.State != record.StateFailed || a.Account != "acme" ||
		a.MessageID != "m-a" || a.ProviderMessageID != "a" || a.To != "919876543210" || !a.At.Equal(at) || a.Provider != "cloudchat" {
		t.Fatalf("131047 report = %+v", a)
	}
	if b.Failover || b.VendorCode != "131026" {
		t.Fatalf("131026 report = %+v", b)
	}
}

// TestWebhookRefusesForgeriesUnread: a forged notification of 900 KiB
// whose X-Hub-Signature-256 is missing or not of the vendor's shape is
// 401 before a byte of its body is read, and so is one that is not JSON
// (415) or that declares more than the vendor's 3 MB (413), however
// signed; none reports anything.
func TestWebhookRefusesForgeriesUnread(t *testing.T) {
	h, reports := collectingHook(t)
	const size = 900 << 10
	wellFormed := cloudchattest.Sign(testSecret, []byte("another body"))
	for _, c := range []struct {
		name, sig, ct string
		length        int64
		want          int
	}{
		{"no signature", "", "application/json", size, http.StatusUnauthorized},
		{"garbage", "garbage", "application/json", size, http.StatusUnauthorized},
		{"no prefix", strings.TrimPrefix(wellFormed, "sha256="), "application/json", size, http.StatusUnauthorized},
		{"sha1", "sha1=" + strings.Repeat("ab", 20), "application/json", size, http.StatusUnauthorized},
		{"truncated", wellFormed[:40], "application/json", size, http.StatusUnauthorized},
		{"not hex", "sha256=" + strings.Repeat("zz", 32), "application/json", size, http.StatusUnauthorized},
		{"not JSON", wellFormed, "application/x-www-form-urlencoded", size, http.StatusUnsupportedMediaType},
		{"over 3 MB", wellFormed, "application/json", cloudchat.DefaultMaxBody + 1, http.StatusRequestEntityTooLarge},
	} {
		body := vendorhttptest.NewBody(int(c.length))
		req := httptest.NewRequest(http.MethodPost, "/webhooks/cloudchat", nil)
		req.Body, req.ContentLength = body, c.length
		req.Header.Set("Content-Type", c.ct)
		if c.sig != "" {
			req.Header.Set("X-Hub-Signature-256", c.sig)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || body.BytesRead() != 0 {
			t.Errorf("%s: %d with %d bytes of the body read; want %d with none", c.name, rec.Code, body.BytesRead(), c.want)
		}
	}
	if s := h.Stats(); len(reports.Got()) != 0 || s.Refused != 6 || s.Malformed != 2 || s.Reports != 0 {
		t.Fatalf("%d reported, stats %+v", len(reports.Got()), s)
	}
}

// TestWebhookTakesTheVendorsLargestNotification: a signed notification
// of 2 MiB, within the vendor's documented 3 MB, is taken over HTTP; a
// well-formed signature of another body is 401 once the body was read.
func TestWebhookTakesTheVendorsLargestNotification(t *testing.T) {
	h, reports := collectingHook(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	payload := cloudchattest.Payload(testPhoneID, cloudchattest.Status{ID: "wamid.BIG", Status: "delivered", Timestamp: time.Now(), RecipientID: "919876543210"})
	body := append([]byte(`{"pad":"`+strings.Repeat("x", 2<<20)+`",`), payload[1:]...)
	post := func(body []byte, sig string) int {
		hdr := http.Header{"Content-Type": {"application/json"}, "X-Hub-Signature-256": {sig}}
		return vendorhttptest.Do(t, srv.Client(), http.MethodPost, srv.URL, body, hdr).StatusCode
	}
	if code := post(payload, cloudchattest.Sign(testSecret, body)); code != http.StatusUnauthorized {
		t.Fatalf("another body's signature: %d, want 401", code)
	}
	code := post(body, cloudchattest.Sign(testSecret, body))
	if got := reports.Got(); code != http.StatusOK || len(got) != 1 || got[0].ProviderMessageID != "wamid.BIG" {
		t.Fatalf("signed 2 MiB notification: %d, reports %+v", code, got)
	}
}
