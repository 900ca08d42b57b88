package webpush_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
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

	webpushgo "github.com/SherClockHolmes/webpush-go"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/webpush"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestNewChecksConfig: each bad field is named, and the private key is
// never repeated.
func TestNewChecksConfig(t *testing.T) {
	otherPriv, otherPub, err := webpushgo.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	valid := webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey, Subscriber: webpushtest.Subscriber}
	for _, c := range []struct {
		name   string
		change func(*webpush.Config)
		field  string // in the error; "" for no error
	}{
		{"valid", func(*webpush.Config) {}, ""},
		{"https subscriber", func(c *webpush.Config) { c.Subscriber = "https://example.com/contact" }, ""},
		{"padded keys", func(c *webpush.Config) { c.VAPIDPublicKey += "="; c.VAPIDPrivateKey += "=" }, ""},
		{"standard base64", func(c *webpush.Config) {
			c.VAPIDPublicKey = strings.NewReplacer("-", "+", "_", "/").Replace(c.VAPIDPublicKey)
			c.VAPIDPrivateKey = strings.NewReplacer("-", "+", "_", "/").Replace(c.VAPIDPrivateKey)
		}, ""},
		{"no public key", func(c *webpush.Config) { c.VAPIDPublicKey = "" }, "Config.VAPIDPublicKey"},
		{"no private key", func(c *webpush.Config) { c.VAPIDPrivateKey = "" }, "Config.VAPIDPrivateKey"},
		{"public key not base64", func(c *webpush.Config) { c.VAPIDPublicKey = "not a key!" }, "Config.VAPIDPublicKey"},
		{"public key short", func(c *webpush.Config) { c.VAPIDPublicKey = c.VAPIDPublicKey[:40] }, "Config.VAPIDPublicKey"},
		{"public key off the curve", func(c *webpush.Config) {
			b, _ := base64.RawURLEncoding.DecodeString(c.VAPIDPublicKey)
			b[64] ^= 1
			c.VAPIDPublicKey = base64.RawURLEncoding.EncodeToString(b)
		}, "P-256 curve"},
		{"private key short", func(c *webpush.Config) { c.VAPIDPrivateKey = c.VAPIDPrivateKey[:20] }, "Config.VAPIDPrivateKey"},
		{"private key zero", func(c *webpush.Config) { c.VAPIDPrivateKey = base64.RawURLEncoding.EncodeToString(make([]byte, 32)) }, "Config.VAPIDPrivateKey"},
		{"not a pair", func(c *webpush.Config) { c.VAPIDPrivateKey = otherPriv }, "not the public key of Config.VAPIDPrivateKey"},
		{"another pair's public key", func(c *webpush.Config) { c.VAPIDPublicKey = otherPub }, "not the public key"},
		{"no subscriber", func(c *webpush.Config) { c.Subscriber = "" }, "Config.Subscriber"},
		{"bare address", func(c *webpush.Config) { c.Subscriber = "ops@example.com" }, "Config.Subscriber"},
		{"mailto twice", func(c *webpush.Config) { c.Subscriber = "mailto:mailto:ops@example.com" }, "Config.Subscriber"},
		{"http subscriber", func(c *webpush.Config) { c.Subscriber = "http://example.com" }, "Config.Subscriber"},
		{"mailto with a name", func(c *webpush.Config) { c.Subscriber = "mailto:Ops <ops@example.com>" }, "Config.Subscriber"},
		{"negative timeout", func(c *webpush.Config) { c.Timeout = -time.Second }, "Config.Timeout"},
	} {
		cfg := valid
		c.change(&cfg)
		p, err := webpush.New(cfg)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field == "" && (p.Name() != webpush.DefaultName || p.PublicKey() != webpushtest.VAPIDPublicKey):
			t.Errorf("%s: Name %q, PublicKey %q", c.name, p.Name(), p.PublicKey())
		case c.field != "" && (err == nil || !strings.Contains(err.Error(), c.field)):
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.field)
		case err != nil && (strings.Contains(err.Error(), webpushtest.VAPIDPrivateKey[:12]) || strings.Contains(err.Error(), otherPriv[:12])):
			t.Errorf("%s: the error repeats the private key", c.name)
		}
		if p != nil {
			_ = p.Close()
		}
	}
}

