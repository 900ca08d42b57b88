package chat_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/qrchat"
)

// miniWAHA is just enough of a QR-session gateway for the end-to-end
// media test: a WORKING session and sendFile.
type miniWAHA struct {
	*httptest.Server
	mu    sync.Mutex
	files [][]byte
}

func newMiniWAHA(t *testing.T) *miniWAHA {
	g := &miniWAHA{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/sessions/default":
			io.WriteString(w, `{"name":"default","status":"WORKING"}`)
		case "/api/sendFile":
			var in struct {
				ChatID string `json:"chatId"`
				File   struct {
					MIMEType string `json:"mimetype"`
					Data     string `json:"data"`
				} `json:"file"`
			}
			json.NewDecoder(r.Body).Decode(&in)
			data, err := base64.StdEncoding.DecodeString(in.File.Data)
			if err != nil || in.ChatID != "919876543210@c.us" || in.File.MIMEType != "application/pdf" {
				http.Error(w, `{"statusCode":400,"message":"bad file"}`, http.StatusBadRequest)
				return
			}
			g.mu.Lock()
			g.files = append(g.files, data)
			g.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":"true_919876543210@c.us_3EB0E2E"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *miniWAHA) received() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.files...)
}

// staticDNS answers every name with one address.
type staticDNS netip.Addr

func (s staticDNS) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host != "media.example.com" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.Addr(s)}, nil
}

// TestMediaRebindingEndToEnd: media.example.com is public when the channel
// checks it and loopback when the QR provider dials it (DNS rebinding).
// The provider's default guard refuses the dial; only the test-only
// allowance lets the same send through.
func TestMediaRebindingEndToEnd(t *testing.T) {
	pdf := []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\ntrailer<<>>\n%%EOF\n")
	var hits atomic.Int64
	media := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(pdf)
	}))
	t.Cleanup(media.Close)
	port := media.URL[strings.LastIndex(media.URL, ":")+1:]
	mediaURL := "https://media.example.com:" + port + "/inv/INV-7.pdf?sig=s3cr3t"

	for _, allow := range []bool{false, true} {
		gw := newMiniWAHA(t)
		cfg := qrchat.Config{BaseURL: gw.URL, APIKey: "k", HTTPClient: gw.Client(),
			Resolver:       staticDNS(netip.MustParseAddr("127.0.0.1")),
			MediaTLSConfig: media.Client().Transport.(*http.Transport).TLSClientConfig}
		if allow {
			cfg.AllowMediaAddr = func(a netip.Addr) bool { return a.IsLoopback() } // test-only
		}
		qr, err := qrchat.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := chat.New(chat.Config{QR: qr, Resolver: staticDNS(netip.MustParseAddr("93.184.216.34"))})
		if err != nil {
			t.Fatal(err)
		}
		acct := account(chat.GatewayQR)
		env, err := ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", MediaURL: mediaURL, Message: "Invoice"})
		if err != nil {
			t.Fatalf("Prepare: %v (the name is public at check time)", err)
		}
		env.Account = acct
		res, err := ch.Deliver(context.Background(), env)
		if !allow {
			if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "loopback") || strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("default guard: %v, want Rejected naming loopback, without the URL's query", err)
			}
			if hits.Load() != 0 || len(gw.received()) != 0 {
				t.Fatalf("the rebound name was fetched (%d) or sent (%d)", hits.Load(), len(gw.received()))
			}
			continue
		}
		if err != nil {
			t.Fatalf("allowed loopback: %v", err)
		}
		if files := gw.received(); res.ProviderMessageID != "true_919876543210@c.us_3EB0E2E" || len(files) != 1 || string(files[0]) != string(pdf) {
			t.Fatalf("result %+v, gateway got %d files", res, len(files))
		}
	}
}
