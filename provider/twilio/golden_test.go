package twilio_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/golden"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
)

// TestRequestsGolden sends each shape through the strict fake and compares
// the whole request (method, path, headers that matter, the form body as
// sent and decoded) with testdata/requests/<name>.txt. Each case names
// Twilio's page that documents its shape.
func TestRequestsGolden(t *testing.T) {
	const callback = "https://hooks.example.com/twilio/status"
	withID := func(env *notify.Envelope) *notify.Envelope {
		env.ID = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
		return env
	}
	tests := []struct {
		name, source string
		change       func(*twilio.Config)
		env          *notify.Envelope
	}{
		{"sms-from", "docs/messaging/api/message-resource#create-a-message-resource (To, From, Body; HTTP basic auth AccountSid:AuthToken)",
			nil, envelope(0)},
		{"otp-e164", "the otp route: Body is the whole OTP text; To already in E.164",
			nil, envelope(1)},
		{"messaging-service", "docs/messaging/services (MessagingServiceSid instead of From; basic auth with an API key SK...:secret)",
			func(c *twilio.Config) {
				c.From, c.MessagingServiceSID = "", testMG
				c.AuthToken, c.APIKeySID, c.APIKeySecret = "", testKeySID, testKeySecret
			}, envelope(2)},
		{"status-callback", "message-resource StatusCallback, with notify_ref (notify.MessageRef) added to its query",
			func(c *twilio.Config) { c.StatusCallback = callback }, withID(envelope(4))},
		{"status-callback-query", "a StatusCallback with a query and connection overrides (#rc=2): notify_ref joins the query, the fragment stays last",
			func(c *twilio.Config) { c.StatusCallback = callback + "?tenant=acme#rc=2&rp=all" }, withID(envelope(6))},
		{"unicode", "a UCS-2 text is sent as UTF-8; Twilio encodes it",
			nil, &notify.Envelope{Kind: sms.Kind, To: "+919876500008", Content: &sms.Message{Text: "आपका ऑर्डर भेज दिया गया है"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVendor(t, twiliotest.Config{})
			p := newProvider(t, v, tt.change)
			if _, err := p.Send(context.Background(), tt.env); err != nil {
				t.Fatalf("the fake refused the %s shape: %v", tt.name, err)
			}
			reqs := v.Requests()
			r := reqs[len(reqs)-1]
			form, err := url.ParseQuery(string(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", r.Method, strings.Replace(r.Path, testSID, "{AccountSid}", 1))
			fmt.Fprintf(&b, "Authorization: Basic %s:{secret}\n", strings.NewReplacer(testSID, "{AccountSid}", testKeySID, "{APIKeySid}").Replace(r.User))
			fmt.Fprintf(&b, "Content-Type: %s\nAccept: %s\n\n%s\n\n", r.ContentType, r.Accept, r.Body)
			for _, k := range slices.Sorted(maps.Keys(form)) {
				for _, val := range form[k] {
					fmt.Fprintf(&b, "%s: %s\n", k, val)
				}
			}
			path := filepath.Join("testdata", "requests", tt.name+".txt")
			if !golden.Check(t, path, []byte(b.String())) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}
