package webpushtest_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	webpushgo "github.com/SherClockHolmes/webpush-go"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
)

func b64(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// The example of RFC 8291, Appendix A: the user agent's keys, its
// authentication secret and the body the application server sent.
const (
	rfcUAPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
	rfcUAPublic  = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
	rfcAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	rfcBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
	rfcPlain     = "When I grow up, I want to be a watermelon"
)

// TestDecryptRFC8291 decrypts RFC 8291's example, and refuses it altered
// or opened with another secret.
func TestDecryptRFC8291(t *testing.T) {
	key, err := ecdh.P256().NewPrivateKey(b64(rfcUAPrivate))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key.PublicKey().Bytes(), b64(rfcUAPublic)) {
		t.Fatal("the vector's ua_public is not its ua_private's")
	}
	got, err := webpushtest.Decrypt(b64(rfcBody), key, b64(rfcAuth))
	if err != nil || string(got) != rfcPlain {
		t.Fatalf("Decrypt = %q, %v; want %q", got, err, rfcPlain)
	}
	altered := b64(rfcBody)
	altered[len(altered)-20] ^= 1
	if _, err := webpushtest.Decrypt(altered, key, b64(rfcAuth)); err == nil {
		t.Error("an altered record decrypted")
	}
	otherAuth := b64(rfcAuth)
	otherAuth[0] ^= 1
	if _, err := webpushtest.Decrypt(b64(rfcBody), key, otherAuth); err == nil {
		t.Error("the record decrypted under another authentication secret")
	}
	for _, n := range []int{0, 20, 86, 100} {
		if _, err := webpushtest.Decrypt(b64(rfcBody)[:n], key, b64(rfcAuth)); err == nil {
			t.Errorf("a body cut to %d bytes decrypted", n)
		}
	}
}

