package fcm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/fcm/fcmtest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

// sourceOf returns a TokenSource of v's service account, as an app makes
// one with google.JWTConfigFromJSON.
func sourceOf(t *testing.T, v *fcmtest.Server) oauth2.TokenSource {
	t.Helper()
	conf, err := google.JWTConfigFromJSON(v.CredentialsJSON(), fcm.Scope)
	if err != nil {
		t.Fatal(err)
	}
	return conf.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, v.Client()))
}

// TestTokenCached: many sends, some at once, share one access token.
func TestTokenCached(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			_, err := p.Send(t.Context(), envelope(i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, m := v.TokenRequests(), v.Accepted(); n != 1 || m != 40 {
		t.Fatalf("%d sends made %d token requests, want 1", m, n)
	}
	g := v.Grants()[0]
	if !g.Issued || g.GrantType != fcmtest.GrantType || g.Claims["scope"] != fcm.Scope || g.Claims["iss"] != v.ClientEmail() ||
		g.Claims["aud"] != v.TokenURL() || g.Header["kid"] != v.KeyID() {
		t.Fatalf("grant %+v", g)
	}
}

// TestTokenRefreshed: tokens issued already within oauth2's expiry margin
// (10 seconds) are fetched anew for each send; no clock is waited on.
func TestTokenRefreshed(t *testing.T) {
	v := newVendor(t, fcmtest.Config{TokenLifetime: 5 * time.Second})
	p := newProvider(t, v, nil)
	for i := range 3 {
		if _, err := p.Send(t.Context(), envelope(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.TokenRequests(); n != 3 {
		t.Fatalf("3 sends with short-lived tokens made %d token requests, want 3", n)
	}
	tokens := v.AccessTokens()
	reqs := v.Requests()
	for i, r := range reqs {
		if r.AccessToken != tokens[i] {
			t.Fatalf("send %d carried token %d's successor or predecessor", i, i)
		}
	}
	// Long-lived tokens again: the last is kept.
	v.SetTokenLifetime(time.Hour)
	for i := range 3 {
		if _, err := p.Send(t.Context(), envelope(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.TokenRequests(); n != 4 {
		t.Fatalf("token requests %d, want 4", n)
	}
}

// TestTokenRevoked: FCM's 401 on the access token is a certain, temporary
// refusal (nothing was taken) that drops the token, so the next send
// fetches a new one and succeeds.
func TestTokenRevoked(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	v.RevokeAccessTokens()
	_, err := p.Send(t.Context(), envelope(1))
	var fe *fcm.Error
	if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable || !errors.As(err, &fe) || fe.Status != "UNAUTHENTICATED" {
		t.Fatalf("send with a revoked token: %v", err)
	}
	vendorhttptest.CheckError(t, err, true, false, "401", secrets(v)...)
	if _, err := p.Send(t.Context(), envelope(2)); err != nil {
		t.Fatalf("send after the revocation: %v", err)
	}
	if n, m := v.TokenRequests(), v.Accepted(); n != 2 || m != 2 {
		t.Fatalf("token requests %d (want 2), accepted %d (want 2)", n, m)
	}
	// A third party's auth error is not about our token: it is kept.
	v.FailNext(fcmtest.ThirdPartyAuthError)
	if _, err := p.Send(t.Context(), envelope(3)); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("THIRD_PARTY_AUTH_ERROR: %v", err)
	}
	if _, err := p.Send(t.Context(), envelope(4)); err != nil || v.TokenRequests() != 2 {
		t.Fatalf("after THIRD_PARTY_AUTH_ERROR: %v, %d token requests", err, v.TokenRequests())
	}
}

// TestTokenRefusals: the token endpoint's answers, and a token endpoint
// that cannot be reached; none sends anything to FCM.
func TestTokenRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		inject func(v *fcmtest.Server)
		code   notify.Code
		says   string
	}{
		{"key deleted", (*fcmtest.Server).DeleteKey, notify.CodeRejected, "check fcm Config.CredentialsJSON"},
		{"invalid_grant once", func(v *fcmtest.Server) { v.FailNextToken(fcmtest.InvalidGrant) }, notify.CodeRejected, "Invalid JWT Signature."},
		{"invalid_scope", func(v *fcmtest.Server) {
			v.FailNextToken(fcmtest.TokenError{HTTPStatus: 400, Error: "invalid_scope", Description: "Empty or missing scope not allowed."})
		}, notify.CodeRejected, "refused the token request"},
		{"503 page", func(v *fcmtest.Server) { v.FailNextToken(fcmtest.TokenUnavailable) }, notify.CodeUnavailable, "HTTP 503"},
		{"429", func(v *fcmtest.Server) {
			v.FailNextToken(fcmtest.TokenError{HTTPStatus: 429, Error: "rate_limit_exceeded", Description: "slow down"})
		}, notify.CodeRateLimited, "HTTP 429"},
		{"200 not JSON", func(v *fcmtest.Server) { v.FailNextToken(fcmtest.TokenError{HTTPStatus: 200}) }, notify.CodeUnavailable, "could not be fetched"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVendor(t, fcmtest.Config{})
			p := newProvider(t, v, nil)
			c.inject(v)
			_, err := p.Send(t.Context(), envelope(0))
			if notify.CodeOf(err) != c.code || notify.OutcomeOf(err) != record.StateFailed || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %s %v; want %s saying %q", notify.CodeOf(err), err, c.code, c.says)
			}
			vendorhttptest.CheckError(t, err, false, false, c.name, secrets(v)...)
			if n := len(v.Requests()); n != 0 {
				t.Fatalf("%d sends reached FCM without a token", n)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		v := newVendor(t, fcmtest.Config{})
		key := strings.Replace(string(v.CredentialsJSON()), v.TokenURL(), "http://"+vendorhttptest.ClosedAddr(t)+"/token", 1)
		p := newProvider(t, v, func(c *fcm.Config) { c.CredentialsJSON = []byte(key) })
		_, err := p.Send(t.Context(), envelope(0))
		if !notify.IsRetryable(err) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("unreachable token endpoint: %v", err)
		}
		vendorhttptest.CheckError(t, err, false, false, "dial", secrets(v)...)
	})
}

// TestTokenErrorNeverEchoesTheAssertion: a token endpoint that quotes the
// signed assertion back has it scrubbed from the error.
func TestTokenErrorNeverEchoesTheAssertion(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	var assertion string
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		assertion = r.PostForm.Get("assertion")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error": "invalid_grant", "error_description": "bad assertion %s"}`, assertion)
	}))
	t.Cleanup(echo.Close)
	key := strings.Replace(string(v.CredentialsJSON()), v.TokenURL(), echo.URL+"/token", 1)
	p := newProvider(t, v, func(c *fcm.Config) { c.CredentialsJSON = []byte(key) })
	_, err := p.Send(t.Context(), envelope(0))
	if assertion == "" || notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "[assertion]") {
		t.Fatalf("echoed assertion: %v", err)
	}
	_, sig, _ := strings.Cut(assertion, ".")
	vendorhttptest.CheckError(t, err, false, false, "echo", append(secrets(v), assertion, sig)...)
}

