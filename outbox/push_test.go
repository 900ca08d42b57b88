package outbox_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/outbox"
	"github.com/notifykit/notify/record"
)

// The recipients of the push tests: a Web Push subscription's endpoint and
// an FCM registration token, both longer than the list shows.
const (
	pushEndpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABmZ0x9tail1234"
	pushToken    = "cX7f3kL9QmS:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx0zE9d0q6tKw1vdcMQ4pZxT2sIkeyEND42"
)

func pushEnvelope(id, to string, msg *push.Message) *notify.Envelope {
	return &notify.Envelope{ID: id, Kind: push.Kind, Account: acct, To: to, Provider: "webpush-log",
		Price: notify.Money{Minor: 2, Currency: record.INR()}, Content: msg}
}

// TestPushMessage: a push is kept with its content, without the
// subscription's keys, found by kind and recipient, and followed like any
// other message.
func TestPushMessage(t *testing.T) {
	o := newOutbox(t)
	msg := &push.Message{Keys: push.Keys{P256dh: "BPublicKeyOfTheBrowser", Auth: "auth-secret-16b"},
		Title: "Order shipped", Body: "Order 4711 is on its way", Data: map[string]string{"order": "4711"},
		Link: "https://shop.example/o/4711", Image: "https://cdn.example/box.png", TTL: time.Hour, Urgency: push.UrgencyHigh}
	accept(o, pushEnvelope("p1", pushEndpoint, msg))
	accept(o, smsEnvelope("s1", "9876543210", "hello", ""))

	got := o.Messages(outbox.Filter{Kind: push.Kind})
	if len(got) != 1 || got[0].ID != "p1" || got[0].Push == nil || got[0].SMS != nil || got[0].To != pushEndpoint {
		t.Fatalf("push messages: %+v", got)
	}
	p := got[0].Push
	if p.Title != "Order shipped" || p.Body != msg.Body || p.Data["order"] != "4711" || p.Link != msg.Link || p.Image != msg.Image ||
		p.TTL != time.Hour || p.Urgency != push.UrgencyHigh {
		t.Errorf("content: %+v", p)
	}
	if p.Keys != (push.Keys{}) {
		t.Errorf("the subscription's keys are kept: %+v", p.Keys)
	}
	if msg.Keys.Auth != "auth-secret-16b" {
		t.Error("the envelope's content was changed")
	}
	if got := o.Messages(outbox.Filter{To: "mozilla.com/wpush"}); len(got) != 1 || got[0].ID != "p1" {
		t.Errorf("by recipient: %+v", got)
	}
	settle(o, record.StateSent, "p1", 2)
	if m, _ := o.Message("p1"); m.Status != outbox.StatusSent || m.Cost.Minor != 2 {
		t.Errorf("after sent: %s %d", m.Status, m.Cost.Minor)
	}
}

// TestPushPage: the page shows a push as a device would (title, body,
// image, the link it opens), its data, TTL, urgency and recipient, every
// field HTML-escaped; the list shortens a long recipient and filters by
// kind.
func TestPushPage(t *testing.T) {
	o := newOutbox(t)
	accept(o, pushEnvelope("web", pushEndpoint, &push.Message{Title: `<b>Sale</b> & more`, Body: "<script>alert(1)</script>\nSecond line",
		Data: map[string]string{"z_last": `"quoted"`, "a_first": "<i>x</i>"}, Link: "https://shop.example/sale?a=1&b=2",
		Image: "https://cdn.example/sale.png", TTL: 28 * 24 * time.Hour, Urgency: push.UrgencyNormal}))
	token := pushEnvelope("fcm", pushToken, &push.Message{Body: "Your ride is here", TTL: 90 * time.Second, Urgency: push.UrgencyHigh})
	token.Provider = "fcm-log"
	accept(o, token)
	accept(o, smsEnvelope("sms", "9876543210", "an SMS", ""))
	srv := httptest.NewServer(o)
	defer srv.Close()

	_, page := get(t, srv, "/outbox?id=web")
	detail := page[strings.Index(page, `<article`):]
	for _, want := range []string{
		`<article class="detail kind-push">`,
		`<dd>` + pushEndpoint + `</dd>`, // whole on the message's page
		`<p class="title">&lt;b&gt;Sale&lt;/b&gt; &amp; more</p>`,
		`<p class="body">&lt;script&gt;alert(1)&lt;/script&gt;` + "\nSecond line</p>",
		`Image: <a href="https://cdn.example/sale.png" rel="noreferrer noopener" target="_blank">https://cdn.example/sale.png</a>`,
		`Opens <a href="https://shop.example/sale?a=1&amp;b=2" rel="noreferrer noopener" target="_blank">https://shop.example/sale?a=1&amp;b=2</a>`,
		`<dt>Device</dt><dd>Web Push subscription, push service updates.push.services.mozilla.com</dd>`,
		`<dt>TTL</dt><dd>28 days (2419200 s)</dd>`,
		`<dt>Urgency</dt><dd>normal</dd>`,
		`<tr><th>a_first</th><td>&lt;i&gt;x&lt;/i&gt;</td></tr><tr><th>z_last</th><td>&#34;quoted&#34;</td></tr>`,
		`<dt>Provider</dt><dd>webpush-log</dd>`,
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the push's page lacks %q:\n%s", want, detail)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>Sale") {
		t.Errorf("unescaped content:\n%s", page)
	}

	_, page = get(t, srv, "/outbox?id=fcm")
	detail = page[strings.Index(page, `<article`):]
	for _, want := range []string{`<dt>Device</dt><dd>FCM registration token</dd>`, `<dt>TTL</dt><dd>90 s</dd>`,
		`<dt>Urgency</dt><dd>high</dd>`, `<dd>` + pushToken + `</dd>`} {
		if !strings.Contains(detail, want) {
			t.Errorf("the token's page lacks %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, `class="title"`) || strings.Contains(detail, "Opens") || strings.Contains(detail, "<h3>Data") {
		t.Errorf("empty fields shown:\n%s", detail)
	}

	// The list: push only, each recipient shortened with the whole one in
	// its title, the preview title and body.
	_, list := get(t, srv, "/outbox/list?kind=push")
	for _, want := range []string{
		`<span class="to" title="` + pushEndpoint + `">updates.push.services.mozilla.com/…tail1234</span>`,
		`<span class="to" title="` + pushToken + `">cX7f3kL9QmS:…keyEND42</span>`,
		`<span class="preview">&lt;b&gt;Sale&lt;/b&gt; &amp; more: &lt;script&gt;`,
		`<span class="preview">Your ride is here</span>`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "an SMS") {
		t.Errorf("kind=push lists an SMS:\n%s", list)
	}
	if _, page := get(t, srv, "/outbox"); !strings.Contains(page, `<option value="push">push</option>`) {
		t.Errorf("no push in the kind filter:\n%s", page)
	}
}
