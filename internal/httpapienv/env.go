package httpapienv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/syncbuf"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// The accounts of an Env: TestAccount, under TestKey, whose wallet opens
// with the opening balance New takes (OpeningBal, in paise), and acct-2,
// under OtherKey, whose wallet is empty.
const (
	TestKey     = "nk_test_0123456789abcdef"
	OtherKey    = "nk_test_other_account_key"
	OpeningBal  = 10000 // paise
	TestAccount = "acct-1"
)

// Env is a Handler on a real http.Server over loopback, with the real
// SMS, chat, e-mail and push channels, the stock templates, the default INR
// prices, an in-memory ledger over an in-memory wallet, and capture
// providers. Its fields are what a test looks at or replaces.
type Env struct {
	URL      string
	Client   *http.Client
	Wallet   *memstore.Wallet
	Accounts *memstore.Accounts
	// Ledger is the Notifier's Ledger: by default memstore's over Wallet;
	// the options function of NewOf may replace it (with a wrapper of
	// that one, say) before the Notifier is made.
	Ledger         store.Ledger
	SMS, Cloud, QR *memprovider.Provider
	Mail           *memprovider.Provider
	// WebPush and FCM are the push channel's providers.
	WebPush, FCM *memprovider.Provider
	Clock        *testclock.Clock
	Logs         *syncbuf.Buffer
	Handler      *httpapi.Handler
	Notifier     *notify.Notifier
}