// TestRoundTrip: the payload arrives intact, decrypted by the fake with
// the subscription's keys, with the TTL in whole seconds and the
// urgency, and the push message resource is the message ID.
func TestRoundTrip(t *testing.T) {
	v := newVendor(t, webpushtest.Config{})
	p := newProvider(t, v, func(c *webpush.Config) { c.Name = "browser-push" })
	sub := v.NewSubscription()
	msg := &push.Message{Keys: sub.Keys, Title: "Your order", Body: "Order 42 has shipped. ✓", Link: "https://shop.example.com/o/42",
		Image: "https://shop.example.com/i/42.png", Data: map[string]string{"order": "42", "tracking": "ZX-1"},
		TTL: 90*time.Minute + 500*time.Millisecond, Urgency: push.UrgencyHigh}
	env := &notify.Envelope{ID: "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f", Kind: push.Kind, To: sub.Endpoint, Provider: "browser-push", Content: msg}
	res, err := p.Send(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	m := v.MessagesTo(sub.Endpoint)
	if len(m) != 1 {
		t.Fatalf("%d messages", len(m))
	}
	if string(m[0].Payload) != string(msg.Payload(env.ID)) {
		t.Errorf("payload %s, want %s", m[0].Payload, msg.Payload(env.ID))
	}
	if m[0].TTL != 5400 || m[0].Urgency != "high" || m[0].Header.Get("Content-Encoding") != "aes128gcm" || m[0].BodyLen != webpush.MaxRecord {
		t.Errorf("TTL %d, Urgency %q, headers %v, body %d bytes", m[0].TTL, m[0].Urgency, m[0].Header, m[0].BodyLen)
	}
	if m[0].VAPID.Subject != webpushtest.Subscriber || m[0].VAPID.Audience != v.URL || m[0].VAPID.PublicKey != p.PublicKey() {
		t.Errorf("VAPID %+v", m[0].VAPID)
	}
	if res.Provider != "browser-push" || res.ProviderMessageID != m[0].Location || !strings.HasPrefix(res.ProviderMessageID, v.URL+"/m/") {
		t.Errorf("result %+v, Location %q", res, m[0].Location)
	}
}

// TestNoLocation: an acceptance without Location still gets a message ID
// of its own.
func TestNoLocation(t *testing.T) {
	v := newVendor(t, webpushtest.Config{OmitLocation: true})
	p := newProvider(t, v, nil)
	sub := v.NewSubscription()
	a, err1 := p.Send(t.Context(), envelope(sub, 1))
	b, err2 := p.Send(t.Context(), envelope(sub, 2))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, id := range []string{a.ProviderMessageID, b.ProviderMessageID} {
		if !strings.HasPrefix(id, webpush.LocalIDPrefix) || len(id) != len(webpush.LocalIDPrefix)+32 {
			t.Errorf("message ID %q", id)
		}
	}
	if a.ProviderMessageID == b.ProviderMessageID {
		t.Error("two messages have one ID")
	}
}

// TestOutcomes: each answer of the service, and each failure on the way,
// gives the outcome the package documentation's table says.
func TestOutcomes(t *testing.T) {
	type want struct {
		code       notify.Code
		state      record.State
		retryAfter time.Duration
		bounce     bool
		received   int    // accepted by the fake
		says       string // in the error
	}
	failed, unknown := record.StateFailed, record.StateUnknown
	for _, c := range []struct {
		name   string
		cfg    webpushtest.Config
		change func(*webpush.Config)
		setup  func(v *webpushtest.Server, sub *push.Subscription)
		want   want
	}{
		{"gone 410", webpushtest.Config{}, nil, func(v *webpushtest.Server, sub *push.Subscription) { v.Expire(sub.Endpoint) },
			want{code: notify.CodeRejected, state: failed, bounce: true, says: "HTTP 410 (Gone, errno 103)"}},
		{"unknown 404", webpushtest.Config{}, nil, func(v *webpushtest.Server, sub *push.Subscription) { v.Forget(sub.Endpoint) },
			want{code: notify.CodeRejected, state: failed, bounce: true, says: "suppression list"}},
		{"rate limited 429", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.RateLimited) },
			want{code: notify.CodeRateLimited, state: failed, retryAfter: 30 * time.Second, says: "HTTP 429"}},
		{"unavailable 503", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.Unavailable) },
			want{code: notify.CodeUnavailable, state: failed, retryAfter: time.Minute, says: "back-off"}},
		{"too large 413", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.TooLarge) },
			want{code: notify.CodeInvalidArgument, state: failed, says: "body: makes a push message over"}},
		{"bad request 400", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.BadRequest) },
			want{code: notify.CodeRejected, state: failed, says: "HTTP 400"}},
		{"VAPID refused 401", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.Unauthorized) },
			want{code: notify.CodeRejected, state: failed, says: "check webpush Config.VAPIDPublicKey"}},
		{"another application server key 403", webpushtest.Config{}, func(c *webpush.Config) {
			c.VAPIDPrivateKey, c.VAPIDPublicKey, _ = webpushgo.GenerateVAPIDKeys()
		}, nil, want{code: notify.CodeRejected, state: failed, says: "applicationServerKey"}},
		{"proxy page 502", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNextHTTP(http.StatusBadGateway) },
			want{code: notify.CodeOutcomeUnknown, state: unknown, says: "not the push service's own error"}},
		{"proxy page 503", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNextHTTP(http.StatusServiceUnavailable) },
			want{code: notify.CodeOutcomeUnknown, state: unknown}},
		{"service's 500", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.FailNext(webpushtest.InternalError) },
			want{code: notify.CodeUnavailable, state: failed, says: "errno 999"}},
		{"answer lost", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) { v.BreakNext() },
			want{code: notify.CodeOutcomeUnknown, state: unknown, received: 1}},
		{"proxy page after accept", webpushtest.Config{}, nil, func(v *webpushtest.Server, _ *push.Subscription) {
			v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout)
		},
			want{code: notify.CodeOutcomeUnknown, state: unknown, received: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, c.cfg)
			p := newProvider(t, v, c.change)
			sub := v.NewSubscription()
			if c.setup != nil {
				c.setup(v, sub)
			}
			res, err := p.Send(t.Context(), envelope(sub, 0))
			if err == nil {
				t.Fatalf("accepted: %+v", res)
			}
			var ne *notify.Error
			errors.As(err, &ne)
			var b store.Bounce
			isBounce := errors.As(err, &b)
			if got := notify.CodeOf(err); got != c.want.code || notify.OutcomeOf(err) != c.want.state || ne.RetryAfter != c.want.retryAfter || isBounce != c.want.bounce {
				t.Errorf("code %s, outcome %s, RetryAfter %v, bounce %v: %v", got, notify.OutcomeOf(err), ne.RetryAfter, isBounce, err)
			}
			if isBounce {
				reason, to := b.BounceReason()
				var pe *webpush.Error
				if reason != store.SuppressHardBounce || to != "" || !errors.As(err, &pe) || !pe.Gone() {
					t.Errorf("bounce %q %q, %+v", reason, to, pe)
				}
			}
			if !strings.Contains(err.Error(), c.want.says) {
				t.Errorf("error %q does not say %q", err, c.want.says)
			}
			vendorhttptest.CheckError(t, withoutInvalid(err), c.want.state == failed, c.want.state == unknown, c.name,
				webpushtest.VAPIDPrivateKey, sub.Keys.Auth)
			if v.Accepted() != c.want.received {
				t.Errorf("the fake accepted %d", v.Accepted())
			}
			// The next send goes through, unless the subscription is gone.
			if !c.want.bounce && c.change == nil {
				if _, err := p.Send(t.Context(), envelope(sub, 1)); err != nil {
					t.Errorf("the next send: %v", err)
				}
			}
		})
	}
}

