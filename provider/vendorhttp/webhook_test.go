package vendorhttp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

type reporterFunc func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error)

func (f reporterFunc) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	return f(ctx, r)
}

// TestDeliverOutlivesTheVendorsHangUp: a vendor that hangs up while its
// reports are being applied does not cut them short.
func TestDeliverOutlivesTheVendorsHangUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var got []error
	rep := reporterFunc(func(ctx context.Context, _ *notify.DeliveryReport) (*notify.ReportResult, error) {
		cancel() // the vendor hangs up during the first report
		got = append(got, ctx.Err())
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the reports run without a bound")
		}
		return &notify.ReportResult{}, nil
	})
	var c Receiver
	rec := httptest.NewRecorder()
	c.Deliver(ctx, rec, rep, []*notify.DeliveryReport{{}, {}})
	if rec.Code != http.StatusOK || len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Fatalf("answer %d, report contexts %v: want both reports run with a live context", rec.Code, got)
	}
}

const testSecret = "s3cret-key-for-tests"

var testSig = Signature{Header: "X-Hub-Signature-256", Prefix: "sha256=", Hash: sha256.New, Size: sha256.Size}

func sign(body []byte) string {
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// TestReadRefusesOnHeadersAlone: a forged report of 900 KiB without a
// signature of the vendor's shape, with a content type that is not
// JSON, or declaring more than the bound is refused without a byte of
// its body read, and the answer closes the connection.
func TestReadRefusesOnHeadersAlone(t *testing.T) {
	const size = 900 << 10
	good := sign(bytes.Repeat([]byte("x"), size))
	b := &WebhookBody{Signature: &testSig, Secret: testSecret, JSON: true, Max: 1 << 20}
	for _, c := range []struct {
		name, sig, ct string
		length        int64
		want          int
	}{
		{"no signature", "", "application/json", size, http.StatusUnauthorized},
		{"garbage", "garbage", "application/json", size, http.StatusUnauthorized},
		{"no prefix", strings.TrimPrefix(good, "sha256="), "application/json", size, http.StatusUnauthorized},
		{"another prefix", "sha1=" + strings.TrimPrefix(good, "sha256="), "application/json", size, http.StatusUnauthorized},
		{"too short", good[:len(good)-2], "application/json", size, http.StatusUnauthorized},
		{"too long", good + "00", "application/json", size, http.StatusUnauthorized},
		{"not hex", good[:len(good)-2] + "zz", "application/json", size, http.StatusUnauthorized},
		{"not JSON", good, "text/plain", size, http.StatusUnsupportedMediaType},
		{"over the bound", good, "application/json", 2 << 20, http.StatusRequestEntityTooLarge},
		{"no signature, over the bound", "", "application/json", 2 << 20, http.StatusUnauthorized},
	} {
		body := vendorhttptest.NewBody(int(c.length))
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Body, req.ContentLength = body, c.length
		req.Header.Set("Content-Type", c.ct)
		if c.sig != "" {
			req.Header.Set("X-Hub-Signature-256", c.sig)
		}
		rec := httptest.NewRecorder()
		var n Receiver
		if _, ok := n.Read(rec, req, b); ok || rec.Code != c.want {
			t.Errorf("%s: %d (taken %v), want %d", c.name, rec.Code, ok, c.want)
		}
		if got := body.BytesRead(); got != 0 {
			t.Errorf("%s: %d bytes of the body read before the refusal, want none", c.name, got)
		}
		if rec.Header().Get("Connection") != "close" {
			t.Errorf("%s: the answer keeps the connection, whose body net/http would then read", c.name)
		}
	}
}

// TestReadTakesWhatTheVendorSends: a signed body is returned whole, with
// or without a Content-Length and a Content-Type, up to the bound; a
// wrong MAC is 401 once read; a body without a Content-Length that runs
// past the bound is 413 after no more than the bound was read.
func TestReadTakesWhatTheVendorSends(t *testing.T) {
	b := &WebhookBody{Signature: &testSig, Secret: testSecret, JSON: true, Max: 64 << 10}
	body := bytes.Repeat([]byte(`{"a":1}`), (64<<10)/7)
	for _, c := range []struct {
		name, ct string
		length   int64
	}{
		{"declared", "application/json; charset=utf-8", int64(len(body))},
		{"chunked", "", -1},
		{"+json", "application/vnd.vendor+json", int64(len(body))},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.ContentLength = c.length
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("X-Hub-Signature-256", sign(body))
		rec := httptest.NewRecorder()
		var n Receiver
		got, ok := n.Read(rec, req, b)
		if !ok || !bytes.Equal(got, body) {
			t.Errorf("%s: taken %v, %d bytes of %d (answer %d)", c.name, ok, len(got), len(body), rec.Code)
		}
	}

	var n Receiver
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", sign(append([]byte(" "), body...)))
	rec := httptest.NewRecorder()
	if _, ok := n.Read(rec, req, b); ok || rec.Code != http.StatusUnauthorized {
		t.Errorf("a wrong MAC: %d (taken %v), want 401", rec.Code, ok)
	}

	long := vendorhttptest.NewBody(1 << 20)
	req = httptest.NewRequest(http.MethodPost, "/", nil)
	req.Body, req.ContentLength = long, -1
	req.Header.Set("X-Hub-Signature-256", sign(body))
	rec = httptest.NewRecorder()
	if _, ok := n.Read(rec, req, b); ok || rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body past the bound: %d (taken %v), want 413", rec.Code, ok)
	}
	if got := long.BytesRead(); got > b.Max+64<<10 {
		t.Errorf("%d bytes read of a body past a bound of %d", got, b.Max)
	}
	if s := n.Stats(); s.Refused != 1 || s.Malformed != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// countingListener counts the bytes the server reads off its connections.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestRefusalOverHTTPReadsNoBody: over a real server, a forged report of
// 200 KiB without a signature is answered 401 with the server having read
// no more than the request's head and what came with it, not the body
// net/http would read (up to 256 KiB) to keep a connection whose handler
// left its body unread. A signed report on the same server is taken.
func TestRefusalOverHTTPReadsNoBody(t *testing.T) {
	var n Receiver
	b := &WebhookBody{Signature: &testSig, Secret: testSecret, JSON: true, Max: 1 << 20}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := n.Read(w, r, b); ok {
			w.WriteHeader(http.StatusOK)
		}
	}))
	var read atomic.Int64
	srv.Listener = countingListener{srv.Listener, &read}
	srv.Start()
	defer srv.Close()

	post := func(body []byte, sig string) (int, error) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	forged := bytes.Repeat([]byte("x"), 200<<10)
	// The server answers 401 and closes the connection with the body
	// unread, so a client still writing it may get the connection's reset
	// instead of the answer: the kernel's, not ours. The refusal is then
	// known from the server's count (the stats below).
	switch code, err := post(forged, ""); {
	case err != nil && !errors.Is(err, syscall.ECONNRESET):
		t.Fatalf("forged: %v", err)
	case err == nil && code != http.StatusUnauthorized:
		t.Fatalf("forged: %d, want 401", code)
	}
	// The server's first read of a connection takes up to 4 KiB
	// (bufio.Reader's default): the head and the start of the body.
	if got := read.Load(); got > 8<<10 {
		t.Fatalf("the server read %d bytes of a refused request of %d", got, len(forged))
	}
	signed := []byte(`{"entry":[]}`)
	if code, err := post(signed, sign(signed)); err != nil || code != http.StatusOK {
		t.Fatalf("signed: %d, %v, want 200", code, err)
	}
	if s := n.Stats(); s.Refused != 1 || s.Malformed != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

