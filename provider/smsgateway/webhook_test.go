package smsgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/wallet"
)

const dlrToken = "dlr-token-5c0e9a1f7b"

// vendorClock is the fake vendor's clock: its reports say 14:00:05 IST,
// 08:30:05 UTC.
var vendorClock = time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC)

// dlrLoop is the whole loop over real HTTP: a Notifier sending SMS
// through the provider to the fake vendor, whose delivery reports reach
// a Webhook on a server of its own.
type dlrLoop struct {
	n        *notify.Notifier
	wallet   *memstore.Wallet
	records  *memstore.Ledger
	vendor   *smsgatewaytest.Server
	hook     *smsgateway.Webhook
	callback string // the URL the vendor is given, token included
	base     string // the receiver's root
}

// newDLRLoop starts the loop; auto is the fake's Config.AutoDLR.
func newDLRLoop(t *testing.T, auto string, opts ...notify.Option) *dlrLoop {
	t.Helper()
	return newWrappedDLRLoop(t, auto, nil, nil, opts...)
}

// newWrappedDLRLoop is newDLRLoop with the Notifier's Ledger wrapped by
// wrap, when it is not nil (records stays the Ledger itself), and the SMS
// channel's configuration changed by smsCfg, when it is not nil.
func newWrappedDLRLoop(t *testing.T, auto string, wrap func(store.Ledger) store.Ledger, smsCfg func(*sms.Config), opts ...notify.Option) *dlrLoop {
	t.Helper()
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	t.Cleanup(receiver.Close)
	l := &dlrLoop{base: receiver.URL, callback: receiver.URL + "/webhooks/smsgateway/" + dlrToken}
	l.vendor = smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key", DLRURL: l.callback,
		AutoDLR: auto, Now: func() time.Time { return vendorClock }})
	t.Cleanup(l.vendor.Close)
	p, err := smsgateway.New(smsgateway.Config{BaseURL: l.vendor.URL, APIKey: "vendor-key", HTTPClient: l.vendor.Client()})
	if err != nil {
		t.Fatal(err)
	}
	l.wallet = memstore.NewWallet()
	if err := l.wallet.Open("acme", notify.Money{Minor: 10_000, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	l.records = memstore.NewLedger(l.wallet)
	var ledger store.Ledger = l.records
	if wrap != nil {
		ledger = wrap(l.records)
	}
	l.n = newNotifier(t, p, ledger, smsCfg, opts...)
	l.hook, err = smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: l.n, Token: dlrToken})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("POST /webhooks/smsgateway/{token}", l.hook)
	mux.Handle("GET /webhooks/smsgateway/{token}", l.hook)
	// Mounted without a wildcard, the token is the path's last segment.
	mux.Handle("/bare/", l.hook)
	return l
}