// vapidKey is the fake's test key pair, for signing tokens here.
func vapidKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b64(webpushtest.VAPIDPrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// token signs header and claims (JSON) with key, as ES256.
func token(t *testing.T, key *ecdsa.PrivateKey, header, claims string) string {
	signing := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims))
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestCheckVAPID: what RFC 8292 requires of the authorization.
func TestCheckVAPID(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	key := vapidKey(t)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherK, _ := other.PublicKey.Bytes()
	const origin = "https://push.example.test"
	const hdr = `{"typ":"JWT","alg":"ES256"}`
	claims := func(aud string, exp time.Time, sub string) string {
		return fmt.Sprintf(`{"aud":%q,"exp":%d,"sub":%q}`, aud, exp.Unix(), sub)
	}
	good := claims(origin, now.Add(12*time.Hour), webpushtest.Subscriber)
	k := webpushtest.VAPIDPublicKey
	for _, c := range []struct {
		name, auth, why string
	}{
		{"valid", "vapid t=" + token(t, key, hdr, good) + ", k=" + k, ""},
		{"https subscriber", "vapid t=" + token(t, key, hdr, claims(origin, now.Add(time.Hour), "https://example.com/contact")) + ", k=" + k, ""},
		{"k first, quoted", `vapid k="` + k + `", t=` + token(t, key, hdr, good), ""},
		{"another scheme", "WebPush " + token(t, key, hdr, good), "scheme"},
		{"no k", "vapid t=" + token(t, key, hdr, good), "both t and k"},
		{"signed by another key", "vapid t=" + token(t, other, hdr, good) + ", k=" + k, "does not verify"},
		{"k of another key", "vapid t=" + token(t, key, hdr, good) + ", k=" + base64.RawURLEncoding.EncodeToString(otherK), "does not verify"},
		{"HS256", "vapid t=" + token(t, key, `{"typ":"JWT","alg":"HS256"}`, good) + ", k=" + k, "ES256"},
		{"another audience", "vapid t=" + token(t, key, hdr, claims("https://other.example.test", now.Add(time.Hour), webpushtest.Subscriber)) + ", k=" + k, "aud"},
		{"audience with a path", "vapid t=" + token(t, key, hdr, claims(origin+"/wpush", now.Add(time.Hour), webpushtest.Subscriber)) + ", k=" + k, "aud"},
		{"expired", "vapid t=" + token(t, key, hdr, claims(origin, now.Add(-time.Second), webpushtest.Subscriber)) + ", k=" + k, "expired"},
		{"over a day ahead", "vapid t=" + token(t, key, hdr, claims(origin, now.Add(25*time.Hour), webpushtest.Subscriber)) + ", k=" + k, "24 hours"},
		{"mailto twice", "vapid t=" + token(t, key, hdr, claims(origin, now.Add(time.Hour), "mailto:mailto:ops@example.com")) + ", k=" + k, "mailto"},
		{"bare address", "vapid t=" + token(t, key, hdr, claims(origin, now.Add(time.Hour), "ops@example.com")) + ", k=" + k, "neither"},
		{"no subscriber", "vapid t=" + token(t, key, hdr, `{"aud":"`+origin+`","exp":`+fmt.Sprint(now.Add(time.Hour).Unix())+`}`) + ", k=" + k, "sub"},
	} {
		v, err := webpushtest.CheckVAPID(c.auth, origin, now)
		switch {
		case c.why == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.why)
		case c.why == "" && (v.PublicKey != k || v.Audience != origin):
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}

// newServer starts a fake for t.
func newServer(t *testing.T, cfg webpushtest.Config) *webpushtest.Server {
	t.Helper()
	s := webpushtest.NewServer(cfg)
	t.Cleanup(s.Close)
	return s
}

// send pushes payload to the endpoint with webpush-go, through the fake's
// client.
func send(ctx context.Context, s *webpushtest.Server, endpoint string, keys webpushgo.Keys, payload string, opts webpushgo.Options) (*http.Response, error) {
	opts.HTTPClient = s.Client()
	if opts.VAPIDPublicKey == "" {
		opts.VAPIDPublicKey, opts.VAPIDPrivateKey = webpushtest.VAPIDPublicKey, webpushtest.VAPIDPrivateKey
	}
	if opts.Subscriber == "" {
		opts.Subscriber = "ops@example.com" // webpush-go adds mailto:
	}
	resp, err := webpushgo.SendNotificationWithContext(ctx, []byte(payload), &webpushgo.Subscription{Endpoint: endpoint, Keys: keys}, &opts)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// TestServerAccepts: a push webpush-go sends is decrypted and kept, and
// answered 201 with a Location.
func TestServerAccepts(t *testing.T) {
	s := newServer(t, webpushtest.Config{ApplicationServerKey: webpushtest.VAPIDPublicKey})
	sub := s.NewSubscription()
	if !strings.HasPrefix(sub.Endpoint, "https://"+webpushtest.Host+"/wpush/v2/") || len(b64(sub.Keys.Auth)) != 16 || len(b64(sub.Keys.P256dh)) != 65 {
		t.Fatalf("subscription %+v", sub)
	}
	keys := webpushgo.Keys{P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth}
	resp, err := send(t.Context(), s, sub.Endpoint, keys, `{"body":"hi"}`, webpushgo.Options{TTL: 60, Urgency: webpushgo.UrgencyHigh, Topic: "orders"})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("send: %v %v %+v", resp, err, s.Requests())
	}
	m := s.MessagesTo(sub.Endpoint)
	if len(m) != 1 || string(m[0].Payload) != `{"body":"hi"}` || m[0].TTL != 60 || m[0].Urgency != "high" || m[0].Topic != "orders" ||
		m[0].BodyLen != webpushtest.MaxBody || m[0].VAPID.Subject != webpushtest.Subscriber || resp.Header.Get("Location") != m[0].Location {
		t.Fatalf("messages %+v, Location %q", m, resp.Header.Get("Location"))
	}
	if s.Accepted() != 1 || len(s.Requests()) != 1 || s.Requests()[0].Status != http.StatusCreated {
		t.Fatalf("accepted %d, requests %+v", s.Accepted(), s.Requests())
	}
}

// TestServerRefuses: each check, with autopush's status and errno.
func TestServerRefuses(t *testing.T) {
	s := newServer(t, webpushtest.Config{ApplicationServerKey: webpushtest.VAPIDPublicKey})
	sub := s.NewSubscription()
	keys := webpushgo.Keys{P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth}
	otherPriv, otherPub, _ := webpushgo.GenerateVAPIDKeys()
	other := s.NewSubscription()
	for _, c := range []struct {
		name     string
		endpoint string
		keys     webpushgo.Keys
		opts     webpushgo.Options
		status   int
	}{
		{"unknown token", s.URL + "/wpush/v2/nope", keys, webpushgo.Options{}, http.StatusNotFound},
		{"encrypted for another subscription", sub.Endpoint, webpushgo.Keys{P256dh: other.Keys.P256dh, Auth: other.Keys.Auth}, webpushgo.Options{}, http.StatusBadRequest},
		{"another application server key", sub.Endpoint, keys, webpushgo.Options{VAPIDPublicKey: otherPub, VAPIDPrivateKey: otherPriv}, http.StatusForbidden},
		{"mailto twice", sub.Endpoint, keys, webpushgo.Options{Subscriber: "mailto:ops@example.com"}, http.StatusUnauthorized},
		{"record over 4096 bytes", sub.Endpoint, keys, webpushgo.Options{RecordSize: 8192}, http.StatusRequestEntityTooLarge},
		{"bad topic", sub.Endpoint, keys, webpushgo.Options{Topic: "not a topic!"}, http.StatusBadRequest},
	} {
		resp, err := send(t.Context(), s, c.endpoint, c.keys, "x", c.opts)
		if err != nil || resp.StatusCode != c.status {
			t.Errorf("%s: %v, %v; want %d", c.name, resp, err, c.status)
		}
	}
	if s.Accepted() != 0 {
		t.Fatalf("accepted %d", s.Accepted())
	}
	// Raw requests, for the headers webpush-go always gets right.
	good, err := http.NewRequest(http.MethodPost, sub.Endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		header map[string]string
		want   string
	}{
		{"no authorization", map[string]string{"TTL": "0"}, "401"},
		{"no TTL", nil, "400"},
		{"negative TTL", map[string]string{"TTL": "-1"}, "400"},
		{"urgency", map[string]string{"TTL": "0", "Urgency": "urgent"}, "400"},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		if c.name != "no authorization" {
			h.Set("Authorization", authorization(t, time.Now().Add(time.Hour)))
		}
		resp := vendorhttptest.Do(t, s.Client(), good.Method, good.URL.String(), nil, h)
		if got := fmt.Sprint(resp.StatusCode); got != c.want {
			t.Errorf("%s: HTTP %s, want %s", c.name, got, c.want)
		}
	}
	// A push without a payload is taken.
	h := http.Header{"Ttl": {"0"}, "Authorization": {authorization(t, time.Now().Add(time.Hour))}}
	if resp := vendorhttptest.Do(t, s.Client(), http.MethodPost, sub.Endpoint, nil, h); resp.StatusCode != http.StatusCreated {
		t.Errorf("a push without payload: HTTP %d", resp.StatusCode)
	}
	if resp := vendorhttptest.Do(t, s.Client(), http.MethodGet, sub.Endpoint, nil, h); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: HTTP %d", resp.StatusCode)
	}
}