// TestTokenFetchHonoursContext: a slow token endpoint is left when the
// send's context ends, as a certain refusal (nothing was sent) that
// errors.Is sees as the context's.
func TestTokenFetchHonoursContext(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	v.SetLatency(time.Hour)
	defer v.SetLatency(0)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Send(ctx, envelope(0))
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Send took %v after its deadline", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || notify.CodeOf(err) != notify.CodeUnavailable || notify.OutcomeOf(err) != record.StateFailed {
		t.Fatalf("slow token endpoint: %v", err)
	}
	if v.TokenRequests() != 1 || len(v.Requests()) != 0 {
		t.Fatalf("token requests %d, sends %d", v.TokenRequests(), len(v.Requests()))
	}
}

// TestClientTimeoutBoundsTheTokenFetch: Config.Timeout bounds the token's
// request as it does the send's.
func TestClientTimeoutBoundsTheTokenFetch(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, func(c *fcm.Config) { c.Timeout = 200 * time.Millisecond })
	v.SetLatency(time.Hour)
	defer v.SetLatency(0)
	_, err := p.Send(t.Context(), envelope(0))
	if !notify.IsRetryable(err) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("token fetch past the client's timeout: %v", err)
	}
}

// blockingSource is a TokenSource that answers when released.
type blockingSource struct {
	release chan struct{}
	calls   chan struct{}
}

func (b *blockingSource) Token() (*oauth2.Token, error) {
	b.calls <- struct{}{}
	<-b.release
	return &oauth2.Token{AccessToken: "late-token", Expiry: time.Now().Add(time.Hour)}, nil
}

// TestTokenSourceContext: a caller's TokenSource cannot see the send's
// context, but the send stops waiting for it when the context ends.
func TestTokenSourceContext(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	src := &blockingSource{release: make(chan struct{}), calls: make(chan struct{}, 1)}
	defer close(src.release)
	p := newProvider(t, v, func(c *fcm.Config) { c.CredentialsJSON, c.TokenSource = nil, src })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-src.calls
		cancel()
	}()
	_, err := p.Send(ctx, envelope(0))
	if !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("canceled while the TokenSource worked: %v", err)
	}
}

// TestTokenSourceErrors: a caller's TokenSource's failures are certain:
// oauth2's RetrieveError by its status and OAuth2 error, anything else
// CodeUnavailable.
func TestTokenSourceErrors(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	ts := sourceOf(t, v)
	p := newProvider(t, v, func(c *fcm.Config) { c.CredentialsJSON, c.TokenSource = nil, ts })
	v.DeleteKey()
	_, err := p.Send(t.Context(), envelope(0))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("refused credentials through a TokenSource: %v", err)
	}
	p = newProvider(t, v, func(c *fcm.Config) {
		c.CredentialsJSON, c.TokenSource = nil, oauth2.ReuseTokenSource(nil, failing{})
	})
	if _, err := p.Send(t.Context(), envelope(0)); !notify.IsRetryable(err) {
		t.Fatalf("failing TokenSource: %v", err)
	}
}

type failing struct{}

func (failing) Token() (*oauth2.Token, error) {
	return nil, &url.Error{Op: "Post", URL: "https://metadata.internal/token", Err: errors.New("connection reset")}
}

// TestCheckHealth: nil with working credentials, the token's refusal
// otherwise, without a send.
func TestCheckHealth(t *testing.T) {
	v := newVendor(t, fcmtest.Config{})
	p := newProvider(t, v, nil)
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatal(err)
	}
	v.RevokeAccessTokens() // unknown to the provider until a send
	v.DeleteKey()
	p2 := newProvider(t, v, nil)
	if err := p2.CheckHealth(t.Context()); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("deleted key: %v", err)
	}
	if len(v.Requests()) != 0 {
		t.Fatal("CheckHealth sent something to FCM")
	}
}
