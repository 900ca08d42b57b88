package webpush_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/webpush"
	"github.com/notifykit/notify/provider/webpush/webpushtest"
	"github.com/notifykit/notify/record"
)

// newVendor starts the fake push service for t, bound to the test VAPID
// key as a browser's subscriptions are.
func newVendor(t *testing.T, cfg webpushtest.Config) *webpushtest.Server {
	t.Helper()
	if cfg.ApplicationServerKey == "" {
		cfg.ApplicationServerKey = webpushtest.VAPIDPublicKey
	}
	v := webpushtest.NewServer(cfg)
	t.Cleanup(v.Close)
	return v
}

// newProvider returns a provider sending through v's client with the
// test VAPID keys; change, when not nil, changes its Config first.
func newProvider(t *testing.T, v *webpushtest.Server, change func(*webpush.Config)) *webpush.Provider {
	t.Helper()
	cfg := webpush.Config{VAPIDPublicKey: webpushtest.VAPIDPublicKey, VAPIDPrivateKey: webpushtest.VAPIDPrivateKey,
		Subscriber: webpushtest.Subscriber, HTTPClient: v.Client()}
	if change != nil {
		change(&cfg)
	}
	p, err := webpush.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// envelope returns an envelope as the push channel prepares it for sub.
func envelope(sub *push.Subscription, i int) *notify.Envelope {
	return &notify.Envelope{Kind: push.Kind, To: sub.Endpoint, Provider: webpush.DefaultName, Units: 1,
		Class: record.Transactional, Account: &notify.Account{ID: "acme"},
		Content: &push.Message{Keys: sub.Keys, Title: "Acme", Body: fmt.Sprintf("Order %d has shipped.", i),
			Data: map[string]string{"order": fmt.Sprint(i)}, TTL: time.Hour, Urgency: push.UrgencyNormal}}
}

// TestConformance runs the suite against the fake, with the service's
// own refusals and with the proxy's and the network's failures.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    webpushtest.Config
		faults func(v *webpushtest.Server) providertest.Injectors
	}{
		{"location", webpushtest.Config{}, func(v *webpushtest.Server) providertest.Injectors {
			return providertest.Injectors{
				// autopush's own 503: it took nothing. A bare 503 would
				// not prove that.
				providertest.Temporary:   func() { v.FailNext(webpushtest.Unavailable) },
				providertest.Permanent:   func() { v.FailNext(webpushtest.Gone) },
				providertest.RateLimited: func() { v.FailNext(webpushtest.RateLimited) },
				providertest.AnswerLost:  v.BreakNext,
				// The service's JSON error with an errno not known here.
				providertest.VendorErrorOn5xx: func() { v.FailNextWith(http.StatusBadGateway, 998, "busy") },
			}
		}},
		{"no location", webpushtest.Config{OmitLocation: true}, func(v *webpushtest.Server) providertest.Injectors {
			return providertest.Injectors{
				providertest.Temporary:        func() { v.FailNext(webpushtest.InternalError) },
				providertest.Permanent:        func() { v.FailNext(webpushtest.TooLarge) },
				providertest.RateLimited:      func() { v.FailNextWith(http.StatusTooManyRequests, 0, "slow down") },
				providertest.AnswerLost:       func() { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) },
				providertest.VendorErrorOn5xx: func() { v.FailNextWith(http.StatusServiceUnavailable, 202, "Immediately retry the message") },
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, c.cfg)
			subs := make([]*push.Subscription, 8)
			secrets := []string{webpushtest.VAPIDPrivateKey}
			for i := range subs {
				subs[i] = v.NewSubscription()
				secrets = append(secrets, subs[i].Keys.Auth)
			}
			providertest.Run(t, providertest.Harness{
				Provider:   newProvider(t, v, nil),
				Envelope:   func(i int) *notify.Envelope { return envelope(subs[i%len(subs)], i) },
				Secrets:    secrets,
				FailNext:   c.faults(v).Inject,
				SetLatency: v.SetLatency,
				Received:   v.Accepted,
			})
		})
	}
}
