package fcm_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/record"
)

// newVendor starts the fake FCM for t.
func newVendor(t *testing.T, cfg fcmtest.Config) *fcmtest.Server {
	t.Helper()
	v := fcmtest.NewServer(cfg)
	t.Cleanup(v.Close)
	return v
}

// newProvider returns a provider sending to v with v's service account;
// change, when not nil, changes its Config first.
func newProvider(t *testing.T, v *fcmtest.Server, change func(*fcm.Config)) *fcm.Provider {
	t.Helper()
	cfg := fcm.Config{ProjectID: v.ProjectID(), CredentialsJSON: v.CredentialsJSON(), BaseURL: v.URL}
	if change != nil {
		change(&cfg)
	}
	p, err := fcm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// token returns the i-th test registration token.
func token(i int) string {
	return fmt.Sprintf("dXNlci0%04d:APA91bH-test-registration-token-%06d", i%10000, i)
}

// envelope returns a valid envelope as the push channel prepares it for
// the FCM provider, alternating the optional fields.
func envelope(i int) *notify.Envelope {
	m := &push.Message{Body: fmt.Sprintf("Order %d has shipped.", i), TTL: push.DefaultTTL * time.Second, Urgency: push.UrgencyNormal}
	if i%2 == 1 {
		m.Title, m.Urgency, m.TTL = "Acme", push.UrgencyHigh, time.Hour
		m.Data = map[string]string{"order": fmt.Sprint(i)}
		m.Link, m.Image = "https://acme.example/orders/"+fmt.Sprint(i), "https://cdn.acme.example/box.png"
	}
	return &notify.Envelope{Kind: push.Kind, To: token(i), Provider: fcm.DefaultName, Units: 1, Class: record.Transactional,
		Account: &notify.Account{ID: "acme"}, Content: m}
}

func TestConformance(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	// The access tokens are secrets; they are issued as the suite runs,
	// so the list is read when the suite checks: the first send makes
	// the one the suite's sends share.
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: envelope,
		Secrets:  secrets(v),
		FailNext: providertest.Injectors{
			// FCM's UNAVAILABLE: it took nothing.
			providertest.Temporary:   func() { v.FailNext(fcmtest.Unavailable) },
			providertest.Permanent:   func() { v.FailNext(fcmtest.Unregistered) },
			providertest.RateLimited: func() { v.FailNext(fcmtest.QuotaExceeded) },
			providertest.AnswerLost:  v.BreakNext,
			// Google's error format on a 500 with INTERNAL: FCM's own answer.
			providertest.VendorErrorOn5xx: func() { v.FailNext(fcmtest.Internal) },
		}.Inject,
		SetLatency: v.SetLatency,
		Received:   v.Accepted,
	})
	if n := v.TokenRequests(); n != 1 {
		t.Errorf("the suite's sends made %d token requests, want 1 (the cached token)", n)
	}
}

// TestConformanceTokenSource runs the suite with a caller's TokenSource
// instead of the JSON key, and with a 502 HTML page after the accept as
// the lost answer.
func TestConformanceTokenSource(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	ts := sourceOf(t, v)
	p := newProvider(t, v, func(c *fcm.Config) { c.CredentialsJSON, c.TokenSource, c.HTTPClient = nil, ts, v.Client() })
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: envelope,
		Secrets:  v.AccessTokens(),
		FailNext: providertest.Injectors{
			providertest.Temporary:   func() { v.FailNext(fcmtest.Internal) },
			providertest.Permanent:   func() { v.FailNext(fcmtest.SenderIDMismatch) },
			providertest.RateLimited: func() { v.FailNext(fcmtest.QuotaExceeded) },
			providertest.AnswerLost:  func() { v.FailNextHTTPAfterAccept(http.StatusBadGateway) },
			providertest.VendorErrorOn5xx: func() {
				v.FailNext(fcmtest.Error{HTTPStatus: 503, Status: "UNAVAILABLE", Message: "busy", ErrorCode: "SOMETHING_NEW"})
			},
		}.Inject,
		Received: v.Accepted,
	})
}