// newNotifier returns a Notifier sending SMS through p for the account
// "acme" (vendor ID ACMEIN) at the stock INR prices, charging and
// recording in ledger.
func newNotifier(tb testing.TB, p notify.Provider, ledger store.Ledger, smsCfg func(*sms.Config), opts ...notify.Option) *notify.Notifier {
	tb.Helper()
	cfg := sms.Config{Provider: p}
	if smsCfg != nil {
		smsCfg(&cfg)
	}
	ch, err := sms.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Currency: record.INR(), Settings: sms.Settings{SenderID: "ACMEIN"}.Map()}); err != nil {
		tb.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, append([]notify.Option{notify.WithChannel(ch),
		notify.WithPrices(wallet.DefaultINR())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func (l *dlrLoop) send(t *testing.T, to string) *notify.Receipt {
	t.Helper()
	r, err := l.n.Send(context.Background(), &sms.Request{Account: "acme", To: to, Message: "Your order shipped"})
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

func (l *dlrLoop) message(t *testing.T, id string) *record.Message {
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
	return do(t, http.MethodPost, url, ct, body)
}

// do sends body with content type ct (none when empty) to url with
// method and returns the status.
func do(t *testing.T, method, url, ct, body string) int {
	t.Helper()
	hdr := http.Header{}
	if ct != "" {
		hdr.Set("Content-Type", ct)
	}
	return vendorhttptest.Do(t, nil, method, url, []byte(body), hdr).StatusCode
}

// TestDLRWholeLoop: an SMS sent through the provider is accepted by the
// fake vendor, whose DELIVERED report, posted over HTTP in the vendor's
// format, moves the record to delivered at the vendor's time; the charge
// stays. Nothing arrives before the test lets it.
func TestDLRWholeLoop(t *testing.T) {
	l := newDLRLoop(t, "delivered")
	r := l.send(t, "98765 43210")
	before := l.balance(t)
	if got := l.vendor.PendingDLRs(); got != 1 {
		t.Fatalf("the vendor queued %d reports, want 1", got)
	}
	if m := l.message(t, r.MessageID); m.State != record.StateSent {
		t.Fatalf("before the report: %s", m.State)
	}
	posted, err := l.vendor.FlushDLRs(context.Background())
	if err != nil || posted != 1 {
		t.Fatalf("FlushDLRs = %d, %v", posted, err)
	}
	m := l.message(t, r.MessageID)
	last := m.History[len(m.History)-1]
	if m.State != record.StateDelivered || last.State != record.StateDelivered || !last.At.Equal(vendorClock) {
		t.Fatalf("after the report: %s, last step %+v; want delivered at %v", m.State, last, vendorClock)
	}
	if m.Refunded || l.balance(t) != before {
		t.Fatalf("a delivered SMS: refunded %v, balance %d (was %d)", m.Refunded, l.balance(t), before)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 1}) {
		t.Fatalf("stats = %+v", s)
	}

	// The same through ReportNumber, with the number as the vendor may
	// write it, with the country code.
	r2 := l.send(t, "9812345678")
	if _, err := l.vendor.FlushDLRs(context.Background()); err != nil {
		t.Fatal(err)
	}
	r3 := l.send(t, "9000000001")
	if err := l.vendor.ReportNumber(context.Background(), r3.ProviderMessageID, "919000000001", "DELIVERED"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{r2.MessageID, r3.MessageID} {
		if m := l.message(t, id); m.State != record.StateDelivered || !m.History[len(m.History)-1].At.Equal(vendorClock) {
			t.Fatalf("%s: %s at %v", id, m.State, m.History[len(m.History)-1].At)
		}
	}
}

// TestDLRUndeliveredKeepsTheCharge: SMS vendors bill the submission, so
// by default an undelivered SMS fails and keeps its charge; a delivered
// report after it changes nothing.
func TestDLRUndeliveredKeepsTheCharge(t *testing.T) {
	l := newDLRLoop(t, "")
	ctx := context.Background()
	r := l.send(t, "9876543210")
	before := l.balance(t)
	if r.Cost.Minor <= 0 {
		t.Fatalf("the SMS cost %d: nothing to keep", r.Cost.Minor)
	}
	if err := l.vendor.ReportNumber(ctx, r.ProviderMessageID, "9876543210", "undelivered"); err != nil {
		t.Fatal(err)
	}
	m := l.message(t, r.MessageID)
	if m.State != record.StateFailed || m.Refunded || m.VendorCode != "UNDELIVERED" ||
		!strings.Contains(m.Error, "the handset could not be reached") || l.balance(t) != before {
		t.Fatalf("undelivered: %+v, balance %d (was %d)", m, l.balance(t), before)
	}
	steps := len(m.History)
	if err := l.vendor.ReportNumber(ctx, r.ProviderMessageID, "9876543210", "delivered"); err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, r.MessageID); m.State != record.StateFailed || len(m.History) != steps || m.Refunded {
		t.Fatalf("a delivered report after the failure: %s, %d steps (was %d)", m.State, len(m.History), steps)
	}

	// The common DLR shape (Report): the code joins the status.
	r2 := l.send(t, "9812345678")
	if err := l.vendor.Report(ctx, l.callback, r2.ProviderMessageID, "UNDELIVERED", "DND", "number in the do-not-disturb registry"); err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, r2.MessageID); m.State != record.StateFailed || m.VendorCode != "UNDELIVERED:DND" ||
		!strings.Contains(m.Error, "do-not-disturb") || m.Refunded {
		t.Fatalf("undelivered with a code: %+v", m)
	}
}

// TestDLRRefundReportedFailuresOnce: where the vendor refunds undelivered
// SMS (sms.Config.RefundReportedFailures), the charge comes back once,
// however often the failure is reported.
func TestDLRRefundReportedFailuresOnce(t *testing.T) {
	l := newWrappedDLRLoop(t, "", nil, func(c *sms.Config) { c.RefundReportedFailures = true })
	opening := l.balance(t)
	r := l.send(t, "9876543210")
	if l.balance(t) != opening-r.Cost.Minor || r.Cost.Minor <= 0 {
		t.Fatalf("balance %d after a send of %d from %d", l.balance(t), r.Cost.Minor, opening)
	}
	for range 2 {
		if err := l.vendor.ReportNumber(context.Background(), r.ProviderMessageID, "9876543210", "failed"); err != nil {
			t.Fatal(err)
		}
	}
	if m := l.message(t, r.MessageID); m.State != record.StateFailed || !m.Refunded {
		t.Fatalf("failed: %+v", m)
	}
	if got := l.balance(t); got != opening {
		t.Fatalf("balance = %d, want %d: refunded once", got, opening)
	}
	if s := l.hook.Stats(); s.Reports != 2 || s.Failed != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestDLRRepeatedReportChangesNothing: vendors send a report again when
// unsure it arrived; the second changes nothing.
func TestDLRRepeatedReportChangesNothing(t *testing.T) {
	l := newDLRLoop(t, "")
	r := l.send(t, "9876543210")
	before := l.balance(t)
	var first *record.Message
	for i := range 2 {
		if err := l.vendor.ReportNumber(context.Background(), r.ProviderMessageID, "9876543210", "delivered"); err != nil {
			t.Fatal(err)
		}
		m := l.message(t, r.MessageID)
		if i == 0 {
			first = m
			continue
		}
		if !reflect.DeepEqual(m, first) {
			t.Fatalf("a repeated report changed the record:\n%+v\nwas\n%+v", m, first)
		}
	}
	if first.State != record.StateDelivered || l.balance(t) != before {
		t.Fatalf("delivered: %s, balance %d (was %d)", first.State, l.balance(t), before)
	}
}

// TestDLRRefusesWrongTokens: without the token, nothing is reported.
func TestDLRRefusesWrongTokens(t *testing.T) {
	l := newDLRLoop(t, "")
	r := l.send(t, "9876543210")
	before := l.message(t, r.MessageID)
	body := `{"request_id":"` + r.ProviderMessageID + `","mobile":"9876543210","status":"failed"}`
	for name, url := range map[string]string{
		"wrong token":         l.base + "/webhooks/smsgateway/dlr-token-5c0e9a1f7c",
		"a prefix of it":      l.base + "/webhooks/smsgateway/dlr-token-5c0e",
		"longer":              l.callback + "x",
		"in the query":        l.base + "/webhooks/smsgateway/x?token=" + dlrToken,
		"case changed":        l.base + "/webhooks/smsgateway/" + strings.ToUpper(dlrToken),
		"empty last part":     l.base + "/webhooks/smsgateway/%20",
		"missing":             l.base + "/bare/",
		"not the last part":   l.base + "/bare/" + dlrToken + "/x",
		"bare, wrong":         l.base + "/bare/dlr-token-5c0e9a1f7c",
		"in the query, bare ": l.base + "/bare/?token=" + dlrToken,
	} {
		if code := post(t, url, "application/json", body); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if code := do(t, http.MethodGet, l.base+"/bare/?request_id="+r.ProviderMessageID+"&status=failed", "", ""); code != http.StatusUnauthorized {
		t.Errorf("GET without a token: %d, want 401", code)
	}
	err := l.vendor.Report(context.Background(), l.base+"/webhooks/smsgateway/not-the-token-123456", r.ProviderMessageID, "UNDELIVERED", "", "")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("the vendor's post with a wrong token: %v, want 401", err)
	}
	if m := l.message(t, r.MessageID); !reflect.DeepEqual(m, before) {
		t.Fatalf("refused reports changed the record: %+v", m)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Refused: 12}) {
		t.Fatalf("stats = %+v", s)
	}
	// The right token, on the bare mount too.
	if code := post(t, l.base+"/bare/"+dlrToken, "application/json", body); code != http.StatusOK {
		t.Fatalf("the right token: %d", code)
	}
	if m := l.message(t, r.MessageID); m.State != record.StateFailed {
		t.Fatalf("with the right token: %s", m.State)
	}
}

// TestDLRUnknownRequestID: a report of a message no record has is
// acknowledged (the vendor would send it for days) and counted.
func TestDLRUnknownRequestID(t *testing.T) {
	l := newDLRLoop(t, "")
	r := l.send(t, "9876543210")
	if code := post(t, l.callback, "application/json", `{"request_id":"never-issued","mobile":"9876543210","status":"delivered"}`); code != http.StatusOK {
		t.Fatalf("unknown request ID: %d", code)
	}
	// Another number under a known request ID matches nothing either.
	if code := post(t, l.callback, "application/json", `{"request_id":"`+r.ProviderMessageID+`","mobile":"9812345678","status":"failed"}`); code != http.StatusOK {
		t.Fatalf("another number: %d", code)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Unmatched: 2}) {
		t.Fatalf("stats = %+v", s)
	}
	if m := l.message(t, r.MessageID); m.State != record.StateSent {
		t.Fatalf("the record moved to %s", m.State)
	}
}

// TestDLRBeforeOurMoveToSentComesAgain: the vendor's DELIVERED report
// arrives before the Notifier has recorded the request ID its send was
// answered with. It is answered 503, not acknowledged as unmatched (which
// would lose it), and stays with the vendor; posted again once the move
// has landed, it moves the record to delivered.
func TestDLRBeforeOurMoveToSentComesAgain(t *testing.T) {
	hold := notifytest.NewSentGate(nil)
	l := newWrappedDLRLoop(t, "delivered", func(s store.Ledger) store.Ledger {
		hold.Ledger = s
		return hold
	}, nil)
	type answer struct {
		r   *notify.Receipt
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := l.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped"})
		done <- answer{r, err}
	}()
	released := false
	t.Cleanup(func() {
		if !released {
			hold.Release()
			<-done
		}
	})
	var requestID string
	select {
	case requestID = <-hold.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("the send never reached its move to sent")
	}

	posted, err := l.vendor.FlushDLRs(context.Background())
	var ce *smsgatewaytest.CallbackError
	if posted != 0 || !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("the report ahead of our move: posted %d, %v; want a 503, so that the vendor sends it again", posted, err)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Failed: 1}) || l.vendor.PendingDLRs() != 1 {
		t.Fatalf("stats %+v, %d pending; want one failed, still with the vendor", s, l.vendor.PendingDLRs())
	}

	hold.Release()
	released = true
	a := <-done
	if a.err != nil || a.r.ProviderMessageID != requestID {
		t.Fatalf("send = %+v, %v", a.r, a.err)
	}
	if posted, err := l.vendor.FlushDLRs(context.Background()); posted != 1 || err != nil {
		t.Fatalf("the report again: posted %d, %v", posted, err)
	}
	if m := l.message(t, a.r.MessageID); m.State != record.StateDelivered {
		t.Fatalf("after the report came again: %s, want delivered", m.State)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 1, Failed: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}

