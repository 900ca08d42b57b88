package twilio_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

const statusPath = "/webhooks/twilio/status"

// hookLoop is a Webhook on a server of its own, behind a recording
// Reporter, and the
// fake Twilio whose callbacks reach it.
type hookLoop struct {
	hook     *twilio.Webhook
	rec      *providertest.Reports
	receiver *httptest.Server
	callback string // the StatusCallback Twilio is given
	vendor   *twiliotest.Server
	p        *twilio.Provider
}

// newHookLoop starts the loop; change, when not nil, changes the
// webhook's configuration; query is added to the StatusCallback.
func newHookLoop(t *testing.T, change func(*twilio.WebhookConfig), query string) *hookLoop {
	t.Helper()
	l := &hookLoop{rec: &providertest.Reports{}}
	mux := http.NewServeMux()
	l.receiver = httptest.NewServer(mux)
	t.Cleanup(l.receiver.Close)
	l.callback = l.receiver.URL + statusPath + query
	cfg := twilio.WebhookConfig{Reporter: l.rec, AuthToken: testToken}
	if change != nil {
		change(&cfg)
	}
	var err error
	if l.hook, err = twilio.NewWebhook(cfg); err != nil {
		t.Fatal(err)
	}
	mux.Handle(statusPath, l.hook)
	l.vendor = newVendor(t, twiliotest.Config{})
	l.p = newProvider(t, l.vendor, func(c *twilio.Config) { c.StatusCallback = l.callback })
	return l
}

// send sends envelope i with an ID, and returns its SID.
func (l *hookLoop) send(t *testing.T, i int) string {
	t.Helper()
	env := envelope(i)
	env.ID = "msg-" + string(rune('a'+i))
	res, err := l.p.Send(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return res.ProviderMessageID
}

// post posts params to the receiver's URL plus query, signed with sig
// ("" for none), and returns the status.
func (l *hookLoop) post(t *testing.T, query, sig string, params url.Values) int {
	t.Helper()
	err := l.vendor.Post(context.Background(), l.receiver.URL+statusPath+query, sig, params)
	var ce *twiliotest.CallbackError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &ce):
		return ce.StatusCode
	}
	t.Fatal(err)
	return 0
}