// withoutInvalid gives CheckError, which knows the codes of a vendor's
// answers, a refusal for a 413's CodeInvalidArgument.
func withoutInvalid(err error) error {
	if notify.CodeOf(err) == notify.CodeInvalidArgument {
		return notify.WithCode(notify.CodeRejected, err)
	}
	return err
}

// TestSendChecksEnvelope: what cannot be sent is CodeInvalidArgument
// naming the field, and nothing reaches the service.
func TestSendChecksEnvelope(t *testing.T) {
	v := newVendor(t, webpushtest.Config{})
	p := newProvider(t, v, nil)
	sub := v.NewSubscription()
	for _, c := range []struct {
		name   string
		change func(*notify.Envelope, *push.Message)
		field  string
	}{
		{"no content", func(e *notify.Envelope, _ *push.Message) { e.Content = nil }, "message"},
		{"another channel's content", func(e *notify.Envelope, _ *push.Message) { e.Content = "text" }, "message"},
		{"http endpoint", func(e *notify.Envelope, _ *push.Message) { e.To = strings.Replace(e.To, "https:", "http:", 1) }, "to"},
		{"no endpoint", func(e *notify.Envelope, _ *push.Message) { e.To = "" }, "to"},
		{"bad p256dh", func(_ *notify.Envelope, m *push.Message) { m.Keys.P256dh = m.Keys.Auth }, "subscription.keys.p256dh"},
		{"bad auth", func(_ *notify.Envelope, m *push.Message) { m.Keys.Auth = "short" }, "subscription.keys.auth"},
		{"negative TTL", func(_ *notify.Envelope, m *push.Message) { m.TTL = -time.Second }, "ttl"},
		{"urgency", func(_ *notify.Envelope, m *push.Message) { m.Urgency = "urgent" }, "urgency"},
		{"payload too large", func(_ *notify.Envelope, m *push.Message) { m.Body = strings.Repeat("x", push.MaxPayload) }, "body"},
	} {
		env := envelope(sub, 0)
		msg := env.Content.(*push.Message)
		c.change(env, msg)
		_, err := p.Send(t.Context(), env)
		var ne *notify.Error
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || len(ne.Fields) == 0 || ne.Fields[0].Field != c.field {
			t.Errorf("%s: %v, want invalid_argument on %q", c.name, err, c.field)
		}
	}
	var nilEnv *notify.Envelope
	if _, err := p.Send(t.Context(), nilEnv); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("nil envelope: %v", err)
	}
	if n := len(v.Requests()); n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
}