// TestReadBudget: a signed body takes its length from the budget of
// bodies not yet authenticated; a genuine one gives it back, a forged
// one keeps it spent; once too little is left, a request is answered 503
// with Retry-After, before a byte of its body is read, and a genuine
// request comes through again once the budget allows. The budget here
// does not refill, so that the test depends on no clock.
func TestReadBudget(t *testing.T) {
	b := &WebhookBody{Signature: &testSig, Secret: testSecret, JSON: true, Max: 1 << 20, Budget: NewBudget(0, 1000)}
	var n Receiver
	read := func(body []byte, sig string, length int64) (int, int64) {
		t.Helper()
		cb := vendorhttptest.BodyOf(body)
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Body, req.ContentLength = cb, length
		req.Header.Set("X-Hub-Signature-256", sig)
		rec := httptest.NewRecorder()
		if _, ok := n.Read(rec, req, b); ok {
			rec.WriteHeader(http.StatusOK)
		}
		if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
			t.Error("a 503 without Retry-After")
		}
		return rec.Code, cb.BytesRead()
	}
	genuine := bytes.Repeat([]byte("g"), 600)
	forged := bytes.Repeat([]byte("f"), 600)
	wrong := sign([]byte("another body"))
	steps := []struct {
		name     string
		body     []byte
		sig      string
		length   int64
		want     int
		readNone bool
	}{
		{"genuine", genuine, sign(genuine), 600, http.StatusOK, false},
		{"genuine again: the first gave its bytes back", genuine, sign(genuine), 600, http.StatusOK, false},
		{"forged", forged, wrong, 600, http.StatusUnauthorized, false},
		{"forged, with 400 left", forged, wrong, 600, http.StatusServiceUnavailable, true},
		{"genuine, with 400 left", genuine, sign(genuine), 600, http.StatusServiceUnavailable, true},
		{"declared over the burst", bytes.Repeat([]byte("x"), 5000), wrong, 5000, http.StatusServiceUnavailable, true},
		{"without a length: the bound is taken", genuine, sign(genuine), -1, http.StatusServiceUnavailable, true},
		{"small and genuine", genuine[:300], sign(genuine[:300]), 300, http.StatusOK, false},
		{"small and forged", forged[:300], wrong, 300, http.StatusUnauthorized, false},
		{"spent", genuine[:300], sign(genuine[:300]), 300, http.StatusServiceUnavailable, true},
	}
	for _, s := range steps {
		code, got := read(s.body, s.sig, s.length)
		if code != s.want || (s.readNone && got != 0) {
			t.Errorf("%s: %d with %d bytes read; want %d%s", s.name, code, got, s.want, map[bool]string{true: " with none read"}[s.readNone])
		}
	}
	if s := n.Stats(); s.Failed != 5 || s.Refused != 2 {
		t.Errorf("stats = %+v", s)
	}
}

