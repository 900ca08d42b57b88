package fcm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// secrets are what no error may hold: the key and every access token v
// issued.
func secrets(v *fcmtest.Server) []string {
	pem := v.PrivateKeyPEM()
	return append([]string{pem, pem[40:120]}, v.AccessTokens()...)
}

// TestOutcomes: each of FCM's answers gives the code, the outcome, the
// Retry-After and the bounce the package documentation promises, and the
// fake keeps the message only when FCM took it.
func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		name      string
		inject    func(v *fcmtest.Server, env *notify.Envelope)
		code      notify.Code
		outcome   record.State
		retry     time.Duration
		bounce    bool
		errorCode string // the *fcm.Error's, "" for none
		accepted  int
	}{
		{"unregistered", func(v *fcmtest.Server, env *notify.Envelope) { v.Unregister(env.To) },
			notify.CodeRejected, record.StateFailed, 0, true, fcm.ErrUnregistered, 0},
		{"invalid argument, no field", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.InvalidArgument) },
			notify.CodeRejected, record.StateFailed, 0, false, fcm.ErrInvalidArgument, 0},
		{"invalid token", func(_ *fcmtest.Server, env *notify.Envelope) { env.To = "not a token" },
			notify.CodeRejected, record.StateFailed, 0, true, fcm.ErrInvalidArgument, 0},
		{"token FCM never issued", func(v *fcmtest.Server, _ *notify.Envelope) { v.NewToken() },
			notify.CodeRejected, record.StateFailed, 0, false, fcm.ErrInvalidArgument, 0},
		{"sender ID mismatch", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.SenderIDMismatch) },
			notify.CodeRejected, record.StateFailed, 0, false, fcm.ErrSenderIDMismatch, 0},
		{"quota exceeded", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.QuotaExceeded) },
			notify.CodeRateLimited, record.StateFailed, time.Minute, false, fcm.ErrQuotaExceeded, 0},
		{"unavailable", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.Unavailable) },
			notify.CodeUnavailable, record.StateFailed, 10 * time.Second, false, fcm.ErrUnavailable, 0},
		{"internal", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.Internal) },
			notify.CodeUnavailable, record.StateFailed, 0, false, fcm.ErrInternal, 0},
		{"third-party auth", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNext(fcmtest.ThirdPartyAuthError) },
			notify.CodeRejected, record.StateFailed, 0, false, fcm.ErrThirdPartyAuthError, 0},
		{"unknown code on a 503", func(v *fcmtest.Server, _ *notify.Envelope) {
			v.FailNext(fcmtest.Error{HTTPStatus: 503, Status: "UNAVAILABLE", Message: "busy", ErrorCode: "NEW_CODE"})
		}, notify.CodeUnavailable, record.StateFailed, 0, false, "NEW_CODE", 0},
		{"unknown code on a 400", func(v *fcmtest.Server, _ *notify.Envelope) {
			v.FailNext(fcmtest.Error{HTTPStatus: 400, Status: "FAILED_PRECONDITION", Message: "no", ErrorCode: "NEW_CODE"})
		}, notify.CodeRejected, record.StateFailed, 0, false, "NEW_CODE", 0},
		{"reserved data key", func(_ *fcmtest.Server, env *notify.Envelope) {
			push.MessageOf(env).Data = map[string]string{"google.x": "1"}
		},
			notify.CodeInvalidArgument, record.StateFailed, 0, false, fcm.ErrInvalidArgument, 0},
		{"proxy 502 before FCM", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNextHTTP(http.StatusBadGateway) },
			notify.CodeOutcomeUnknown, record.StateUnknown, 0, false, "", 0},
		{"proxy 429", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNextHTTP(http.StatusTooManyRequests) },
			notify.CodeRateLimited, record.StateFailed, 0, false, "", 0},
		{"proxy 504 after the accept", func(v *fcmtest.Server, _ *notify.Envelope) { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) },
			notify.CodeOutcomeUnknown, record.StateUnknown, 0, false, "", 1},
		{"answer lost", func(v *fcmtest.Server, _ *notify.Envelope) { v.BreakNext() },
			notify.CodeOutcomeUnknown, record.StateUnknown, 0, false, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, fcmtest.Config{})
			p := newProvider(t, v, nil)
			env := envelope(1)
			env.ID = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
			c.inject(v, env)
			res, err := p.Send(t.Context(), env)
			if err == nil || res != nil {
				t.Fatalf("Send = %+v, %v; want an error", res, err)
			}
			if code, outcome := notify.CodeOf(err), notify.OutcomeOf(err); code != c.code || outcome != c.outcome {
				t.Fatalf("code %s, outcome %s; want %s, %s: %v", code, outcome, c.code, c.outcome, err)
			}
			var ne *notify.Error
			if errors.As(err, &ne); ne.RetryAfter != c.retry {
				t.Errorf("RetryAfter %v, want %v", ne.RetryAfter, c.retry)
			}
			var b store.Bounce
			if got := errors.As(err, &b); got != c.bounce {
				t.Errorf("a bounce: %v, want %v: %v", got, c.bounce, err)
			} else if got {
				if reason, to := b.BounceReason(); reason != store.SuppressHardBounce || to != "" {
					t.Errorf("BounceReason = %s, %q; want a hard bounce of the envelope's token", reason, to)
				}
			}
			var fe *fcm.Error
			if errors.As(err, &fe) != (c.errorCode != "") || fe != nil && fe.ErrorCode != c.errorCode {
				t.Errorf("*fcm.Error %+v, want errorCode %q", fe, c.errorCode)
			}
			if c.code == notify.CodeInvalidArgument && (len(ne.Fields) != 1 || ne.Fields[0].Field != "data") {
				t.Errorf("fields %v, want data", ne.Fields)
			}
			if got := v.Accepted(); got != c.accepted {
				t.Errorf("the fake accepted %d messages, want %d", got, c.accepted)
			}
			if c.code != notify.CodeInvalidArgument { // CheckError knows the codes of a vendor's answer only
				vendorhttptest.CheckError(t, err, c.errorCode != "", c.outcome == record.StateUnknown, c.name, secrets(v)...)
			}
		})
	}
}

