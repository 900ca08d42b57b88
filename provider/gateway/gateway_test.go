package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/gateway"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/record"
)

const testKey = "gw_test_key_5e1f"

// fakeRemote is an httptest server speaking the gateway API's wire format,
// error bodies included, as httpapi answers. Its failures can also be
// those of the network and of proxies: no body, a cut body, a connection
// closed with no answer, an answer withheld.
type fakeRemote struct {
	srv *httptest.Server

	mu       sync.Mutex
	fail     []reply // answers for the next requests, in order
	latency  time.Duration
	received int // messages sent (answered 200)
	requests int // send requests that arrived in full, whatever the answer
	last     recorded
	seq      int
	// arrived, when not nil, gets a value whenever a send request has
	// arrived in full.
	arrived chan struct{}
}

type reply struct {
	status int
	body   string
	header map[string]string
	// network, when set, replaces the answer.
	network netFailure
}

// netFailure is an answer that HTTP cannot express.
type netFailure int

const (
	_ netFailure = iota
	// hangUp closes the connection without an answer.
	hangUp
	// cutBody sends the status line and half of body, then closes.
	cutBody
	// stall withholds the answer until the client goes away or the
	// server closes.
	stall
)

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
}

func newFakeRemote(t *testing.T) *fakeRemote {
	f := &fakeRemote{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRemote) url() string { return f.srv.URL + "/api/v1" }

func (f *fakeRemote) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body) // read first: see providertest.Harness.SetLatency
	w.Header().Set("Content-Type", "application/json")
	f.mu.Lock()
	lat := f.latency
	f.mu.Unlock()
	if lat > 0 {
		select {
		case <-time.After(lat):
		case <-r.Context().Done():
			return
		}
	}
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		w.WriteHeader(401)
		io.WriteString(w, `{"success":false,"error":{"code":"unauthenticated","message":"the API key is not valid"}}`)
		return
	}
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.last = recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
	if r.URL.Path != "/api/v1/balance" {
		f.requests++
		if f.arrived != nil {
			f.arrived <- struct{}{}
		}
	}
	var rp *reply
	if len(f.fail) > 0 {
		rp = &f.fail[0]
		f.fail = f.fail[1:]
	}
	f.mu.Unlock()
	if rp != nil {
		f.answer(w, r, *rp)
		return
	}
	if r.URL.Path == "/api/v1/balance" {
		io.WriteString(w, `{"success":true,"data":{"account":"acct-9","name":"Remote Co","balance":"12.50","balance_minor":1250,"currency":{"code":"INR","symbol":"₹","exponent":2}}}`)
		return
	}
	f.mu.Lock()
	f.received++
	f.seq++
	seq := f.seq
	f.mu.Unlock()
	fmt.Fprintf(w, `{"success":true,"message_id":"remote-%d","channel":"sms","status":"sent","provider":"x","provider_message_id":"v-%d","gateway":"qr","note":"n"}`, seq, seq)
}

// answer writes rp.
func (f *fakeRemote) answer(w http.ResponseWriter, r *http.Request, rp reply) {
	switch rp.network {
	case hangUp, cutBody:
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		if rp.network == cutBody {
			fmt.Fprintf(bw, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				rp.status, len(rp.body), rp.body[:len(rp.body)/2])
			_ = bw.Flush()
		}
		return
	case stall:
		<-r.Context().Done() // the client went away, or the server closes
		return
	}
	for k, v := range rp.header {
		w.Header()[k] = []string{v}
	}
	w.WriteHeader(rp.status)
	io.WriteString(w, rp.body)
}

func (f *fakeRemote) failWith(rs ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, rs...)
}

func (f *fakeRemote) lastRequest() recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// counts returns the send requests that arrived and the messages sent.
func (f *fakeRemote) counts() (requests, received int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.received
}