// Minor returns an account's balance in paise.
func (e *Env) Minor(t testing.TB, acct string) int64 {
	t.Helper()
	b, err := e.Wallet.Balance(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// Sent counts the messages every provider captured.
func (e *Env) Sent() int {
	return e.SMS.Len() + e.Cloud.Len() + e.QR.Len() + e.Mail.Len() + e.WebPush.Len() + e.FCM.Len()
}

// PublicDNS resolves every name to a public address, except the names
// the tests use to stand for internal hosts.
type PublicDNS struct{}

// LookupNetIP implements netguard.Resolver.
func (PublicDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "internal.example.com":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "loop.example.com":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// New builds the test gateway, TestAccount's wallet opening with
// OpeningBal.
func New(t testing.TB, opts ...httpapi.Option) *Env {
	return NewWith(t, OpeningBal, opts...)
}

// NewWith is New with TestAccount's wallet opening with opening.
func NewWith(t testing.TB, opening int64, opts ...httpapi.Option) *Env {
	t.Helper()
	return NewFull(t, opening, nil, opts...)
}

// NewFull builds the test gateway with extra Notifier options
// (limits, observers), which run on the env's clock.
func NewFull(t testing.TB, opening int64, nopts []notify.Option, opts ...httpapi.Option) *Env {
	t.Helper()
	return NewOf(t, opening, func(*Env) []notify.Option { return nopts }, opts...)
}

// NewOf is NewFull with Notifier options made from the env's stores;
// nopts may also replace e.Ledger, which the Notifier then takes.
func NewOf(t testing.TB, opening int64, nopts func(*Env) []notify.Option, opts ...httpapi.Option) *Env {
	t.Helper()
	return NewHooked(t, opening, nopts, nil, opts...)
}

// NewHooked is NewOf with Handler options made once the Notifier is
// (e.Notifier), by hopts when it is not nil.
func NewHooked(t testing.TB, opening int64, nopts func(*Env) []notify.Option,
	hopts func(*Env) []httpapi.Option, opts ...httpapi.Option) *Env {
	t.Helper()
	e := &Env{
		Wallet:   memstore.NewWallet(),
		Accounts: memstore.NewAccounts(),
		SMS:      memprovider.New("sms-mem"),
		Cloud:    memprovider.New("cloud-mem"),
		QR:       memprovider.New("qr-mem"),
		Mail:     memprovider.New("mail-mem"),
		WebPush:  memprovider.New("webpush-mem"),
		FCM:      memprovider.New("fcm-mem"),
		Clock:    testclock.New(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
		Logs:     &syncbuf.Buffer{},
	}
	for acct, key := range map[*notify.Account]string{
		{ID: TestAccount, Name: "Acme Ltd", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}: TestKey,
		{ID: "acct-2", Name: "Other", Currency: record.INR()}:                                                         OtherKey,
	} {
		if err := e.Accounts.Add(acct, key); err != nil {
			t.Fatal(err)
		}
	}
	for id, m := range map[string]int64{TestAccount: opening, "acct-2": 0} {
		if err := e.Wallet.Open(id, notify.Money{Minor: m, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
	}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: e.SMS, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: e.Cloud, QR: e.QR, Renderer: renderer, Resolver: PublicDNS{}, CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	mailCh, err := email.New(email.Config{Provider: e.Mail, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	pushCh, err := push.New(push.Config{WebPush: e.WebPush, FCM: e.FCM})
	if err != nil {
		t.Fatal(err)
	}
	e.Ledger = memstore.NewLedger(e.Wallet)
	extra := nopts(e) // may replace e.Ledger
	n, err := notify.New(e.Accounts, e.Ledger, append([]notify.Option{
		notify.WithChannel(smsCh),
		notify.WithChannel(chatCh),
		notify.WithChannel(mailCh),
		notify.WithChannel(pushCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
		notify.WithClock(e.Clock.Now),
	}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.Notifier = n
	logger := slog.New(slog.NewJSONHandler(e.Logs, nil))
	all := append([]httpapi.Option{httpapi.WithLogger(logger)}, opts...)
	if hopts != nil {
		all = append(all, hopts(e)...)
	}
	h, err := httpapi.New(n, e.Accounts, all...)
	if err != nil {
		t.Fatal(err)
	}
	e.Handler = h
	e.URL, e.Client = Serve(t, h)
	return e
}

// Serve runs h on a real http.Server on 127.0.0.1:0 and returns its base
// URL and a keep-alive client; both are closed by t.Cleanup.
func Serve(t testing.TB, h http.Handler) (string, *http.Client) {
	t.Helper()
	url, client, _ := ServeUntil(t, h)
	return url, client
}

// Reply is an answer of the gateway: its status, headers, body as sent
// and body decoded (a JSON object).
type Reply struct {
	Status int
	Header http.Header
	Raw    string
	Body   map[string]any
}

// ErrCode returns error.code of an error body, or "".
func (r *Reply) ErrCode() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// ErrFields returns error.fields of an error body, or nil.
func (r *Reply) ErrFields() map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	return f
}

// Do sends a request. hdr holds extra headers; a nil hdr means the
// default JSON content type and the test key.
func (e *Env) Do(t *testing.T, method, path string, hdr map[string]string, body io.Reader) *Reply {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if hdr == nil {
		hdr = map[string]string{}
	}
	if _, ok := hdr["Authorization"]; !ok {
		req.Header.Set("Authorization", TestKey)
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
	return e.RoundTrip(t, e.Client, req)
}

// RoundTrip sends req with client and checks that the answer is a JSON
// object with an X-Request-ID.
func (e *Env) RoundTrip(t *testing.T, client *http.Client, req *http.Request) *Reply {
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
	r := &Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %s", method, path, ct, raw)
	}
	if err := json.Unmarshal(raw, &r.Body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Fatalf("%s %s: no X-Request-ID", method, path)
	}
	return r
}

// Post sends a POST of body, as Do does.
func (e *Env) Post(t *testing.T, path, body string, hdr map[string]string) *Reply {
	t.Helper()
	return e.Do(t, http.MethodPost, path, hdr, strings.NewReader(body))
}

// WantError checks an error reply's status, code and success flag.
func WantError(t *testing.T, r *Reply, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrCode() != code || r.Body["success"] != false {
		t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.ErrCode(), status, code, r.Raw)
	}
	if msg, _ := r.Body["error"].(map[string]any)["message"].(string); msg == "" {
		t.Fatalf("error without a message: %s", r.Raw)
	}
}

// ClosedPort returns a loopback port nothing listens on, the port of
// vendorhttptest.ClosedAddr, for a client (such as provider/smtp's) that
// takes a port number.
func ClosedPort(t *testing.T) int {
	t.Helper()
	_, p, err := net.SplitHostPort(vendorhttptest.ClosedAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// WantNoLeaks checks that an answer shows none of leaks, in any case.
func WantNoLeaks(t *testing.T, what string, r *Reply, leaks ...string) {
	t.Helper()
	// The answer's own random IDs (a message's UUID, the request's ID)
	// may hold any run of hex digits, a leak's "554" or "4471" too.
	raw := strings.ToLower(randomIDs.ReplaceAllString(r.Raw, "<id>"))
	for _, leak := range leaks {
		if strings.Contains(raw, strings.ToLower(leak)) {
			t.Errorf("%s: the answer shows %q: %s", what, leak, r.Raw)
		}
	}
}

// randomIDs matches the random IDs an answer carries: UUIDs, and request
// IDs (hex, a dash, a sequence number).
var randomIDs = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\(request [0-9a-f]+-\d+\)`)

// WantNoInternals checks that an error answer shows none of leaks and
// ends its message with the answer's request ID, and returns the message.
func WantNoInternals(t *testing.T, what string, r *Reply, leaks ...string) string {
	t.Helper()
	WantNoLeaks(t, what, r, leaks...)
	msg, _ := r.Body["error"].(map[string]any)["message"].(string)
	if id := r.Header.Get("X-Request-ID"); !strings.HasSuffix(msg, "(request "+id+")") {
		t.Errorf("%s: the message does not end with the request ID %q: %q", what, id, msg)
	}
	return msg
}

// WantLogged checks that the log has each of details.
func WantLogged(t *testing.T, what, logs string, details ...string) {
	t.Helper()
	for _, d := range details {
		if !strings.Contains(logs, d) {
			t.Errorf("%s: the log lacks %q:\n%s", what, d, logs)
		}
	}
}

// PostTimed posts body to url as JSON with key as its Authorization,
// reads and closes the answer, and returns how long that took: the load
// of the benchmarks. ok is false when the request failed or was not
// answered 200.
func PostTimed(client *http.Client, url, key string, body []byte) (took time.Duration, ok bool) {
	t0 := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode == http.StatusOK
}

// ServeUntil runs h on a real http.Server on 127.0.0.1:0, with a
// keep-alive client, and returns a function that shuts both down (also
// run at cleanup), so the goroutine count can be checked before the test
// ends.
func ServeUntil(t testing.TB, h http.Handler) (string, *http.Client, func()) {
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
	var once sync.Once
	stop := func() {
		once.Do(func() {
			tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			<-done
		})
	}
	t.Cleanup(stop)
	return "http://" + ln.Addr().String(), &http.Client{Transport: tr, Timeout: 10 * time.Second}, stop
}
