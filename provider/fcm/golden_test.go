package fcm_test

import (
	"bytes"
	"encoding/json"
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
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
)

// TestRequestsGolden sends each shape through the strict fake and compares
// the whole request (method, path, headers that matter, the JSON body as
// sent and indented) with testdata/requests/<name>.txt, and the token
// request (its form and the assertion's header and claims) with
// testdata/requests/token.txt. Each case names the FCM reference that
// documents its shape.
func TestRequestsGolden(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const id = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
	tok := token(7)
	tests := []struct {
		name, source string
		msg          *push.Message
	}{
		{"body-only", "reference/fcm/rest/v1/projects.messages (token, notification.body; android.ttl a Duration \"Ns\", priority NORMAL; webpush.headers TTL and Urgency; apns.headers apns-expiration and apns-priority 5); data holds message_id alone",
			&push.Message{Body: "Your order has shipped.", TTL: push.DefaultTTL * time.Second, Urgency: push.UrgencyNormal}},
		{"full", "every field: notification title, body and image; data; webpush.fcm_options.link (https); urgency high: android HIGH, apns-priority 10, Urgency high",
			&push.Message{Title: "Acme", Body: "Order 42 is out for delivery & arrives today <3", Data: map[string]string{"order": "42", "screen": "tracking"},
				Link: "https://acme.example/orders/42", Image: "https://cdn.acme.example/van.png", TTL: time.Hour, Urgency: push.UrgencyHigh}},
		{"very-low", "urgency very-low: android NORMAL, apns-priority 5, the Web Push Urgency header as given; a 60-second TTL",
			&push.Message{Body: "Weekly digest is ready", TTL: time.Minute, Urgency: push.UrgencyVeryLow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVendor(t, fcmtest.Config{})
			p := newProvider(t, v, func(c *fcm.Config) { c.Now = func() time.Time { return now } })
			env := &notify.Envelope{ID: id, Kind: push.Kind, To: tok, Provider: fcm.DefaultName, Content: tt.msg}
			if _, err := p.Send(t.Context(), env); err != nil {
				t.Fatalf("the fake refused the %s shape: %v", tt.name, err)
			}
			r := v.Requests()[0]
			var indented bytes.Buffer
			if err := json.Indent(&indented, r.Body, "", "  "); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", r.Method, strings.Replace(r.Path, v.ProjectID(), "{project}", 1))
			fmt.Fprintf(&b, "Authorization: Bearer %s\n", strings.Replace(r.AccessToken, v.AccessTokens()[0], "{access_token}", 1))
			fmt.Fprintf(&b, "Content-Type: %s\nAccept: %s\n\n%s\n", r.ContentType, r.Accept, indented.String())
			path := filepath.Join("testdata", "requests", tt.name+".txt")
			if !golden.Check(t, path, []byte(b.String())) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
	t.Run("token", func(t *testing.T) {
		v := newVendor(t, fcmtest.Config{})
		p := newProvider(t, v, nil)
		if err := p.CheckHealth(t.Context()); err != nil {
			t.Fatal(err)
		}
		g := v.Grants()[0]
		repl := strings.NewReplacer(v.ClientEmail(), "{client_email}", v.TokenURL(), "{token_uri}", v.KeyID(), "{private_key_id}")
		var b strings.Builder
		fmt.Fprintf(&b, "POST %s\nContent-Type: %s\n\ngrant_type=%s\nassertion={header}.{claims}.{RS256 signature}\n\n", fcmtest.TokenPath, g.ContentType, g.GrantType)
		for _, part := range []struct {
			name string
			m    map[string]any
		}{{"header", g.Header}, {"claims", g.Claims}} {
			fmt.Fprintf(&b, "%s:\n", part.name)
			for _, k := range slices.Sorted(maps.Keys(part.m)) {
				val := fmt.Sprint(part.m[k])
				if k == "iat" || k == "exp" {
					val = "{unix seconds}"
				}
				fmt.Fprintf(&b, "  %s: %s\n", k, repl.Replace(val))
			}
		}
		exp, iat := g.Claims["exp"].(float64), g.Claims["iat"].(float64)
		fmt.Fprintf(&b, "exp - iat: %v s\n", exp-iat)
		golden.Check(t, filepath.Join("testdata", "requests", "token.txt"), []byte(b.String()))
	})
}