// TestRefusalsHeldBeyondTheSourcesShare: a source's first HoldAfter
// refusals in a second are answered at once; its further ones wait
// HoldFor (Held counts them); another source and the next second are not
// held, and a client that leaves is not waited for.
func TestRefusalsHeldBeyondTheSourcesShare(t *testing.T) {
	second := time.Unix(1_800_000_000, 0)
	c := &Receiver{HoldFor: 30 * time.Millisecond, now: func() time.Time { return second }}
	refuse := func(src string) time.Duration {
		r := httptest.NewRequest(http.MethodPost, "/webhooks/x", nil)
		r.RemoteAddr = src
		began := time.Now()
		c.Refuse(httptest.NewRecorder(), r)
		return time.Since(began)
	}
	for range HoldAfter {
		refuse("203.0.113.9:4000")
	}
	if c.Stats().Held != 0 {
		t.Fatalf("held %d of the source's first %d refusals", c.Stats().Held, HoldAfter)
	}
	for i := range 3 {
		if took := refuse("203.0.113.9:4001"); took < 30*time.Millisecond {
			t.Errorf("refusal %d beyond the share answered after %v, want at least 30ms", HoldAfter+i+1, took)
		}
	}
	refuse("198.51.100.7:5000") // another source, its first refusal
	if got := c.Stats().Held; got != 3 {
		t.Fatalf("held %d, want the 3 beyond the first source's share", got)
	}
	second = second.Add(time.Second)
	refuse("203.0.113.9:4000")
	if got := c.Stats().Held; got != 3 {
		t.Fatalf("held %d after the second turned, want still 3", got)
	}
	// A client that leaves is not waited for.
	ctx, cancel := context.WithCancel(context.Background())
	for range HoldAfter {
		refuse("192.0.2.5:1")
	}
	c.HoldFor = time.Hour
	r := httptest.NewRequest(http.MethodPost, "/webhooks/x", nil).WithContext(ctx)
	r.RemoteAddr = "192.0.2.5:2"
	cancel()
	c.Refuse(httptest.NewRecorder(), r)
	if got := c.Stats().Held; got != 4 {
		t.Fatalf("held %d, want 4", got)
	}
}