// authorization returns a valid VAPID authorization for the fake.
func authorization(t *testing.T, exp time.Time) string {
	claims := fmt.Sprintf(`{"aud":"https://%s","exp":%d,"sub":%q}`, webpushtest.Host, exp.Unix(), webpushtest.Subscriber)
	return "vapid t=" + token(t, vapidKey(t), `{"typ":"JWT","alg":"ES256"}`, claims) + ", k=" + webpushtest.VAPIDPublicKey
}

// TestServerSubscriptionStates: Expire answers 410, Forget 404, and the
// other subscriptions are untouched.
func TestServerSubscriptionStates(t *testing.T) {
	s := newServer(t, webpushtest.Config{})
	gone, forgotten, live := s.NewSubscription(), s.NewSubscription(), s.NewSubscription()
	s.Expire(gone.Endpoint)
	s.Forget(forgotten.Endpoint)
	for _, c := range []struct {
		endpoint string
		keys     webpushgo.Keys
		status   int
	}{
		{gone.Endpoint, webpushgo.Keys{P256dh: gone.Keys.P256dh, Auth: gone.Keys.Auth}, http.StatusGone},
		{forgotten.Endpoint, webpushgo.Keys{P256dh: forgotten.Keys.P256dh, Auth: forgotten.Keys.Auth}, http.StatusNotFound},
		{live.Endpoint, webpushgo.Keys{P256dh: live.Keys.P256dh, Auth: live.Keys.Auth}, http.StatusCreated},
	} {
		if resp, err := send(t.Context(), s, c.endpoint, c.keys, "x", webpushgo.Options{}); err != nil || resp.StatusCode != c.status {
			t.Errorf("%s: %v %v, want %d", c.endpoint, resp, err, c.status)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Expire of an endpoint the fake did not make did not panic")
		}
	}()
	s.Expire("https://push.example.test/wpush/v2/unknown")
}