// TestWrongProject: FCM's PERMISSION_DENIED for a project the account may
// not send for is a refusal that names the configuration, never a bounce.
func TestWrongProject(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, func(c *fcm.Config) { c.ProjectID = "someone-elses" })
	_, err := p.Send(t.Context(), envelope(0))
	var b store.Bounce
	var fe *fcm.Error
	if notify.CodeOf(err) != notify.CodeRejected || errors.As(err, &b) || !errors.As(err, &fe) || fe.Status != "PERMISSION_DENIED" ||
		!strings.Contains(err.Error(), "Config.ProjectID") {
		t.Fatalf("Send to another project: %v", err)
	}
}

// TestNotGoogleAnswers: answers that are not FCM's own leave the outcome
// unknown (a 5xx, a success without a name) or refuse (a 4xx), as the kit
// says.
func TestNotGoogleAnswers(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		body    string
		code    notify.Code
		outcome record.State
	}{
		{"empty 500", 500, "", notify.CodeOutcomeUnknown, record.StateUnknown},
		{"other JSON on a 500", 500, `{"error": "boom"}`, notify.CodeOutcomeUnknown, record.StateUnknown},
		{"error without a status", 503, `{"error": {"code": 503, "message": "x"}}`, notify.CodeOutcomeUnknown, record.StateUnknown},
		{"cut JSON on a 503", 503, `{"error": {"code": 503, "mess`, notify.CodeOutcomeUnknown, record.StateUnknown},
		{"HTML 404", 404, "<html>not found</html>", notify.CodeRejected, record.StateFailed},
		{"200 not JSON", 200, "OK", notify.CodeOutcomeUnknown, record.StateUnknown},
		{"200 without a name", 200, `{"id": "x"}`, notify.CodeOutcomeUnknown, record.StateUnknown},
		{"redirect", 302, "", notify.CodeRejected, record.StateFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if c.status == 302 {
					w.Header().Set("Location", "https://elsewhere.example/")
				}
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			t.Cleanup(srv.Close)
			p, err := fcm.New(fcm.Config{ProjectID: "acme-app", BaseURL: srv.URL,
				TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.static-test-token"})})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Send(t.Context(), envelope(0))
			if code, outcome := notify.CodeOf(err), notify.OutcomeOf(err); code != c.code || outcome != c.outcome {
				t.Fatalf("code %s, outcome %s; want %s, %s: %v", code, outcome, c.code, c.outcome, err)
			}
			vendorhttptest.CheckError(t, err, false, c.outcome == record.StateUnknown, c.name, "ya29.static-test-token")
		})
	}
}

// TestWireFormat: what FCM receives for each push.Message field, and the
// message's name as the Result.
func TestWireFormat(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, func(c *fcm.Config) { c.Now = func() time.Time { return now } })
	full := envelope(1)
	full.ID = "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f"
	res, err := p.Send(t.Context(), full)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Messages()[0]
	if res.ProviderMessageID != m.Name || res.Provider != fcm.DefaultName || !strings.HasPrefix(m.Name, "projects/"+v.ProjectID()+"/messages/0:") {
		t.Fatalf("Result %+v for message %q", res, m.Name)
	}
	want := map[string]string{
		"token": full.To, "title": "Acme", "body": "Order 1 has shipped.", "image": "https://cdn.acme.example/box.png",
		"data.order": "1", "data.message_id": full.ID, "android.ttl": "3600s", "android.priority": "HIGH",
		"webpush.TTL": "3600", "webpush.Urgency": "high", "link": "https://acme.example/orders/1",
		"apns-expiration": strconv.FormatInt(now.Add(time.Hour).Unix(), 10), "apns-priority": "10",
	}
	got := map[string]string{
		"token": m.Token, "title": m.Title, "body": m.Body, "image": m.Image,
		"data.order": m.Data["order"], "data.message_id": m.Data[push.MessageIDKey], "android.ttl": m.AndroidTTL, "android.priority": m.AndroidPriority,
		"webpush.TTL": m.WebpushHeaders["TTL"], "webpush.Urgency": m.WebpushHeaders["Urgency"], "link": m.Link,
		"apns-expiration": m.APNSHeaders["apns-expiration"], "apns-priority": m.APNSHeaders["apns-priority"],
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}

	// The least: no title, image, link or data of the app's; low urgency
	// is FCM's normal priority; a zero TTL is the default.
	min := &notify.Envelope{Kind: push.Kind, To: token(2), Content: &push.Message{Body: "Hi", Urgency: push.UrgencyLow}}
	if _, err := p.Send(t.Context(), min); err != nil {
		t.Fatal(err)
	}
	m = v.Messages()[1]
	if m.Title != "" || m.Image != "" || m.Link != "" || m.Data != nil || m.AndroidPriority != "NORMAL" || m.AndroidTTL != "2419200s" ||
		m.WebpushHeaders["Urgency"] != "low" || m.APNSHeaders["apns-priority"] != "5" ||
		strings.Contains(string(m.Raw), "fcm_options") || strings.Contains(string(m.Raw), `"data"`) || strings.Contains(string(m.Raw), `"title"`) {
		t.Fatalf("minimal message: %+v\n%s", m, m.Raw)
	}
}

