package qrchat_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

func textEnv(text, otp string) *notify.Envelope {
	return &notify.Envelope{Kind: chat.Kind, To: "9876543210", Provider: "qrchat", Units: 1,
		Content: &chat.Message{Gateway: chat.GatewayQR, Text: text, OTP: otp}}
}

func mediaEnv(u string, kind chat.MediaKind, name, mime, caption string) *notify.Envelope {
	return &notify.Envelope{Kind: chat.Kind, To: "9876543210", Provider: "qrchat", Units: 1,
		Content: &chat.Message{Gateway: chat.GatewayQR, Text: caption,
			Media: &chat.Media{URL: u, Kind: kind, FileName: name, MIMEType: mime}}}
}

func TestSendTextAndEngines(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	for engine, prefix := range map[string]string{"WEBJS": "true_919876543210@c.us_3EB0", "NOWEB": "3EB0", "GOWS": "3EB0"} {
		gw.setEngine(engine)
		res, err := p.Send(context.Background(), textEnv("Your order shipped", ""))
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if !strings.HasPrefix(res.ProviderMessageID, prefix) || res.Route != string(chat.GatewayQR) || res.Provider != "qrchat" {
			t.Errorf("%s: result %+v, want an ID starting %q", engine, res, prefix)
		}
		got := gw.last()
		if got.Path != "/api/sendText" || got.ChatID != "919876543210@c.us" || got.Text != "Your order shipped" {
			t.Errorf("%s: gateway received %+v", engine, got)
		}
	}
}

// mediaServer serves files over HTTPS on loopback and counts requests.
type mediaServer struct {
	*httptest.Server
	hits atomic.Int64
}

var (
	pdfBytes = []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
	pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 32)...)
	// mp4Bytes starts as an MP4 file does (an ftyp box), which
	// http.DetectContentType reads as video/mp4.
	mp4Bytes = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte{1}, 64)...)
)

