package smtp

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/golden"

	"github.com/notifykit/notify"
)

// TestDKIMGolden: the signed header section of a campaign message built
// with a fixed key, time and message ID, against
// testdata/dkim-signed-headers.golden. The signer (go-dkim) stamps t=
// with the clock, which the signature covers, so t= and b= are masked;
// everything else, the body hash included, is exact. TestDKIMOnTheWire
// verifies real signatures.
func TestDKIMGolden(t *testing.T) {
	key, err := os.ReadFile("testdata/dkim-test-rsa2048.pem")
	if err != nil {
		t.Fatal(err)
	}
	st, err := Server{Host: "127.0.0.1", From: "news@shop.example", FromName: "Shop News",
		ListUnsubscribeURL:    "https://shop.example/unsubscribe?t={token}",
		UnsubscribeSecret:     []byte("golden-secret-0123456789abcdefghijklmnop"),
		ListUnsubscribeMailto: "unsubscribe@shop.example",
		DKIM:                  DKIM{Domain: "shop.example", Selector: "s2025", PrivateKey: key},
	}.settings()
	if err != nil {
		t.Fatal(err)
	}
	env := &notify.Envelope{ID: "golden-1", To: "asha@example.com", Content: &email.Message{
		Purpose: email.PurposeCampaign, Subject: "Our monsoon sale", Text: "Everything is 20% off this week.\n",
	}}
	w, err := checkEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	msg, _, err := build(nil, st, env, w, time.Date(2025, 7, 1, 9, 30, 0, 0, time.FixedZone("IST", 5*3600+1800)))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := st.dkim.sign(msg.data)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(signed, "\r\n\r\n")
	head = regexp.MustCompile(`t=\d+;`).ReplaceAllString(head, "t=<time>;")
	head = regexp.MustCompile(`\r\n b=[A-Za-z0-9+/=]+(\r\n [A-Za-z0-9+/=]+)*`).ReplaceAllString(head, "\r\n b=<signature>")
	got := strings.ReplaceAll(head, "\r\n", "\n") + "\n"
	const goldenFile = "testdata/dkim-signed-headers.golden"
	golden.Check(t, goldenFile, []byte(got))
}