// TestDLRTellsRecipientsApart: one vendor request to several numbers has
// one request ID; each report names its number and moves only that
// number's record. The provider sends one number a request, so the
// records are written as a send to two numbers would leave them.
func TestDLRTellsRecipientsApart(t *testing.T) {
	l := newDLRLoop(t, "")
	ctx := context.Background()
	shared := l.sharedBatch(t)
	if err := l.vendor.ReportNumber(ctx, shared, "919812345678", "expired"); err != nil {
		t.Fatal(err)
	}
	if err := l.vendor.ReportNumber(ctx, shared, "9876543210", "delivered"); err != nil {
		t.Fatal(err)
	}
	if m := l.message(t, "m-1"); m.State != record.StateDelivered {
		t.Fatalf("m-1 is %s, want delivered", m.State)
	}
	if m := l.message(t, "m-2"); m.State != record.StateFailed || m.VendorCode != "EXPIRED" {
		t.Fatalf("m-2 is %s (%s), want failed, EXPIRED", m.State, m.VendorCode)
	}
}

// sharedBatch has the vendor send one request to two numbers and opens
// their records, m-1 (9876543210) and m-2 (9812345678), sent under the
// request's shared ID, which it returns.
func (l *dlrLoop) sharedBatch(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	vendorhttptest.Do(t, l.vendor.Client(), http.MethodPost, l.vendor.URL+"/dev/bulkV2",
		[]byte(`{"route":"q","message":"Sale today","language":"english","numbers":"9876543210,9812345678"}`),
		http.Header{"Authorization": {"vendor-key"}, "Content-Type": {"application/json"}})
	sent := l.vendor.Sent()
	if len(sent) != 1 || len(sent[0].Numbers) != 2 {
		t.Fatalf("the vendor has %+v", sent)
	}
	shared := sent[0].RequestID
	now := time.Now()
	for _, m := range []*record.Message{
		{ID: "m-1", Account: "acme", Kind: sms.Kind, Request: sms.Kind, To: "9876543210", Provider: smsgateway.DefaultName, CreatedAt: now},
		{ID: "m-2", Account: "acme", Kind: sms.Kind, Request: sms.Kind, To: "9812345678", Provider: smsgateway.DefaultName, CreatedAt: now},
	} {
		id := m.ID
		if _, err := l.records.Open(ctx, m); err != nil {
			t.Fatal(err)
		}
		for _, st := range []record.State{record.StateAttempting, record.StateSent} {
			if _, err := l.records.Move(ctx, "acme", id, store.Update{State: st, At: now, ProviderMessageID: shared}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return shared
}

// TestDLRWithoutNumberFailsNoneOfTheBatch: a report that names a batch's
// request but no number cannot say which message failed; it moves none
// (before, it failed and, with a refunding policy, refunded them all).
func TestDLRWithoutNumberFailsNoneOfTheBatch(t *testing.T) {
	l := newDLRLoop(t, "")
	shared := l.sharedBatch(t)
	if err := smsgatewaytest.PostDLR(context.Background(), l.callback, smsgatewaytest.DLR{RequestID: shared, Status: "FAILED"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m-1", "m-2"} {
		if m := l.message(t, id); m.State != record.StateSent {
			t.Fatalf("%s is %s after a report that names no number", id, m.State)
		}
	}
	if st := l.hook.Stats(); st.Reports != 0 || st.Ignored != 1 {
		t.Fatalf("stats %+v, want the report ignored", st)
	}
}

// newRecordingHook serves a Webhook on a server of its own, mounted as
// the gateway mounts it, and returns its callback URL.
func newRecordingHook(t *testing.T, cfg smsgateway.WebhookConfig) (*smsgateway.Webhook, *providertest.Reports, string) {
	t.Helper()
	rec := &providertest.Reports{}
	cfg.Reporter = rec
	if cfg.Token == "" {
		cfg.Token = dlrToken
	}
	h, err := smsgateway.NewWebhook(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/smsgateway/{token}", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return h, rec, srv.URL + "/webhooks/smsgateway/" + cfg.Token
}

// TestDLRReadsTheVendorsShapes checks the reports each accepted form of
// callback becomes, field by field.
func TestDLRReadsTheVendorsShapes(t *testing.T) {
	_, rec, callback := newRecordingHook(t, smsgateway.WebhookConfig{})
	unix := vendorClock.Unix()
	const form = "application/x-www-form-urlencoded"
	delivered := func(id, to string, at time.Time) notify.DeliveryReport {
		return notify.DeliveryReport{Provider: "smsgateway", ProviderMessageID: id, To: to, State: record.StateDelivered, At: at}
	}
	standard := fmt.Sprintf(`{"request_id":"r1","route":"dlt_manual","channel":"sms","mobile":"9876543210","status":"delivered",`+
		`"status_description":"Delivered successfully","delivery_time":"2026-11-25 14:00:05","delivery_timestamp":%d,`+
		`"sms_count":1,"amount_debited":"0.25","post_attempt":1}`, unix)
	tests := []struct {
		name, method, query, ct, body string
		want                          []notify.DeliveryReport
	}{
		{"the vendor's Standard webhook", "POST", "", "application/json", standard,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"a time in IST without a zone", "POST", "", "application/json",
			`{"request_id":"r1","mobile":"9876543210","status":"DELIVERED","delivery_time":"2026-11-25 14:00:05"}`,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"a time in IST with a T", "POST", "", "application/json",
			`{"request_id":"r1","mobile":"9876543210","status":"DELIVERED","delivery_time":"2026-11-25T14:00:05"}`,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"a time with its offset", "POST", "", "application/json",
			`{"request_id":"r1","status":"delivered","delivered_at":"2026-11-25T08:30:05Z"}`,
			[]notify.DeliveryReport{delivered("r1", "", vendorClock)}},
		{"Unix milliseconds", "POST", "", "application/json",
			fmt.Sprintf(`{"request_id":"r1","status":"delivered","delivery_timestamp":%d}`, vendorClock.UnixMilli()+250),
			[]notify.DeliveryReport{delivered("r1", "", vendorClock.Add(250*time.Millisecond))}},
		{"an unreadable time is now", "POST", "", "application/json",
			`{"request_id":"r1","status":"delivered","delivery_time":"yesterday","delivery_timestamp":0}`,
			[]notify.DeliveryReport{delivered("r1", "", time.Time{})}},
		{"a failure with the vendor's reason", "POST", "", "application/json",
			`{"request_id":"r1","mobile":"919876543210","status":"failed","status_description":"failed","failure_reason":"Number is registered in DND"}`,
			[]notify.DeliveryReport{{Provider: "smsgateway", ProviderMessageID: "r1", To: "919876543210", State: record.StateFailed,
				VendorCode: "FAILED", Error: "smsgateway: Number is registered in DND"}}},
		{"a failure with a code", "POST", "", "application/json",
			`{"request_id":"r1","number":"9876543210","status":"UNDELIV","error_code":1,"description":"Absent subscriber"}`,
			[]notify.DeliveryReport{{Provider: "smsgateway", ProviderMessageID: "r1", To: "9876543210", State: record.StateFailed,
				VendorCode: "UNDELIV:1", Error: "smsgateway: Absent subscriber"}}},
		{"a failure without a reason", "POST", "", "application/json",
			`{"request_id":"r1","status":"expired"}`,
			[]notify.DeliveryReport{{Provider: "smsgateway", ProviderMessageID: "r1", State: record.StateFailed,
				VendorCode: "EXPIRED", Error: "smsgateway: the operator reported the SMS expired"}}},
		{"sent, at its sent time", "POST", "", "application/json",
			`{"request_id":"r1","status":"submitted","sent_time":"2026-11-25 14:00:05","delivery_time":"2026-11-25 14:09:00"}`,
			[]notify.DeliveryReport{{Provider: "smsgateway", ProviderMessageID: "r1", State: record.StateSent, At: vendorClock}}},
		{"the CleverTap template", "POST", "", "application/json",
			fmt.Sprintf(`{"payloadVersion":"1","statuses":[{"msgId":"r2","status":"delivered","timestamp":"%d","description":"Delivered successfully"}]}`, unix),
			[]notify.DeliveryReport{delivered("r2", "", vendorClock)}},
		{"a list, one report for each number", "POST", "", "application/json",
			`[{"request_id":"r3","mobile":"9876543210","status":"delivered"},{"request_id":"r3","mobile":"9812345678","status":"rejected","reason":"Blocked by the operator"}]`,
			[]notify.DeliveryReport{delivered("r3", "9876543210", time.Time{}), {Provider: "smsgateway", ProviderMessageID: "r3",
				To: "9812345678", State: record.StateFailed, VendorCode: "REJECTED", Error: "smsgateway: Blocked by the operator"}}},
		{"wrapped, the request ID outside", "POST", "", "application/json",
			`{"return":true,"data":[{"request_id":"r4","delivery_status":[{"mobile":"9876543210","status":"Delivered"},{"mobile":"9812345678","status":"Pending"}]}]}`,
			[]notify.DeliveryReport{delivered("r4", "9876543210", time.Time{})}},
		{"names in any case", "POST", "", "application/json",
			`{"Request_ID":"r9","Mobile":"9876543210","STATUS":"Delivered"}`,
			[]notify.DeliveryReport{delivered("r9", "9876543210", time.Time{})}},
		{"a form", "POST", "", form,
			"request_id=r5&mobile=9876543210&status=failed&failure_reason=Rejected+by+operator",
			[]notify.DeliveryReport{{Provider: "smsgateway", ProviderMessageID: "r5", To: "9876543210", State: record.StateFailed,
				VendorCode: "FAILED", Error: "smsgateway: Rejected by operator"}}},
		{"raw JSON sent as a form", "POST", "", form, standard,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"a form field holding JSON", "POST", "", form,
			"data=" + url.QueryEscape(`[{"request_id":"r6","mobile":"9876543210","status":"delivered"}]`),
			[]notify.DeliveryReport{delivered("r6", "9876543210", time.Time{})}},
		{"JSON without a content type", "POST", "", "", standard,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"GET", "GET", fmt.Sprintf("?request_id=r7&mobile=9876543210&status=delivered&delivery_timestamp=%d", unix), "", "",
			[]notify.DeliveryReport{delivered("r7", "9876543210", vendorClock)}},
		{"PUT", "PUT", "", "application/json", standard,
			[]notify.DeliveryReport{delivered("r1", "9876543210", vendorClock)}},
		{"POST with the report in the query", "POST", "?request_id=r8&status=delivered", "", "",
			[]notify.DeliveryReport{delivered("r8", "", time.Time{})}},
		{"a status that says nothing final", "POST", "", "application/json",
			`{"request_id":"r1","status":"pending"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := do(t, tt.method, callback+tt.query, tt.ct, tt.body); code != http.StatusOK {
				t.Fatalf("HTTP %d", code)
			}
			got := rec.Take()
			for i := range got {
				if !got[i].At.IsZero() && got[i].At.Location() != time.UTC {
					t.Errorf("report %d: At %v is not in UTC", i, got[i].At)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("reports:\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestDLRStatusTable checks the statuses the package documents, in any
// letter case.
func TestDLRStatusTable(t *testing.T) {
	h, rec, callback := newRecordingHook(t, smsgateway.WebhookConfig{Provider: "sms-2"})
	table := map[record.State][]string{
		record.StateDelivered: {"DELIVERED", "DELIVRD", "SUCCESS", "delivered"},
		record.StateSent:      {"SENT", "SUBMITTED", "ACCEPTED", "ENROUTE", "submitted"},
		record.StateFailed: {"FAILED", "FAIL", "UNDELIVERED", "UNDELIV", "UNDELIVERABLE", "REJECTED", "REJECTD",
			"EXPIRED", "EXPIRD", "DELETED", "DND", "NDNC", "BLOCKED", "BLACKLISTED", "INVALID", "Undelivered", "dnd"},
		"": {"PENDING", "QUEUED", "UNKNOWN", "ACCEPTD", "BUFFERED", ""},
	}
	ignored := 0
	for want, statuses := range table {
		for _, status := range statuses {
			body, _ := json.Marshal(map[string]string{"request_id": "r1", "status": status})
			if code := post(t, callback, "application/json", string(body)); code != http.StatusOK {
				t.Fatalf("%q: HTTP %d", status, code)
			}
			got := rec.Take()
			if want == "" {
				ignored++
				if len(got) != 0 {
					t.Errorf("%q: reported %+v, want it ignored", status, got)
				}
				continue
			}
			if len(got) != 1 || got[0].State != want || got[0].Provider != "sms-2" {
				t.Errorf("%q: %+v, want %s", status, got, want)
				continue
			}
			if want == record.StateFailed && (got[0].VendorCode != strings.ToUpper(status) || got[0].Error == "") {
				t.Errorf("%q: VendorCode %q, Error %q", status, got[0].VendorCode, got[0].Error)
			}
		}
	}
	if s := h.Stats(); s.Ignored != uint64(ignored) {
		t.Fatalf("stats = %+v, want %d ignored", s, ignored)
	}
}

// TestDLRRefusesWhatItCannotRead: bodies that cannot be read are 400,
// too large 413, other methods 405; none reaches the Reporter.
func TestDLRRefusesWhatItCannotRead(t *testing.T) {
	h, rec, callback := newRecordingHook(t, smsgateway.WebhookConfig{})
	const form = "application/x-www-form-urlencoded"
	tests := []struct{ name, ct, body string }{
		{"not JSON", "application/json", `{"request_id":`},
		{"JSON of another kind", "application/json", `"DELIVERED"`},
		{"a JSON content type, a form body", "application/json", `request_id=r1&status=delivered`},
		{"two JSON values", "application/json", `{"request_id":"r1","status":"delivered"} {}`},
		{"no request ID", "application/json", `{"mobile":"9876543210","status":"DELIVERED"}`},
		{"one report of two without a request ID", "application/json", `[{"request_id":"r1","status":"delivered"},{"status":"delivered"}]`},
		{"an empty list", "application/json", `[]`},
		{"an empty wrapped list", "application/json", `{"data":[]}`},
		{"a list of lists", "application/json", `[[1]]`},
		{"a list of strings", "application/json", `["r1"]`},
		{"a wrapped string that is not JSON", "application/json", `{"data":"[nope"}`},
		{"a form without a request ID", form, `mobile=9876543210&status=delivered`},
		{"a broken form", form, `request_id=%zz`},
		{"XML", "application/xml", `<dlr><request_id>r1</request_id></dlr>`},
		{"an empty body", "application/json", ``},
	}
	for _, tt := range tests {
		if code := post(t, callback, tt.ct, tt.body); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", tt.name, code)
		}
	}
	if code := do(t, http.MethodGet, callback, "", ""); code != http.StatusBadRequest {
		t.Errorf("GET without a query: %d, want 400", code)
	}
	if code := post(t, callback, "application/json", `[`+strings.Repeat(" ", 1<<20)+`]`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("over the default 1 MiB: %d, want 413", code)
	}
	for _, m := range []string{http.MethodPatch, http.MethodDelete, http.MethodHead} {
		resp := vendorhttptest.Do(t, nil, m, callback, []byte(`{"request_id":"r1","status":"delivered"}`), nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST, PUT" {
			t.Errorf("%s: %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if got := rec.Take(); len(got) != 0 {
		t.Fatalf("reported %+v", got)
	}
	if s := h.Stats(); s != (notify.WebhookStats{Malformed: uint64(len(tests)) + 2}) {
		t.Fatalf("stats = %+v", s)
	}

	small, rec, callback := newRecordingHook(t, smsgateway.WebhookConfig{MaxBody: 64})
	if code := post(t, callback, "application/json", `{"request_id":"r1","status":"delivered"}`); code != http.StatusOK {
		t.Fatalf("under MaxBody: %d", code)
	}
	if code := post(t, callback, "application/json", `{"request_id":"r1","status":"delivered","mobile":"9876543210","x":"yy"}`); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("over MaxBody: %d, want 413", code)
	}
	if got := rec.Take(); len(got) != 1 || small.Stats().Malformed != 1 {
		t.Fatalf("with MaxBody 64: %+v, %+v", got, small.Stats())
	}
}

// TestDLRStoreTroubleAsksForARetry: a report that cannot be applied now
// is 503, so that the vendor calls again; the fake vendor keeps it and
// posts it again on the next flush.
func TestDLRStoreTroubleAsksForARetry(t *testing.T) {
	var down = true
	var mu sync.Mutex
	var attempts []int
	h, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Token: dlrToken,
		Reporter: reporterFunc(func(_ context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if down {
				return nil, notify.Errorf(notify.CodeUnavailable, "database down")
			}
			return &notify.ReportResult{}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var d struct {
			PostAttempt int `json:"post_attempt"`
		}
		_ = json.Unmarshal(body, &d)
		mu.Lock()
		attempts = append(attempts, d.PostAttempt)
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key", DLRURL: srv.URL + "/dlr/" + dlrToken, AutoDLR: "delivered"})
	t.Cleanup(vendor.Close)
	p, err := smsgateway.New(smsgateway.Config{BaseURL: vendor.URL, APIKey: "vendor-key", HTTPClient: vendor.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	posted, err := vendor.FlushDLRs(t.Context())
	var ce *smsgatewaytest.CallbackError
	if posted != 0 || !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("store down: posted %d, %v; want a 503", posted, err)
	}
	if s := h.Stats(); s.Failed != 1 || s.Reports != 0 || vendor.PendingDLRs() != 1 {
		t.Fatalf("store down: %+v, %d pending", s, vendor.PendingDLRs())
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if posted, err := vendor.FlushDLRs(t.Context()); posted != 1 || err != nil {
		t.Fatalf("store back: posted %d, %v", posted, err)
	}
	if s := h.Stats(); s.Failed != 1 || s.Reports != 1 || vendor.PendingDLRs() != 0 {
		t.Fatalf("store back: %+v, %d pending", s, vendor.PendingDLRs())
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(attempts, []int{1, 2}) {
		t.Fatalf("post_attempt %v, want [1 2]", attempts)
	}
}

// TestNewWebhookChecksItsConfig: errors name the field, never the token.
func TestNewWebhookChecksItsConfig(t *testing.T) {
	rep := reporterFunc(func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error) { return nil, nil })
	for name, cfg := range map[string]smsgateway.WebhookConfig{
		"Reporter": {Token: dlrToken},
		"Token":    {Reporter: rep, Token: "short-secret"},
	} {
		if _, err := smsgateway.NewWebhook(cfg); err == nil || !strings.Contains(err.Error(), "WebhookConfig."+name) ||
			(cfg.Token != "" && strings.Contains(err.Error(), cfg.Token)) {
			t.Errorf("NewWebhook without a good %s: %v", name, err)
		}
	}
	for _, token := range []string{"secret/with/slashes/1234", "secret with spaces 1234", "secret\nwith a line break"} {
		if _, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: rep, Token: token}); err == nil ||
			!strings.Contains(err.Error(), "WebhookConfig.Token") || strings.Contains(err.Error(), "secret") {
			t.Errorf("token %q: %v", token, err)
		}
	}
	if _, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: rep, Token: "0123456789abcdef"}); err != nil {
		t.Errorf("a 16-byte token: %v", err)
	}
}

type reporterFunc func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error)

func (f reporterFunc) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	return f(ctx, r)
}

// TestDLRRefusesUnread: a callback of 900 KiB with a wrong token is 401,
// and one with the right token declaring more than MaxBody is 413, both
// before a byte of the body is read.
func TestDLRRefusesUnread(t *testing.T) {
	h, rec, _ := newRecordingHook(t, smsgateway.WebhookConfig{})
	for _, c := range []struct {
		name, token string
		length      int64
		want        int
	}{
		{"wrong token", "dlr-token-5c0e9a1f7c", 900 << 10, http.StatusUnauthorized},
		{"over MaxBody", dlrToken, smsgateway.DefaultMaxBody + 1, http.StatusRequestEntityTooLarge},
	} {
		body := vendorhttptest.NewBody(int(c.length))
		req := httptest.NewRequest(http.MethodPost, "/webhooks/smsgateway/"+c.token, nil)
		req.Body, req.ContentLength = body, c.length
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.want || body.BytesRead() != 0 {
			t.Errorf("%s: %d with %d bytes of the body read; want %d with none", c.name, w.Code, body.BytesRead(), c.want)
		}
	}
	if got := rec.Take(); len(got) != 0 {
		t.Fatalf("reported %+v", got)
	}
	if s := h.Stats(); s != (notify.WebhookStats{Refused: 1, Malformed: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}