func newMediaServer(t *testing.T) *mediaServer {
	m := &mediaServer{}
	m.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits.Add(1)
		switch r.URL.Path {
		case "/invoice.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(pdfBytes)
		case "/photo.png":
			w.Write(pngBytes)
		case "/clip.mp4":
			w.Write(mp4Bytes)
		case "/login.html":
			w.Write([]byte("<!DOCTYPE html><html><body>Sign in</body></html>"))
		case "/big.pdf":
			w.Write(append(append([]byte{}, pdfBytes...), bytes.Repeat([]byte("x"), 4096)...))
		case "/cut.pdf":
			// The source fails after the first 64 KiB: the send has
			// started by then.
			w.Header().Set("Content-Type", "application/pdf")
			w.Write(pdfBytes)
			w.Write(bytes.Repeat([]byte("x"), 64<<10))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // net/http drops the connection
		case "/busy.pdf":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// url returns an https URL for path on media.example.com, which the test
// resolver maps to the server's loopback address. httptest's certificate
// covers example.com and its subdomains.
func (m *mediaServer) url(path string) string {
	u, _ := url.Parse(m.URL)
	return "https://media.example.com:" + u.Port() + path + "?sig=s3cr3t"
}

type loopResolver struct{}

func (loopResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host == "media.example.com" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// mediaConfig lets the provider fetch from the loopback media server: the
// test-only guard configuration.
func mediaConfig(m *mediaServer, maxBytes int64) qrchat.Config {
	return qrchat.Config{
		Resolver:       loopResolver{},
		AllowMediaAddr: func(a netip.Addr) bool { return a.IsLoopback() },
		MediaTLSConfig: m.Client().Transport.(*http.Transport).TLSClientConfig,
		MediaMaxBytes:  maxBytes,
	}
}

// TestSendMedia: each kind of media goes to its endpoint with the bytes
// fetched from its URL. The type is the bytes', not the file name's. A
// video goes to /api/sendVideo, with WAHA's video body (asNote and
// convert false), so that it arrives as a playable video; it used to go
// to /api/sendFile and arrive as a document.
func TestSendMedia(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	p := newProvider(t, gw, mediaConfig(m, 0))
	for _, tt := range []struct {
		name                     string
		kind                     chat.MediaKind
		url, file, mime, caption string
		// what the gateway receives
		path, wantMIME string
		data           []byte
	}{
		{"document", chat.MediaDocument, "/invoice.pdf", "INV-7.pdf", "application/pdf", "Your invoice", "/api/sendFile", "application/pdf", pdfBytes},
		// The file name says .jpg but the bytes are PNG: the bytes win.
		{"image", chat.MediaImage, "/photo.png", "photo.jpg", "image/jpeg", "", "/api/sendImage", "image/png", pngBytes},
		{"video", chat.MediaVideo, "/clip.mp4", "clip.mp4", "video/mp4", "Watch this", "/api/sendVideo", "video/mp4", mp4Bytes},
	} {
		res, err := p.Send(context.Background(), mediaEnv(m.url(tt.url), tt.kind, tt.file, tt.mime, tt.caption))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := gw.last()
		if res.ProviderMessageID == "" || got.Path != tt.path || got.MIME != tt.wantMIME || got.Name != tt.file ||
			got.Caption != tt.caption || !bytes.Equal(got.Data, tt.data) {
			t.Errorf("%s: gateway received %+v, want it on %s", tt.name, got, tt.path)
		}
	}
}

func TestMediaFailures(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	tests := []struct {
		name string
		env  *notify.Envelope
		max  int64
		code notify.Code
		want string
	}{
		{"html instead of pdf", mediaEnv(m.url("/login.html"), chat.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeRejected, "did not return a PDF"},
		{"html instead of image", mediaEnv(m.url("/login.html"), chat.MediaImage, "a.png", "image/png", ""), 0,
			notify.CodeRejected, "did not return an image"},
		{"too large", mediaEnv(m.url("/big.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", ""), 1024,
			notify.CodeRejected, "larger than the limit of 1024 bytes"},
		{"not found", mediaEnv(m.url("/missing.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeRejected, "HTTP 404"},
		{"media server busy", mediaEnv(m.url("/busy.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeUnavailable, "HTTP 503"},
		{"http URL", mediaEnv("http://media.example.com/a.pdf", chat.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeRejected, "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, gw, mediaConfig(m, tt.max))
			_, err := p.Send(context.Background(), tt.env)
			if notify.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v (%s), want %s containing %q", err, notify.CodeOf(err), tt.code, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error repeats the media URL's query: %v", err)
			}
		})
	}
	if gw.count() != 0 {
		t.Fatalf("the gateway received %d messages", gw.count())
	}
}

// TestMediaCutMidStream: the media are streamed into the send, so the
// source can fail after the request to the gateway has started. The
// provider then cuts the request short, the gateway never gets a whole
// body and takes nothing: a certain, temporary refusal.
func TestMediaCutMidStream(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	p := newProvider(t, gw, mediaConfig(m, 0))
	_, err := p.Send(context.Background(), mediaEnv(m.url("/cut.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", ""))
	if notify.CodeOf(err) != notify.CodeUnavailable || notify.OutcomeOf(err) != record.StateFailed || !notify.IsRetryable(err) {
		t.Fatalf("got %v (%s), want a retryable Unavailable", err, notify.CodeOf(err))
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("the error repeats the media URL's query: %v", err)
	}
	select {
	case path := <-gw.aborted:
		if path != "/api/sendFile" {
			t.Errorf("the cut request went to %s", path)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway never saw the cut request")
	}
	if gw.count() != 0 {
		t.Fatalf("the gateway took %d messages", gw.count())
	}
	// The next send works.
	if _, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", "")); err != nil {
		t.Fatal(err)
	}
}

// TestMediaDefaultGuardBlocksLoopback: without the test-only allowance the
// provider refuses to fetch from loopback, and neither the media server
// nor the gateway sees a request.
func TestMediaDefaultGuardBlocksLoopback(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	cfg := mediaConfig(m, 0)
	cfg.AllowMediaAddr = nil // the production setting
	p := newProvider(t, gw, cfg)
	_, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), chat.MediaDocument, "a.pdf", "application/pdf", ""))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("got %v, want Rejected naming loopback", err)
	}
	if m.hits.Load() != 0 || gw.count() != 0 {
		t.Fatalf("media server got %d requests, gateway %d messages; want none", m.hits.Load(), gw.count())
	}
}

func TestSessionStates(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{StatusTTL: -1}) // ask every time
	for status, hint := range map[string]string{"SCAN_QR_CODE": "scan the QR code", "STOPPED": "restart", "FAILED": "restart", "STARTING": "not WORKING"} {
		gw.setStatus(status)
		_, err := p.Send(context.Background(), textEnv("hi", ""))
		if notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), status) || !strings.Contains(err.Error(), hint) {
			t.Errorf("%s: got %v, want Unavailable naming the status and %q", status, err, hint)
		}
		if err := p.CheckHealth(context.Background()); notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("%s: CheckHealth = %v", status, err)
		}
	}
	gw.setStatus("WORKING")
	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatalf("WORKING again: %v", err)
	}
	if err := p.CheckHealth(context.Background()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	other := newProvider(t, gw, qrchat.Config{Session: "sales"})
	if _, err := other.Send(context.Background(), textEnv("hi", "")); notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), "Config.Session") {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestSessionStatusCache(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{StatusTTL: time.Hour})
	for range 5 {
		if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
			t.Fatal(err)
		}
	}
	if gw.gets() != 1 {
		t.Fatalf("session asked %d times for 5 sends, want 1", gw.gets())
	}
	// The session stops: the send is refused with 422, which is
	// Unavailable and forgets the cached status.
	gw.setStatus("STOPPED")
	_, err := p.Send(context.Background(), textEnv("hi", ""))
	if notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), "STOPPED") {
		t.Fatalf("stopped mid-TTL: %v", err)
	}
	gw.setStatus("WORKING")
	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatal(err)
	}
	if gw.gets() != 2 {
		t.Fatalf("session asked %d times, want 2 (the 422 forgot the cache)", gw.gets())
	}
}

