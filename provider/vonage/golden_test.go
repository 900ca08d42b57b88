package vonage_test

import (
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
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
)

// TestRequestsGolden sends each shape through the strict fake and compares
// the whole request (method, path, the headers that matter, the form as
// sent, the secret masked, and decoded) with testdata/requests/<name>.txt.
// Each case names Vonage's page that documents its shape.
func TestRequestsGolden(t *testing.T) {
	const ref = "https://developer.vonage.com/en/api/sms (send-an-sms)"
	named := envelope(3) // with an ID, so that Send sets client-ref
	named.ID = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
	unicode := &notify.Envelope{Kind: sms.Kind, To: "+819012345678",
		Content: &sms.Message{Text: "こんにちは世界", Encoding: sms.UCS2, Segments: 1}}
	tests := []struct {
		name, source string
		change       func(*vonage.Config)
		env          *notify.Envelope
	}{
		{"plain", ref + ": api_key, api_secret, from, to in E.164 without +, text, type=text", nil, envelope(0)},
		{"unicode", "messaging/sms/code-snippets/send-an-sms-with-unicode: type=unicode", nil, unicode},
		{"otp", "the otp route: text is the whole OTP text", nil, envelope(1)},
		{"dlt", ref + ": entity-id and content-id, from the DLT header (sender_id)", nil, envelope(2)},
		{"callback", ref + ": callback (the receipts' webhook) and client-ref (notify.MessageRef)",
			func(c *vonage.Config) { c.Callback = "https://hooks.example.com/vonage/dlr" }, named},
		{"number-sender", ref + ": from a virtual number, given in E.164 and sent without +",
			func(c *vonage.Config) { c.From = "+" + vonagetest.DefaultNumber }, envelope(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVendor(t, vonagetest.Config{})
			p := newProvider(t, v, tt.change)
			if _, err := p.Send(t.Context(), tt.env); err != nil {
				t.Fatalf("the fake refused the %s shape: %v", tt.name, err)
			}
			reqs := v.Requests()
			r := reqs[len(reqs)-1]
			body := strings.Replace(string(r.Body), "api_secret="+url.QueryEscape(testSecret), "api_secret={api_secret}", 1)
			form, err := url.ParseQuery(body)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\nContent-Type: %s\nAccept: %s\n\n%s\n\n", r.Method, r.Path, r.ContentType, r.Accept, body)
			for _, k := range slices.Sorted(maps.Keys(form)) {
				fmt.Fprintf(&b, "%s: %s\n", k, form.Get(k))
			}
			if !golden.Check(t, filepath.Join("testdata", "requests", tt.name+".txt"), []byte(b.String())) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}