// TestServerFaults: each injected fault, once, then the fake works again.
func TestServerFaults(t *testing.T) {
	s := newServer(t, webpushtest.Config{OmitLocation: true})
	sub := s.NewSubscription()
	keys := webpushgo.Keys{P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth}
	check := func(name string, inject func(), status int, retryAfter string, accepted int) {
		t.Helper()
		before := s.Accepted()
		inject()
		resp, err := send(t.Context(), s, sub.Endpoint, keys, "x", webpushgo.Options{})
		switch {
		case status == 0 && err == nil:
			t.Errorf("%s: answered %d, want a broken connection", name, resp.StatusCode)
		case status != 0 && (err != nil || resp.StatusCode != status || resp.Header.Get("Retry-After") != retryAfter):
			t.Errorf("%s: %v %v, want %d with Retry-After %q", name, resp, err, status, retryAfter)
		}
		if got := s.Accepted() - before; got != accepted {
			t.Errorf("%s: accepted %d, want %d", name, got, accepted)
		}
		if resp, err := send(t.Context(), s, sub.Endpoint, keys, "x", webpushgo.Options{}); err != nil || resp.StatusCode != http.StatusCreated || resp.Header.Get("Location") != "" {
			t.Errorf("after %s: %v %v", name, resp, err)
		}
	}
	check("rate limited", func() { s.FailNext(webpushtest.RateLimited) }, 429, "30", 0)
	check("unavailable", func() { s.FailNext(webpushtest.Unavailable) }, 503, "60", 0)
	check("too large", func() { s.FailNext(webpushtest.TooLarge) }, 413, "", 0)
	check("with", func() { s.FailNextWith(502, 999, "busy") }, 502, "", 0)
	check("proxy", func() { s.FailNextHTTP(502) }, 502, "", 0)
	check("proxy after accept", func() { s.FailNextHTTPAfterAccept(504) }, 504, "", 1)
	check("break", s.BreakNext, 0, "", 1)
}

// TestServerLatency: a slow fake answers nothing once the client gives
// up, and stops waiting then.
func TestServerLatency(t *testing.T) {
	s := newServer(t, webpushtest.Config{})
	sub := s.NewSubscription()
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := send(ctx, s, sub.Endpoint, webpushgo.Keys{P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth}, "x", webpushgo.Options{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	s.SetLatency(0)
	if s.Accepted() != 0 {
		t.Fatalf("accepted %d", s.Accepted())
	}
}

// TestClientReachesTheFakeOnly: the fake's client dials no other host.
func TestClientReachesTheFakeOnly(t *testing.T) {
	s := newServer(t, webpushtest.Config{})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://example.com/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the fake's client reached example.com")
	}
}