// TestGatewayErrors checks the classification of the gateway's answers,
// and of a proxy's in front of it: a proxy answers 502 or 504 with its own
// page, and the gateway may have the message behind it (for the 504 here
// it does); or the gateway takes the message and the connection drops
// before its answer. Those are of unknown outcome.
func TestGatewayErrors(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	tests := []struct {
		name   string
		status int
		body   string
		code   notify.Code
		want   string
		// fail, when set, fails the send instead of status and body;
		// accepted is how many messages the gateway then took.
		fail     func()
		accepted int
	}{
		{"exception echoes the request", 500,
			`{"statusCode":500,"timestamp":"2025-09-03T10:00:45.551Z","exception":{"message":"Evaluation failed: Error: wid error: invalid wid","name":"Error"},"request":{"path":"/api/sendText","method":"POST","body":{"text":"482915 is your code"}}}`,
			notify.CodeRejected, "invalid wid", nil, 0},
		{"bad gateway html", 502, `<html>502 Bad Gateway</html>`, notify.CodeOutcomeUnknown, "HTTP 502", nil, 0},
		{"a proxy's JSON on a 502", 502, `{"message":"Internal server error"}`, notify.CodeOutcomeUnknown, "HTTP 502", nil, 0},
		{"the gateway's own 503", 503, `{"statusCode":503,"message":"Service Unavailable","error":"Service Unavailable"}`, notify.CodeUnavailable, "HTTP 503 from the gateway", nil, 0},
		{"the engine cannot do it", 501, `{"statusCode":501,"message":"The method is not implemented by the engine","error":"Not Implemented"}`, notify.CodeRejected, "not implemented", nil, 0},
		{"session error on a 500", 500, `{"error":"Session status is not as expected","session":"default","status":"STOPPED","expected":["WORKING"]}`, notify.CodeUnavailable, "STOPPED", nil, 0},
		{"validation", 400, `{"statusCode":400,"message":["text should not be empty"],"error":"Bad Request"}`, notify.CodeRejected, "text should not be empty", nil, 0},
		{"unprocessable", 422, `{"statusCode":422,"message":"The session under FAILED status. Please try to restart it.","error":"Unprocessable Entity"}`, notify.CodeRejected, "FAILED", nil, 0},
		{"session error", 422, `{"error":"Session status is not as expected. Try again later or restart the session","session":"default","status":"SCAN_QR_CODE","expected":["WORKING"]}`, notify.CodeUnavailable, "SCAN_QR_CODE", nil, 0},
		{"forbidden", 403, `{"message":"Forbidden resource","statusCode":403}`, notify.CodeRejected, "Config.APIKey", nil, 0},
		{"no id", 201, `{"ok":true}`, notify.CodeOutcomeUnknown, "without a message ID", nil, 0},
		{"a proxy's 502 page", 0, "", notify.CodeOutcomeUnknown, "HTTP 502", func() { gw.failNextProxy(http.StatusBadGateway, false) }, 0},
		{"a proxy's 504 page after acceptance", 0, "", notify.CodeOutcomeUnknown, "HTTP 504",
			func() { gw.failNextProxy(http.StatusGatewayTimeout, true) }, 1},
		{"answer lost after acceptance", 0, "", notify.CodeOutcomeUnknown, "may have accepted the message",
			func() { gw.failNext(providertest.AnswerLost) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fail != nil {
				tt.fail()
			} else {
				gw.failNextRaw(tt.status, tt.body)
			}
			posts, accepted := gw.requests(), gw.count()
			_, err := p.Send(context.Background(), textEnv("482915 is your code", "482915"))
			if took := gw.count() - accepted; gw.requests()-posts != 1 || took != tt.accepted {
				t.Errorf("the gateway got %d requests and took %d messages, want 1 and %d", gw.requests()-posts, took, tt.accepted)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if notify.CodeOf(err) != tt.code {
				t.Fatalf("got %v (%s), want %s", err, notify.CodeOf(err), tt.code)
			}
			if unknown := tt.code == notify.CodeOutcomeUnknown; (notify.OutcomeOf(err) == record.StateUnknown) != unknown ||
				(unknown && (notify.IsRetryable(err) || !strings.Contains(err.Error(), "may have accepted the message"))) {
				t.Errorf("outcome %v, retryable %v for %v", notify.OutcomeOf(err), notify.IsRetryable(err), err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "482915") || strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}

// wahaEngineError is WAHA's answer when the engine fails during a send:
// HTTP 500 with the exception and an echo of the request.
const wahaEngineError = `{"statusCode":500,"timestamp":"2025-09-03T10:00:45.551Z","exception":{"message":"Evaluation failed: t: Protocol error (Runtime.callFunctionOn): Target closed.","name":"Error"},"request":{"path":"/api/sendText","method":"POST","body":{"chatId":"919876543210@c.us","text":"482915 is your code","session":"default"}},"version":{"version":"2025.9.1","engine":"WEBJS","tier":"CORE"}}`

// TestWAHA500IsUnknown: WAHA reports its engine's failures as HTTP 500,
// and the engine may have sent the message first (here it did). The
// outcome is unknown: not retried, and the session status is asked again.
func TestWAHA500IsUnknown(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{StatusTTL: time.Hour})
	if _, err := p.Send(context.Background(), textEnv("warm the session cache", "")); err != nil {
		t.Fatal(err)
	}
	posts, accepted, gets := gw.requests(), gw.count(), gw.gets()
	gw.failNextRawAfterAccept(500, wahaEngineError)
	_, err := p.Send(context.Background(), textEnv("482915 is your code", "482915"))
	if notify.OutcomeOf(err) != record.StateUnknown || notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("WAHA 500: %v, want outcome_unknown", err)
	}
	if !strings.Contains(err.Error(), "Target closed") || strings.Contains(err.Error(), "482915") {
		t.Errorf("WAHA 500: message %q lacks the exception or holds the OTP", err)
	}
	if gw.requests()-posts != 1 || gw.count()-accepted != 1 {
		t.Fatalf("the gateway got %d requests and took %d messages, want exactly 1 and 1", gw.requests()-posts, gw.count()-accepted)
	}
	if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
		t.Fatal(err)
	}
	if gw.gets() != gets+1 {
		t.Errorf("the session was asked %d times after the 500, want 1", gw.gets()-gets)
	}
}

// TestSessionCheckFailureIsRetryable: the status question sends no
// message, so a 5xx or a lost answer to it is a certain, temporary
// failure, and the send is not attempted.
func TestSessionCheckFailureIsRetryable(t *testing.T) {
	var sends atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet:
			sends.Add(1)
			w.WriteHeader(http.StatusCreated)
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>502 Bad Gateway</html>"))
		}
	}))
	defer srv.Close()
	p, err := qrchat.New(qrchat.Config{BaseURL: srv.URL, APIKey: testKey, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Send(context.Background(), textEnv("hi", ""))
	if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable || strings.Contains(err.Error(), "may have accepted") {
		t.Fatalf("session check behind a failing proxy: %v, want a retryable unavailable", err)
	}
	if err := p.CheckHealth(context.Background()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("CheckHealth: %v", err)
	}
	if sends.Load() != 0 {
		t.Fatalf("%d sends reached the gateway", sends.Load())
	}
}

func TestWrongKey(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{APIKey: "wrong-key-123"})
	_, err := p.Send(context.Background(), textEnv("hi", ""))
	if notify.CodeOf(err) != notify.CodeRejected || strings.Contains(err.Error(), "wrong-key-123") {
		t.Fatalf("got %v, want Rejected without the key", err)
	}
}