// TestContextEnds: a context that ended before the send is a certain
// CodeUnavailable that still is the context's error; a deadline that
// passes while the service is slow is an unknown outcome.
func TestContextEnds(t *testing.T) {
	v := newVendor(t, webpushtest.Config{})
	p := newProvider(t, v, nil)
	sub := v.NewSubscription()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Send(ctx, envelope(sub, 0))
	if notify.CodeOf(err) != notify.CodeUnavailable || !errors.Is(err, context.Canceled) || notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("canceled: %v", err)
	}
	v.SetLatency(time.Hour)
	defer v.SetLatency(0)
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = p.Send(ctx, envelope(sub, 1))
	if !errors.Is(err, context.DeadlineExceeded) || notify.OutcomeOf(err) != record.StateUnknown {
		t.Errorf("deadline: %s %v", notify.OutcomeOf(err), err)
	}
}

// resolver maps names to addresses, as DNS would, without DNS.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func loopback(a netip.Addr) bool { return a.IsLoopback() }

// withPort returns endpoint with the port of addr, for a client that
// dials the name it is given.
func withPort(t *testing.T, endpoint, addr string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	u.Host += ":" + port
	return u.String()
}

// TestDefaultClientRefusesPrivateAddresses: the default client (no
// Config.HTTPClient) refuses an endpoint that is an IP literal or a local
// name before any I/O, and one whose name resolves to a loopback address
// at dial time (SSRF), for good: CodeRejected, nothing sent.
func TestDefaultClientRefusesPrivateAddresses(t *testing.T) {
	v := newVendor(t, webpushtest.Config{})
	sub := v.NewSubscription()
	cfg := webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey, Subscriber: webpushtest.Subscriber}
	p, err := webpush.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, to := range []string{"https://" + v.Addr() + "/wpush/v2/x", "https://localhost/wpush/v2/x", "https://[::1]/x", "https://2130706433/x"} {
		env := envelope(sub, 0)
		env.To = to
		if _, err := p.Send(t.Context(), env); notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "public https URL") {
			t.Errorf("%s: %v", to, err)
		}
	}
	// A public-looking name that resolves to loopback.
	guarded, err := webpush.NewGuarded(cfg, netguard.Config{Resolver: resolver{webpushtest.Host: "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Close()
	env := envelope(sub, 0)
	env.To = withPort(t, sub.Endpoint, v.Addr())
	_, err = guarded.Send(t.Context(), env)
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "loopback address") || notify.OutcomeOf(err) != record.StateFailed {
		t.Errorf("a name resolving to loopback: %v", err)
	}
	if n := len(v.Requests()); n != 0 {
		t.Fatalf("%d requests reached the service", n)
	}
}

// TestDefaultClientSends: the default client's guard, allowed loopback
// for the test, reaches the service and sends as the fake's client does
// (the token's aud then carries the port).
func TestDefaultClientSends(t *testing.T) {
	v := newVendor(t, webpushtest.Config{})
	sub := v.NewSubscription()
	pool := x509.NewCertPool()
	pool.AddCert(v.Certificate())
	p, err := webpush.NewGuarded(webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey,
		Subscriber: "https://example.com/contact"},
		netguard.Config{Resolver: resolver{webpushtest.Host: "127.0.0.1"}, Allow: loopback, TLSConfig: &tls.Config{RootCAs: pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	env := envelope(sub, 0)
	env.To = withPort(t, sub.Endpoint, v.Addr())
	env.ID = "c0ffee00-0000-4000-8000-000000000001"
	res, err := p.Send(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Messages()
	u, _ := url.Parse(env.To)
	if len(m) != 1 || res.ProviderMessageID != m[0].Location || m[0].VAPID.Audience != "https://"+u.Host ||
		string(m[0].Payload) != string(env.Content.(*push.Message).Payload(env.ID)) {
		t.Fatalf("%+v, %+v", res, m)
	}
}

// TestRedirectNotFollowed: the default client hands a redirect back as
// the answer, a refusal, and never sends the message where it points.
func TestRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "https://example.com:"+r.URL.Port()+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	p, err := webpush.NewGuarded(webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey,
		Subscriber: webpushtest.Subscriber},
		netguard.Config{Resolver: resolver{"example.com": "127.0.0.1"}, Allow: loopback, TLSConfig: &tls.Config{RootCAs: pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v := newVendor(t, webpushtest.Config{})
	env := envelope(v.NewSubscription(), 0)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	env.To = "https://example.com:" + port + "/wpush/v2/x"
	_, err = p.Send(t.Context(), env)
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "redirect") || hits.Load() != 1 {
		t.Fatalf("%d requests, %v", hits.Load(), err)
	}
}