// TestEnvelopeRefused: an envelope FCM could not take is
// CodeInvalidArgument naming the field, before any request, a token's
// included.
func TestEnvelopeRefused(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	for _, c := range []struct {
		field  string
		change func(env *notify.Envelope)
	}{
		{"message", func(env *notify.Envelope) { env.Content = nil }},
		{"token", func(env *notify.Envelope) { env.To = " " }},
		{"ttl", func(env *notify.Envelope) { push.MessageOf(env).TTL = 29 * 24 * time.Hour }},
		{"ttl", func(env *notify.Envelope) { push.MessageOf(env).TTL = -time.Second }},
		{"link", func(env *notify.Envelope) { push.MessageOf(env).Link = "http://acme.example/" }},
	} {
		env := envelope(1)
		c.change(env)
		_, err := p.Send(t.Context(), env)
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != c.field {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	if n, m := v.TokenRequests(), len(v.Requests()); n != 0 || m != 0 {
		t.Fatalf("refused envelopes made %d token requests and %d sends", n, m)
	}
}

// TestNew: New refuses a bad Config, naming the field and never echoing
// the key.
func TestNew(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	key := string(v.CredentialsJSON())
	pem := v.PrivateKeyPEM()
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})
	for _, c := range []struct {
		says string
		cfg  fcm.Config
	}{
		{"ProjectID is required", fcm.Config{CredentialsJSON: []byte(key)}},
		{"ProjectID must be", fcm.Config{ProjectID: "Acme App", CredentialsJSON: []byte(key)}},
		{"not both", fcm.Config{ProjectID: "acme-app", CredentialsJSON: []byte(key), TokenSource: ts}},
		{"is required", fcm.Config{ProjectID: "acme-app"}},
		{"is required", fcm.Config{ProjectID: "acme-app", TokenSource: (*fakeSource)(nil)}},
		{"not JSON (at byte", fcm.Config{ProjectID: "acme-app", CredentialsJSON: []byte(pem)}},
		{`"type": "service_account"`, fcm.Config{ProjectID: "acme-app", CredentialsJSON: []byte(strings.Replace(key, `"service_account"`, `"authorized_user"`, 1))}},
		{"private_key is not", fcm.Config{ProjectID: "acme-app", CredentialsJSON: []byte(strings.Replace(key, "MII", "XXX", 1))}},
		{"token_uri must be", fcm.Config{ProjectID: "acme-app", CredentialsJSON: []byte(strings.Replace(key, v.TokenURL(), "ftp://x/token", 1))}},
		{"Config.BaseURL", fcm.Config{ProjectID: "acme-app", TokenSource: ts, BaseURL: "https://fcm.example/?key=1"}},
		{"Timeout", fcm.Config{ProjectID: "acme-app", TokenSource: ts, Timeout: -time.Second}},
	} {
		_, err := fcm.New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("New: %v, want an error saying %q", err, c.says)
			continue
		}
		if strings.Contains(err.Error(), pem[40:120]) {
			t.Errorf("New's error holds the key: %v", err)
		}
	}
	for _, id := range []string{"acme-app", "example.com:acme-app", "123456789012"} {
		if _, err := fcm.New(fcm.Config{ProjectID: id, TokenSource: ts}); err != nil {
			t.Errorf("ProjectID %q: %v", id, err)
		}
	}
}

type fakeSource struct{}

func (*fakeSource) Token() (*oauth2.Token, error) { return nil, errors.New("no") }

// TestBaseURLForms: the base URL may be given with /v1 or as the whole
// endpoint.
func TestBaseURLForms(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	for _, base := range []string{v.URL + "/", v.URL + "/v1", v.URL + v.SendPath()} {
		p := newProvider(t, v, func(c *fcm.Config) { c.BaseURL = base })
		if _, err := p.Send(context.Background(), envelope(0)); err != nil {
			t.Errorf("BaseURL %s: %v", base, err)
		}
	}
}