func TestBadEnvelopes(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	for name, env := range map[string]*notify.Envelope{
		"nil chat":          {Kind: chat.Kind, To: "9876543210"},
		"empty":             textEnv("", ""),
		"cloud template":    {Kind: chat.Kind, To: "9876543210", Content: &chat.Message{Template: &chat.Template{Name: "x"}}},
		"media without url": mediaEnv("", chat.MediaDocument, "a.pdf", "application/pdf", ""),
		"bad number":        {Kind: chat.Kind, To: "98765x43210", Content: &chat.Message{Text: "hi"}},
	} {
		if _, err := p.Send(context.Background(), env); notify.CodeOf(err) != notify.CodeInvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	if _, err := p.Send(context.Background(), nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("nil envelope: %v", err)
	}
	if gw.count() != 0 || gw.gets() != 0 {
		t.Error("a bad envelope reached the gateway")
	}
}

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]qrchat.Config{
		"no base":       {},
		"relative base": {BaseURL: "waha:3000"},
		"userinfo":      {BaseURL: "http://u:p@waha:3000"},
		"session path":  {BaseURL: "http://waha:3000", Session: "../admin"},
		"country":       {BaseURL: "http://waha:3000", CountryCode: "x"},
		"key newline":   {BaseURL: "http://waha:3000", APIKey: "key\r\n"},
	} {
		if _, err := qrchat.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	addr := vendorhttptest.ClosedAddr(t)
	p, _ := qrchat.New(qrchat.Config{BaseURL: "http://" + addr, APIKey: testKey})
	if _, err := p.Send(context.Background(), textEnv("hi", "")); notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err) {
		t.Fatalf("refused connection: %v, want Unavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Send(ctx, textEnv("hi", "")); !notify.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v, want Unavailable wrapping context.Canceled", err)
	}
}

