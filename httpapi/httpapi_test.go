package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

const (
	testKey     = "nk_test_0123456789abcdef"
	otherKey    = "nk_test_other_account_key"
	openingBal  = 10000 // paise
	testAccount = "acct-1"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv is a Handler on a real http.Server over loopback, with the real
// SMS and chat channels, the stock templates, the default INR prices, an
// in-memory ledger over an in-memory wallet, and capture providers.
type testEnv struct {
	url      string
	client   *http.Client
	wallet   *memstore.Wallet
	accounts *memstore.Accounts
	// ledger is the Notifier's Ledger: by default memstore's over wallet;
	// the options function of newTestEnvOf may replace it (with a wrapper
	// of that one, say) before the Notifier is made.
	ledger         store.Ledger
	sms, cloud, qr *memprovider.Provider
	mail           *memprovider.Provider
	clock          *testclock.Clock
	logs           *syncBuffer
	handler        *httpapi.Handler
	notifier       *notify.Notifier
}

// minor returns an account's balance in paise.
func (e *testEnv) minor(t testing.TB, acct string) int64 {
	t.Helper()
	b, err := e.wallet.Balance(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// sent counts the messages every provider captured.
func (e *testEnv) sent() int { return e.sms.Len() + e.cloud.Len() + e.qr.Len() + e.mail.Len() }

// publicDNS resolves every name to a public address, except the names
// the tests use to stand for internal hosts.
type publicDNS struct{}

func (publicDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "internal.example.com":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "loop.example.com":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

func newTestEnv(t testing.TB, opts ...httpapi.Option) *testEnv {
	return newTestEnvWith(t, openingBal, opts...)
}

func newTestEnvWith(t testing.TB, opening int64, opts ...httpapi.Option) *testEnv {
	t.Helper()
	return newTestEnvFull(t, opening, nil, opts...)
}

// newTestEnvFull builds the test gateway with extra Notifier options
// (limits, observers), which run on the env's clock.
func newTestEnvFull(t testing.TB, opening int64, nopts []notify.Option, opts ...httpapi.Option) *testEnv {
	t.Helper()
	return newTestEnvOf(t, opening, func(*testEnv) []notify.Option { return nopts }, opts...)
}

// newTestEnvOf is newTestEnvFull with Notifier options made from the
// env's stores; nopts may also replace e.ledger, which the Notifier then
// takes.
func newTestEnvOf(t testing.TB, opening int64, nopts func(*testEnv) []notify.Option, opts ...httpapi.Option) *testEnv {
	t.Helper()
	return newTestEnvHooked(t, opening, nopts, nil, opts...)
}

// newTestEnvHooked is newTestEnvOf with Handler options made once the
// Notifier is (e.notifier), by hopts when it is not nil.
func newTestEnvHooked(t testing.TB, opening int64, nopts func(*testEnv) []notify.Option,
	hopts func(*testEnv) []httpapi.Option, opts ...httpapi.Option) *testEnv {
	t.Helper()
	e := &testEnv{
		wallet:   memstore.NewWallet(),
		accounts: memstore.NewAccounts(),
		sms:      memprovider.New("sms-mem"),
		cloud:    memprovider.New("cloud-mem"),
		qr:       memprovider.New("qr-mem"),
		mail:     memprovider.New("mail-mem"),
		clock:    testclock.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
		logs:     &syncBuffer{},
	}
	for acct, key := range map[*notify.Account]string{
		{ID: testAccount, Name: "Acme Ltd", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}: testKey,
		{ID: "acct-2", Name: "Other", Currency: record.INR()}:                                                         otherKey,
	} {
		if err := e.accounts.Add(acct, key); err != nil {
			t.Fatal(err)
		}
	}
	for id, m := range map[string]int64{testAccount: opening, "acct-2": 0} {
		if err := e.wallet.Open(id, notify.Money{Minor: m, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
	}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: e.sms, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: e.cloud, QR: e.qr, Renderer: renderer, Resolver: publicDNS{}, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	mailCh, err := email.New(email.Config{Provider: e.mail, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	e.ledger = memstore.NewLedger(e.wallet)
	extra := nopts(e) // may replace e.ledger
	n, err := notify.New(e.accounts, e.ledger, append([]notify.Option{
		notify.WithChannel(smsCh),
		notify.WithChannel(chatCh),
		notify.WithChannel(mailCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
		notify.WithClock(e.clock.Now),
	}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.notifier = n
	logger := slog.New(slog.NewJSONHandler(e.logs, nil))
	all := append([]httpapi.Option{httpapi.WithLogger(logger)}, opts...)
	if hopts != nil {
		all = append(all, hopts(e)...)
	}
	h, err := httpapi.New(n, e.accounts, all...)
	if err != nil {
		t.Fatal(err)
	}
	e.handler = h
	e.url, e.client = serve(t, h)
	return e
}

// serve runs h on a real http.Server on 127.0.0.1:0 and returns its base
// URL and a keep-alive client; both are closed by t.Cleanup.
func serve(t testing.TB, h http.Handler) (string, *http.Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return "http://" + ln.Addr().String(), &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type reply struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// errCode returns error.code of an error body, or "".
func (r *reply) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r *reply) errFields() map[string]any {
	e, _ := r.body["error"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	return f
}

// do sends a request. hdr holds extra headers; a nil hdr means the
// default JSON content type and the test key.
func (e *testEnv) do(t *testing.T, method, path string, hdr map[string]string, body io.Reader) *reply {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if hdr == nil {
		hdr = map[string]string{}
	}
	if _, ok := hdr["Authorization"]; !ok {
		req.Header.Set("Authorization", testKey)
	}
	if _, ok := hdr["Content-Type"]; !ok && body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "<none>" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return e.roundTrip(t, e.client, req)
}

// roundTrip sends req with client and checks that the answer is a JSON
// object with an X-Request-ID.
func (e *testEnv) roundTrip(t *testing.T, client *http.Client, req *http.Request) *reply {
	t.Helper()
	method, path := req.Method, req.URL.Path
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %s", method, path, ct, raw)
	}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Fatalf("%s %s: no X-Request-ID", method, path)
	}
	return r
}

func (e *testEnv) post(t *testing.T, path, body string, hdr map[string]string) *reply {
	t.Helper()
	return e.do(t, http.MethodPost, path, hdr, strings.NewReader(body))
}

// wantError checks an error reply's status, code and success flag.
func wantError(t *testing.T, r *reply, status int, code string) {
	t.Helper()
	if r.status != status || r.errCode() != code || r.body["success"] != false {
		t.Fatalf("got %d %q, want %d %q: %s", r.status, r.errCode(), status, code, r.raw)
	}
	if msg, _ := r.body["error"].(map[string]any)["message"].(string); msg == "" {
		t.Fatalf("error without a message: %s", r.raw)
	}
}

func TestBadInput(t *testing.T) {
	e := newTestEnv(t)
	big := `{"to":"9876543210","message":"` + strings.Repeat("a", 2<<20) + `"}`
	type tc struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		chunk  bool // send without Content-Length
		status int
		code   string
		fields []string // fields that must be named
	}
	const okSMS = `{"to":"9876543210","message":"hello"}`
	cases := []tc{
		{name: "no authorization", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "<none>"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "empty authorization", path: "/api/v1/sms", hdr: map[string]string{"Authorization": ""}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "wrong key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "nk_test_wrong"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "wrong bearer key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer nk_test_wrong"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "bearer without key", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer"}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "bearer and spaces", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer    "}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "basic scheme", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Basic " + testKey}, body: okSMS, status: 401, code: "unauthenticated"},
		{name: "balance without key", method: "GET", path: "/api/v1/balance", hdr: map[string]string{"Authorization": "<none>"}, status: 401, code: "unauthenticated"},
		{name: "malformed json", path: "/api/v1/sms", body: `{"to":"9876543210",`, status: 400, code: "invalid_argument"},
		{name: "not json at all", path: "/api/v1/sms", body: `to=9876543210`, status: 400, code: "invalid_argument"},
		{name: "trailing garbage", path: "/api/v1/sms", body: okSMS + `x`, status: 400, code: "invalid_argument"},
		{name: "array body", path: "/api/v1/sms", body: `[` + okSMS + `]`, status: 400, code: "invalid_argument"},
		{name: "string body", path: "/api/v1/sms", body: `"hello"`, status: 400, code: "invalid_argument"},
		{name: "null body", path: "/api/v1/sms", body: `null`, status: 400, code: "invalid_argument"},
		{name: "empty body", path: "/api/v1/sms", body: ``, status: 400, code: "invalid_argument"},
		{name: "2 MiB body", path: "/api/v1/sms", body: big, status: 413, code: "request_too_large"},
		{name: "2 MiB chunked body", path: "/api/v1/sms", body: big, chunk: true, status: 413, code: "request_too_large"},
		{name: "text/plain", path: "/api/v1/sms", hdr: map[string]string{"Content-Type": "text/plain"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "form encoded", path: "/api/v1/send-otp", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: `to=9876543210&otp=1234`, status: 415, code: "unsupported_media_type"},
		{name: "no content type", path: "/api/v1/email/send", hdr: map[string]string{"Content-Type": "<none>"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "latin1 charset", path: "/api/v1/sms", hdr: map[string]string{"Content-Type": "application/json; charset=latin1"}, body: okSMS, status: 415, code: "unsupported_media_type"},
		{name: "alias conflict to/numbers", path: "/api/v1/sms", body: `{"to":"9876543210","numbers":"9123456789","message":"hi"}`, status: 400, code: "invalid_argument", fields: []string{"to", "numbers"}},
		{name: "alias conflict message", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","variables_values":"b"}`, status: 400, code: "invalid_argument", fields: []string{"message", "variables_values"}},
		{name: "alias conflict route", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","route":"sms","rout":"otp"}`, status: 400, code: "invalid_argument", fields: []string{"route", "rout"}},
		{name: "alias conflict domain", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"a","domain":"a.example","website":"b.example"}`, status: 400, code: "invalid_argument", fields: []string{"domain", "website"}},
		{name: "alias conflict brand", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":"1234","brand":"A","brand_name":"B"}`, status: 400, code: "invalid_argument", fields: []string{"brand_name", "brand"}},
		{name: "idempotency header vs field", path: "/api/v1/sms", hdr: map[string]string{"Idempotency-Key": "k1"}, body: `{"to":"9876543210","message":"a","idempotency_key":"k2"}`, status: 400, code: "invalid_argument", fields: []string{"idempotency_key"}},
		{name: "idempotency key with space", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","idempotency_key":"a b"}`, status: 400, code: "invalid_argument", fields: []string{"idempotency_key"}},
		{name: "float number", path: "/api/v1/sms", body: `{"to":9.87e9,"message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "fraction otp", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":1234.5}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "negative otp", path: "/api/v1/messenger/send", body: `{"to":"9876543210","otp":-1234}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "boolean to", path: "/api/v1/sms", body: `{"to":true,"message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "object message", path: "/api/v1/sms", body: `{"to":"9876543210","message":{"a":1}}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "number subject", path: "/api/v1/email/send", body: `{"to":"a@example.com","subject":5,"message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "bad variables", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_slug":"standard-otp","variables":{"OTP":true}}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "variables string", path: "/api/v1/email/send", body: `{"to":"a@example.com","template_slug":"x","variables":"OTP=1"}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "many bad fields at once", path: "/api/v1/sms", body: `{"to":false,"message":[1],"sender_id":{},"route":7}`, status: 400, code: "invalid_argument", fields: []string{"to", "message", "sender_id", "route"}},
		{name: "bad number (channel)", path: "/api/v1/sms", body: `{"to":"12345","message":"a"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "missing message (channel)", path: "/api/v1/sms", body: `{"to":"9876543210"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "bad route (channel)", path: "/api/v1/sms", body: `{"to":"9876543210","message":"a","rout":"fast"}`, status: 400, code: "invalid_argument", fields: []string{"route"}},
		{name: "sms otp not digits", path: "/api/v1/sms", body: `{"to":"9876543210","message":"12ab","route":"otp"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "sms dlt without template", path: "/api/v1/sms", body: `{"to":"9876543210","message":"x","route":"dlt","sender_id":"ACMEIN"}`, status: 400, code: "invalid_argument", fields: []string{"dlt_template_id"}},
		{name: "sms dlt header length", path: "/api/v1/sms", body: `{"to":"9876543210","message":"x","route":"dlt","sender_id":"ACME","dlt_template_id":"1","dlt_entity_id":"2"}`, status: 400, code: "invalid_argument", fields: []string{"sender_id"}},
		{name: "sms too long", path: "/api/v1/sms", body: `{"to":"9876543210","message":"` + strings.Repeat("x", 1600) + `"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "sms unknown slug", path: "/api/v1/sms", body: `{"to":"9876543210","template_slug":"nope"}`, status: 400, code: "invalid_argument", fields: []string{"template_slug"}},
		{name: "sms bad number and route at once", path: "/api/v1/sms", body: `{"to":"5876543210","message":"x","route":"fast"}`, status: 400, code: "invalid_argument", fields: []string{"to", "route"}},
		{name: "otp bad code", path: "/api/v1/send-otp", body: `{"to":"9876543210","otp":"12"}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "otp bad number", path: "/api/v1/send-otp", body: `{"to":"98765","otp":"1234"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "chat media http", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"http://cdn.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media ip literal", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"https://127.0.0.1/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media private host", path: "/api/v1/send-messenger", body: `{"to":"9876543210","media_url":"https://internal.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat media userinfo", path: "/api/v1/messenger/send", body: `{"to":"9876543210","media_url":"https://u:p@cdn.example.com/a.pdf"}`, status: 400, code: "invalid_argument", fields: []string{"media_url"}},
		{name: "chat header_url loopback", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"x","header_url":"https://loop.example.com/h.jpg"}`, status: 400, code: "invalid_argument", fields: []string{"header_url"}},
		{name: "chat unknown gateway", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"x","gateway":"sms"}`, status: 400, code: "invalid_argument", fields: []string{"gateway"}},
		{name: "chat unknown type", path: "/api/v1/messenger/send", body: `{"to":"9876543210","message":"x","type":"marketing"}`, status: 400, code: "invalid_argument", fields: []string{"type"}},
		{name: "chat unknown action", path: "/api/v1/messenger/send-otp", body: `{"to":"9876543210","otp":"1234","action":"unlock"}`, status: 400, code: "invalid_argument", fields: []string{"action"}},
		{name: "chat short otp", path: "/api/v1/messenger/send-otp", body: `{"to":"9876543210","otp":123}`, status: 400, code: "invalid_argument", fields: []string{"otp"}},
		{name: "chat nothing to send", path: "/api/v1/messenger/send", body: `{"to":"9876543210"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "chat slug missing variable", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_slug":"order-confirmed","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables.ORDER_ID"}},
		{name: "chat template_name on qr", path: "/api/v1/messenger/send", body: `{"to":"9876543210","gateway":"qr","template_name":"order_confirmed"}`, status: 400, code: "invalid_argument", fields: []string{"template_name"}},
		{name: "chat named variables for cloud template", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"order_confirmed","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables"}},
		{name: "chat bad language", path: "/api/v1/messenger/send", body: `{"to":"9876543210","template_name":"x","language":"english"}`, status: 400, code: "invalid_argument", fields: []string{"language"}},
		{name: "chat many bad fields", path: "/api/v1/messenger/send", body: `{"to":"1","message":"x","gateway":"y","type":"z","action":"w","media_url":"ftp://a/b"}`, status: 400, code: "invalid_argument", fields: []string{"to", "gateway", "type", "action", "media_url"}},
		{name: "email bad address", path: "/api/v1/email/send", body: `{"to":"asha-at-example.com","subject":"s","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "email display-name address", path: "/api/v1/email/send", body: `{"to":"Asha <asha@example.com>","subject":"s","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"to"}},
		{name: "email subject injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"hi\r\nBcc: x@evil.example","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "email from_name injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","from_name":"A\nB"}`, status: 400, code: "invalid_argument", fields: []string{"from_name"}},
		{name: "email reply_to injection", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","reply_to":"a@example.com\r\nX: y"}`, status: 400, code: "invalid_argument", fields: []string{"reply_to"}},
		{name: "email unknown purpose", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"m","purpose":"spam"}`, status: 400, code: "invalid_argument", fields: []string{"purpose"}},
		{name: "email no body", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "email NUL in message", path: "/api/v1/email/send", body: `{"to":"asha@example.com","subject":"s","message":"a\u0000b"}`, status: 400, code: "invalid_argument", fields: []string{"message"}},
		{name: "email template missing variable", path: "/api/v1/email/send", body: `{"to":"asha@example.com","template_slug":"payment-receipt","variables":{"NAME":"Asha"}}`, status: 400, code: "invalid_argument", fields: []string{"variables.AMOUNT"}},
		{name: "email many bad fields", path: "/api/v1/email/send", body: `{"to":"x","purpose":"y","from_name":"a\r\nb"}`, status: 400, code: "invalid_argument", fields: []string{"to", "purpose", "from_name", "message"}},
		{name: "email missing subject (channel)", path: "/api/v1/email/send", body: `{"to":"a@example.com","message":"m"}`, status: 400, code: "invalid_argument", fields: []string{"subject"}},
		{name: "unknown path", path: "/api/v1/nope", body: okSMS, status: 404, code: "not_found"},
		{name: "root path", method: "GET", path: "/", status: 404, code: "not_found"},
		{name: "old version", path: "/api/v2/sms", body: okSMS, status: 404, code: "not_found"},
		{name: "get on sms", method: "GET", path: "/api/v1/sms", status: 405, code: "method_not_allowed"},
		{name: "delete on messenger", method: "DELETE", path: "/api/v1/send-messenger", status: 405, code: "method_not_allowed"},
		{name: "post on balance", path: "/api/v1/balance", body: `{}`, status: 405, code: "method_not_allowed"},
		{name: "insufficient funds", path: "/api/v1/sms", hdr: map[string]string{"Authorization": "Bearer " + otherKey}, body: okSMS, status: 402, code: "insufficient_funds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before1, before2 := e.minor(t, testAccount), e.minor(t, "acct-2")
			sent := e.sent()
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			var body io.Reader
			if c.body != "" || method == http.MethodPost {
				body = strings.NewReader(c.body)
				if c.chunk {
					body = io.MultiReader(body) // hides the length: chunked
				}
			}
			r := e.do(t, method, c.path, c.hdr, body)
			wantError(t, r, c.status, c.code)
			for _, f := range c.fields {
				if _, ok := r.errFields()[f]; !ok {
					t.Errorf("field %q not named: %s", f, r.raw)
				}
			}
			if c.status == 405 && r.header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if a, b := e.minor(t, testAccount), e.minor(t, "acct-2"); a != before1 || b != before2 {
				t.Errorf("wallet moved: %d -> %d, %d -> %d", before1, a, before2, b)
			}
			if now := e.sent(); now != sent {
				t.Errorf("%d messages sent", now-sent)
			}
			if strings.Contains(r.raw, testKey) || strings.Contains(r.raw, "nk_test_wrong") {
				t.Errorf("reply echoes a key: %s", r.raw)
			}
		})
	}
}

func TestAuthForms(t *testing.T) {
	e := newTestEnv(t)
	for _, auth := range []string{testKey, "Bearer " + testKey, "bearer " + testKey, "BEARER  " + testKey, " " + testKey + " "} {
		r := e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": auth}, nil)
		if r.status != 200 {
			t.Errorf("Authorization %q: %d %s", strings.ReplaceAll(auth, testKey, "<key>"), r.status, r.raw)
		}
	}
}

func TestSMSSuccess(t *testing.T) {
	e := newTestEnv(t)
	r := e.post(t, "/api/v1/sms", `{"numbers":9876543210,"variables_values":"Hello there","rout":"sms","website":"shop.example","sender_id":"ACMEIN","unknown":{"x":[1,2]}}`, nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	want := map[string]any{
		"success": true, "channel": "sms", "to": "9876543210", "status": "sent",
		"provider": "sms-mem", "cost": "0.25", "cost_minor": 25.0,
		"balance": "99.75", "balance_minor": 9975.0, "units": 1.0,
		"currency": map[string]any{"code": "INR", "symbol": "₹", "exponent": 2.0},
	}
	for k, v := range want {
		got, _ := json.Marshal(r.body[k])
		exp, _ := json.Marshal(v)
		if string(got) != string(exp) {
			t.Errorf("%s = %s, want %s", k, got, exp)
		}
	}
	if id, _ := r.body["message_id"].(string); len(id) != 36 {
		t.Errorf("message_id %q is not a UUID", id)
	}
	if pid, _ := r.body["provider_message_id"].(string); pid == "" {
		t.Errorf("no provider_message_id")
	}
	sent := e.sms.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d sent", len(sent))
	}
	if env := sent[0]; env.To != "+919876543210" || sms.MessageOf(env).Text != "Hello there" || env.Domain != "shop.example" || sms.MessageOf(env).SenderID != "ACMEIN" {
		t.Errorf("envelope %+v %+v", env, sms.MessageOf(env))
	}
	if got := e.minor(t, testAccount); got != openingBal-25 {
		t.Errorf("wallet %d", got)
	}
}

func TestXDomainAndAliasesAgree(t *testing.T) {
	e := newTestEnv(t)
	// Equal values under a field and its alias are fine, and numbers that
	// differ only in spelling are the same number.
	r := e.post(t, "/api/v1/sms/send", `{"to":"+91 98765-43210","numbers":9876543210,"message":"x","variables_values":"x"}`,
		map[string]string{"X-Domain": "app.example"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if d := e.sms.Sent()[0].Domain; d != "app.example" {
		t.Errorf("domain %q, want the X-Domain header", d)
	}
	// The body's domain wins over the header.
	r = e.post(t, "/api/v1/messenger/send", `{"to":"9876543210","message":"x","domain":"body.example"}`,
		map[string]string{"X-Domain": "app.example"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if d := e.cloud.Sent()[0].Domain; d != "body.example" {
		t.Errorf("domain %q, want the body's", d)
	}
}

func TestChatPathsAndShapes(t *testing.T) {
	e := newTestEnvWith(t, 1000000)
	order := `"variables":{"NAME":"Asha","ORDER_ID":"4711","AMOUNT":"₹499","DELIVERY_DATE":"12/08/2025","LINK":"https://shop.example/o/4711"}`
	shapes := []struct {
		body  string
		check func(env *notify.Envelope) bool
		cost  int64
	}{
		// (a) OTP: a numeric otp keeps its digits.
		{`{"to":"9876543210","otp":482915,"action":"login","brand":"Acme"}`,
			func(env *notify.Envelope) bool { return chat.MessageOf(env).OTP == "482915" }, 35},
		// (b) Template by slug, as an object and as name/value pairs.
		{`{"to":"9876543210","template_slug":"order-confirmed",` + order + `}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil || chat.MessageOf(env).Text != ""
			}, 35},
		{`{"to":"9876543210","template_slug":"order-confirmed","variables":[{"name":"NAME","value":"Asha"},{"name":"ORDER_ID","value":4711},{"name":"AMOUNT","value":"₹499"},{"name":"DELIVERY_DATE","value":"12/08/2025"},{"name":"LINK","value":"https://shop.example/o/4711"}]}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil || chat.MessageOf(env).Text != ""
			}, 35},
		// (c) Media with a caption, on the QR gateway at the promotional rate.
		{`{"to":"9876543210","message":"Your invoice","media_url":"https://cdn.example.com/i.pdf","file_name":"Invoice.pdf","type":"promotional","gateway":"qr"}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Media != nil && chat.MessageOf(env).Media.URL == "https://cdn.example.com/i.pdf" && chat.MessageOf(env).Text == "Your invoice"
			}, 20},
		// (d) Cloud template with positional variables.
		{`{"gateway":"cloud","to":"9876543210","template_name":"order_update","language":"en","variables":["Asha","4711"]}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Template != nil && chat.MessageOf(env).Template.Name == "order_update" && len(chat.MessageOf(env).Template.Params) == 2
			}, 35},
		// Plain text, through the website alias.
		{`{"to":"9876543210","message":"hello","website":"w.example"}`,
			func(env *notify.Envelope) bool {
				return chat.MessageOf(env).Text == "hello" && env.Domain == "w.example"
			}, 35},
	}
	paths := []string{"/api/v1/messenger/send", "/api/v1/messenger/send-otp", "/api/v1/send-messenger"}
	for _, p := range paths {
		for _, sh := range shapes {
			before, n := e.minor(t, testAccount), e.sent()
			r := e.post(t, p, sh.body, map[string]string{"Authorization": "Bearer " + testKey})
			if r.status != 200 || r.body["channel"] != "chat" {
				t.Fatalf("%s %s: %d %s", p, sh.body, r.status, r.raw)
			}
			if e.sent() != n+1 {
				t.Fatalf("%s %s: nothing captured", p, sh.body)
			}
			all := append(e.cloud.Sent(), e.qr.Sent()...)
			var env *notify.Envelope
			for _, x := range all {
				if x.ID == r.body["message_id"] {
					env = x
				}
			}
			if env == nil || !sh.check(env) {
				t.Errorf("%s %s: envelope %+v", p, sh.body, env)
			}
			if got := before - e.minor(t, testAccount); got != sh.cost || r.body["cost_minor"] != float64(sh.cost) {
				t.Errorf("%s %s: charged %d (cost_minor %v), want %d", p, sh.body, got, r.body["cost_minor"], sh.cost)
			}
		}
	}
}

func TestEmail(t *testing.T) {
	e := newTestEnv(t)
	r := e.post(t, "/api/v1/email/send", `{"to":"asha@example.com","subject":"Hi","message":"<p>Hello</p>","from_name":"Acme","reply_to":"help@example.com","purpose":"invoice"}`, nil)
	if r.status != 200 || r.body["channel"] != "email" || r.body["cost"] != "0.10" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if m := email.MessageOf(e.mail.Sent()[0]); m.Subject != "Hi" || m.Purpose != email.PurposeInvoice {
		t.Errorf("%+v", m)
	}
}

func TestDualOTP(t *testing.T) {
	e := newTestEnv(t)
	r := e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482915","brand_name":"Acme","domain":"a.example"}`, nil)
	if r.status != 200 || r.body["channel"] != "otp" || r.body["cost"] != "0.55" || r.body["balance"] != "99.45" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	legs, _ := r.body["legs"].([]any)
	if len(legs) != 2 {
		t.Fatalf("legs: %s", r.raw)
	}
	for i, ch := range []string{"sms", "chat"} {
		l := legs[i].(map[string]any)
		if l["channel"] != ch || l["success"] != true || l["message_id"] == "" || l["status"] != "sent" {
			t.Errorf("leg %d: %v", i, l)
		}
	}

	// One leg refused: still 200, the failed leg says why and is not charged.
	e.cloud.FailNext(1, notify.CodeRejected)
	before := e.minor(t, testAccount)
	r = e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":482916}`, nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	legs = r.body["legs"].([]any)
	chat := legs[1].(map[string]any)
	if chat["success"] != false || chat["error"].(map[string]any)["code"] != "rejected" {
		t.Errorf("chat leg %v", chat)
	}
	if got := e.minor(t, testAccount); got != before-20 {
		t.Errorf("charged %d, want the SMS leg's 20", before-got)
	}
	if strings.Contains(r.raw, "482916") {
		t.Errorf("reply echoes the OTP: %s", r.raw)
	}

	// Both legs refused: the first leg's status, nothing charged.
	e.sms.FailNext(1, notify.CodeRejected)
	e.cloud.FailNext(1, notify.CodeRejected) // permanent: no failover to qr
	before = e.minor(t, testAccount)
	r = e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482917"}`, nil)
	wantError(t, r, 502, "rejected")
	if legs, _ := r.body["legs"].([]any); len(legs) != 2 {
		t.Errorf("failed dual OTP without legs: %s", r.raw)
	}
	if got := e.minor(t, testAccount); got != before {
		t.Errorf("wallet moved by %d", before-got)
	}
}

func TestProviderFailures(t *testing.T) {
	e := newTestEnv(t)
	for _, c := range []struct {
		code   notify.Code
		status int
	}{
		{notify.CodeRejected, 502},
		{notify.CodeUnavailable, 503},
		{notify.CodeRateLimited, 429},
	} {
		before := e.minor(t, testAccount)
		e.sms.FailNext(1, c.code)
		r := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"x"}`, nil)
		wantError(t, r, c.status, string(c.code))
		if r.body["message_id"] == nil {
			t.Errorf("failed send without its message_id: %s", r.raw)
		}
		if got := e.minor(t, testAccount); got != before {
			t.Errorf("%s: wallet moved by %d", c.code, before-got)
		}
	}
}

func TestBalance(t *testing.T) {
	e := newTestEnv(t)
	r := e.do(t, http.MethodGet, "/api/v1/balance", nil, nil)
	want := `{"success":true,"data":{"account":"acct-1","name":"Acme Ltd","balance":"100.00","balance_minor":10000,"currency":{"code":"INR","symbol":"₹","exponent":2}}}`
	if r.status != 200 || strings.TrimSpace(r.raw) != want {
		t.Fatalf("%d %s\nwant %s", r.status, r.raw, want)
	}
}

func TestIdempotency(t *testing.T) {
	e := newTestEnv(t)
	hdr := map[string]string{"Idempotency-Key": "order-42"}
	first := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"one"}`, hdr)
	if first.status != 200 {
		t.Fatalf("%d %s", first.status, first.raw)
	}
	after := e.minor(t, testAccount)
	again := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"one"}`, hdr)
	if again.status != 200 || again.body["message_id"] != first.body["message_id"] {
		t.Fatalf("repeat: %d %s", again.status, again.raw)
	}
	other := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"two"}`, hdr)
	wantError(t, other, 409, "conflict")
	// The body field is the same key as the header.
	viaField := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"two","idempotency_key":"order-42"}`, nil)
	wantError(t, viaField, 409, "conflict")
	if got := e.minor(t, testAccount); got != after || e.sms.Len() != 1 {
		t.Errorf("wallet %d (want %d), %d sent", got, after, e.sms.Len())
	}
}

// limited returns Notifier options with the gateway's limits: a token
// bucket per account and a sliding window per OTP recipient.
func limited(t testing.TB, perSecond float64, burst, otpMax int, otpWindow time.Duration) []notify.Option {
	t.Helper()
	var opts []notify.Option
	if perSecond > 0 {
		rate, err := memstore.NewRateLimit(perSecond, burst)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, notify.WithRateLimit(rate))
	}
	if otpMax > 0 {
		otp, err := memstore.NewWindowLimit(otpMax, otpWindow)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, notify.WithOTPThrottle(otp))
	}
	return opts
}

func TestRateLimit(t *testing.T) {
	e := newTestEnvFull(t, openingBal, limited(t, 2, 3, 0, 0))
	body := `{"to":"9876543210","message":"x"}`
	for i := 0; i < 3; i++ {
		if r := e.post(t, "/api/v1/sms", body, nil); r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.raw)
		}
	}
	before := e.minor(t, testAccount)
	r := e.post(t, "/api/v1/sms", body, nil)
	wantError(t, r, 429, "rate_limited")
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1", ra)
	}
	if got := e.minor(t, testAccount); got != before || e.sms.Len() != 3 {
		t.Errorf("limited request was charged or sent: %d, %d sent", before-got, e.sms.Len())
	}
	// Another account has its own bucket (its empty wallet answers).
	other := e.post(t, "/api/v1/sms", body, map[string]string{"Content-Type": "application/json", "Authorization": otherKey})
	wantError(t, other, 402, "insufficient_funds")
	// A bad request over the limit is still a bad request.
	wantError(t, e.post(t, "/api/v1/sms", `{"to":"12","message":"x"}`, nil), 400, "invalid_argument")
	// Half a second earns one token (2 per second).
	e.clock.Advance(500 * time.Millisecond)
	if r := e.post(t, "/api/v1/sms", body, nil); r.status != 200 {
		t.Fatalf("after refill: %d %s", r.status, r.raw)
	}
	wantError(t, e.post(t, "/api/v1/sms", body, nil), 429, "rate_limited")
	e.clock.Advance(2 * time.Second)
	for i := 0; i < 3; i++ {
		if r := e.post(t, "/api/v1/sms", body, nil); r.status != 200 {
			t.Fatalf("after full refill, request %d: %d %s", i, r.status, r.raw)
		}
	}
}

func TestOTPThrottle(t *testing.T) {
	e := newTestEnvFull(t, openingBal, limited(t, 0, 0, 5, 15*time.Minute))
	sends := []struct{ path, body string }{
		{"/api/v1/send-otp", `{"to":"9876543210","otp":"1111"}`},
		{"/api/v1/sms", `{"to":"+919876543210","message":"2222","route":"otp"}`},
		{"/api/v1/messenger/send", `{"to":9876543210,"otp":3333}`},
		{"/api/v1/send-otp", `{"to":"09876543210","otp":"4444"}`},
		{"/api/v1/messenger/send-otp", `{"to":"9876543210","otp":"5555"}`},
	}
	for _, s := range sends {
		if r := e.post(t, s.path, s.body, nil); r.status != 200 {
			t.Fatalf("%s: %d %s", s.path, r.status, r.raw)
		}
	}
	before := e.minor(t, testAccount)
	r := e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"6666"}`, nil)
	wantError(t, r, 429, "rate_limited")
	if r.header.Get("Retry-After") != "900" {
		t.Errorf("Retry-After %q, want 900", r.header.Get("Retry-After"))
	}
	if e.minor(t, testAccount) != before {
		t.Errorf("throttled OTP was charged")
	}
	// Once the budget is spent, an invalid request is still a 400.
	wantError(t, e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"12"}`, nil), 400, "invalid_argument")
	// Plain SMS and chat without an OTP are not throttled; other numbers
	// and other accounts have their own count.
	for _, s := range []struct{ path, body, key string }{
		{"/api/v1/sms", `{"to":"9876543210","message":"hello"}`, testKey},
		{"/api/v1/messenger/send", `{"to":"9876543210","message":"hello"}`, testKey},
		{"/api/v1/send-otp", `{"to":"9123456789","otp":"1234"}`, testKey},
	} {
		if r := e.post(t, s.path, s.body, map[string]string{"Authorization": s.key}); r.status != 200 {
			t.Errorf("%s %s: %d %s", s.path, s.body, r.status, r.raw)
		}
	}
	// The window slides: one minute after the first OTP expires, one more.
	e.clock.Advance(15*time.Minute + time.Second)
	if r := e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"7777"}`, nil); r.status != 200 {
		t.Fatalf("after the window: %d %s", r.status, r.raw)
	}
}

func TestOTPThrottleIgnoresFailedSends(t *testing.T) {
	e := newTestEnvFull(t, openingBal, limited(t, 0, 0, 2, time.Minute))
	e.sms.FailNext(3, notify.CodeRejected)
	for i := 0; i < 3; i++ {
		r := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil)
		wantError(t, r, 502, "rejected")
	}
	for i := 0; i < 2; i++ {
		if r := e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil); r.status != 200 {
			t.Fatalf("send %d: %d %s", i, r.status, r.raw)
		}
	}
	wantError(t, e.post(t, "/api/v1/sms", `{"to":"9876543210","message":"1234","route":"otp"}`, nil), 429, "rate_limited")
}

func TestRequestID(t *testing.T) {
	e := newTestEnv(t)
	r := e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"X-Request-ID": "abc-123.x:y_z"}, nil)
	if got := r.header.Get("X-Request-ID"); got != "abc-123.x:y_z" {
		t.Errorf("sane ID not echoed: %q", got)
	}
	r = e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"X-Request-ID": "<script>"}, nil)
	if got := r.header.Get("X-Request-ID"); got == "<script>" || got == "" {
		t.Errorf("insane ID echoed: %q", got)
	}
	a := e.do(t, http.MethodGet, "/nope", nil, nil).header.Get("X-Request-ID")
	b := e.do(t, http.MethodGet, "/nope", nil, nil).header.Get("X-Request-ID")
	if a == b {
		t.Errorf("generated IDs repeat: %q", a)
	}
}

func TestAccessLogRedacts(t *testing.T) {
	e := newTestEnv(t)
	e.post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"739104"}`, map[string]string{"X-Request-ID": "rid-1"})
	e.post(t, "/api/v1/sms", `{}`, map[string]string{"Authorization": "Bearer nk_test_secret_wrong"})
	logs := e.logs.String()
	for _, secret := range []string{testKey, "nk_test_secret_wrong", "739104"} {
		if strings.Contains(logs, secret) {
			t.Errorf("log contains a secret %q:\n%s", secret, logs)
		}
	}
	var rec map[string]any
	line, _, _ := strings.Cut(logs, "\n")
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"method": "POST", "path": "/api/v1/send-otp", "status": 200.0, "account": testAccount, "request_id": "rid-1"} {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v", k, rec[k], v)
		}
	}
	if _, ok := rec["duration"]; !ok {
		t.Errorf("no duration: %v", rec)
	}
	if !strings.Contains(logs, `"code":"unauthenticated"`) {
		t.Errorf("401 not logged with its code:\n%s", logs)
	}
}

// panicAccounts panics on one key, to exercise the recovery.
type panicAccounts struct{ *memstore.Accounts }

func (p panicAccounts) AccountByKey(ctx context.Context, key string) (*notify.Account, error) {
	if key == "boom" {
		panic("account store bug")
	}
	return p.Accounts.AccountByKey(ctx, key)
}

func TestPanicRecovered(t *testing.T) {
	accts := memstore.NewAccounts()
	n, err := notify.New(accts, memstore.NewLedger(nil))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	h, err := httpapi.New(n, panicAccounts{accts}, httpapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	url, client := serve(t, h)
	e := &testEnv{url: url, client: client}
	r := e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "boom"}, nil)
	wantError(t, r, 500, "internal")
	if strings.Contains(r.raw, "account store bug") {
		t.Errorf("panic detail in the reply: %s", r.raw)
	}
	if !strings.Contains(logs.String(), "account store bug") {
		t.Errorf("panic not logged: %s", logs.String())
	}
	// The server still serves.
	wantError(t, e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "x"}, nil), 401, "unauthenticated")
}

func TestNewRejectsBadConfig(t *testing.T) {
	accts := memstore.NewAccounts()
	n, _ := notify.New(accts, memstore.NewLedger(nil))
	for name, opts := range map[string][]httpapi.Option{
		"nil logger":   {httpapi.WithLogger(nil)},
		"zero body":    {httpapi.WithMaxBodyBytes(0)},
		"zero timeout": {httpapi.WithSendTimeout(0)},
		"zero header":  {httpapi.WithMaxHeaderBytes(0)},
		"nil decoder":  {httpapi.WithRoute("/push/send", nil)},
		"spec path":    {httpapi.WithRoute("/sms", decodeNothing)},
		"balance path": {httpapi.WithRoute("/balance", decodeNothing)},
		"twice":        {httpapi.WithRoute("/push", decodeNothing), httpapi.WithRoute("/push", decodeNothing)},
		"relative":     {httpapi.WithRoute("push", decodeNothing)},
		"pattern":      {httpapi.WithRoute("/push/{id}", decodeNothing)},
		"unclean":      {httpapi.WithRoute("/push/../sms", decodeNothing)},
	} {
		if _, err := httpapi.New(n, accts, opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := httpapi.New(nil, accts); err == nil {
		t.Error("nil notifier: no error")
	}
}

func decodeNothing([]byte, string, httpapi.Header) (notify.Request, error) {
	return nil, notify.Errorf(notify.CodeInvalidArgument, "nothing")
}

// failingAccounts fails every lookup, repeating the key it was given, as
// a careless store might.
type failingAccounts struct{ *memstore.Accounts }

func (failingAccounts) AccountByKey(_ context.Context, key string) (*notify.Account, error) {
	return nil, notify.Errorf(notify.CodeUnavailable, "store down while looking up %s", key)
}

func TestAccountsStoreFailure(t *testing.T) {
	accts := memstore.NewAccounts()
	n, _ := notify.New(accts, memstore.NewLedger(nil))
	logs := &syncBuffer{}
	h, err := httpapi.New(n, failingAccounts{accts}, httpapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	url, client := serve(t, h)
	e := &testEnv{url: url, client: client}
	r := e.do(t, http.MethodGet, "/api/v1/balance", map[string]string{"Authorization": "Bearer nk_secret_key_123"}, nil)
	wantError(t, r, 503, "unavailable")
	if strings.Contains(r.raw, "nk_secret_key_123") || strings.Contains(logs.String(), "nk_secret_key_123") {
		t.Errorf("key leaked:\n%s\n%s", r.raw, logs.String())
	}
	if !strings.Contains(logs.String(), "store down") {
		t.Errorf("the store's failure is not logged: %s", logs.String())
	}
}
