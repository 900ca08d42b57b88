package qrchat_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/notifykit/notify/provider/qrchat"
)

func textEnv(text, otp string) *notify.Envelope {
	return &notify.Envelope{Kind: notify.KindChat, To: "9876543210", Provider: "qrchat", Units: 1,
		Chat: &notify.ChatMessage{Gateway: notify.GatewayQR, Text: text, OTP: otp}}
}

func mediaEnv(u string, kind notify.MediaKind, name, mime, caption string) *notify.Envelope {
	return &notify.Envelope{Kind: notify.KindChat, To: "9876543210", Provider: "qrchat", Units: 1,
		Chat: &notify.ChatMessage{Gateway: notify.GatewayQR, Text: caption,
			Media: &notify.ChatMedia{URL: u, Kind: kind, FileName: name, MIMEType: mime}}}
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
		if !strings.HasPrefix(res.ProviderMessageID, prefix) || res.Gateway != notify.GatewayQR || res.Provider != "qrchat" {
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
		case "/login.html":
			w.Write([]byte("<!DOCTYPE html><html><body>Sign in</body></html>"))
		case "/big.pdf":
			w.Write(append(append([]byte{}, pdfBytes...), bytes.Repeat([]byte("x"), 4096)...))
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

func TestSendMedia(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	p := newProvider(t, gw, mediaConfig(m, 0))

	res, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), notify.MediaDocument, "INV-7.pdf", "application/pdf", "Your invoice"))
	if err != nil {
		t.Fatal(err)
	}
	got := gw.last()
	if res.ProviderMessageID == "" || got.Path != "/api/sendFile" || got.MIME != "application/pdf" || got.Name != "INV-7.pdf" ||
		got.Caption != "Your invoice" || !bytes.Equal(got.Data, pdfBytes) {
		t.Fatalf("document: gateway received %+v", got)
	}

	// The file name says .jpg but the bytes are PNG: the bytes win.
	if _, err := p.Send(context.Background(), mediaEnv(m.url("/photo.png"), notify.MediaImage, "photo.jpg", "image/jpeg", "")); err != nil {
		t.Fatal(err)
	}
	got = gw.last()
	if got.Path != "/api/sendImage" || got.MIME != "image/png" || !bytes.Equal(got.Data, pngBytes) {
		t.Fatalf("image: gateway received %+v", got)
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
		{"html instead of pdf", mediaEnv(m.url("/login.html"), notify.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeRejected, "did not return a PDF"},
		{"html instead of image", mediaEnv(m.url("/login.html"), notify.MediaImage, "a.png", "image/png", ""), 0,
			notify.CodeRejected, "did not return an image"},
		{"too large", mediaEnv(m.url("/big.pdf"), notify.MediaDocument, "a.pdf", "application/pdf", ""), 1024,
			notify.CodeRejected, "larger than the limit of 1024 bytes"},
		{"not found", mediaEnv(m.url("/missing.pdf"), notify.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeRejected, "HTTP 404"},
		{"media server busy", mediaEnv(m.url("/busy.pdf"), notify.MediaDocument, "a.pdf", "application/pdf", ""), 0,
			notify.CodeUnavailable, "HTTP 503"},
		{"http URL", mediaEnv("http://media.example.com/a.pdf", notify.MediaDocument, "a.pdf", "application/pdf", ""), 0,
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

// TestMediaDefaultGuardBlocksLoopback: without the test-only allowance the
// provider refuses to fetch from loopback, and neither the media server
// nor the gateway sees a request.
func TestMediaDefaultGuardBlocksLoopback(t *testing.T) {
	gw := newFakeWAHA(t)
	m := newMediaServer(t)
	cfg := mediaConfig(m, 0)
	cfg.AllowMediaAddr = nil // the production setting
	p := newProvider(t, gw, cfg)
	_, err := p.Send(context.Background(), mediaEnv(m.url("/invoice.pdf"), notify.MediaDocument, "a.pdf", "application/pdf", ""))
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

func TestGatewayErrors(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	tests := []struct {
		name   string
		status int
		body   string
		code   notify.Code
		want   string
	}{
		{"exception echoes the request", 500,
			`{"statusCode":500,"timestamp":"2025-09-03T10:00:45.551Z","exception":{"message":"Evaluation failed: Error: wid error: invalid wid","name":"Error"},"request":{"path":"/api/sendText","method":"POST","body":{"text":"482915 is your code"}}}`,
			notify.CodeUnavailable, "invalid wid"},
		{"bad gateway html", 502, `<html>502 Bad Gateway</html>`, notify.CodeUnavailable, "HTTP 502"},
		{"validation", 400, `{"statusCode":400,"message":["text should not be empty"],"error":"Bad Request"}`, notify.CodeRejected, "text should not be empty"},
		{"unprocessable", 422, `{"statusCode":422,"message":"The session under FAILED status. Please try to restart it.","error":"Unprocessable Entity"}`, notify.CodeRejected, "FAILED"},
		{"session error", 422, `{"error":"Session status is not as expected. Try again later or restart the session","session":"default","status":"SCAN_QR_CODE","expected":["WORKING"]}`, notify.CodeUnavailable, "SCAN_QR_CODE"},
		{"forbidden", 403, `{"message":"Forbidden resource","statusCode":403}`, notify.CodeRejected, "Config.APIKey"},
		{"no id", 201, `{"ok":true}`, "", "without a message ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw.failNextRaw(tt.status, tt.body)
			_, err := p.Send(context.Background(), textEnv("482915 is your code", "482915"))
			if err == nil {
				t.Fatal("no error")
			}
			var e *notify.Error
			if tt.code == "" {
				if errors.As(err, &e) {
					t.Fatalf("got classified %v, want a bare error (outcome unknown)", err)
				}
			} else if notify.CodeOf(err) != tt.code {
				t.Fatalf("got %v (%s), want %s", err, notify.CodeOf(err), tt.code)
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
		"nil chat":          {Kind: notify.KindChat, To: "9876543210"},
		"empty":             textEnv("", ""),
		"cloud template":    {Kind: notify.KindChat, To: "9876543210", Chat: &notify.ChatMessage{Template: &notify.ChatTemplate{Name: "x"}}},
		"media without url": mediaEnv("", notify.MediaDocument, "a.pdf", "application/pdf", ""),
		"bad number":        {Kind: notify.KindChat, To: "98765x43210", Chat: &notify.ChatMessage{Text: "hi"}},
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
	} {
		if _, err := qrchat.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, _ := qrchat.New(qrchat.Config{BaseURL: "http://" + addr, APIKey: testKey})
	if _, err := p.Send(context.Background(), textEnv("hi", "")); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("refused connection: %v, want Unavailable", err)
	}
}
