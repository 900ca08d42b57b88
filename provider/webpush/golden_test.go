package webpush_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/internal/golden"
	"github.com/notifykit/notify/provider/webpush"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
)

// TestRequestsGolden sends each shape through the strict fake and compares
// the whole request (method, path, every header, the VAPID token's header
// and claims, the decrypted payload) with testdata/requests/<name>.txt.
// The token's signature, the body's ciphertext and the subscription's
// token change with every run, and are left out; exp is given as its
// distance from now.
func TestRequestsGolden(t *testing.T) {
	const id = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
	tests := []struct {
		name, source string
		subscriber   string
		msg          push.Message
	}{
		{"message", "RFC 8030 5 (TTL, Urgency), RFC 8291 4 (aes128gcm), RFC 8292 (vapid t=, k=); every field of the payload",
			webpushtest.Subscriber, push.Message{Title: "Your order", Body: "Order 42 has shipped.", Link: "https://shop.example.com/o/42",
				Image: "https://shop.example.com/i/42.png", Data: map[string]string{"order": "42"}, TTL: time.Hour, Urgency: push.UrgencyHigh}},
		{"defaults", "the channel's defaults: TTL four weeks, urgency normal; the body alone",
			webpushtest.Subscriber, push.Message{Body: "Hello", TTL: push.DefaultTTL * time.Second, Urgency: push.UrgencyNormal}},
		{"https-subscriber", "RFC 8292 2.1: sub an https: URL; a TTL of 90.5s is sent in whole seconds",
			"https://example.com/contact", push.Message{Body: "Low priority", TTL: 90*time.Second + 500*time.Millisecond, Urgency: push.UrgencyVeryLow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVendor(t, webpushtest.Config{})
			p := newProvider(t, v, func(c *webpush.Config) { c.Subscriber = tt.subscriber })
			sub := v.NewSubscription()
			msg := tt.msg
			msg.Keys = sub.Keys
			env := &notify.Envelope{ID: id, Kind: push.Kind, To: sub.Endpoint, Provider: webpush.DefaultName, Content: &msg}
			if _, err := p.Send(t.Context(), env); err != nil {
				t.Fatalf("the fake refused the %s shape: %v", tt.name, err)
			}
			m := v.Messages()[0]
			r := v.Requests()[0]
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", r.Method, strings.Replace(r.Path, strings.TrimPrefix(sub.Endpoint, v.URL+"/wpush/v2/"), "{token}", 1))
			for _, k := range slices.Sorted(maps.Keys(r.Header)) {
				val := strings.Join(r.Header[k], ", ")
				if k == "Authorization" {
					val = "vapid t={JWT}, k=" + m.VAPID.PublicKey
				}
				fmt.Fprintf(&b, "%s: %s\n", k, val)
			}
			fmt.Fprintf(&b, "\nbody: %d bytes of aes128gcm, one record\n", r.BodyLen)
			fmt.Fprintf(&b, "JWT header: %s\n", m.VAPID.Header)
			fmt.Fprintf(&b, "JWT claims: aud=%s sub=%s exp=now+%v\n", m.VAPID.Audience, m.VAPID.Subject, time.Until(m.VAPID.Expires).Round(time.Hour))
			fmt.Fprintf(&b, "\n%s\n", m.Payload)
			path := filepath.Join("testdata", "requests", tt.name+".txt")
			if !golden.Check(t, path, []byte(b.String())) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}