// TestBaseURLForms: Config.BaseURL may be the gateway's root, the root
// with /api, or a send endpoint as the gateway documents it; the gateway
// sees /api/sessions/{session} and /api/sendText under the root, never a
// path twice.
func TestBaseURLForms(t *testing.T) {
	srv, paths := vendorhttptest.Paths(t, 2, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"name":"default","status":"WORKING"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"true_919876543210@c.us_3EB0A1","timestamp":1760022498}`)
	})
	for _, tt := range []struct{ base, prefix string }{
		{srv.URL, ""},
		{srv.URL + "/", ""},
		{srv.URL + "/api", ""},
		{srv.URL + "/api/", ""},
		{srv.URL + "/api/sendText", ""},
		{srv.URL + "/api/sendFile/", ""},
		{srv.URL + "/waha", "/waha"},
		{srv.URL + "/waha/api/sendText", "/waha"},
	} {
		p, err := qrchat.New(qrchat.Config{BaseURL: tt.base, APIKey: testKey, HTTPClient: srv.Client(), StatusTTL: -1})
		if err != nil {
			t.Fatalf("%s: %v", tt.base, err)
		}
		if _, err := p.Send(context.Background(), textEnv("hi", "")); err != nil {
			t.Fatalf("%s: Send: %v", tt.base, err)
		}
		if got := <-paths; got != tt.prefix+"/api/sessions/default" {
			t.Errorf("BaseURL %s: the status check went to %s, want %s/api/sessions/default", tt.base, got, tt.prefix)
		}
		if got := <-paths; got != tt.prefix+"/api/sendText" {
			t.Errorf("BaseURL %s: the send went to %s, want %s/api/sendText", tt.base, got, tt.prefix)
		}
	}
}
