package logprovider_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/logprovider"
)

// TestPushRecord: a push is logged with its title and text (withheld in
// Production), its link without the query, its data's size, never the
// subscription's keys or the data's values.
func TestPushRecord(t *testing.T) {
	env := &notify.Envelope{ID: "m1", Kind: push.Kind, To: "https://push.example.com/s/abcdef0123456789", Account: acct,
		Content: &push.Message{Keys: push.Keys{P256dh: "BPublicKeyOfTheBrowser", Auth: "authsecret-0123"},
			Title: "Acme order", Body: "Shipped", Link: "https://shop.example/o/1?session=s3cret",
			Data: map[string]string{"order": "data-value-1042"}, TTL: time.Hour, Urgency: push.UrgencyHigh}}
	for _, mode := range []logprovider.Mode{logprovider.Dev, logprovider.Production} {
		var buf bytes.Buffer
		p := logprovider.New(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "webpush-log", logprovider.WithMode(mode))
		if _, err := p.Send(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, secret := range []string{"authsecret-0123", "BPublicKeyOfTheBrowser", "s3cret", "data-value-1042"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: %q is logged:\n%s", mode, secret, out)
			}
		}
		if !strings.Contains(out, `"ttl_seconds":3600`) || !strings.Contains(out, `"data_keys":1`) || !strings.Contains(out, `"link":"https://shop.example/o/1"`) {
			t.Errorf("%s: the push's shape is not logged:\n%s", mode, out)
		}
		if shown := strings.Contains(out, "Acme order"); shown != (mode == logprovider.Dev) {
			t.Errorf("%s: the title shown %v:\n%s", mode, shown, out)
		}
	}
}
