package push_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// TestPrepareRefuses: each rule names its field, all bad fields at once.
func TestPrepareRefuses(t *testing.T) {
	ch, _, _ := newChannel(t)
	sub := subscription(t, "https://push.example.com/s/1")
	bigData := map[string]string{}
	for i := range push.MaxDataKeys + 1 {
		bigData["k"+strings.Repeat("x", i)] = "v"
	}
	cases := []struct {
		name string
		req  push.Request
		want string
	}{
		{"endpoint not https", push.Request{Subscription: &push.Subscription{Endpoint: "http://push.example.com/s", Keys: sub.Keys}, Body: "b"}, "subscription.endpoint"},
		{"endpoint on loopback", push.Request{Subscription: &push.Subscription{Endpoint: "https://127.0.0.1/s", Keys: sub.Keys}, Body: "b"}, "subscription.endpoint"},
		{"endpoint local name", push.Request{Subscription: &push.Subscription{Endpoint: "https://localhost/s", Keys: sub.Keys}, Body: "b"}, "subscription.endpoint"},
		{"endpoint with a fragment", push.Request{Subscription: &push.Subscription{Endpoint: "https://push.example.com/s#x", Keys: sub.Keys}, Body: "b"}, "subscription.endpoint"},
		{"no endpoint", push.Request{Subscription: &push.Subscription{Keys: sub.Keys}, Body: "b"}, "subscription.endpoint"},
		{"key off the curve", push.Request{Subscription: &push.Subscription{Endpoint: sub.Endpoint,
			Keys: push.Keys{P256dh: "BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Auth: sub.Keys.Auth}}, Body: "b"},
			"subscription.keys.p256dh"},
		{"short token", push.Request{Token: "abc", Body: "b"}, "token"},
		{"token with a space", push.Request{Token: strings.Repeat("a", 20) + " " + strings.Repeat("b", 20), Body: "b"}, "token"},
		{"blank body", push.Request{Token: token, Body: "  "}, "body"},
		{"blank title", push.Request{Token: token, Title: " ", Body: "b"}, "title"},
		{"long title", push.Request{Token: token, Title: strings.Repeat("t", push.MaxTitle+1), Body: "b"}, "title"},
		{"long body", push.Request{Token: token, Body: strings.Repeat("b", push.MaxBody+1)}, "body"},
		{"body not UTF-8", push.Request{Token: token, Body: "\xff"}, "body"},
		{"too many data keys", push.Request{Token: token, Body: "b", Data: bigData}, "data"},
		{"reserved data key", push.Request{Token: token, Body: "b", Data: map[string]string{"message_id": "x"}}, "data"},
		{"FCM's reserved data key", push.Request{Token: token, Body: "b", Data: map[string]string{"google.sent_time": "x"}}, "data"},
		{"bad data key", push.Request{Token: token, Body: "b", Data: map[string]string{"a b": "x"}}, "data"},
		{"data value not UTF-8", push.Request{Token: token, Body: "b", Data: map[string]string{"k": "\xff"}}, "data.k"},
		{"link not https", push.Request{Token: token, Body: "b", Link: "javascript:alert(1)"}, "link"},
		{"image on loopback", push.Request{Token: token, Body: "b", Image: "https://[::1]/x.png"}, "image"},
		{"ttl too long", push.Request{Token: token, Body: "b", TTL: push.MaxTTL + 1}, "ttl"},
		{"bad category", push.Request{Token: token, Body: "b", Category: "Marketing!"}, "category"},
		{"bad domain", push.Request{Token: token, Body: "b", Domain: "a\nb"}, "domain"},
		{"payload too large", push.Request{Token: token, Body: strings.Repeat("é", push.MaxBody),
			Data: map[string]string{"a": strings.Repeat("x", 1000)}}, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Account = "acme"
			_, err := ch.Prepare(context.Background(), testAccount(), &c.req)
			if got := fields(err); got != c.want {
				t.Fatalf("fields %q, want %q (%v)", got, c.want, err)
			}
			if strings.Contains(err.Error(), sub.Keys.Auth) {
				t.Fatalf("the error shows the auth secret: %v", err)
			}
		})
	}
}

// TestProvidersByRecipient: a subscription goes to the Web Push provider,
// a token to FCM's; a channel without one refuses its requests by name.
func TestProvidersByRecipient(t *testing.T) {
	ctx := context.Background()
	ch, wp, fcm := newChannel(t)
	sub := subscription(t, "https://push.example.com/s/1")
	for _, c := range []struct {
		req  *push.Request
		want *memprovider.Provider
	}{{&push.Request{Account: "acme", Subscription: sub, Body: "b"}, wp}, {&push.Request{Account: "acme", Token: token, Body: "b"}, fcm}} {
		env, err := ch.Prepare(ctx, testAccount(), c.req)
		if err != nil {
			t.Fatal(err)
		}
		if env.Provider != c.want.Name() {
			t.Fatalf("provider %q, want %q", env.Provider, c.want.Name())
		}
		env.ID, env.Account = "m-1", testAccount()
		if _, err := ch.Deliver(ctx, env); err != nil {
			t.Fatal(err)
		}
		if c.want.Len() != 1 {
			t.Fatalf("%s took %d messages", c.want.Name(), c.want.Len())
		}
	}

	onlyFCM, err := push.New(push.Config{FCM: fcm})
	if err != nil {
		t.Fatal(err)
	}
	_, err = onlyFCM.Prepare(ctx, testAccount(), &push.Request{Account: "acme", Subscription: sub, Body: "b"})
	if fields(err) != "subscription" || !strings.Contains(err.Error(), "no Web Push provider") {
		t.Fatalf("a subscription without a Web Push provider: %v", err)
	}
	onlyWeb, err := push.New(push.Config{WebPush: wp})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := onlyWeb.Prepare(ctx, testAccount(), &push.Request{Account: "acme", Token: token, Body: "b"}); fields(err) != "token" {
		t.Fatalf("a token without an FCM provider: %v", err)
	}
	if _, err := push.New(push.Config{}); err == nil {
		t.Fatal("New without providers succeeded")
	}
}

// TestEnvelope: what Prepare fills, defaults included.
func TestEnvelope(t *testing.T) {
	ch, _, _ := newChannel(t)
	sub := subscription(t, "https://Push.Example.COM/s/AbC?x=Y")
	env, err := ch.Prepare(context.Background(), testAccount(), &push.Request{Account: "acme", Subscription: sub,
		Title: "T", Body: "B", Category: "orders", Domain: "shop.example.in"})
	if err != nil {
		t.Fatal(err)
	}
	m := push.MessageOf(env)
	if env.To != "https://push.example.com/s/AbC?x=Y" || env.Units != 1 || env.Class != record.Transactional ||
		env.Category != "orders" || env.Domain != "shop.example.in" || m == nil {
		t.Fatalf("envelope %+v", env)
	}
	if m.TTL != push.DefaultTTL*time.Second || m.Urgency != push.UrgencyNormal || m.Keys != sub.Keys {
		t.Fatalf("message %+v", m)
	}
	promo, err := ch.Prepare(context.Background(), testAccount(), &push.Request{Account: "acme", Token: token, Body: "B", Promotional: true})
	if err != nil || promo.Class != record.Promotional || promo.To != token {
		t.Fatalf("promotional: %+v, %v", promo, err)
	}
	if push.MessageOf(nil) != nil || push.MessageOf(&notify.Envelope{Content: "x"}) != nil {
		t.Fatal("MessageOf of another content")
	}
}

// TestPayload: the JSON an app reads, with the message ID.
func TestPayload(t *testing.T) {
	m := &push.Message{Title: "T", Body: "B", Link: "https://a.example/x", Data: map[string]string{"k": "v"}}
	var got map[string]any
	if err := json.Unmarshal(m.Payload("m-1"), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"message_id": "m-1", "title": "T", "body": "B", "link": "https://a.example/x", "data": map[string]any{"k": "v"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("payload %v, want %v", got, want)
	}
}

// TestRecipient: one form per subscription or token.
func TestRecipient(t *testing.T) {
	for in, want := range map[string]string{
		" https://Push.Example.COM/s/AbC ": "https://push.example.com/s/AbC",
		"HTTPS://push.example.com/s/1":     "https://push.example.com/s/1",
		" " + token:                        token,
	} {
		got, err := push.Recipient(in)
		if err != nil || got != want {
			t.Errorf("Recipient(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "http://push.example.com/s", "https://127.0.0.1/s", "not a token", "short"} {
		if _, err := push.Recipient(bad); notify.CodeOf(err) != notify.CodeInvalidArgument || fields(err) != "to" {
			t.Errorf("Recipient(%q) = %v; want InvalidArgument naming to", bad, err)
		}
	}
}

// TestFingerprint: spellings of one endpoint are one request; every
// content field counts.
func TestFingerprint(t *testing.T) {
	sub := subscription(t, "https://push.example.com/s/1")
	upper := *sub
	upper.Endpoint = "https://PUSH.example.com/s/1"
	base := push.Request{Subscription: sub, Body: "b"}
	same := push.Request{Subscription: &upper, Body: "b"}
	if fp(&base) != fp(&same) {
		t.Fatal("two spellings of one endpoint differ")
	}
	for _, other := range []push.Request{
		{Subscription: sub, Body: "c"}, {Subscription: sub, Body: "b", Title: "t"}, {Subscription: sub, Body: "b", TTL: 5},
		{Subscription: sub, Body: "b", Urgency: push.UrgencyHigh}, {Subscription: sub, Body: "b", Promotional: true},
		{Subscription: sub, Body: "b", Data: map[string]string{"k": "v"}}, {Subscription: sub, Body: "b", Category: "orders"},
		{Token: token, Body: "b"},
	} {
		if fp(&other) == fp(&base) {
			t.Errorf("%+v has the fingerprint of %+v", other, base)
		}
	}
}

func fp(r notify.Request) string {
	h := sha256.New()
	r.Fingerprint(h)
	return string(h.Sum(nil))
}
