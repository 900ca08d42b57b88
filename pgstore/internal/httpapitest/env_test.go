package httpapitest_test

// The helpers of package httpapi's tests (httpapi_test.go) that the tests
// here need, copied: these are httpapi's tests that need a pgstore, moved
// to the pgstore module, since the library's module does not depend on
// pgx. Keep the copies in step.

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