func newProvider(t *testing.T, base string) *gateway.Provider {
	t.Helper()
	p, err := gateway.New(gateway.Config{BaseURL: base, APIKey: testKey, Name: "remote"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func acct() *notify.Account {
	return &notify.Account{ID: "acct-1", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}
}

func smsEnv(i int) *notify.Envelope {
	return &notify.Envelope{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: sms.Kind, Account: acct(), To: "9876543210", Provider: "remote", Units: 1,
		Content: &sms.Message{Route: sms.RouteOTP, OTP: "482915", Text: "482915 is your code", Segments: 1}}
}

func chatEnv(i int) *notify.Envelope {
	return &notify.Envelope{Kind: chat.Kind, Account: acct(), To: "9876543210", Provider: "remote", Units: 1,
		Content: &chat.Message{Gateway: chat.GatewayQR, Type: chat.TypeOTP, Text: fmt.Sprintf("hello %d", i)}}
}

func emailEnv(i int) *notify.Envelope {
	return &notify.Envelope{Kind: email.Kind, Account: acct(), To: "asha@example.com", Provider: "remote", Units: 1,
		Content: &email.Message{Subject: "Hi", Text: fmt.Sprintf("body %d", i)}}
}

func TestConformance(t *testing.T) {
	for name, env := range map[string]func(int) *notify.Envelope{"sms": smsEnv, "chat": chatEnv, "email": emailEnv} {
		t.Run(name, func(t *testing.T) {
			f := newFakeRemote(t)
			providertest.Run(t, providertest.Harness{
				Provider: newProvider(t, f.url()),
				Envelope: env,
				Secrets:  []string{testKey, "482915"},
				FailNext: func(fl providertest.Failure) bool {
					switch fl {
					case providertest.Temporary:
						f.failWith(reply{status: 503, body: `{"success":false,"error":{"code":"unavailable","message":"provider sms-mem: down"}}`})
					case providertest.Permanent:
						f.failWith(reply{status: 502, body: `{"success":false,"message_id":"m","error":{"code":"rejected","message":"provider sms-mem: number barred"}}`})
					case providertest.RateLimited:
						f.failWith(reply{status: 429, header: map[string]string{"Retry-After": "1"},
							body: `{"success":false,"error":{"code":"rate_limited","message":"too many requests","retry_after_seconds":1}}`})
					default:
						return false
					}
					return true
				},
				SetLatency: func(d time.Duration) {
					f.mu.Lock()
					defer f.mu.Unlock()
					f.latency = d
				},
				Received: func() int {
					f.mu.Lock()
					defer f.mu.Unlock()
					return f.received
				},
			})
		})
	}
}

func TestRequestMapping(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url()+"/")
	cases := []struct {
		name string
		env  *notify.Envelope
		path string
		body map[string]any
	}{
		{"sms otp route sends the code", smsEnv(0), "/api/v1/sms",
			map[string]any{"to": "9876543210", "message": "482915", "route": "otp"}},
		{"sms text", &notify.Envelope{Kind: sms.Kind, To: "9876543210", Domain: "shop.example",
			Content: &sms.Message{Route: sms.RouteSMS, Text: "Your order shipped", SenderID: "ACMEIN"}}, "/api/v1/sms",
			map[string]any{"to": "9876543210", "message": "Your order shipped", "route": "sms", "sender_id": "ACMEIN", "domain": "shop.example"}},
		{"sms dlt", &notify.Envelope{Kind: sms.Kind, To: "9876543210",
			Content: &sms.Message{Route: sms.RouteDLT, Text: "Dear A, order 1 shipped", SenderID: "ACMEIN", DLTTemplateID: "1107", DLTEntityID: "1201"}}, "/api/v1/sms",
			map[string]any{"to": "9876543210", "message": "Dear A, order 1 shipped", "route": "dlt", "sender_id": "ACMEIN", "dlt_template_id": "1107", "dlt_entity_id": "1201"}},
		{"chat text", chatEnv(7), "/api/v1/messenger/send",
			map[string]any{"to": "9876543210", "gateway": "qr", "type": "otp", "message": "hello 7"}},
		{"chat cloud template", &notify.Envelope{Kind: chat.Kind, To: "9876543210",
			Content: &chat.Message{Gateway: chat.GatewayCloud, Type: chat.TypePromotional, Text: "ignored",
				Template: &chat.Template{Name: "promo_discount", Language: "en", Params: []string{"Asha", "20%"}, HeaderURL: "https://cdn.example.com/h.jpg"}}},
			"/api/v1/messenger/send",
			map[string]any{"to": "9876543210", "gateway": "cloud", "type": "promotional", "template_name": "promo_discount",
				"language": "en", "variables": []any{"Asha", "20%"}, "header_url": "https://cdn.example.com/h.jpg"}},
		{"chat media", &notify.Envelope{Kind: chat.Kind, To: "9876543210",
			Content: &chat.Message{Gateway: chat.GatewayCloud, Type: chat.TypeOTP, Text: "Your invoice",
				Media: &chat.Media{URL: "https://cdn.example.com/i.pdf", Kind: chat.MediaDocument, FileName: "Invoice.pdf"}}},
			"/api/v1/messenger/send",
			map[string]any{"to": "9876543210", "gateway": "cloud", "type": "otp", "message": "Your invoice",
				"media_url": "https://cdn.example.com/i.pdf", "file_name": "Invoice.pdf"}},
		{"email html", &notify.Envelope{Kind: email.Kind, To: "asha@example.com",
			Content: &email.Message{Subject: "Invoice", HTML: "<p>Hi</p>", Text: "Hi", FromName: "Acme", ReplyTo: "help@example.com", Purpose: email.PurposeInvoice}},
			"/api/v1/email/send",
			map[string]any{"to": "asha@example.com", "subject": "Invoice", "message": "<p>Hi</p>", "from_name": "Acme", "reply_to": "help@example.com", "purpose": "invoice"}},
		{"email text", emailEnv(3), "/api/v1/email/send",
			map[string]any{"to": "asha@example.com", "subject": "Hi", "message": "body 3"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.env.ID = fmt.Sprintf("0000000%d-1111-4222-8333-444455556666", i)
			res, err := p.Send(context.Background(), c.env)
			if err != nil {
				t.Fatal(err)
			}
			if res.ProviderMessageID == "" || !strings.HasPrefix(res.ProviderMessageID, "remote-") || res.Provider != "remote" ||
				res.Route != string(chat.GatewayQR) || res.Note != "n" {
				t.Errorf("result %+v", res)
			}
			got := f.lastRequest()
			if got.method != "POST" || got.path != c.path {
				t.Errorf("%s %s, want POST %s", got.method, got.path, c.path)
			}
			if !reflect.DeepEqual(got.body, c.body) {
				t.Errorf("body\n got %v\nwant %v", got.body, c.body)
			}
			for k, v := range map[string]string{"Idempotency-Key": c.env.ID, "Authorization": "Bearer " + testKey, "Content-Type": "application/json"} {
				if got.header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, got.header.Get(k), v)
				}
			}
		})
	}
}