// TestWebhookStatuses: each status Twilio posts becomes the report of its
// state, named by the SID and by the reference Send put in the URL;
// statuses that say nothing final are acknowledged and ignored.
func TestWebhookStatuses(t *testing.T) {
	l := newHookLoop(t, nil, "")
	sid := l.send(t, 0)
	tests := []struct {
		status string
		code   int
		want   *notify.DeliveryReport
	}{
		{"queued", 0, nil},
		{"sending", 0, nil},
		{"accepted", 0, nil},
		{"sent", 0, &notify.DeliveryReport{State: record.StateSent}},
		{"delivered", 0, &notify.DeliveryReport{State: record.StateDelivered}},
		{"read", 0, &notify.DeliveryReport{State: record.StateRead}},
		{"undelivered", 30003, &notify.DeliveryReport{State: record.StateFailed, VendorCode: "30003",
			Error: "twilio: the message was undelivered: unreachable destination handset (error 30003)"}},
		{"failed", 30034, &notify.DeliveryReport{State: record.StateFailed, VendorCode: "30034",
			Error: "twilio: the message was failed: sent from a US number not registered for A2P 10DLC (error 30034)"}},
		{"failed", 0, &notify.DeliveryReport{State: record.StateFailed, VendorCode: "failed", Error: "twilio: the message was failed"}},
		{"undelivered", 39999, &notify.DeliveryReport{State: record.StateFailed, VendorCode: "39999",
			Error: "twilio: the message was undelivered (error 39999)"}},
	}
	ignored := 0
	for _, tt := range tests {
		if err := l.vendor.Report(context.Background(), sid, tt.status, tt.code); err != nil {
			t.Fatalf("%s: %v", tt.status, err)
		}
		got := l.rec.Take()
		if tt.want == nil {
			ignored++
			if len(got) != 0 {
				t.Errorf("%s: reported %+v", tt.status, got)
			}
			continue
		}
		want := *tt.want
		want.Provider, want.ProviderMessageID, want.Account, want.MessageID = "twilio", sid, "acme", "msg-a"
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s %d: reported %+v\nwant %+v", tt.status, tt.code, got, want)
		}
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: uint64(len(tests) - ignored), Ignored: uint64(ignored)}) {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookRefusesForgeries: a callback without a signature, with one
// of another token, of another URL or of other parameters is 401 and
// reports nothing.
func TestWebhookRefusesForgeries(t *testing.T) {
	l := newHookLoop(t, nil, "")
	sid := l.send(t, 0)
	target := l.receiver.URL + statusPath
	params := url.Values{"MessageSid": {sid}, "MessageStatus": {"delivered"}, "AccountSid": {testSID}, "To": {"+919876500000"}}
	tampered := url.Values{"MessageSid": {sid}, "MessageStatus": {"failed"}, "AccountSid": {testSID}, "To": {"+919876500000"}}
	extra := url.Values{"MessageSid": {sid}, "MessageStatus": {"delivered"}, "AccountSid": {testSID}, "To": {"+919876500000"}, "ErrorCode": {"30003"}}
	good := twiliotest.Sign(testToken, target, params)
	tests := []struct {
		name, query, sig string
		params           url.Values
	}{
		{"no signature", "", "", params},
		{"not base64", "", "not a signature at all!!!!!", params},
		{"too short", "", good[:20], params},
		{"another token", "", twiliotest.Sign("another-token", target, params), params},
		{"tampered status", "", good, tampered},
		{"a parameter added", "", good, extra},
		{"another query", "?notify_ref=a%3Dother%26m%3Dx", good, params},
		{"another path", "", twiliotest.Sign(testToken, l.receiver.URL+"/other", params), params},
		{"https for http", "", twiliotest.Sign(testToken, "https"+strings.TrimPrefix(target, "http"), params), params},
	}
	for _, tt := range tests {
		if code := l.post(t, tt.query, tt.sig, tt.params); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", tt.name, code)
		}
	}
	if got := l.rec.Take(); len(got) != 0 {
		t.Fatalf("reported %+v", got)
	}
	if code := l.post(t, "", good, params); code != http.StatusOK {
		t.Fatalf("the genuine callback: %d", code)
	}
	if s := l.hook.Stats(); s.Refused != uint64(len(tests)) || s.Reports != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookRefusesAnotherAccount: with AccountSID set, a callback
// signed with the right token but of another account is refused, 401,
// and reports nothing; the account's own goes through. Without it the
// account is not checked.
func TestWebhookRefusesAnotherAccount(t *testing.T) {
	l := newHookLoop(t, func(c *twilio.WebhookConfig) { c.AccountSID = testSID }, "")
	sid := l.send(t, 0)
	target := l.receiver.URL + statusPath
	other := url.Values{"MessageSid": {sid}, "MessageStatus": {"failed"}, "AccountSid": {"AC" + strings.Repeat("f", 32)}, "To": {"+919876500000"}}
	none := url.Values{"MessageSid": {sid}, "MessageStatus": {"failed"}, "To": {"+919876500000"}}
	for name, params := range map[string]url.Values{"another account": other, "no account": none} {
		if code := l.post(t, "", twiliotest.Sign(testToken, target, params), params); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if got := l.rec.Take(); len(got) != 0 {
		t.Fatalf("reported %+v", got)
	}
	own := url.Values{"MessageSid": {sid}, "MessageStatus": {"delivered"}, "AccountSid": {testSID}, "To": {"+919876500000"}}
	if code := l.post(t, "", twiliotest.Sign(testToken, target, own), own); code != http.StatusOK || len(l.rec.Take()) != 1 {
		t.Fatalf("the account's own callback: %d", code)
	}

	unchecked := newHookLoop(t, nil, "")
	sid = unchecked.send(t, 0)
	other.Set("MessageSid", sid)
	if code := unchecked.post(t, "", twiliotest.Sign(testToken, unchecked.receiver.URL+statusPath, other), other); code != http.StatusOK {
		t.Fatalf("without AccountSID, another account's callback: %d, want 200", code)
	}
}

// TestWebhookURLWithQuery: a StatusCallback with a query of its own keeps
// it, with the reference added; the signature covers both.
func TestWebhookURLWithQuery(t *testing.T) {
	l := newHookLoop(t, nil, "?tenant=acme&x=%2F")
	sid := l.send(t, 0)
	if got := l.vendor.Messages()[0].StatusCallback; got != l.callback+"&notify_ref=a%3Dacme%26m%3Dmsg-a" {
		t.Fatalf("StatusCallback = %s", got)
	}
	if err := l.vendor.Report(context.Background(), sid, "delivered", 0); err != nil {
		t.Fatal(err)
	}
	if got := l.rec.Take(); len(got) != 1 || got[0].MessageID != "msg-a" || got[0].State != record.StateDelivered {
		t.Fatalf("reported %+v", got)
	}
	// The same parameters signed without the query are not this callback.
	params := url.Values{"MessageSid": {sid}, "MessageStatus": {"delivered"}}
	if code := l.post(t, "?tenant=acme&x=%2F", twiliotest.Sign(testToken, l.receiver.URL+statusPath, params), params); code != http.StatusUnauthorized {
		t.Fatalf("a signature without the query: %d", code)
	}
}

// TestWebhookPublicURL: behind a proxy the receiver is told its public
// URL; a signature over it passes with the scheme's port or without, and
// with the URL's fragment (connection overrides) or without; one over the
// address the receiver sees does not.
func TestWebhookPublicURL(t *testing.T) {
	const public = "https://hooks.example.com" + statusPath
	l := newHookLoop(t, func(c *twilio.WebhookConfig) { c.URL = public + "#rc=2&rp=all" }, "")
	params := url.Values{"MessageSid": {"SM" + strings.Repeat("c", 32)}, "MessageStatus": {"sent"}}
	query := "?notify_ref=a%3Dacme%26m%3Dm9"
	for _, signed := range []string{
		public + query,
		"https://hooks.example.com:443" + statusPath + query,
		public + query + "#rc=2&rp=all",
	} {
		if code := l.post(t, query, twiliotest.Sign(testToken, signed, params), params); code != http.StatusOK {
			t.Errorf("signed over %s: %d", signed, code)
		}
	}
	for _, signed := range []string{
		l.receiver.URL + statusPath + query,
		"https://hooks.example.com:8443" + statusPath + query,
		public,
	} {
		if code := l.post(t, query, twiliotest.Sign(testToken, signed, params), params); code != http.StatusUnauthorized {
			t.Errorf("signed over %s: %d, want 401", signed, code)
		}
	}
	got := l.rec.Take()
	if len(got) != 3 || got[0].Account != "acme" || got[0].MessageID != "m9" || got[0].State != record.StateSent {
		t.Fatalf("reported %+v", got)
	}
}

// TestWebhookAnswers: what the Reporter says decides the answer: a
// message no record has is acknowledged (Unmatched), one that cannot be
// applied now is 503, so that Twilio calls again.
func TestWebhookAnswers(t *testing.T) {
	l := newHookLoop(t, nil, "")
	sid := l.send(t, 0)
	l.rec.Fail(notify.Errorf(notify.CodeNotFound, "no message"))
	if err := l.vendor.Report(context.Background(), sid, "delivered", 0); err != nil {
		t.Fatalf("unknown message: %v", err)
	}
	l.rec.Fail(&notify.Error{Code: notify.CodeUnavailable, Err: notify.ErrNotRecordedYet})
	err := l.vendor.Report(context.Background(), sid, "delivered", 0)
	var ce *twiliotest.CallbackError
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a report ahead of our move to sent: %v, want 503", err)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Unmatched: 1, Failed: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookRefusesWhatItCannotRead: another method is 405, a body that
// is not a form or a callback without MessageSid 400, a body over MaxBody
// 413, and a malformed signature 401 before a byte of the body is read.
func TestWebhookRefusesWhatItCannotRead(t *testing.T) {
	rec := &providertest.Reports{}
	h, err := twilio.NewWebhook(twilio.WebhookConfig{Reporter: rec, AuthToken: testToken, MaxBody: 1024})
	if err != nil {
		t.Fatal(err)
	}
	target := "http://example.com" + statusPath
	signed := func(params url.Values) string { return twiliotest.Sign(testToken, target, params) }
	serve := func(method, ct, sig string, body *vendorhttptest.Body, length int64) (int, int64) {
		req := httptest.NewRequest(method, target, nil)
		req.Body, req.ContentLength = body, length
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if sig != "" {
			req.Header.Set("X-Twilio-Signature", sig)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, body.BytesRead()
	}
	form := "application/x-www-form-urlencoded"
	noSID := url.Values{"MessageStatus": {"delivered"}}
	valid := twiliotest.Sign(testToken, target, url.Values{"MessageSid": {"SM1"}})
	big := vendorhttptest.NewBody(900 << 10)
	if code, read := serve(http.MethodGet, "", valid, vendorhttptest.NewBody(0), 0); code != http.StatusMethodNotAllowed || read != 0 {
		t.Errorf("GET: %d", code)
	}
	if code, read := serve(http.MethodPost, form, "", big, 900<<10); code != http.StatusUnauthorized || read != 0 {
		t.Errorf("no signature: %d, %d bytes read", code, read)
	}
	if code, read := serve(http.MethodPost, form, "abc", vendorhttptest.NewBody(900<<10), 900<<10); code != http.StatusUnauthorized || read != 0 {
		t.Errorf("malformed signature: %d, %d bytes read", code, read)
	}
	if code, read := serve(http.MethodPost, form, valid, vendorhttptest.NewBody(2048), 2048); code != http.StatusRequestEntityTooLarge || read != 0 {
		t.Errorf("over MaxBody: %d, %d bytes read", code, read)
	}
	if code, read := serve(http.MethodPost, "application/json", valid, vendorhttptest.BodyOf([]byte(`{"MessageSid":"SM1"}`)), 20); code != http.StatusBadRequest || read != 0 {
		t.Errorf("JSON: %d, %d bytes read", code, read)
	}
	if code, _ := serve(http.MethodPost, form, signed(noSID), vendorhttptest.BodyOf([]byte(noSID.Encode())), int64(len(noSID.Encode()))); code != http.StatusBadRequest {
		t.Errorf("no MessageSid: %d", code)
	}
	if code, _ := serve(http.MethodPost, form, valid, vendorhttptest.BodyOf([]byte("a=%zz")), 5); code != http.StatusBadRequest {
		t.Errorf("not a form: %d", code)
	}
	// Without a Content-Type the body is read as a form.
	ok := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"sent"}}
	if code, _ := serve(http.MethodPost, "", signed(ok), vendorhttptest.BodyOf([]byte(ok.Encode())), int64(len(ok.Encode()))); code != http.StatusOK {
		t.Errorf("no Content-Type: %d", code)
	}
	if got := rec.Take(); len(got) != 1 {
		t.Fatalf("reported %+v", got)
	}
	if s := h.Stats(); s != (notify.WebhookStats{Reports: 1, Refused: 2, Malformed: 4}) {
		t.Fatalf("stats = %+v", s)
	}
}

func TestNewWebhookChecksItsConfig(t *testing.T) {
	rec := &providertest.Reports{}
	for name, cfg := range map[string]twilio.WebhookConfig{
		"Reporter":     {AuthToken: testToken},
		"AuthToken":    {Reporter: rec},
		"AuthToken ":   {Reporter: rec, AuthToken: testToken + "\n"},
		"URL":          {Reporter: rec, AuthToken: testToken, URL: "/relative"},
		"URL with ?":   {Reporter: rec, AuthToken: testToken, URL: "https://h.example/s?x=1"},
		"URL with ? ":  {Reporter: rec, AuthToken: testToken, URL: "https://h.example/s?"},
		"URL not http": {Reporter: rec, AuthToken: testToken, URL: "ftp://h.example/s"},
		"AccountSID":   {Reporter: rec, AuthToken: testToken, AccountSID: "SK" + strings.Repeat("0", 32)},
	} {
		_, err := twilio.NewWebhook(cfg)
		if err == nil || !strings.Contains(err.Error(), "WebhookConfig."+strings.Fields(name)[0]) || strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// reportLoop is the whole loop over real HTTP: a Notifier sending SMS
// through the provider to the fake Twilio, whose status callbacks reach a
// Webhook reporting to the Notifier.
type reportLoop struct {
	*notifytest.Kit // its account is "acme", on the SMS channel of the provider
	vendor          *twiliotest.Server
	hook            *twilio.Webhook
}

func newReportLoop(t *testing.T) *reportLoop {
	t.Helper()
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	t.Cleanup(receiver.Close)
	l := &reportLoop{vendor: newVendor(t, twiliotest.Config{})}
	p := newProvider(t, l.vendor, func(c *twilio.Config) { c.StatusCallback = receiver.URL + statusPath })
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	l.Kit = notifytest.New(t, notifytest.WithAccount(notify.Account{ID: "acme", Currency: record.INR()}),
		notifytest.WithNotifierOptions(notify.WithChannel(ch)))
	if l.hook, err = twilio.NewWebhook(twilio.WebhookConfig{Reporter: l.Notifier, AuthToken: testToken}); err != nil {
		t.Fatal(err)
	}
	mux.Handle("POST "+statusPath, l.hook)
	return l
}

// TestWebhookWholeLoop: an SMS goes out through the SMS channel and
// Twilio, and its callbacks move the record to sent, then delivered; a
// repeat changes nothing; an undelivered message of another send fails,
// keeping the vendor's code.
func TestWebhookWholeLoop(t *testing.T) {
	l := newReportLoop(t)
	ctx := context.Background()
	r, err := l.Notifier.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.vendor.Messages()[0].To; got != "+919876543210" {
		t.Fatalf("To = %s", got)
	}
	for _, st := range []string{"queued", "sent", "delivered", "delivered"} {
		if err := l.vendor.Report(ctx, r.ProviderMessageID, st, 0); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	if m := l.Message(t, r.MessageID); m.State != record.StateDelivered {
		t.Fatalf("state %s (%+v)", m.State, m.History)
	}
	r2, err := l.Notifier.Send(ctx, &sms.Request{Account: "acme", To: "+91 98765 43211", Message: "Your order shipped"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.vendor.Report(ctx, r2.ProviderMessageID, "undelivered", 30003); err != nil {
		t.Fatal(err)
	}
	m := l.Message(t, r2.MessageID)
	if m.State != record.StateFailed || m.VendorCode != "30003" || !strings.Contains(m.Error, "unreachable destination handset") {
		t.Fatalf("undelivered: %s %q %q", m.State, m.VendorCode, m.Error)
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 4, Ignored: 1}) {
		t.Fatalf("stats = %+v", s)
	}
}

// TestWebhookSettlesAnUnknownSend: Twilio created the message and the
// answer was lost, so its SID was never recorded; the callback names the
// message by the reference in its URL and settles it.
func TestWebhookSettlesAnUnknownSend(t *testing.T) {
	l := newReportLoop(t)
	ctx := context.Background()
	l.vendor.BreakNext()
	r, err := l.Notifier.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || r == nil {
		t.Fatalf("lost answer: %v", err)
	}
	taken := l.vendor.Messages()
	if len(taken) != 1 {
		t.Fatalf("Twilio took %d messages", len(taken))
	}
	if err := l.vendor.Report(ctx, taken[0].SID, "delivered", 0); err != nil {
		t.Fatal(err)
	}
	m := l.Message(t, r.MessageID)
	path := []record.State{record.StatePending, record.StateAttempting, record.StateUnknown, record.StateDelivered}
	if m.State != record.StateDelivered || m.ProviderMessageID != taken[0].SID ||
		!slices.EqualFunc(m.History, path, func(c record.StateChange, s record.State) bool { return c.State == s }) {
		t.Fatalf("unknown reported delivered: %s %s (%+v)", m.State, m.ProviderMessageID, m.History)
	}
}