func TestBalanceAndHealth(t *testing.T) {
	f := newFakeRemote(t)
	p := newProvider(t, f.url())
	b, err := p.Balance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := record.Balance{Account: "acct-9", Name: "Remote Co", Available: notify.Money{Minor: 1250, Currency: record.INR()}}
	if b != want {
		t.Errorf("got %+v", b)
	}
	if err := p.CheckHealth(context.Background()); err != nil {
		t.Error(err)
	}
	bad, _ := gateway.New(gateway.Config{BaseURL: f.url(), APIKey: "wrong"})
	if err := bad.CheckHealth(context.Background()); notify.CodeOf(err) != notify.CodeRejected {
		t.Errorf("bad key: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, c := range []gateway.Config{
		{APIKey: "k"},
		{BaseURL: "ftp://x.example/api/v1", APIKey: "k"},
		{BaseURL: "https://x.example/api/v2", APIKey: "k"},
		{BaseURL: "https://user:pw@x.example/api/v1", APIKey: "k"},
		{BaseURL: "https://x.example/api/v1?x=1", APIKey: "k"},
		{BaseURL: "https:///api/v1", APIKey: "k"},
		{BaseURL: "https://x.example/api/v1"},
		{BaseURL: "https://x.example/api/v1", APIKey: "a b"},
	} {
		if _, err := gateway.New(c); err == nil {
			t.Errorf("%+v: no error", c)
		} else if c.APIKey != "" && strings.Contains(err.Error(), c.APIKey+" ") {
			t.Errorf("error repeats the key: %v", err)
		}
	}
	p, err := gateway.New(gateway.Config{BaseURL: "https://x.example/api/v1/", APIKey: "k"})
	if err != nil || p.Name() != "gateway" {
		t.Fatalf("%v %v", p, err)
	}
}
